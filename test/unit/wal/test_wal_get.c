/*
 * test_wal_get.c
 *		Restoring archived WAL files: every damage refused, "not in the
 *		archive" told apart from "cannot tell", copies that disagree, and
 *		the spool of segments fetched ahead.  Refusals, copies, prefetch and
 *		forged headers run once per store driver (drivers.h): the archive in
 *		local folders, then in prefixes of a bucket (the spool and the
 *		target stay local: they are the server's).  Flipping every bit stays
 *		local: it rewrites the archived file twice per bit, thousands of
 *		objects put in a bucket, and reads it through the same checks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "tests.h"
#include "wal_fixture.h"
#include "wal/wal_internal.h"

#define HISTORY_TEXT "1\t0/500000A0\tno recovery target specified\n"

/* Restore NAME to ROOT/target with options O; *R and *ERR say how it went. */
static bool
get(const ThWal *w, const SbWalGetOptions *o, const char *name, SbWalGetResult *r, SbError *err)
{
	char		target[PATH_MAX];

	unlink(th_path(target, "%s/target", w->f.root));
	return sb_wal_get(o, name, target, r, err);
}

/* Flip every bit of archived file PATH in turn: each must make get refuse it. */
static void
flip_every_bit(const ThWal *w, const char *name, const char *path)
{
	SbWalGetOptions o = {.dests = w->dests};
	SbWalGetResult r;
	SbError		err;
	size_t		len;
	uint8_t    *bytes = th_read_file(path, &len);
	size_t		refused = 0,
				bit;
	bool		named = true;
	char		target[PATH_MAX];

	for (bit = 0; bytes != NULL && bit < len * 8; bit++)
	{
		th_flip_byte(path, bit / 8, (uint8_t) (1 << (bit % 8)));
		if (!get(w, &o, name, &r, &err) && (err.code == SB_ECORRUPT || err.code == SB_EVERSION))
			refused++;
		else
			diag("bit %zu of %s: %s", bit, name, err.message);
		named = named && strstr(err.message, name) != NULL;
		th_flip_byte(path, bit / 8, (uint8_t) (1 << (bit % 8)));
	}
	is_int(refused, len * 8, "%s: every one of its %zu bits flipped is refused", name, len * 8);
	ok(named, "%s: each refusal names the file", name);
	ok(!th_exists(th_path(target, "%s/target", w->f.root)), "%s: and nothing is ever restored", name);
	ok(get(w, &o, name, &r, &err), "%s: unflipped, it restores", name);
	free(bytes);
}

/* A small file of each codec, in one destination (so no other copy stands in): every bit flip refused. */
void
test_wal_get_bitflips(void)
{
	static const char *backup_name = "000000010000000000000002.00000028.backup";
	ThWal		w;
	char		text[2048];
	char		path[PATH_MAX];
	int			i;

	th_wal_fixture(&w, "walflip", 1);
	text[0] = '\0';
	for (i = 0; i < 12; i++)
		strcat(text, "START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\n");
	th_wal_text_source(&w, backup_name, text, path);
	th_wal_text_source(&w, "00000002.history", HISTORY_TEXT, path);
	ok(th_wal_archive(&w, backup_name) && th_wal_archive(&w, "00000002.history"), "a backup history file and a timeline history file archived");
	flip_every_bit(&w, backup_name, th_wal_archived(&w, 0, backup_name, path));
	flip_every_bit(&w, "00000002.history", th_wal_archived(&w, 0, "00000002.history", path));
	th_wal_fixture_done(&w);
}

/* Rewrite the version of archived file PATH to MAJOR.0 and seal its header again. */
static void
set_version(const char *path, uint16_t major)
{
	size_t		len;
	uint8_t    *bytes = th_dest_read(path, &len);

	if (bytes == NULL)
		return;
	bytes[8] = (uint8_t) major;
	bytes[9] = (uint8_t) (major >> 8);
	sb_format_seal(bytes, SB_WAL_HEADER_SIZE);
	th_dest_write(path, bytes, len);
	free(bytes);
}

/* Not there, cannot tell, versions, targets. */
static void
get_refusals(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	char		path[PATH_MAX];
	char		moved[PATH_MAX];
	const char *seg = th_wal_name(1, 1);
	int			other;

	th_wal_fixture_on(&w, d, "walgetrefused", 2);
	memset(&o, 0, sizeof(o));
	o.dests = w.dests;
	ok(!get(&w, &o, "00000002.history", &r, &err) && err.code == SB_ENOTFOUND,
	   "a file never archived (nor any destination made): SB_ENOTFOUND");
	like(err.message, "is not in the archive", "saying so");
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 1, true, path);
	ok(th_wal_archive(&w, seg), "a segment archived");
	ok(!get(&w, &o, th_wal_name(1, 2), &r, &err) && err.code == SB_ENOTFOUND,
	   "the next one, not archived: SB_ENOTFOUND");
	/* The other destination missing: a folder renamed away, or a bucket that does not exist. */
	other = th_wal_holder(&w, seg) == 0 ? 1 : 0;
	if (!d->s3)
		rename(w.f.dest[other], th_path(moved, "%s/gone", w.f.root));
	else
		w.f.dests[other] = "s3://no-such-bucket-sb/gone";
	ok(get(&w, &o, seg, &r, &err), "with the other destination missing, the segment still restores");
	ok(!get(&w, &o, th_wal_name(1, 2), &r, &err) && err.code == SB_EIO,
	   "but a file not found is \"cannot tell\", SB_EIO, not \"not there\"");
	like(err.message, d->s3 ? "bucket \"no-such-bucket-sb\" does not exist" : "does not exist (is its device mounted?)",
		 "saying why (%s)", err.message);
	is_int(r.unreachable, other + 1, "the result names the destination not looked at");
	if (!d->s3)
		rename(moved, w.f.dest[other]);
	else
		w.f.dests[other] = w.f.dest[other];

	set_version(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, seg), seg, path), 3);
	ok(!get(&w, &o, seg, &r, &err) && err.code == SB_EVERSION, "a copy of format 3.0 is refused as SB_EVERSION");
	like(err.message, "unsupported WAL archive format version 3.0 (this program reads 1.x and 2.x)", "naming both versions");
	set_version(path, 1);
	ok(get(&w, &o, seg, &r, &err), "set back to 1.0, it restores");

	ok(!sb_wal_get(&o, seg, th_path(path, "%s/", w.f.root), &r, &err) && err.code == SB_EINVAL,
	   "a target that is a folder is refused");
	ok(!sb_wal_get(&o, seg, th_path(path, "%s/nowhere/x", w.f.root), &r, &err) && err.code == SB_EIO,
	   "a target in a folder that is not there fails");
	th_write_file(th_path(path, "%s/target", w.f.root), "old", 3, 0600);
	ok(sb_wal_get(&o, seg, path, &r, &err) && th_files_equal(path, th_path(moved, "%s/%s", w.f.src, seg)),
	   "a target that exists is replaced (RECOVERYXLOG left by a previous call)");
	ok(!sb_wal_get(&o, "../000000010000000000000001", path, &r, &err) && err.code == SB_EINVAL,
	   "a name that is not a WAL file's is refused");
	o.prefetch = 2;
	ok(!sb_wal_get(&o, seg, path, &r, &err) && err.code == SB_EINVAL, "prefetch without a spool is refused");
	o.spool = moved;
	o.prefetch = SB_WAL_MAX_PREFETCH + 1;
	ok(!sb_wal_get(&o, seg, path, &r, &err) && err.code == SB_EINVAL, "prefetch beyond %d is refused",
	   SB_WAL_MAX_PREFETCH);
	o.dests.count = 0;
	ok(!sb_wal_get(&o, seg, path, &r, &err) && err.code == SB_EINVAL, "no destination is refused");
	th_wal_fixture_done(&w);
}

void
test_wal_get_refusals(void)
{
	th_each_driver(get_refusals, NULL);
}

/* Copies in two destinations: a damaged one is passed over; two that differ are refused. */
static void
get_copies(const ThDriver *d, void *arg)
{
	ThWal		w;
	ThWal		other;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbWalFound	found;
	SbError		err;
	char		path[PATH_MAX];
	const char *seg = th_wal_name(1, 5);

	th_wal_fixture_on(&w, d, "walcopies", 2);
	memset(&o, 0, sizeof(o));
	o.dests = w.dests;
	th_wal_text_source(&w, "00000002.history", HISTORY_TEXT, path);
	ok(th_wal_archive(&w, "00000002.history"), "a history file in both destinations");
	ok(sb_wal_find(&w.dests, "00000002.history", &found, &err) && found.holders == 3,
	   "find says both hold it");
	th_dest_flip_byte(th_wal_archived(&w, 0, "00000002.history", path), 140, 0x04);
	ok(get(&w, &o, "00000002.history", &r, &err) && r.destination == 1,
	   "destination 1's copy damaged: restored from destination 2");
	th_dest_flip_byte(th_wal_archived(&w, 1, "00000002.history", path), 20, 0x04);
	ok(sb_wal_find(&w.dests, "00000002.history", &found, &err) && found.holders == 1 && found.damaged == 2,
	   "a damaged header is told from a good one");
	ok(!get(&w, &o, "00000002.history", &r, &err) && err.code == SB_ECORRUPT,
	   "both damaged (a payload, a header): refused");
	like(err.message, "00000002.history", "naming the file");

	/* The same segment name, other contents, archived by another cluster copy into destination 2. */
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 5, true, path);
	ok(th_wal_archive(&w, seg), "a segment archived");
	th_wal_fixture_on(&other, d, "walcopies2", 1);
	th_wal_source(&other, seg, TH_WAL_SEGMENT, 6, true, path);
	snprintf(other.f.dest[0], sizeof(other.f.dest[0]), "%s", w.f.dest[th_wal_holder(&w, seg) == 0 ? 1 : 0]);
	ok(th_wal_archive(&other, seg), "another copy of it with other contents in the other destination");
	ok(!sb_wal_find(&w.dests, seg, &found, &err) && err.code == SB_ECORRUPT, "find refuses the pair");
	like(err.message, "two different", "saying the archive holds two different copies");
	ok(!get(&w, &o, seg, &r, &err) && err.code == SB_ECORRUPT, "and so does get");
	th_wal_fixture_done(&other);
	th_wal_fixture_done(&w);
}

void
test_wal_get_copies(void)
{
	th_each_driver(get_copies, NULL);
}

/* Files in the spool, as names. */
static bool
spooled(const char *spool, const char *name)
{
	char		path[PATH_MAX];

	return th_exists(th_path(path, "%s/%s.sbw", spool, name));
}

/* Prefetch: the next segments fetched in parallel into the spool, later gets served from it. */
static void
get_prefetch(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	char		spool[PATH_MAX];
	char		path[PATH_MAX];
	char		target[PATH_MAX];
	uint32_t	s;

	th_wal_fixture_on(&w, d, "walprefetch", 3);
	for (s = 1; s <= 10; s++)
		th_wal_source(&w, th_wal_name(1, s), TH_WAL_SEGMENT, s, s % 2 == 0, path);
	for (s = 1; s <= 10; s++)
		th_wal_archive(&w, th_wal_name(1, s));
	memset(&o, 0, sizeof(o));
	o.dests = w.dests;
	o.prefetch = 4;
	o.spool = th_path(spool, "%s/spool", w.f.root);
	th_path(target, "%s/target", w.f.root);

	ok(get(&w, &o, th_wal_name(1, 1), &r, &err), "segment 1 restored with prefetch 4");
	ok(!r.from_spool && r.prefetched == 4, "from the archive, with 4 fetched ahead");
	ok(spooled(spool, th_wal_name(1, 2)) && spooled(spool, th_wal_name(1, 5)) &&
	   !spooled(spool, th_wal_name(1, 6)), "segments 2 to 5 are in the spool");
	ok(get(&w, &o, th_wal_name(1, 2), &r, &err) && r.from_spool, "segment 2: served from the spool");
	ok(th_files_equal(target, th_path(path, "%s/%s", w.f.src, th_wal_name(1, 2))), "exactly");
	ok(!spooled(spool, th_wal_name(1, 2)) && spooled(spool, th_wal_name(1, 6)) && r.prefetched == 1,
	   "its copy is gone, and segment 6 was fetched (3 to 5 were there)");

	th_flip_byte(th_path(path, "%s/%s.sbw", spool, th_wal_name(1, 3)), 1000, 0x80);
	ok(get(&w, &o, th_wal_name(1, 3), &r, &err) && !r.from_spool,
	   "segment 3's spool copy damaged: read from the archive instead");
	ok(th_files_equal(target, th_path(path, "%s/%s", w.f.src, th_wal_name(1, 3))), "exactly");
	ok(r.spool_removed >= 1 && !spooled(spool, th_wal_name(1, 3)), "the damaged copy was removed");

	/* Stale files (earlier segments, a temporary file) go; a user's file stays. */
	th_write_file(th_path(path, "%s/%s.sbw", spool, th_wal_name(1, 1)), "old", 3, 0600);
	th_write_file(th_path(path, "%s/%s.sbw.tmp.1.2", spool, th_wal_name(1, 2)), "old", 3, 0600);
	th_write_file(th_path(path, "%s/notes.txt", spool), "mine", 4, 0600);
	ok(get(&w, &o, th_wal_name(1, 4), &r, &err) && r.from_spool, "segment 4 from the spool");
	ok(!spooled(spool, th_wal_name(1, 1)) && !th_exists(th_path(path, "%s/%s.sbw.tmp.1.2", spool, th_wal_name(1, 2))),
	   "files of earlier segments were removed");
	ok(th_exists(th_path(path, "%s/notes.txt", spool)), "a file that is not the spool's is left alone");

	o.prefetch = 0;
	ok(get(&w, &o, th_wal_name(1, 5), &r, &err) && r.from_spool && r.prefetched == 0,
	   "without prefetch the spool still serves");
	o.prefetch = 4;
	o.workers = 1;
	ok(get(&w, &o, th_wal_name(1, 6), &r, &err) && r.from_spool && r.prefetched == 2,
	   "one fetch at a time works too (9 and 10 fetched: 7 and 8 were there)");
	o.prefetch = 4;
	ok(get(&w, &o, th_wal_name(1, 10), &r, &err) && r.prefetched == 0,
	   "the last segment: nothing further to fetch, and no error");
	ok(!get(&w, &o, th_wal_name(1, 11), &r, &err) && err.code == SB_ENOTFOUND,
	   "past the end: not in the archive");
	th_wal_fixture_done(&w);
}

void
test_wal_get_prefetch(void)
{
	th_each_driver(get_prefetch, NULL);
}

/* A spool file of another cluster is not served; it is removed and the archive read. */
void
test_wal_get_foreign_spool(void)
{
	ThWal		w;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	char		spool[PATH_MAX];
	char		path[PATH_MAX];
	char		copy[PATH_MAX];
	size_t		len;
	uint8_t    *bytes;
	const char *seg = th_wal_name(1, 3);

	th_wal_fixture(&w, "walforeign", 1);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 3, true, path);
	th_wal_archive(&w, seg);
	memset(&o, 0, sizeof(o));
	o.dests = w.dests;
	o.spool = th_path(spool, "%s/spool", w.f.root);
	th_mkdir(spool, 0700);
	bytes = th_read_file(th_wal_archived(&w, 0, seg, path), &len);
	if (bytes != NULL)
	{
		bytes[16] ^= 1;			/* another system identifier, sealed again */
		sb_format_seal(bytes, SB_WAL_HEADER_SIZE);
		th_write_file(th_path(copy, "%s/%s.sbw", spool, seg), bytes, len, 0600);
	}
	free(bytes);
	ok(get(&w, &o, seg, &r, &err) && !r.from_spool, "a spool copy of another cluster is passed over");
	ok(!th_exists(copy) && r.spool_removed == 1, "and removed");
	th_wal_fixture_done(&w);
}

/* Add DELTA to the little-endian field of SIZE bytes at OFFSET of archived file PATH's header; seal again. */
static void
forge(const char *path, size_t offset, size_t size, int64_t delta)
{
	size_t		len;
	uint8_t    *bytes = th_dest_read(path, &len);
	uint64_t	v = 0;
	size_t		i;

	if (bytes == NULL)
		return;
	for (i = 0; i < size; i++)
		v |= (uint64_t) bytes[offset + i] << (8 * i);
	v += (uint64_t) delta;
	for (i = 0; i < size; i++)
		bytes[offset + i] = (uint8_t) (v >> (8 * i));
	sb_format_seal(bytes, SB_WAL_HEADER_SIZE);
	th_dest_write(path, bytes, len);
	free(bytes);
}

/* FORGE'd field makes get refuse NAME with MESSAGE; then put back. */
static void
expect_forged_refused(const ThWal *w, const char *name, const char *path, size_t offset, size_t size,
					  int64_t delta, const char *message, const char *what)
{
	SbWalGetOptions o = {.dests = w->dests};
	SbWalGetResult r;
	SbError		err;

	forge(path, offset, size, delta);
	ok(!get(w, &o, name, &r, &err) && err.code == SB_ECORRUPT, "%s: refused, though its header is sealed", what);
	like(err.message, message, "%s: saying so", what);
	forge(path, offset, size, -delta);
	ok(get(w, &o, name, &r, &err), "%s: put back, it restores", what);
}

/* Headers forged and sealed again, lengths changed, a link: every check behind the seal holds. */
static void
get_forged(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	char		packed[PATH_MAX];
	char		plain[PATH_MAX];
	char		path[PATH_MAX];
	const char *zstd_seg = th_wal_name(1, 1);
	const char *raw_seg = th_wal_name(1, 2);
	size_t		len;
	uint8_t    *bytes;

	th_wal_fixture_on(&w, d, "walforged", 1);
	th_wal_source(&w, zstd_seg, TH_WAL_SEGMENT, 1, true, path);
	th_wal_source(&w, raw_seg, TH_WAL_SEGMENT, 2, false, path);
	ok(th_wal_archive(&w, zstd_seg) && th_wal_archive(&w, raw_seg), "a compressed and a raw segment archived");
	th_wal_archived(&w, 0, zstd_seg, packed);
	th_wal_archived(&w, 0, raw_seg, plain);
	expect_forged_refused(&w, zstd_seg, packed, 64, 8, 1, "decompresses to 1048576 bytes, its header gives 1048577",
						  "a length one more than the frame holds");
	expect_forged_refused(&w, zstd_seg, packed, 64, 8, -1, "decompresses to more than the 1048575 bytes",
						  "a length one less than the frame holds");
	expect_forged_refused(&w, zstd_seg, packed, 96, 8, 1, "payload checksum mismatch", "another payload hash");
	expect_forged_refused(&w, raw_seg, plain, 88, 8, 1, "checksum mismatch of the WAL file's bytes", "another hash");
	expect_forged_refused(&w, raw_seg, plain, 104, 4, 1, "CRC-32C mismatch", "another CRC-32C");

	memset(&o, 0, sizeof(o));
	o.dests = w.dests;
	bytes = th_dest_read(plain, &len);
	if (bytes != NULL)
	{
		uint8_t    *longer = calloc(1, len + 1);

		th_dest_write(plain, bytes, len - 1);
		ok(!get(&w, &o, raw_seg, &r, &err) && err.code == SB_ECORRUPT, "a file one byte short is refused");
		like(err.message, "its header says 1048704", "saying the length its header gives");
		memcpy(longer, bytes, len);
		th_dest_write(plain, longer, len + 1);
		ok(!get(&w, &o, raw_seg, &r, &err) && err.code == SB_ECORRUPT, "a byte appended is refused");
		th_dest_write(plain, bytes, len);
		free(longer);
	}
	free(bytes);
	/* Links are a local folder's: a bucket has none. */
	if (!d->s3)
	{
		unlink(packed);
		if (symlink(plain, packed) != 0)
			diag("symlink failed");
		ok(!get(&w, &o, zstd_seg, &r, &err) && err.code == SB_ECORRUPT, "a link in the archive is never followed");
		like(err.message, "symbolic link", "saying what it is");
	}
	th_wal_fixture_done(&w);
}

void
test_wal_get_forged(void)
{
	th_each_driver(get_forged, NULL);
}
