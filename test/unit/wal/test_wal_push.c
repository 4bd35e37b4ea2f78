/*
 * test_wal_push.c
 *		Archiving WAL files: round trips, where each file goes, files pushed
 *		again, and what is refused.  Round trips, history files, the
 *		weighted spread, pushes again and repairs run once per store driver
 *		(drivers.h): local folders, then prefixes of a bucket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/format.h"
#include "store/store.h"
#include "syscall_log.h"
#include "tests.h"
#include "wal_fixture.h"
#include "wal/wal_internal.h"

#define HISTORY_TEXT "1\t0/500000A0\tno recovery target specified\n"

/* Push NAME (SIZE bytes) with O and get it back, checking how it was stored. */
static void
check_roundtrip(ThWal *w, const SbWalArchiveOptions *o, const char *name, size_t size,
				bool compressible, const char *what)
{
	char		path[PATH_MAX];
	SbWalPushResult r;
	SbError		err;

	th_wal_source(w, name, size, (uint32_t) size + compressible, compressible, path);
	ok(th_wal_push_one(o, w, name, &r), "%s: archived", what);
	is_int(r.written, 1, "%s: written once", what);
	ok(!r.already_archived, "%s: not there before", what);
	ok(r.destination >= 0 && th_wal_holder(w, name) == r.destination,
	   "%s: in the one destination the result names (%d)", what, r.destination);
	if (compressible)
		ok(r.codec == SB_CODEC_ZSTD && r.stored_bytes < r.raw_bytes / 2,
		   "%s: stored compressed (%llu of %llu bytes)", what, (unsigned long long) r.stored_bytes,
		   (unsigned long long) r.raw_bytes);
	else
		ok(r.codec == SB_CODEC_NONE && r.stored_bytes == r.raw_bytes,
		   "%s: stored as it is, compression not helping", what);
	if (!ok(th_wal_get_equal(w, name, &err), "%s: restored byte for byte", what))
		th_diag_error("get", &err);
}

/* Segments compressible and not, of one piece and of several, restored exactly. */
static void
push_roundtrip(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalArchiveOptions o;
	char		path[PATH_MAX];
	uint8_t    *bytes;
	size_t		len;

	th_wal_fixture_on(&w, d, "walrt", 2);
	th_wal_options(&o, &w);
	check_roundtrip(&w, &o, th_wal_name(1, 1), TH_WAL_SEGMENT, true, "a compressible segment");
	check_roundtrip(&w, &o, th_wal_name(1, 2), TH_WAL_SEGMENT, false, "a random segment");
	bytes = th_dest_read(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 1)),
										 th_wal_name(1, 1), path), &len);
	ok(bytes != NULL && len > 128 && memcmp(bytes, "SBWALFIL", 8) == 0 && bytes[8] == 1 &&
	   bytes[10] == 0, "the file starts with the magic and version 1.0");
	free(bytes);
	/* 16 MB: four pieces, one zstd frame streamed across them. */
	o.segment_size = 16 << 20;
	check_roundtrip(&w, &o, "000000010000000000000003", 16 << 20, true, "a 16 MB compressible segment");
	check_roundtrip(&w, &o, "000000010000000000000004", 16 << 20, false, "a 16 MB random segment");
	o.codec = SB_CODEC_NONE;
	o.segment_size = TH_WAL_SEGMENT;
	check_roundtrip(&w, &o, th_wal_name(1, 5), TH_WAL_SEGMENT, false, "no compression asked");
	th_wal_fixture_done(&w);
}

void
test_wal_push_roundtrip(void)
{
	th_each_driver(push_roundtrip, NULL);
}

/* Timeline and backup history files: in every destination. */
static void
push_history_everywhere(const ThDriver *drv, void *arg)
{
	static const char *const names[] = {"00000002.history", "000000010000000000000002.00000028.backup"};
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	size_t		i;
	uint32_t	d;

	th_wal_fixture_on(&w, drv, "walhist", 3);
	th_wal_options(&o, &w);
	th_wal_text_source(&w, names[0], HISTORY_TEXT, path);
	th_wal_text_source(&w, names[1], "START WAL LOCATION: 0/2000028 (file 000000010000000000000002)\n"
					   "STOP WAL LOCATION: 0/2000100 (file 000000010000000000000002)\n", path);
	for (i = 0; i < 2; i++)
	{
		ok(th_wal_push_one(&o, &w, names[i], &r), "%s: archived", names[i]);
		is_int(r.destination, -1, "%s: the result says every destination", names[i]);
		is_int(r.written, 3, "%s: written three times", names[i]);
		for (d = 0; d < 3; d++)
			ok(th_dest_exists(th_wal_archived(&w, d, names[i], path)), "%s: in destination %u", names[i], d + 1);
		if (!ok(th_wal_get_equal(&w, names[i], &err), "%s: restored exactly", names[i]))
			th_diag_error("get", &err);
	}
	th_wal_fixture_done(&w);
}

void
test_wal_push_history_everywhere(void)
{
	th_each_driver(push_history_everywhere, NULL);
}

/* How many of segments 1..N each destination holds. */
static void
count_holders(const ThWal *w, uint32_t n, int *counts)
{
	uint32_t	s;

	memset(counts, 0, 3 * sizeof(int));
	for (s = 1; s <= n; s++)
	{
		int			holder = th_wal_holder(w, th_wal_name(1, s));

		if (holder >= 0)
			counts[holder]++;
	}
}

static uint64_t
max3(const uint64_t *v)
{
	return v[0] > v[1] ? (v[0] > v[2] ? v[0] : v[2]) : (v[1] > v[2] ? v[1] : v[2]);
}

static uint64_t
min3(const uint64_t *v)
{
	return v[0] < v[1] ? (v[0] < v[2] ? v[0] : v[2]) : (v[1] < v[2] ? v[1] : v[2]);
}

/* The bytes of segments 1..N each destination holds, as stored. */
static void
held_bytes(const ThWal *w, uint32_t n, uint64_t *bytes)
{
	char		path[PATH_MAX];
	uint64_t	size;
	uint32_t	s;

	memset(bytes, 0, 3 * sizeof(uint64_t));
	for (s = 1; s <= n; s++)
	{
		int			holder = th_wal_holder(w, th_wal_name(1, s));

		if (holder >= 0 && sb_store_file_size(th_wal_archived(w, (uint32_t) holder, th_wal_name(1, s), path), NULL, &size, NULL))
			bytes[holder] += size;
	}
}

/* Push segments FIRST..LAST (random content, so all the same size) in one call. */
static bool
push_segments(const SbWalArchiveOptions *o, ThWal *w, uint32_t first, uint32_t last)
{
	SbWalFile	files[64];
	SbWalPushResult results[64];
	char		paths[64][PATH_MAX];
	SbError		err;
	SbWalArchive *a = sb_wal_archive_open(o, &err);
	uint32_t	n = 0;
	uint32_t	s;
	bool		done;

	if (a == NULL)
		return th_diag_error("open", &err), false;
	for (s = first; s <= last && n < 64; s++, n++)
	{
		files[n].name = strdup(th_wal_name(1, s));
		files[n].path = th_wal_source(w, files[n].name, TH_WAL_SEGMENT, s, false, paths[n]);
	}
	done = sb_wal_push_many(a, files, n, results);
	for (s = 0; s < n; s++)
	{
		if (!results[s].archived)
			th_diag_error(files[s].name, &results[s].error);
		free((char *) files[s].name);
	}
	sb_wal_archive_close(a);
	return done;
}

/* Weighted: each segment to the destination furthest below its share of bytes, across openings too. */
static void
push_weighted_spread(const ThDriver *d, void *arg)
{
	static const double weights[] = {1, 2, 1};
	ThWal		w;
	SbWalArchiveOptions o;
	int			counts[3];

	th_wal_fixture_on(&w, d, "walweight", 3);
	th_wal_options(&o, &w);
	o.weights = weights;
	o.workers = 1;
	ok(push_segments(&o, &w, 1, 40), "40 segments archived over weights 1,2,1");
	count_holders(&w, 40, counts);
	is_int(counts[0], 10, "a quarter in destination 1");
	is_int(counts[1], 20, "half in destination 2");
	is_int(counts[2], 10, "a quarter in destination 3");
	/* A new archive (the next archiver, the next command) counts what is there. */
	ok(push_segments(&o, &w, 41, 48), "8 more, archive opened anew");
	count_holders(&w, 48, counts);
	ok(counts[0] == 12 && counts[1] == 24 && counts[2] == 12,
	   "the shares still hold: %d, %d, %d of 48", counts[0], counts[1], counts[2]);
	o.workers = 4;
	o.weights = NULL;
	ok(push_segments(&o, &w, 49, 60), "12 more, equal weights, four at once");
	count_holders(&w, 60, counts);
	ok(counts[0] + counts[1] + counts[2] == 60 && counts[0] >= 15 && counts[2] >= 15,
	   "the lagging destinations took them: %d, %d, %d of 60", counts[0], counts[1], counts[2]);
	th_wal_fixture_done(&w);
}

void
test_wal_push_weighted_spread(void)
{
	th_each_driver(push_weighted_spread, NULL);
}

/* Adaptive: a destination with a write under way is passed over for one without. */
void
test_wal_push_adaptive(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	int			counts[3];
	uint64_t	held[3];
	SbError		err;
	SbWalArchive *a;

	th_wal_fixture(&w, "waladapt", 3);
	th_wal_options(&o, &w);
	o.balance = SB_BALANCE_ADAPTIVE;
	o.workers = 3;
	ok(push_segments(&o, &w, 1, 12), "12 segments archived, three at once, adaptive");
	count_holders(&w, 12, counts);
	is_int(counts[0] + counts[1] + counts[2], 12, "each in exactly one destination");
	ok(counts[0] > 0 && counts[1] > 0 && counts[2] > 0, "every destination took some: %d, %d, %d",
	   counts[0], counts[1], counts[2]);
	a = sb_wal_archive_open(&o, &err);
	if (ok(a != NULL, "the archive opens again"))
	{
		SbWalPushResult r;
		char		path[PATH_MAX];

		sb_wal_push(a, th_wal_name(1, 1), th_path(path, "%s/%s", w.f.src, th_wal_name(1, 1)), &r);
		sb_wal_archive_held_bytes(a, held);
		is_int(held[0] + held[1] + held[2], 12 * (128 + TH_WAL_SEGMENT),
			   "it counts the bytes the destinations hold");
		sb_wal_archive_close(a);
	}
	th_wal_fixture_done(&w);
}

/* Pushed again: the same contents succeed without a write; other contents are refused. */
static void
push_again(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	char		archived[PATH_MAX];
	struct stat before,
				after;
	const char *seg = th_wal_name(1, 7);
	int			holder;
	uint8_t    *bytes_before,
			   *bytes_after;
	size_t		len_before = 0,
				len_after = 0;

	th_wal_fixture_on(&w, d, "walagain", 2);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 7, true, path);
	th_wal_text_source(&w, "00000003.history", HISTORY_TEXT "2\t0/600000A0\tbefore 2000-01-01\n", path);
	ok(th_wal_push_one(&o, &w, seg, &r) && th_wal_push_one(&o, &w, "00000003.history", &r),
	   "a segment and a history file archived");
	holder = th_wal_holder(&w, seg);
	bytes_before = th_dest_read(th_wal_archived(&w, (uint32_t) holder, seg, archived), &len_before);
	if (!d->s3)
		stat(archived, &before);

	th_log_start(NULL, NULL, 0);
	ok(th_wal_push_one(&o, &w, seg, &r), "the segment pushed again: success");
	ok(r.already_archived && r.written == 0, "already archived, nothing written");
	is_int(r.destination, holder, "where it already was");
	ok(r.codec == SB_CODEC_ZSTD && r.stored_bytes > 0, "the result describes the copy found");
	ok(th_wal_push_one(&o, &w, "00000003.history", &r) && r.already_archived,
	   "the history file pushed again: already archived");
	th_log_stop();
	/* Renames, syncs and inodes are a local folder's: an object is checked by its bytes. */
	if (!d->s3)
	{
		is_int(th_log_count("rename"), 0, "no file was renamed into place");
		is_int(th_log_count("fsync"), 0, "nor synced");
		stat(archived, &after);
		ok(before.st_ino == after.st_ino && before.st_mtime == after.st_mtime, "the archived file is untouched");
	}
	bytes_after = th_dest_read(archived, &len_after);
	ok(bytes_before != NULL && bytes_after != NULL && len_before == len_after &&
	   memcmp(bytes_before, bytes_after, len_after) == 0, "the archived bytes are the same");
	free(bytes_after);
	is_int(th_wal_holder(&w, seg), holder, "and in no other destination");

	th_wal_source(&w, seg, TH_WAL_SEGMENT, 8, true, path);
	ok(!th_wal_push_one(&o, &w, seg, &r), "the same name with other contents is refused");
	is_int(r.error.code, SB_EEXIST, "as SB_EEXIST");
	like(r.error.message, "already holds", "saying the archive holds it");
	like(r.error.message, archived, "naming the copy");
	like(r.error.message, "CRC-32C", "and what differs");
	if (!d->s3)
	{
		stat(archived, &after);
		ok(before.st_ino == after.st_ino && before.st_size == after.st_size, "which is untouched");
	}
	bytes_after = th_dest_read(archived, &len_after);
	ok(bytes_before != NULL && bytes_after != NULL && len_before == len_after &&
	   memcmp(bytes_before, bytes_after, len_after) == 0, "its bytes are the same");
	free(bytes_after);
	free(bytes_before);

	th_wal_text_source(&w, "00000003.history", "1\t0/1\tother\n", path);
	ok(!th_wal_push_one(&o, &w, "00000003.history", &r) && r.error.code == SB_EEXIST,
	   "a history file with other contents is refused");
	th_wal_fixture_done(&w);
}

void
test_wal_push_again(void)
{
	th_each_driver(push_again, NULL);
}

/* A damaged copy is rewritten from the file PostgreSQL still holds. */
static void
push_repairs(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	const char *seg = th_wal_name(1, 3);
	int			holder;

	th_wal_fixture_on(&w, d, "walrepair", 2);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 3, true, path);
	ok(th_wal_push_one(&o, &w, seg, &r), "archived");
	holder = th_wal_holder(&w, seg);
	th_dest_flip_byte(th_wal_archived(&w, (uint32_t) holder, seg, path), 4000, 0x10);
	ok(!th_wal_get_equal(&w, seg, &err) && err.code == SB_ECORRUPT, "the damaged copy is refused by get");
	ok(th_wal_push_one(&o, &w, seg, &r), "pushed again");
	ok(r.written == 1 && !r.already_archived && r.destination == holder,
	   "the damaged copy was rewritten where it was");
	if (!ok(th_wal_get_equal(&w, seg, &err), "and restores exactly"))
		th_diag_error("get", &err);
	/* A header damaged: the same. */
	th_dest_flip_byte(path, 30, 0x01);
	ok(th_wal_push_one(&o, &w, seg, &r) && r.written == 1, "a damaged header: rewritten too");
	ok(th_wal_get_equal(&w, seg, &err), "restores exactly");
	th_wal_fixture_done(&w);
}

void
test_wal_push_repairs(void)
{
	th_each_driver(push_repairs, NULL);
}

/* Names, sizes and options that are refused, creating nothing. */
void
test_wal_push_refused(void)
{
	static const char *const bad_names[] = {
		"", "../000000010000000000000001", "000000010000000000000001/", "00000001000000000000000g",
		"0000000100000000000000010", "00000001000000000000000", "000000000000000000000001",
		"00000001.History", "000000010000000000000001.partia", "x.history", "00000001.history/..",
		"000000010000000000000001.0000002.backup", "000000010000000000000001.00000028.backu",
	};
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	size_t		i;

	th_wal_fixture(&w, "walrefused", 2);
	th_wal_options(&o, &w);
	for (i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++)
	{
		th_wal_text_source(&w, "file", "x", path);
		{
			SbWalArchive *a = sb_wal_archive_open(&o, &err);

			ok(a != NULL && !sb_wal_push(a, bad_names[i], path, &r) && r.error.code == SB_EINVAL,
			   "name \"%s\" is refused", bad_names[i]);
			like(r.error.message, "WAL file name", "\"%s\": saying why", bad_names[i]);
			sb_wal_archive_close(a);
		}
	}
	th_wal_source(&w, th_wal_name(1, 1), 100, 1, true, path);
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 1), &r) && r.error.code == SB_EINVAL,
	   "a segment of the wrong size is refused");
	like(r.error.message, "this cluster's WAL segments are 1048576 bytes", "saying the size expected");
	o.segment_size = 0;
	th_wal_source(&w, th_wal_name(1, 1), TH_WAL_SEGMENT, 1, true, path);
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 1), &r) && r.error.code == SB_EINVAL,
	   "segment size 0 means 16 MB: a 1 MB segment is refused");
	o.segment_size = TH_WAL_SEGMENT;
	ok(!th_wal_push_one(&o, &w, "00000002.history", &r) && r.error.code == SB_EIO,
	   "a file that is not there is an I/O error");
	like(r.error.message, "00000002.history", "naming it");
	ok(th_count_entries(w.f.dest[0]) == 1 && th_count_entries(th_wal_folder(&w, 0, path)) == 0,
	   "nothing was written (only the archive's folder made)");
	th_wal_fixture_done(&w);
}

/* Opening with O is refused as CODE, with a message holding MESSAGE. */
static void
expect_refused(const SbWalArchiveOptions *o, const char *what, SbErrorCode code, const char *message)
{
	SbError		err;
	SbWalArchive *a = sb_wal_archive_open(o, &err);

	ok(a == NULL, "%s is refused", what);
	is_int(err.code, code, "%s: as %s", what, sb_error_code_name(code));
	like(err.message, message, "%s: saying so", what);
	sb_wal_archive_close(a);
}

/* Options refused by sb_wal_archive_check_options and open. */
void
test_wal_push_options(void)
{
	static const double bad_weights[] = {1, 0};
	ThWal		w;
	SbWalArchiveOptions o;
	SbError		err;
	char		path[PATH_MAX];
	const char *dests[2];

	th_wal_fixture(&w, "waloptions", 2);
	th_wal_options(&o, &w);
	o.ndestinations = 0;
	expect_refused(&o, "no destination", SB_EINVAL, "between 1 and 64");
	th_wal_options(&o, &w);
	dests[0] = "relative/dir";
	dests[1] = w.f.dest[1];
	o.destinations = dests;
	expect_refused(&o, "a relative destination", SB_EINVAL, "neither an absolute path nor an s3:// location");
	th_wal_options(&o, &w);
	o.system_identifier = 0;
	expect_refused(&o, "system identifier 0", SB_EINVAL, "system identifier 0");
	th_wal_options(&o, &w);
	o.weights = bad_weights;
	expect_refused(&o, "a zero weight", SB_EINVAL, "not a positive number");
	th_wal_options(&o, &w);
	o.level = 0;
	expect_refused(&o, "zstd level 0", SB_EINVAL, "out of range");
	th_wal_options(&o, &w);
	o.workers = 65;
	expect_refused(&o, "65 workers", SB_EINVAL, "at most 64");
	th_wal_options(&o, &w);
	o.segment_size = 3 << 20;
	expect_refused(&o, "a 3 MB segment size", SB_EINVAL, "not a power of two");
	th_wal_options(&o, &w);
	o.balance = (SbBalance) 7;
	expect_refused(&o, "an unknown balance", SB_EINVAL, "unknown balance");
	th_wal_options(&o, &w);
	o.workers = 64;
	o.level = 19;
	o.segment_size = 1 << 30;
	o.max_memory = 64 << 20;
	expect_refused(&o, "settings above max_memory", SB_EINVAL, "WAL workers 64 x 2 pieces of 4 MB");
	th_wal_options(&o, &w);
	dests[0] = w.f.dest[0];
	dests[1] = th_path(path, "%s/nowhere", w.f.root);
	o.destinations = dests;
	expect_refused(&o, "a missing destination", SB_ENOTFOUND, "does not exist (is its device mounted?)");
	dests[1] = w.f.dest[0];
	expect_refused(&o, "a destination twice", SB_EINVAL, "are the same folder");
	th_wal_options(&o, &w);
	ok(sb_wal_archive_check_options(&o, &err), "good options pass the check");
	ok(!th_exists(th_path(path, "%s/wal", w.f.dest[0])), "checking creates nothing");
	th_wal_fixture_done(&w);
}

/* A destination missing at push time fails the push, naming it; nothing is left anywhere. */
void
test_wal_push_missing_destination(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalArchive *a;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	char		moved[PATH_MAX];

	th_wal_fixture(&w, "walmissing", 2);
	th_wal_options(&o, &w);
	a = sb_wal_archive_open(&o, &err);
	th_wal_source(&w, th_wal_name(1, 1), TH_WAL_SEGMENT, 1, true, path);
	rename(w.f.dest[1], th_path(moved, "%s/unmounted", w.f.root));
	ok(a != NULL && !sb_wal_push(a, th_wal_name(1, 1), path, &r), "a push with destination 2 gone fails");
	is_int(r.error.code, SB_ENOTFOUND, "as SB_ENOTFOUND");
	like(r.error.message, w.f.dest[1], "naming the destination");
	like(r.error.message, "is its device mounted?", "and what to look at");
	ok(!th_exists(th_wal_folder(&w, 0, path)) || th_count_entries(path) == 0,
	   "nothing was archived in destination 1");
	rename(moved, w.f.dest[1]);
	ok(sb_wal_push(a, th_wal_name(1, 1), th_path(path, "%s/%s", w.f.src, th_wal_name(1, 1)), &r),
	   "back in place, the next push succeeds");
	sb_wal_archive_close(a);
	th_wal_fixture_done(&w);
}

/* No temporary file anywhere in the archive's folders. */
static bool
no_temporary_files(const ThWal *w)
{
	char		folder[PATH_MAX];
	char		out[256];
	uint32_t	i;

	for (i = 0; i < w->f.ndests; i++)
	{
		const char *argv[] = {"find", th_wal_folder(w, i, folder), "-name", "*.tmp.*", NULL};

		if (th_exists(folder) && (th_run(argv, out, sizeof(out)) != 0 || out[0] != '\0'))
			return false;
	}
	return true;
}

/* A full destination (ENOSPC on a write) fails the push, naming it, and leaves no partial file. */
void
test_wal_push_full_destination(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	char		pattern[PATH_MAX];
	const char *seg = th_wal_name(1, 2);

	th_wal_fixture(&w, "walfull", 3);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 2, false, path);
	th_log_start_errno("pwrite", "*/wal/", 2, ENOSPC);
	ok(!th_wal_push_one(&o, &w, seg, &r), "a segment whose destination fills up is not archived");
	th_log_stop();
	ok(th_log_failed(), "(the third write failed, as on a full disk)");
	is_int(r.error.code, SB_ENOSPC, "as SB_ENOSPC");
	like(r.error.message, "No space left on device", "saying the device is full");
	like(r.error.message, w.f.dest[r.destination >= 0 ? r.destination : 0], "naming the destination");
	is_int(th_wal_holder(&w, seg), -1, "no destination holds it");
	ok(no_temporary_files(&w), "and no partial file is left");
	ok(th_wal_push_one(&o, &w, seg, &r) && r.written == 1, "with room again, it is archived");

	/* A history file: the other destinations get it; a retry completes the full one. */
	th_wal_text_source(&w, "00000002.history", HISTORY_TEXT, path);
	th_log_start_errno("pwrite", th_path(pattern, "*%s/wal/", w.f.dest[1]), 0, ENOSPC);
	ok(!th_wal_push_one(&o, &w, "00000002.history", &r), "a history file with destination 2 full fails");
	th_log_stop();
	is_int(r.error.code, SB_ENOSPC, "as SB_ENOSPC");
	like(r.error.message, w.f.dest[1], "naming destination 2");
	ok(th_exists(th_wal_archived(&w, 0, "00000002.history", path)) &&
	   th_exists(th_wal_archived(&w, 2, "00000002.history", path)) &&
	   !th_exists(th_wal_archived(&w, 1, "00000002.history", path)), "the others hold it");
	ok(no_temporary_files(&w), "no partial file is left");
	ok(th_wal_push_one(&o, &w, "00000002.history", &r) && r.written == 1,
	   "the retry writes destination 2 only");
	th_wal_fixture_done(&w);
}

/* Many files at once: each its own result; segments spread; one bad file fails alone. */
void
test_wal_push_many(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalArchive *a;
	SbWalFile	files[26];
	SbWalPushResult results[26];
	char		paths[26][PATH_MAX];
	char		names[26][SB_WAL_NAME_MAX + 1];
	SbError		err;
	int			counts[3];
	uint64_t	bytes[3];
	int			archived = 0;
	uint32_t	i;

	th_wal_fixture(&w, "walmany", 3);
	th_wal_options(&o, &w);
	o.workers = 4;
	for (i = 0; i < 24; i++)
	{
		snprintf(names[i], sizeof(names[i]), "%s", th_wal_name(1, i + 1));
		files[i].name = names[i];
		files[i].path = th_wal_source(&w, names[i], TH_WAL_SEGMENT, i, i % 2 == 0, paths[i]);
	}
	files[24].name = "00000002.history";
	files[24].path = th_wal_text_source(&w, files[24].name, HISTORY_TEXT, paths[24]);
	files[25].name = th_wal_name(1, 30);
	files[25].path = th_path(paths[25], "%s/not-there", w.f.src);
	a = sb_wal_archive_open(&o, &err);
	ok(a != NULL && !sb_wal_push_many(a, files, 26, results), "26 files pushed at once, one missing");
	for (i = 0; i < 26; i++)
		archived += results[i].archived;
	is_int(archived, 25, "25 archived");
	ok(!results[25].archived && results[25].error.code == SB_EIO, "the missing one failed alone");
	like(results[25].error.message, "not-there", "naming it");
	ok(results[24].archived && results[24].written == 3, "the history file went to all three");
	count_holders(&w, 24, counts);
	is_int(counts[0] + counts[1] + counts[2], 24, "every segment in exactly one destination");
	/*
	 * Weighted by bytes: half the segments compress to little, so counts
	 * may differ; bytes are within a segment per worker of one another
	 * (the workers choose at once, each from what is held and in flight).
	 */
	held_bytes(&w, 24, bytes);
	ok(counts[0] >= 3 && counts[1] >= 3 && counts[2] >= 3 &&
	   max3(bytes) - min3(bytes) <= o.workers * (uint64_t) TH_WAL_SEGMENT,
	   "spread over the three: %d, %d, %d segments, %llu, %llu, %llu bytes", counts[0], counts[1], counts[2],
	   (unsigned long long) bytes[0], (unsigned long long) bytes[1], (unsigned long long) bytes[2]);
	for (i = 0; i < 24; i += 5)
		ok(th_wal_get_equal(&w, names[i], &err), "segment %u restores exactly", i + 1);
	ok(sb_wal_push_many(a, files, 25, results) && results[3].already_archived,
	   "pushed again: all already archived");
	ok(results[3].remembered && results[4].remembered && results[3].stored_bytes > 0 &&
	   results[3].destination == th_wal_holder(&w, names[3]),
	   "the segments this archive wrote are remembered, where and how, not read again");
	ok(!results[24].remembered, "a history file is looked at in every destination");
	/* File times move with the kernel's clock tick: let one pass, as seconds do between callbacks. */
	usleep(20000);
	th_flip_byte(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, names[3]), names[3], paths[25]), 200, 0x01);
	ok(sb_wal_push(a, names[3], paths[3], &results[3]) && !results[3].remembered && results[3].written == 1,
	   "a segment modified since is read again, found damaged, and rewritten");
	ok(th_wal_get_equal(&w, names[3], &err), "it restores exactly");
	usleep(20000);
	th_wal_source(&w, names[4], TH_WAL_SEGMENT, 99, true, paths[4]);
	ok(!sb_wal_push(a, names[4], paths[4], &results[4]) && !results[4].remembered &&
	   results[4].error.code == SB_EEXIST,
	   "other contents written under a remembered segment's name are read, and refused");
	sb_wal_archive_close(a);
	a = sb_wal_archive_open(&o, &err);
	ok(a != NULL && sb_wal_push(a, names[5], paths[5], &results[5]) && results[5].already_archived &&
	   !results[5].remembered, "another archive (the next archiver) reads it back");
	sb_wal_archive_close(a);
	th_wal_fixture_done(&w);
}

/* What is in the archive's place but not its own copy is refused, and left as it is. */
void
test_wal_push_foreign(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbError		err;
	char		path[PATH_MAX];
	char		archived[PATH_MAX];
	char		other[PATH_MAX];
	char		elsewhere[PATH_MAX];
	const char *seg = th_wal_name(1, 1);
	size_t		len;
	uint8_t    *bytes;

	th_wal_fixture(&w, "walforeignpush", 1);
	th_wal_options(&o, &w);
	th_wal_source(&w, seg, TH_WAL_SEGMENT, 1, true, path);
	th_wal_source(&w, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, true, path);
	ok(th_wal_push_one(&o, &w, seg, &r), "a segment archived");

	/* The same segment as another cluster's archive holds it (its system identifier, sealed). */
	th_wal_archived(&w, 0, seg, archived);
	bytes = th_read_file(archived, &len);
	if (bytes != NULL)
	{
		bytes[16] ^= 0x01;
		sb_format_seal(bytes, SB_WAL_HEADER_SIZE);
		th_write_file(archived, bytes, len, 0600);
	}
	free(bytes);
	ok(!th_wal_push_one(&o, &w, seg, &r) && r.error.code == SB_EEXIST, "a copy of another cluster in its place: refused");
	like(r.error.message, "is not this cluster's copy", "saying so");
	unlink(archived);

	th_write_file(th_path(other, "%s/other", w.f.root), "keep me", 7, 0600);
	if (symlink(other, archived) != 0)
		diag("symlink failed");
	ok(!th_wal_push_one(&o, &w, seg, &r) && r.error.code == SB_EEXIST, "a link in its place: refused");
	like(r.error.message, "symbolic link", "saying so");
	bytes = th_read_file(other, &len);
	ok(bytes != NULL && len == 7 && memcmp(bytes, "keep me", 7) == 0, "what the link points to is untouched");
	free(bytes);
	unlink(archived);
	th_mkdir(archived, 0700);
	ok(!th_wal_push_one(&o, &w, seg, &r) && r.error.code == SB_EEXIST, "a folder in its place: refused");
	like(r.error.message, "not a regular file", "saying so");
	rmdir(archived);

	th_mkdir(th_path(path, "%s/%s", w.f.src, th_wal_name(1, 4)), 0700);
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 4), &r) && r.error.code == SB_EINVAL, "as SB_EINVAL");
	like(r.error.message, "not a regular file", "saying so");

	/* wal/ made a link to elsewhere: nothing is written through it. */
	th_rmtree(th_path(path, "%s/wal", w.f.dest[0]));
	th_mkdir(th_path(elsewhere, "%s/elsewhere", w.f.root), 0700);
	if (symlink(elsewhere, path) != 0)
		diag("symlink failed");
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 2), &r), "a destination whose wal/ is a link: refused");
	like(r.error.message, "is a symbolic link; the WAL archive never follows one", "saying so");
	is_int(th_count_entries(elsewhere), 0, "nothing was written where it points");
	unlink(path);

	th_write_file(th_path(path, "%s/file", w.f.root), "x", 1, 0600);
	o.destinations = (const char *const[]) {path};
	ok(sb_wal_archive_open(&o, &err) == NULL && err.code == SB_EINVAL, "a destination that is a file is refused");
	like(err.message, "is not a folder", "saying so");
	th_wal_options(&o, &w);
	o.codec = (SbCodec) 9;
	ok(sb_wal_archive_open(&o, &err) == NULL && err.code == SB_EINVAL, "an unknown compression is refused");
	th_wal_fixture_done(&w);
}
