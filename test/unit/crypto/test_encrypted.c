/*
 * test_encrypted.c
 *		An encrypted backup end to end in the engine: nothing of the files'
 *		bytes or names shows in the stripes or the manifest's envelope; it
 *		opens only with its key (none, or another, fails closed with
 *		SB_EKEY); restored with it, it is the source byte for byte, verify
 *		finds nothing wrong, a flipped byte is found; a delta restore compares
 *		with the masked raw hashes unmasked; compressed or not, adaptive or
 *		weighted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stripebackup/sb_folder.h"
#include "harness.h"
#include "manifest/manifest_envelope.h"
#include "manifest/manifest_text.h"
#include "tests.h"

#define MARKER "the-plaintext-nobody-may-read"
#define SECRET_NAME "payroll-2026"

static void
make_key(SbKey *k, char fill)
{
	memset(k, 0, sizeof(*k));
	memset(k->secret, fill, 48);
	k->len = 48;
}

/* A source whose bytes and names would show: a marker repeated in a named file, others. */
static bool
make_source(const ThFixture *f)
{
	char		path[PATH_MAX];
	char	   *text = malloc(300000);
	size_t		i;
	bool		ok;

	for (i = 0; text != NULL && i + sizeof(MARKER) < 300000; i += sizeof(MARKER) - 1)
		memcpy(text + i, MARKER, sizeof(MARKER) - 1);
	ok = text != NULL && th_mkdir(th_path(path, "%s/base", f->src), 0700) &&
		th_write_file(th_path(path, "%s/base/" SECRET_NAME, f->src), text, i, 0600) &&
		th_write_pattern(th_path(path, "%s/base/random", f->src), 5 * 65536 + 17, 3, false, 0600) &&
		th_write_pattern(th_path(path, "%s/base/small", f->src), 2000, 4, true, 0600);
	free(text);
	return ok;
}

/* Does any byte string NEEDLE show in the file at PATH? */
static bool
file_shows(const char *path, const char *needle)
{
	size_t		len;
	uint8_t    *bytes = th_read_file(path, &len);
	bool		found = bytes != NULL && memmem(bytes, len, needle, strlen(needle)) != NULL;

	free(bytes);
	return found;
}

static bool
restore_with_key(const char *location, const char *target, const SbKey *key, SbRestoreOptions *ro,
				 SbError *err)
{
	SbArchive  *a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.key = key}, err);
	bool		ok;

	if (a == NULL)
		return false;
	ro->target = target;
	ro->read.workers = 3;
	ok = sb_archive_restore(a, ro, err);
	sb_archive_close(a);
	return ok;
}

static long
verify_with_key(const char *location, const SbKey *key)
{
	SbError		err;
	SbArchive  *a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.key = key}, &err);
	SbReadOptions ro;
	ThProblems	problems;
	uint64_t	count = 0;
	bool		ok;

	if (a == NULL)
		return -1;
	memset(&ro, 0, sizeof(ro));
	memset(&problems, 0, sizeof(problems));
	ro.workers = 2;
	ok = sb_archive_verify(a, &ro, th_collect_problem, &problems, &count, &err);
	sb_archive_close(a);
	th_free_problems(&problems);
	return ok ? (long) count : -1;
}

/* A damaged envelope is set aside for the other copy; both damaged, the backup does not open. */
static void
damage_envelopes(const ThFixture *f, const SbKey *key)
{
	char		location[PATH_MAX],
				other[PATH_MAX],
				path[PATH_MAX];
	SbArchive  *a;
	SbError		err;

	th_location(f, 0, "enc", location);
	th_location(f, 1, "enc", other);
	ok(th_edit_file(th_path(path, "%s/manifest.json", location), "\"format_version\":\"2.0\"",
					"\"format_version\":\"9.0\""), "one envelope's version changed");
	a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.key = key}, &err);
	ok(a != NULL && a->nnotes > 0 && strstr(a->notes[0], "format_version 9.0") != NULL,
	   "the other copy is used, the damaged one named: %s", a && a->nnotes ? a->notes[0] : err.message);
	sb_archive_close(a);
	ok(th_edit_file(th_path(path, "%s/manifest.json", other), "\"sealed_manifest\":[\"",
					"\"sealed_manifest\":[\"AAAA"), "the other's sealed manifest altered");
	ok(sb_archive_open_with(other,
				&(SbArchiveOpenOptions){.key = key}, &err) == NULL && err.code == SB_ECORRUPT,
	   "no copy opens: %s", err.message);
}

/* Problems sb_verify_sealed finds without the key; -1 when it cannot run; *CHUNKS checked. */
static int64_t
verify_without_key(const char *location, uint64_t *chunks)
{
	SbSealedVerifyResult r;
	SbError		err;

	if (!sb_verify_sealed(location, NULL, NULL, NULL, &r, &err))
	{
		th_diag_error("verify without the key", &err);
		return -1;
	}
	*chunks = r.chunks;
	return (int64_t) r.problems;
}

static void
round_trip(SbCodec codec, SbBalance balance)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbKey		key,
				wrong;
	SbError		err;
	SbRestoreOptions ro;
	SbRestoreStats stats;
	char		location[PATH_MAX],
				path[PATH_MAX];
	uint32_t	s;
	bool		hidden = true;
	uint64_t	chunks = 0;
	SbSealedVerifyResult sealed;

	th_fixture(&f, "encrypted", 2);
	make_key(&key, 'k');
	make_key(&wrong, 'w');
	ok(make_source(&f), "a source with a marker in a named file");
	th_options(&o, f.dests, f.ndests, "enc");
	o.codec = codec;
	o.level = 1;
	o.balance = balance;
	o.encryption_key = &key;
	ok(th_backup_tree(&o, f.src, &m, &err), "backed up encrypted");
	if (m == NULL)
		th_diag_error("backup", &err);
	for (s = 1; s <= 2; s++)
		hidden = hidden && !file_shows(th_stripe_path(&f, s, "enc", path), MARKER) &&
			!file_shows(path, SECRET_NAME);
	th_location(&f, 0, "enc", location);
	th_path(path, "%s/manifest.json", location);
	ok(hidden && !file_shows(path, MARKER) && !file_shows(path, SECRET_NAME) &&
	   file_shows(path, "stripebackup-encrypted"),
	   "neither the marker nor the file's name shows in a stripe or the manifest's envelope");

	ok(sb_archive_open(location, &err) == NULL && err.code == SB_EKEY,
	   "without its key it does not open: %s", err.message);
	ok(sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.key = &wrong}, &err) == NULL && err.code == SB_EKEY,
	   "nor with another: %s", err.message);
	memset(&ro, 0, sizeof(ro));
	ok(!restore_with_key(location, f.target, &wrong, &ro, &err) && !th_exists(f.target),
	   "a restore with the wrong key writes nothing");

	memset(&ro, 0, sizeof(ro));
	ok(restore_with_key(location, f.target, &key, &ro, &err) && th_trees_equal(f.src, f.target, 0),
	   "restored with its key: the source, byte for byte");
	ok(verify_with_key(location, &key) == 0, "verify finds nothing wrong");
	ok(verify_without_key(location, &chunks) == 0 && m != NULL && chunks == m->total_chunks,
	   "without the key, every chunk (%llu) is checked and found intact", (unsigned long long) chunks);
	ok(!sb_verify_sealed(f.src, NULL, NULL, NULL, &sealed, &err), "a folder without an envelope is refused");

	memset(&ro, 0, sizeof(ro));
	ro.delta = true;
	ro.stats = &stats;
	ok(restore_with_key(location, f.target, &key, &ro, &err) && m != NULL &&
	   stats.delta_held == m->stream_bytes && th_trees_equal(f.src, f.target, 0),
	   "a delta restore into that copy finds every chunk held (raw hashes unmasked)");

	/* adaptive balance may leave a stripe without chunks: a payload byte of one that has some */
	ok((th_flip_byte(th_stripe_path(&f, 1, "enc", path), 200, 0x10) ||
		th_flip_byte(th_stripe_path(&f, 2, "enc", path), 200, 0x10)) && verify_with_key(location, &key) > 0,
	   "a flipped byte of a stripe is found");
	ok(verify_without_key(location, &chunks) > 0, "and found without the key too");
	ok(truncate(th_stripe_path(&f, 2, "enc", path), 100) == 0 && verify_without_key(location, &chunks) > 0,
	   "a truncated stripe is found without the key");
	ok(unlink(path) == 0 && verify_without_key(location, &chunks) > 0, "a missing one too");
	damage_envelopes(&f, &key);
	ok(verify_without_key(th_location(&f, 1, "enc", path), &chunks) > 0,
	   "without the key, an altered envelope is not the one the stripes were sealed with");
	{
		SbFolderRemoval r;

		ok(m && sb_backup_folder_remove(f.dest[1], NULL, "enc", m->uuid, false, &r, &err) &&
		   r.verdict == SB_FOLDER_REMOVED, "retention removes its folder without the key: %s", r.detail);
	}
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_encrypted_backup(void)
{
	th_begin("encrypted backup: zstd, adaptive");
	round_trip(SB_CODEC_ZSTD, SB_BALANCE_ADAPTIVE);
	th_begin("encrypted backup: no compression, weighted");
	round_trip(SB_CODEC_NONE, SB_BALANCE_WEIGHTED);
}

/* ---------- a manifest sealed in segments ---------- */

#define MANY_FILES 4000
/* long names make a manifest of more than 2 MiB (two segments) out of fewer files, made faster */
#define LONG_NAME "a-file-whose-name-is-long-enough-to-make-the-manifest-large-without-many-files-" \
	"a-file-whose-name-is-long-enough-to-make-the-manifest-large-without-many-files-" \
	"a-file-whose-name-is-long-enough"
#define SEGMENTS_KEY "\"sealed_manifest\":["

/* A source of MANY_FILES small files in 20 folders: a manifest of some 1.2 MB, two segments. */
static bool
make_many_files(const ThFixture *f)
{
	char		path[PATH_MAX];
	bool		ok = true;

	for (int d = 0; ok && d < 20; d++)
	{
		ok = th_mkdir(th_path(path, "%s/dir%02d", f->src, d), 0700);
		for (int i = 0; ok && i < MANY_FILES / 20; i++)
			ok = th_write_file(th_path(path, "%s/dir%02d/" LONG_NAME "-%05d", f->src, d, i),
								 "xy", (size_t) (i % 3), 0600);
	}
	return ok;
}

/* An envelope's text cut at its segments: what comes before, each segment's base64, what comes after. */
typedef struct Segments
{
	char	   *text;
	char	   *head;			/* up to and with SEGMENTS_KEY, in TEXT */
	char	   *segs[16];
	int			n;
	char	   *tail;			/* after the last segment's closing quote */
} Segments;

static bool
cut_segments(const char *path, Segments *s)
{
	size_t		len;
	char	   *p;

	memset(s, 0, sizeof(*s));
	s->text = (char *) th_read_file(path, &len);
	if (s->text == NULL || (p = strstr(s->text, SEGMENTS_KEY)) == NULL)
		return false;
	p += strlen(SEGMENTS_KEY);
	*(p - 1) = '\0';
	s->head = s->text;
	while (*p == '"' && s->n < 16)
	{
		char	   *end = strchr(p + 1, '"');

		if (end == NULL)
			return false;
		*end = '\0';
		s->segs[s->n++] = p + 1;
		p = end + 1;
		if (*p == ',')
			p++;
	}
	s->tail = p;
	return s->n > 0;
}

/* The envelope with segments ORDER (indexes into S, -1 ending it) written to PATH. */
static bool
write_segments(const Segments *s, const int *order, const char *path)
{
	FILE	   *out = fopen(path, "w");
	bool		first = true;

	if (out == NULL)
		return false;
	fprintf(out, "%s[", s->head);
	for (; *order >= 0; order++, first = false)
		fprintf(out, "%s\"%s\"", first ? "" : ",", s->segs[*order]);
	fputs(s->tail, out);
	return fclose(out) == 0;
}

/* Does the manifest at PATH open with KEY?  SB_ECORRUPT expected; the error into *ERR. */
static bool
opens(const char *path, const SbKey *key, const char *spool, SbError *err)
{
	SbManifest *m = sb_manifest_read_path(path, NULL, key, SB_KEEP_STREAMED, spool, err);

	sb_manifest_free(m);
	return m != NULL;
}

static void
check_segments_bound(const ThFixture *f, const char *manifest, const SbKey *key)
{
	Segments	s;
	char		path[PATH_MAX];
	const int	all[] = {0, 1, -1},
				swapped[] = {1, 0, -1},
				no_last[] = {0, -1},
				no_first[] = {1, -1},
				twice[] = {0, 0, 1, -1};
	SbError		err;
	bool		cut = cut_segments(manifest, &s);

	ok(cut && s.n == 2, "the manifest of %d files sealed in %d segments", MANY_FILES, s.n);
	th_path(path, "%s/edited.json", f->root);
	ok(s.n == 2 && write_segments(&s, all, path) && opens(path, key, f->root, &err),
	   "put back together as it was, it opens");
	ok(s.n == 2 && write_segments(&s, swapped, path) && !opens(path, key, f->root, &err) &&
	   err.code == SB_ECORRUPT, "two segments swapped: refused (%s)", err.message);
	ok(s.n == 2 && write_segments(&s, no_last, path) && !opens(path, key, f->root, &err) &&
	   err.code == SB_ECORRUPT, "the last dropped, the text cut short: refused (%s)", err.message);
	ok(s.n == 2 && write_segments(&s, no_first, path) && !opens(path, key, f->root, &err) &&
	   err.code == SB_ECORRUPT, "the first dropped: refused (%s)", err.message);
	ok(s.n == 2 && write_segments(&s, twice, path) && !opens(path, key, f->root, &err) &&
	   err.code == SB_ECORRUPT, "one given twice: refused (%s)", err.message);
	free(s.text);
	ok(th_edit_file(path, "\"format_version\":\"2.0\"", "\"format_version\":\"1.0\"") &&
	   !opens(path, key, f->root, &err) && err.code == SB_EVERSION,
	   "an envelope of format 1.0 (sealed whole): refused by its version (%s)", err.message);
}

/*
 * An encrypted backup of 4,000 files: its manifest sealed in segments, read
 * a segment at a time with the entries streamed; restored and verified with
 * and without the key; segments moved, dropped or repeated are refused.
 */
void
test_encrypted_segments(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbKey		key;
	SbError		err;
	SbArchive  *a;
	SbRestoreOptions ro;
	char		location[PATH_MAX],
				manifest[PATH_MAX];
	uint64_t	chunks = 0;
	int64_t		problems;

	th_begin("encrypted backup: a manifest of 4,000 files sealed in segments, read as a stream");
	th_fixture(&f, "encsegments", 2);
	make_key(&key, 'k');
	ok(make_many_files(&f), "a source of %d files", MANY_FILES);
	th_options(&o, f.dests, f.ndests, "enc");
	o.encryption_key = &key;
	ok(th_backup_tree(&o, f.src, &m, &err), "backed up encrypted");
	th_location(&f, 0, "enc", location);
	th_path(manifest, "%s/manifest.json", location);

	a = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.key = &key, .keep = SB_KEEP_STREAMED, .spool_dir = f.root}, &err);
	ok(a != NULL && a->manifest->streamed != NULL && a->manifest->nentries == 0,
	   "opened streamed with its key: no entry kept in memory");
	memset(&ro, 0, sizeof(ro));
	ro.target = f.target;
	ro.read.workers = 2;
	ok(a != NULL && sb_archive_restore(a, &ro, &err) && th_trees_equal(f.src, f.target, 0),
	   "restored from the stream: the source, byte for byte");
	if (a == NULL || !th_trees_equal(f.src, f.target, 0))
		th_diag_error("restore", &err);
	sb_archive_close(a);
	ok(verify_with_key(location, &key) == 0, "verify finds nothing wrong");
	problems = verify_without_key(location, &chunks);
	ok(problems == 0 && m != NULL && chunks == m->total_chunks && chunks > 0,
	   "without the key, every chunk (%llu) checked, the envelope read to its end", (unsigned long long) chunks);
	check_segments_bound(&f, manifest, &key);
	sb_manifest_free(m);
	th_fixture_done(&f);
}
