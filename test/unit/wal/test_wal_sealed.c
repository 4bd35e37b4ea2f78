/*
 * test_wal_sealed.c
 *		The WAL archive under a key (format 2.0): sealed headers and payloads
 *		read back exactly, nothing of the WAL in the clear, and every file
 *		that is not what the key sealed for this cluster and this name
 *		refused by a get, a listing, a verify and a continuity check:
 *		renamed, of another cluster, forged without the key, a payload moved
 *		under another header, any bit flipped, cut short, in the clear under
 *		the key, sealed and read without it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "tests.h"
#include "wal_fixture.h"
#include "wal/wal_internal.h"

#define HISTORY_TEXT "1\t0/500000A0\tno recovery target specified\n"

/* W's archive, read under KEY (NULL: in the clear). */
static SbWalDests
under(const ThWal *w, const SbKey *key)
{
	SbWalDests	d = w->dests;

	d.key = key;
	return d;
}

/* Push src/NAME (written before) into W's archive, sealed with KEY (NULL: in the clear). */
static bool
push(const ThWal *w, const SbKey *key, const char *name, SbWalPushResult *r)
{
	SbWalArchiveOptions o;

	th_wal_options(&o, w);
	o.encryption_key = key;
	return th_wal_push_one(&o, w, name, r);
}

/* Get NAME from D to ROOT/target: false with ERR saying why; nothing is left there after a refusal. */
static bool
get(const ThWal *w, const SbWalDests *d, const char *name, SbError *err)
{
	SbWalGetOptions o = {.dests = *d};
	SbWalGetResult r;
	char		target[PATH_MAX];
	bool		done;

	unlink(th_path(target, "%s/target", w->f.root));
	done = sb_wal_get(&o, name, target, &r, err);
	if (!done && th_exists(target))
		diag("a refused get of %s left %s", name, target);
	return done;
}

/* A sealed header's fields, as a writer would make them. */
static void
sample_header(SbWalHeader *h)
{
	memset(h, 0, sizeof(*h));
	h->major = SB_WAL_SEALED_MAJOR;
	h->sealed = true;
	h->system_identifier = TH_WAL_SYSID;
	snprintf(h->name, sizeof(h->name), "000000010000000000000002.00000028.backup");
	h->raw_len = 1000;
	h->stored_len = 300 + SB_WAL_SEAL_OVERHEAD;
	h->codec = SB_CODEC_ZSTD;
	h->raw_hash = 0x1122334455667788;
	h->crc32c = 0xdeadbeef;
	h->archived_at = 1700000000;
	memcpy(h->salt, "saltsalt", SB_WAL_SALT_LEN);
}

/* H encoded under KEY (its own keys derived): false when that fails. */
static bool
encode_sealed(const SbKey *key, const SbWalHeader *h, uint8_t raw[SB_WAL_HEADER_SIZE])
{
	SbWalKeys	k;
	SbError		err;
	bool		ok = sb_wal_keys_derive(key, h, &k, &err) && sb_wal_header_encode(h, &k, raw, &err);

	if (!ok)
		th_diag_error("encoding a sealed header", &err);
	sb_wal_keys_clear(&k);
	return ok;
}

/* Are the payload keys of A and B (each derived under KEY) different? */
static bool
keys_differ(const SbKey *key, const SbWalHeader *a, const SbWalHeader *b)
{
	SbWalKeys	x,
				y;
	SbError		err;
	bool		differ;

	differ = sb_wal_keys_derive(key, a, &x, &err) && sb_wal_keys_derive(key, b, &y, &err) &&
		memcmp(x.payload, y.payload, sizeof(x.payload)) != 0 &&
		memcmp(x.header, y.header, sizeof(x.header)) != 0 && memcmp(x.mask, y.mask, sizeof(x.mask)) != 0;
	sb_wal_keys_clear(&x);
	sb_wal_keys_clear(&y);
	return differ;
}

/* Every bit of a sealed header flipped in turn: each refused under the key. */
static void
flip_header_bits(const SbKey *key, const uint8_t raw[SB_WAL_HEADER_SIZE])
{
	uint8_t		copy[SB_WAL_HEADER_SIZE];
	SbWalHeader back;
	SbError		err;
	int			refused = 0,
				bit;

	for (bit = 0; bit < SB_WAL_HEADER_SIZE * 8; bit++)
	{
		memcpy(copy, raw, sizeof(copy));
		copy[bit / 8] ^= (uint8_t) (1 << (bit % 8));
		if (!sb_wal_header_decode(copy, key, &back, NULL, &err))
			refused++;
		else
			diag("header bit %d flipped was taken", bit);
	}
	is_int(refused, SB_WAL_HEADER_SIZE * 8, "every one of the header's %d bits flipped is refused",
		   SB_WAL_HEADER_SIZE * 8);
}

/* The keys a file's place gives, and the lengths a sealed header may give. */
static void
check_keys_and_lengths(const SbKey *key)
{
	SbWalHeader h,
				other,
				back;
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbError		err;

	sample_header(&h);
	other = h;
	snprintf(other.name, sizeof(other.name), "00000002.history");
	ok(keys_differ(key, &h, &other), "another name gives other keys");
	other = h;
	other.system_identifier++;
	ok(keys_differ(key, &h, &other), "another system identifier gives other keys");
	other = h;
	other.salt[0] ^= 1;
	ok(keys_differ(key, &h, &other), "another salt gives other keys: no two files share one");

	other = h;
	other.codec = SB_CODEC_NONE;
	other.stored_len = other.raw_len + SB_WAL_SEAL_OVERHEAD;
	ok(encode_sealed(key, &other, raw) && sb_wal_header_decode(raw, key, &back, NULL, &err),
	   "uncompressed: stored = raw + nonce + tag");
	other.stored_len = other.raw_len;
	ok(encode_sealed(key, &other, raw) && !sb_wal_header_decode(raw, key, &back, NULL, &err) &&
	   strstr(err.message, "uncompressed, yet 972 bytes stored for 1000") != NULL,
	   "uncompressed and no room for nonce and tag: refused (%s)", err.message);
	other = h;
	other.stored_len = other.raw_len + SB_WAL_SEAL_OVERHEAD;
	ok(encode_sealed(key, &other, raw) && !sb_wal_header_decode(raw, key, &back, NULL, &err) &&
	   strstr(err.message, "a writer keeps zstd only when smaller") != NULL, "zstd no smaller: refused");
	other.stored_len = 10;
	ok(encode_sealed(key, &other, raw) && !sb_wal_header_decode(raw, key, &back, NULL, &err) &&
	   strstr(err.message, "fewer than a sealed payload's nonce and tag") != NULL,
	   "fewer bytes than nonce and tag: refused");
}

/* Sealed headers: read back, masked, tagged, and refused without their key or once altered. */
void
test_wal_sealed_header(void)
{
	SbKey		key,
				other_key;
	SbWalHeader h,
				back,
				plain;
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbError		err;

	th_wal_key(&key, 'k');
	th_wal_key(&other_key, 'o');
	sample_header(&h);
	ok(encode_sealed(&key, &h, raw) && sb_wal_header_decode(raw, &key, &back, NULL, &err) &&
	   memcmp(&h, &back, sizeof(h)) == 0, "a sealed header reads back whole under its key");
	ok(raw[8] == 2 && raw[10] == 0, "as format 2.0");
	ok(memcmp(raw + 88, &h.raw_hash, 8) != 0 && sb_format_get32(raw + 84) != h.crc32c,
	   "its XXH3-64 and CRC-32C are not in the clear");
	ok(!sb_wal_header_decode(raw, NULL, &back, NULL, &err) && err.code == SB_EKEY,
	   "without a key: SB_EKEY");
	like(err.message, "encryption key is needed", "saying the key is needed");
	ok(!sb_wal_header_decode(raw, &other_key, &back, NULL, &err) && err.code == SB_ECORRUPT,
	   "under another key (a header made without this one): refused as damaged");
	like(err.message, "tag does not match", "saying its tag does not match");
	flip_header_bits(&key, raw);

	ok(sb_wal_header_recognise(raw, NULL, false, &back, &err) && back.sealed,
	   "retention recognises it without the key, by its fields");
	ok(!sb_wal_header_recognise(raw, &other_key, false, &back, &err), "but not under another key");
	h.stored_len = 0;
	h.raw_hash = 0;
	h.crc32c = 0;
	ok(encode_sealed(&key, &h, raw) && sb_wal_header_recognise(raw, &key, true, &back, &err),
	   "a provisional header (a temporary file's) is recognised");
	ok(!sb_wal_header_decode(raw, &key, &back, NULL, &err), "and can never pass for a finished one");

	memset(&plain, 0, sizeof(plain));
	plain.major = SB_WAL_FORMAT_MAJOR;
	plain.system_identifier = TH_WAL_SYSID;
	snprintf(plain.name, sizeof(plain.name), "00000002.history");
	plain.raw_len = plain.stored_len = 40;
	ok(sb_wal_header_encode(&plain, NULL, raw, &err) && !sb_wal_header_decode(raw, &key, &back, NULL, &err) &&
	   err.code == SB_ECORRUPT, "a header in the clear (1.0) under a key: refused as damaged");
	like(err.message, "it is in the clear", "saying so");
	ok(sb_wal_header_decode(raw, NULL, &back, NULL, &err), "it reads without a key, as before");
	check_keys_and_lengths(&key);
}

/* Does the file at PATH hold LEN bytes of NEEDLE anywhere? */
static bool
file_holds(const char *path, const void *needle, size_t len)
{
	size_t		size;
	uint8_t    *bytes = th_read_file(path, &size);
	bool		found = bytes != NULL && memmem(bytes, size, needle, len) != NULL;

	free(bytes);
	return found;
}

/* The segments and history files of the round trip, pushed sealed into W. */
static void
push_sealed_set(ThWal *w, const SbKey *key, SbWalPushResult *random_r)
{
	char		path[PATH_MAX];
	SbWalPushResult r;

	th_wal_source(w, th_wal_name(1, 1), TH_WAL_SEGMENT, 1, true, path);
	th_wal_source(w, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, false, path);
	th_wal_text_source(w, "00000002.history", HISTORY_TEXT, path);
	ok(push(w, key, th_wal_name(1, 1), &r) && r.codec == SB_CODEC_ZSTD && r.stored_bytes < r.raw_bytes / 2,
	   "a compressible segment archived sealed, compressed first");
	ok(push(w, key, th_wal_name(1, 2), random_r) && random_r->codec == SB_CODEC_NONE &&
	   random_r->stored_bytes == random_r->raw_bytes + SB_WAL_SEAL_OVERHEAD,
	   "a random segment archived sealed as it is: nonce and tag added (%llu bytes)",
	   (unsigned long long) random_r->stored_bytes);
	ok(push(w, key, "00000002.history", &r) && r.destination == -1, "a history file, into both destinations");
}

/* What the archive holds shows nothing of the WAL: no byte run of the files, their hashes masked. */
static void
check_nothing_in_clear(ThWal *w)
{
	char		path[PATH_MAX];
	char		source[PATH_MAX];
	size_t		len;
	uint8_t    *random_bytes = th_read_file(th_path(source, "%s/%s", w->f.src, th_wal_name(1, 2)), &len);
	int			d = th_wal_holder(w, th_wal_name(1, 2));

	th_wal_archived(w, (uint32_t) d, th_wal_name(1, 2), path);
	ok(random_bytes != NULL && !file_holds(path, random_bytes + 4096, 32),
	   "the random segment's bytes are not in its archived file");
	ok(!file_holds(th_wal_archived(w, 0, "00000002.history", path), "no recovery target", 18),
	   "nor the history file's text in its");
	ok(file_holds(path, "SBWALFIL\002\000", 10), "which is of format 2.0");
	free(random_bytes);
}

/* Without the key, nothing sealed is read: each file a problem saying so, a get SB_EKEY. */
static void
check_without_key(ThWal *w, size_t files)
{
	SbWalDests	plain = under(w, NULL);
	SbWalListing l;
	SbError		err;
	uint64_t	read = 0,
				problems = 0;
	size_t		i,
				ekey = 0;

	ok(sb_wal_list(&plain, &l, &err) && l.count == 0 && l.nproblems == files,
	   "listed without the key: no file taken, each a problem");
	for (i = 0; i < l.nproblems; i++)
		ekey += l.problems[i].code == SB_EKEY && l.problems[i].name[0] != '\0' &&
			strstr(l.problems[i].message, l.problems[i].name) != NULL;
	is_int(ekey, files, "each SB_EKEY, naming its file");
	sb_wal_listing_free(&l);
	ok(!get(w, &plain, th_wal_name(1, 1), &err) && err.code == SB_EKEY, "a get without the key: SB_EKEY");
	like(err.message, "key is needed", "saying the key is needed");
	like(err.message, th_wal_name(1, 1), "naming the file");
	ok(sb_wal_verify(&plain, NULL, NULL, &read, &problems, &err) && problems == files,
	   "verify without the key finds every file a problem");
}

/* Pushed sealed, read back under the key by every reader; nothing without it. */
void
test_wal_sealed_roundtrip(void)
{
	ThWal		w;
	SbKey		key;
	SbWalDests	d;
	SbWalPushResult r;
	SbWalListing l;
	SbWalContinuity c;
	SbWalGetOptions g;
	SbWalGetResult gr;
	SbError		err;
	char		spool[PATH_MAX],
				target[PATH_MAX];
	uint64_t	files = 0,
				problems = 0;

	th_wal_fixture(&w, "walsealed", 2);
	th_wal_key(&key, 'k');
	d = under(&w, &key);
	push_sealed_set(&w, &key, &r);
	check_nothing_in_clear(&w);
	ok(th_wal_get_equal_from(&w, &d, th_wal_name(1, 1), &err) &&
	   th_wal_get_equal_from(&w, &d, th_wal_name(1, 2), &err) &&
	   th_wal_get_equal_from(&w, &d, "00000002.history", &err), "each restores byte for byte under the key");
	ok(sb_wal_list(&d, &l, &err) && l.count == 4 && l.nproblems == 0 && l.entries[0].info.sealed,
	   "the listing takes all four files, sealed");
	sb_wal_listing_free(&l);
	ok(sb_wal_verify(&d, NULL, NULL, &files, &problems, &err) && files == 4 && problems == 0,
	   "verify reads them whole: nothing wrong");
	ok(sb_wal_check_continuity(&d, th_wal_name(1, 1), th_wal_name(1, 2), 0, &c, &err) && c.complete,
	   "segments 1 to 2 are there");
	ok(push(&w, &key, th_wal_name(1, 2), &r) && r.already_archived,
	   "pushed again: already archived (read back whole under the key)");

	memset(&g, 0, sizeof(g));
	g.dests = d;
	g.prefetch = 1;
	g.spool = th_path(spool, "%s/spool", w.f.root);
	ok(sb_wal_get(&g, th_wal_name(1, 1), th_path(target, "%s/got", w.f.root), &gr, &err) && gr.prefetched == 1,
	   "a get fetches the next segment ahead, sealed");
	ok(sb_wal_get(&g, th_wal_name(1, 2), target, &gr, &err) && gr.from_spool,
	   "and the next get takes it from the spool, opened there");
	check_without_key(&w, 4);
	th_wal_fixture_done(&w);
}

/* ---------- refusals ---------- */

/* Put the bytes of file FROM at TO (what an attacker with the storage does). */
static void
copy_file(const char *from, const char *to)
{
	size_t		len;
	uint8_t    *bytes = th_read_file(from, &len);

	if (bytes == NULL || !th_write_file(to, bytes, len, 0600))
		diag("could not copy %s to %s", from, to);
	free(bytes);
}

/*
 * NAME of W, in its place in destination 0, refused by get and verify,
 * saying WHY; and, when its header gives it away (IN_HEADER), by the
 * listing and the continuity check, which read headers alone.
 */
static void
expect_refused_by(ThWal *w, const SbKey *key, const char *name, const char *why, bool in_header,
				  const char *what)
{
	SbWalDests	d = under(w, key);
	SbWalListing l;
	SbWalContinuity c;
	SbError		err;
	uint64_t	files = 0,
				problems = 0;
	bool		listed_problem = false;
	size_t		i;

	ok(!get(w, &d, name, &err) && err.code == SB_ECORRUPT, "%s: a get refuses it as damaged", what);
	like(err.message, why, "%s: saying why", what);
	like(err.message, name, "%s: naming the file", what);
	ok(sb_wal_verify(&d, NULL, NULL, &files, &problems, &err) && problems >= 1, "%s: verify reports it", what);
	if (!in_header)
		return;
	ok(sb_wal_list(&d, &l, &err), "%s: listed", what);
	for (i = 0; i < l.nproblems; i++)
		listed_problem = listed_problem || (strcmp(l.problems[i].name, name) == 0 &&
											strstr(l.problems[i].message, why) != NULL);
	ok(listed_problem, "%s: the listing does not take it, and says why", what);
	sb_wal_listing_free(&l);
	ok(sb_wal_check_continuity(&d, th_wal_name(1, 1), th_wal_name(1, 3), 0, &c, &err) && !c.complete &&
	   strcmp(c.first_missing, name) == 0, "%s: continuity has a gap there", what);
	like(c.message, "cannot be used", "%s: saying the segment there cannot be used", what);
}

/* As expect_refused_by, for what a header gives away. */
static void
expect_refused(ThWal *w, const SbKey *key, const char *name, const char *why, const char *what)
{
	expect_refused_by(w, key, name, why, true, what);
}

/* Segments 1 to 3 of a one-destination archive W sealed with KEY; each file's bytes kept in SAVED. */
static void
sealed_three(ThWal *w, const SbKey *key)
{
	char		path[PATH_MAX];
	SbWalPushResult r;
	uint64_t	i;

	for (i = 1; i <= 3; i++)
	{
		th_wal_source(w, th_wal_name(1, i), TH_WAL_SEGMENT, (uint32_t) i, false, path);
		if (!push(w, key, th_wal_name(1, i), &r))
			diag("segment %llu not archived", (unsigned long long) i);
	}
}

/* Segment 2 as archive OTHER (its sysid SYSID, sealed with KEY or in the clear) holds it, put in W's place. */
static void
plant_from(ThWal *w, ThWal *other, uint64_t sysid, const SbKey *key, const char *what)
{
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	char		from[PATH_MAX];

	th_wal_source(other, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, false, path);
	th_wal_options(&o, other);
	o.system_identifier = sysid;
	o.encryption_key = key;
	ok(th_wal_push_one(&o, other, th_wal_name(1, 2), &r), "%s: archived there", what);
	th_path(from, "%s/wal/%llu/%s.sbw", other->f.dest[0], (unsigned long long) sysid, th_wal_name(1, 2));
	copy_file(from, th_wal_archived(w, 0, th_wal_name(1, 2), path));
}

/* A payload moved under another file's header: both authentic, together refused. */
static void
swap_payload(ThWal *w, const SbKey *key, const uint8_t *seg2, size_t len2)
{
	char		path[PATH_MAX];
	size_t		len1;
	uint8_t    *seg1 = th_read_file(th_wal_archived(w, 0, th_wal_name(1, 1), path), &len1);

	if (seg1 != NULL && len1 == len2)
	{
		memcpy(seg1, seg2, SB_WAL_HEADER_SIZE);
		th_write_file(th_wal_archived(w, 0, th_wal_name(1, 2), path), seg1, len1, 0600);
	}
	free(seg1);
	expect_refused_by(w, key, th_wal_name(1, 2), "authentication failed", false,
					  "segment 1's payload under segment 2's header");
}

/* Renamed, another cluster's, forged without the key, in the clear, a payload moved: all refused. */
void
test_wal_sealed_refusals(void)
{
	ThWal		w,
				elsewhere;
	SbKey		key,
				other_key;
	char		path[PATH_MAX];
	char		other[PATH_MAX];
	uint8_t    *seg2;
	size_t		len2;
	SbError		err;
	SbWalDests	d;

	th_wal_fixture(&w, "walsealedno", 1);
	th_wal_key(&key, 'k');
	th_wal_key(&other_key, 'o');
	d = under(&w, &key);
	sealed_three(&w, &key);
	seg2 = th_read_file(th_wal_archived(&w, 0, th_wal_name(1, 2), path), &len2);

	copy_file(th_wal_archived(&w, 0, th_wal_name(1, 1), path), th_wal_archived(&w, 0, th_wal_name(1, 2), other));
	expect_refused(&w, &key, th_wal_name(1, 2), "not \"000000010000000000000002\"", "segment 1 renamed as segment 2");

	th_wal_fixture(&elsewhere, "walsealedother", 1);
	plant_from(&w, &elsewhere, TH_WAL_SYSID + 1, &key, "another cluster's segment, same key");
	expect_refused(&w, &key, th_wal_name(1, 2), "belongs to the cluster of system identifier 7301234567890123457",
				   "another cluster's segment under this one's name");
	th_wal_fixture_done(&elsewhere);

	th_wal_fixture(&elsewhere, "walsealedforged", 1);
	plant_from(&w, &elsewhere, TH_WAL_SYSID, &other_key, "a segment sealed with another key");
	expect_refused(&w, &key, th_wal_name(1, 2), "tag does not match", "a segment forged without the key");
	th_wal_fixture_done(&elsewhere);

	th_wal_fixture(&elsewhere, "walsealedplain", 1);
	plant_from(&w, &elsewhere, TH_WAL_SYSID, NULL, "a segment in the clear");
	expect_refused(&w, &key, th_wal_name(1, 2), "it is in the clear", "a segment in the clear under the key");
	th_wal_fixture_done(&elsewhere);

	if (seg2 != NULL)
		swap_payload(&w, &key, seg2, len2);
	th_write_file(th_wal_archived(&w, 0, th_wal_name(1, 2), path), seg2, len2, 0600);
	ok(get(&w, &d, th_wal_name(1, 2), &err), "segment 2 put back: it restores");
	free(seg2);
	th_wal_fixture_done(&w);
}

/* Every bit of a small sealed file flipped in turn (header, nonce, ciphertext, tag): each refused. */
static void
flip_every_bit(ThWal *w, const SbKey *key, const char *name)
{
	SbWalDests	d = under(w, key);
	SbError		err;
	char		path[PATH_MAX];
	size_t		len,
				refused = 0,
				bit;
	uint8_t    *bytes = th_read_file(th_wal_archived(w, 0, name, path), &len);

	for (bit = 0; bytes != NULL && bit < len * 8; bit++)
	{
		th_flip_byte(path, bit / 8, (uint8_t) (1 << (bit % 8)));
		if (!get(w, &d, name, &err) && (err.code == SB_ECORRUPT || err.code == SB_EVERSION))
			refused++;
		else
			diag("bit %zu: %s", bit, err.message);
		th_flip_byte(path, bit / 8, (uint8_t) (1 << (bit % 8)));
	}
	is_int(refused, len * 8, "%s: every one of its %zu bits flipped is refused (damaged, or of a version not read)", name, len * 8);
	ok(get(w, &d, name, &err), "%s: unflipped, it restores", name);
	free(bytes);
}

/* A sealed file cut at LEN bytes: refused. */
static void
expect_cut_refused(ThWal *w, const SbKey *key, const char *name, size_t len, const char *what)
{
	SbWalDests	d = under(w, key);
	SbError		err;
	char		path[PATH_MAX];
	size_t		size;
	uint8_t    *bytes = th_read_file(th_wal_archived(w, 0, name, path), &size);

	if (bytes != NULL && len <= size)
		th_write_file(path, bytes, len, 0600);
	ok(!get(w, &d, name, &err) && err.code == SB_ECORRUPT, "%s: refused", what);
	if (bytes != NULL)
		th_write_file(path, bytes, size, 0600);
	free(bytes);
}

/* Damage: any bit, any cut. */
void
test_wal_sealed_damage(void)
{
	ThWal		w;
	SbKey		key;
	SbWalPushResult r;
	char		path[PATH_MAX];
	size_t		size = 0;
	uint8_t    *bytes;
	const char *backup_name = "000000010000000000000002.00000028.backup";

	th_wal_fixture(&w, "walsealeddamage", 1);
	th_wal_key(&key, 'k');
	th_wal_text_source(&w, "00000002.history", HISTORY_TEXT, path);
	th_wal_text_source(&w, backup_name, "START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\n"
					   "START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\n"
					   "START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\n", path);
	ok(push(&w, &key, "00000002.history", &r) && push(&w, &key, backup_name, &r),
	   "a history file and a backup history file archived sealed");
	flip_every_bit(&w, &key, "00000002.history");
	flip_every_bit(&w, &key, backup_name);
	bytes = th_read_file(th_wal_archived(&w, 0, "00000002.history", path), &size);
	free(bytes);
	expect_cut_refused(&w, &key, "00000002.history", size - 1, "the tag cut by a byte");
	expect_cut_refused(&w, &key, "00000002.history", size - SB_CRYPTO_TAG_LEN, "the tag cut off");
	expect_cut_refused(&w, &key, "00000002.history", SB_WAL_HEADER_SIZE + SB_CRYPTO_NONCE_LEN, "only header and nonce");
	expect_cut_refused(&w, &key, "00000002.history", SB_WAL_HEADER_SIZE, "the header alone");
	expect_cut_refused(&w, &key, "00000002.history", 60, "half a header");
	th_wal_fixture_done(&w);
}

/* A push over what is there: under the key a copy in the clear is rewritten sealed; without it a sealed one is never touched. */
void
test_wal_sealed_push_over(void)
{
	ThWal		w;
	SbKey		key;
	SbWalDests	d;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	size_t		before,
				after;
	uint8_t    *bytes;

	th_wal_fixture(&w, "walsealedover", 1);
	th_wal_key(&key, 'k');
	d = under(&w, &key);
	th_wal_source(&w, th_wal_name(1, 1), TH_WAL_SEGMENT, 1, true, path);
	ok(push(&w, NULL, th_wal_name(1, 1), &r), "a segment archived in the clear (before a key was set)");
	ok(push(&w, &key, th_wal_name(1, 1), &r) && r.written == 1,
	   "pushed again under the key: the copy in the clear is written again, sealed");
	ok(th_wal_get_equal_from(&w, &d, th_wal_name(1, 1), &err), "it restores under the key");
	bytes = th_read_file(th_wal_archived(&w, 0, th_wal_name(1, 1), path), &before);
	ok(!push(&w, NULL, th_wal_name(1, 1), &r) && r.error.code == SB_EKEY,
	   "pushed without the key over the sealed copy: refused, SB_EKEY");
	like(r.error.message, "key is needed", "saying the key is needed");
	free(th_read_file(path, &after));
	ok(bytes != NULL && before == after && file_holds(path, bytes, before), "and the sealed copy is untouched");
	free(bytes);
	th_wal_fixture_done(&w);
}

/* Retention sheds both formats before the cutoff; under the key a forged file is kept. */
void
test_wal_sealed_retention(void)
{
	ThWal		w,
				elsewhere;
	SbKey		key,
				other_key;
	SbWalDests	d;
	SbWalRemoval rm;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	char		from[PATH_MAX];
	uint64_t	i;

	th_wal_fixture(&w, "walsealedkeep", 1);
	th_wal_key(&key, 'k');
	th_wal_key(&other_key, 'o');
	d = under(&w, &key);
	for (i = 1; i <= 4; i++)
	{
		th_wal_source(&w, th_wal_name(1, i), TH_WAL_SEGMENT, (uint32_t) i, true, path);
		push(&w, i == 1 ? NULL : &key, th_wal_name(1, i), &r);
	}
	th_wal_fixture(&elsewhere, "walsealedkeep2", 1);
	th_wal_source(&elsewhere, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, true, path);
	push(&elsewhere, &other_key, th_wal_name(1, 2), &r);
	copy_file(th_wal_archived(&elsewhere, 0, th_wal_name(1, 2), from), th_wal_archived(&w, 0, th_wal_name(1, 2), path));
	th_wal_fixture_done(&elsewhere);

	ok(sb_wal_remove_before(&d, th_wal_name(1, 4), false, &rm, &err) && rm.files == 2 && rm.kept == 1,
	   "under the key: the file in the clear and the sealed one go, the forged one stays (%s)", rm.detail);
	ok(!th_exists(th_wal_archived(&w, 0, th_wal_name(1, 1), path)) &&
	   !th_exists(th_wal_archived(&w, 0, th_wal_name(1, 3), path)) &&
	   th_exists(th_wal_archived(&w, 0, th_wal_name(1, 2), path)), "those two, and not the forged one");
	like(rm.detail, "tag does not match", "saying why it stays");
	d.key = NULL;
	ok(sb_wal_remove_before(&d, th_wal_name(1, 4), false, &rm, &err) && rm.files == 1 && rm.kept == 0,
	   "without a key a sealed file is recognised by its fields, and goes");
	ok(th_exists(th_wal_archived(&w, 0, th_wal_name(1, 4), path)), "segment 4 is kept");
	th_wal_fixture_done(&w);
}
