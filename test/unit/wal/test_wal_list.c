/*
 * test_wal_list.c
 *		What a WAL archive holds: listing from headers, continuity across
 *		timelines, a verify that reads everything, and retention that
 *		removes only what it should.  Each runs once per store driver
 *		(drivers.h): local folders, then prefixes of a bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests.h"
#include "wal_fixture.h"
#include "wal/wal_internal.h"

/* Timeline 2 branched from 1 at 0/5000A0: segment 5 (of 1 MB) holds the switch. */
#define HISTORY_2 "1\t0/5000A0\tno recovery target specified\n"

/* Write and archive segment SEGNO of TIMELINE. */
static bool
push_segment(ThWal *w, uint32_t timeline, uint64_t segno)
{
	char		path[PATH_MAX];
	const char *name = th_wal_name(timeline, segno);

	th_wal_source(w, name, TH_WAL_SEGMENT, (uint32_t) (timeline * 100 + segno), true, path);
	return th_wal_archive(w, name);
}

/* Entries of L named NAME. */
static int
entries_named(const SbWalListing *l, const char *name)
{
	size_t		i;
	int			n = 0;

	for (i = 0; i < l->count; i++)
		n += strcmp(l->entries[i].info.name, name) == 0;
	return n;
}

static bool
any_problem_like(const SbWalListing *l, const char *text)
{
	size_t		i;

	for (i = 0; i < l->nproblems; i++)
		if (strstr(l->problems[i].message, text) != NULL)
			return true;
	return false;
}

/* The listing: every file from its header, sorted; what cannot be read is a problem; others' files ignored. */
static void
list_entries(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalListing l;
	SbError		err;
	char		path[PATH_MAX];
	char		moved[PATH_MAX];
	time_t		now = time(NULL);
	uint32_t	s;
	bool		sorted = true;
	bool		described = true;
	size_t		i;

	th_wal_fixture_on(&w, d, "wallist", 2);
	for (s = 1; s <= 6; s++)
		push_segment(&w, 1, s);
	th_wal_archive_text(&w, "00000002.history", HISTORY_2);
	ok(sb_wal_list(&w.dests, &l, &err), "the archive is listed");
	is_int(l.count, 8, "6 segments and a history file in each of 2 destinations");
	is_int(l.nproblems, 0, "no problem");
	for (i = 0; i < l.count; i++)
	{
		const SbWalEntry *e = &l.entries[i];

		if (i > 0 && strcmp(l.entries[i - 1].info.name, e->info.name) > 0)
			sorted = false;
		if (e->info.parsed.kind == SB_WAL_SEGMENT &&
			(e->info.raw_bytes != TH_WAL_SEGMENT || e->info.stored_bytes >= e->info.raw_bytes ||
			 e->info.codec != SB_CODEC_ZSTD || e->info.archived_at < now - 60 ||
			 e->info.archived_at > now + 60 || e->destination > 1))
			described = false;
	}
	ok(sorted, "sorted by name");
	ok(described, "each with its sizes, codec, time and destination");
	is_int(entries_named(&l, "00000002.history"), 2, "the history file once per destination");
	sb_wal_listing_free(&l);

	th_dest_write(th_path(path, "%s/README", th_wal_folder(&w, 0, moved)), "mine", 4);
	th_dest_write(th_path(path, "%s/%s.sbw.tmp.1.1", moved, th_wal_name(1, 9)), "partial", 7);
	th_dest_flip_byte(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 3)), th_wal_name(1, 3), path),
					  70, 0x01);
	ok(sb_wal_list(&w.dests, &l, &err), "listed again, with a damaged header, a user's file and a temporary one");
	is_int(l.count, 7, "the damaged file is not listed");
	ok(l.nproblems == 1 && any_problem_like(&l, th_wal_name(1, 3)) && any_problem_like(&l, "checksum mismatch"),
	   "it is a problem, named");
	sb_wal_listing_free(&l);

	/* A folder gone (an unmounted device) is local: a prefix of a bucket has no such state. */
	if (!d->s3)
	{
		rename(w.f.dest[1], th_path(moved, "%s/gone", w.f.root));
		ok(sb_wal_list(&w.dests, &l, &err), "listed with destination 2 missing");
		ok(any_problem_like(&l, "does not exist (is its device mounted?)"), "which is a problem");
		sb_wal_listing_free(&l);
	}
	th_wal_fixture_done(&w);
}

void
test_wal_list_entries(void)
{
	th_each_driver(list_entries, NULL);
}

/* Continuity on one timeline, across a switch by the history file, and the first gap named. */
static void
list_continuity(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalContinuity c;
	SbError		err;
	char		path[PATH_MAX];
	uint32_t	s;

	th_wal_fixture_on(&w, d, "walcontinuity", 2);
	for (s = 1; s <= 6; s++)
		if (s != 4)
			push_segment(&w, 1, s);
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(1, 3), 0, &c, &err),
	   "segments 1 to 3 checked");
	ok(c.complete && c.segments == 3 && c.segment_size == TH_WAL_SEGMENT, "complete: 3 segments of 1 MB");
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(1, 6), 0, &c, &err) && !c.complete,
	   "segments 1 to 6: not complete");
	is_str(c.first_missing, th_wal_name(1, 4), "the first gap is segment 4");
	like(c.message, "not in the archive", "said so");

	/* Timeline 2 from 0/5000A0: segments 1-4 on timeline 1, 5 onwards on timeline 2. */
	for (s = 5; s <= 8; s++)
		push_segment(&w, 2, s);
	push_segment(&w, 1, 4);
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(2, 8), 0, &c, &err) && !c.complete,
	   "timeline 1 to 2 without its history file: not complete");
	is_str(c.first_missing, "00000002.history", "the history file is what is missing");
	th_wal_archive_text(&w, "00000002.history", "# written by hand\n\n" HISTORY_2);
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(2, 8), 0, &c, &err) && c.complete &&
	   c.segments == 8, "with it (comments and blank lines passed over): complete, 8 segments across the switch");
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(2, 8), TH_WAL_SEGMENT, &c, &err) &&
	   c.complete, "the same with the segment size given");
	ok(!sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(2, 8), 3 << 20, &c, &err) &&
	   err.code == SB_EINVAL, "a segment size that is none is refused");
	th_dest_remove(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(2, 6)), th_wal_name(2, 6), path));
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 2), th_wal_name(2, 8), 0, &c, &err) && !c.complete,
	   "segment 6 of timeline 2 removed: not complete");
	is_str(c.first_missing, th_wal_name(2, 6), "that is the gap");
	like(c.message, "expected on timeline 2", "and where it was expected");
	ok(!sb_wal_check_continuity(&w.dests, th_wal_name(1, 6), th_wal_name(1, 2), 0, &c, &err) &&
	   err.code == SB_EINVAL, "an end before the start is refused");
	ok(!sb_wal_check_continuity(&w.dests, "00000002.history", th_wal_name(1, 2), 0, &c, &err) &&
	   err.code == SB_EINVAL, "a start that is not a segment is refused");
	th_wal_archive_text(&w, "00000003.history", "2\t0/9000000\tfrom 2 only\n");
	push_segment(&w, 3, 9);
	ok(!sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(3, 9), 0, &c, &err) &&
	   err.code == SB_EINVAL, "a timeline 3 that did not come from timeline 1 is refused");
	th_wal_archive_text(&w, "00000004.history", "1\tzero\tnot a history line\n");
	push_segment(&w, 4, 9);
	ok(!sb_wal_check_continuity(&w.dests, th_wal_name(1, 1), th_wal_name(4, 9), 0, &c, &err) &&
	   err.code == SB_ECORRUPT, "a history file PostgreSQL would not write is refused");
	like(err.message, "00000004.history", "naming it");
	th_wal_fixture_done(&w);
}

void
test_wal_list_continuity(void)
{
	th_each_driver(list_continuity, NULL);
}

/*
 * The history PostgreSQL writes for a copy restored below an earlier fork
 * (its recovery test 028's three copies, with 16 MB segments): timeline 2
 * began at 0/4000000, timeline 3 branched from timeline 1 at 0/301DD90.
 * With 1 MB segments here: timeline 1 up to segment 47, timeline 3 from
 * segment 48 on, and timeline 2 (from 64) on no segment's way to 3.
 */
#define HISTORY_3_BELOW_FORK "1\t0/4000000\tno recovery target specified\n\n" \
	"2\t0/301DD90\tat restore point \"rp\"\n"

static void
list_history_below_fork(const ThDriver *d, void *arg)
{
	ThWal		w;
	SbWalContinuity c;
	SbError		err;
	char		path[PATH_MAX];
	uint32_t	s;

	th_wal_fixture_on(&w, d, "walbelowfork", 1);
	for (s = 44; s <= 47; s++)
		push_segment(&w, 1, s);
	for (s = 48; s <= 50; s++)
		push_segment(&w, 3, s);
	push_segment(&w, 2, 64);
	th_wal_archive_text(&w, "00000002.history", "1\t0/4000000\tno recovery target specified\n");
	th_wal_archive_text(&w, "00000003.history", HISTORY_3_BELOW_FORK);
	if (!ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 44), th_wal_name(3, 50), 0, &c, &err),
			"timeline 3's history, as PostgreSQL wrote it, is read"))
		th_diag_error("checking", &err);
	ok(c.complete && c.segments == 7, "complete: 4 segments of timeline 1, then 3 of timeline 3");
	push_segment(&w, 1, 48);
	th_dest_remove(th_wal_archived(&w, 0, th_wal_name(3, 49), path));
	ok(sb_wal_check_continuity(&w.dests, th_wal_name(1, 44), th_wal_name(3, 50), 0, &c, &err) && !c.complete,
	   "timeline 3's segment 49 gone: a gap, timeline 1's segment 48 notwithstanding");
	is_str(c.first_missing, th_wal_name(3, 49), "on timeline 3, where recovery reads it");
	th_wal_archive_text(&w, "00000004.history", "1\t0/4000000\tx\n2\t0/301DD90\ty\n2\t0/3100000\tz\n");
	push_segment(&w, 4, 50);
	ok(!sb_wal_check_continuity(&w.dests, th_wal_name(1, 44), th_wal_name(4, 50), 0, &c, &err) &&
	   err.code == SB_ECORRUPT, "a timeline id that does not grow is still refused");
	like(err.message, "00000004.history", "naming the file");
	th_wal_fixture_done(&w);
}

void
test_wal_list_history_below_fork(void)
{
	th_begin("test_wal_list_history_below_fork: a switch point below the previous line's");
	th_each_driver(list_history_below_fork, NULL);
}

static void
collect(void *arg, const char *message)
{
	ThProblems *p = arg;

	if (p->n < 64)
		p->items[p->n++].message = strdup(message);
	else
		p->dropped++;
}

static bool
any_collected(const ThProblems *p, const char *text)
{
	int			i;

	for (i = 0; i < p->n; i++)
		if (strstr(p->items[i].message, text) != NULL)
			return true;
	return false;
}

/* Verify reads every file whole; damage, differing copies and a history file not everywhere are problems. */
static void
list_verify(const ThDriver *d, void *arg)
{
	ThWal		w;
	ThProblems	p;
	SbError		err;
	char		path[PATH_MAX];
	uint64_t	files,
				problems;
	uint32_t	s;

	th_wal_fixture_on(&w, d, "walverify", 2);
	for (s = 1; s <= 6; s++)
		push_segment(&w, 1, s);
	th_wal_archive_text(&w, "00000002.history", HISTORY_2);
	memset(&p, 0, sizeof(p));
	ok(sb_wal_verify(&w.dests, collect, &p, &files, &problems, &err), "verified");
	ok(files == 8 && problems == 0 && p.n == 0, "8 files, no problem");
	th_dest_flip_byte(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 2)), th_wal_name(1, 2), path),
					  1000, 0x02);
	th_dest_remove(th_wal_archived(&w, 1, "00000002.history", path));
	ok(sb_wal_verify(&w.dests, collect, &p, &files, &problems, &err), "verified again");
	is_int(problems, 2, "two problems");
	ok(any_collected(&p, th_wal_name(1, 2)) && (any_collected(&p, "mismatch") || any_collected(&p, "zstd")),
	   "segment 2's damage, named");
	ok(any_collected(&p, "\"00000002.history\" is in 1 of the 2 destinations"),
	   "the history file missing from a destination");
	th_free_problems(&p);

	/* A header damaged (the listing's problem), and two copies of a segment that differ. */
	th_dest_flip_byte(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 3)), th_wal_name(1, 3), path),
					  30, 0x02);
	s = (uint32_t) th_wal_holder(&w, th_wal_name(1, 4));
	th_wal_archived(&w, s, th_wal_name(1, 5), path);
	th_wal_source(&w, th_wal_name(1, 5), TH_WAL_SEGMENT, 99, true, path);
	{
		ThWal		one = w;
		SbWalArchiveOptions o;
		SbWalPushResult r;

		one.f.dests[0] = w.f.dest[s];
		th_wal_options(&o, &w);
		o.destinations = one.f.dests;
		o.ndestinations = 1;
		ok(th_wal_holder(&w, th_wal_name(1, 5)) != (int) s && th_wal_push_one(&o, &w, th_wal_name(1, 5), &r),
		   "another segment 5 put in the other destination");
	}
	memset(&p, 0, sizeof(p));
	ok(sb_wal_verify(&w.dests, collect, &p, &files, &problems, &err), "verified");
	ok(any_collected(&p, th_wal_name(1, 3)) && any_collected(&p, "header checksum mismatch"),
	   "the damaged header is a problem");
	ok(any_collected(&p, "differs between"), "so are two different copies");
	th_free_problems(&p);
	th_wal_fixture_done(&w);
}

void
test_wal_list_verify(void)
{
	th_each_driver(list_verify, NULL);
}

/* A temporary file a crash left: a provisional header of this archive, under a temporary name. */
static void
leave_temporary(const ThWal *w, uint32_t d, const char *name, uint64_t sysid, char *path)
{
	SbWalHeader h;
	uint8_t		raw[SB_WAL_HEADER_SIZE + 10];
	char		folder[PATH_MAX];
	SbError		err;

	memset(&h, 0, sizeof(h));
	memset(raw, 0, sizeof(raw));
	h.major = SB_WAL_FORMAT_MAJOR;
	h.system_identifier = sysid;
	snprintf(h.name, sizeof(h.name), "%s", name);
	h.raw_len = TH_WAL_SEGMENT;
	if (!sb_wal_header_encode(&h, NULL, raw, &err))
		th_diag_error("encoding a provisional header", &err);
	th_dest_write(th_path(path, "%s/%s.sbw.tmp.99.%llu", th_wal_folder(w, d, folder), name,
						  (unsigned long long) sysid % 10), raw, sizeof(raw));
}

/* Retention removes what comes before the cutoff and proves itself ours; nothing else. */
static void
list_retention(const ThDriver *d, void *arg)
{
	static const char *backup_file = "000000010000000000000002.00000028.backup";
	ThWal		w;
	SbWalRemoval r;
	SbError		err;
	char		path[PATH_MAX];
	char		junk[PATH_MAX];
	char		link_path[PATH_MAX];
	char		outside[PATH_MAX];
	char		temp_ours[PATH_MAX];
	char		temp_foreign[PATH_MAX];
	uint32_t	s;
	unsigned	local_kept = 0;

	th_wal_fixture_on(&w, d, "walretention", 2);
	for (s = 1; s <= 8; s++)
		push_segment(&w, 1, s);
	th_wal_archive_text(&w, "00000002.history", HISTORY_2);
	th_wal_archive_text(&w, backup_file, "START WAL LOCATION: 0/2000028\n");
	th_wal_source(&w, "000000010000000000000005.partial", TH_WAL_SEGMENT, 55, true, path);
	th_wal_archive(&w, "000000010000000000000005.partial");
	/*
	 * Things retention must leave: a user's file named like a segment,
	 * another cluster's temporary file, one too short to prove itself ours;
	 * and locally (a bucket has neither) a link and a folder so named.
	 */
	th_dest_write(th_wal_archived(&w, 0, th_wal_name(3, 1), junk), "a user's file", 13);
	ok(!sb_wal_remove_before(&(SbWalDests) {.count = 0}, th_wal_name(1, 5), true, &r, &err) &&
	   err.code == SB_EINVAL, "no destination is refused");
	if (!d->s3)
	{
		th_write_file(th_path(outside, "%s/outside", w.f.root), "keep me", 7, 0600);
		if (symlink(outside, th_wal_archived(&w, 1, th_wal_name(3, 2), link_path)) != 0)
			diag("symlink failed");
		th_mkdir(th_wal_archived(&w, 0, th_wal_name(3, 4), path), 0700);
		local_kept = 2;
	}
	leave_temporary(&w, 0, th_wal_name(1, 3), TH_WAL_SYSID, temp_ours);
	leave_temporary(&w, 1, th_wal_name(1, 3), TH_WAL_SYSID + 1, temp_foreign);
	th_dest_write(th_path(path, "%s.tmp.5.6", th_wal_archived(&w, 1, th_wal_name(3, 3), junk)), "short", 5);
	th_wal_archived(&w, 0, th_wal_name(3, 1), junk);

	ok(sb_wal_remove_before(&w.dests, th_wal_name(1, 5), true, &r, &err), "a dry run before segment 5");
	ok(r.files == 4 + 2 + 1 && r.kept == 3 + local_kept,
	   "would remove 4 segments, the backup file twice, a temporary file (%llu); keep %u (%llu)",
	   (unsigned long long) r.files, 3 + local_kept, (unsigned long long) r.kept);
	ok(th_wal_holder(&w, th_wal_name(1, 1)) >= 0, "and removed nothing");
	ok(sb_wal_remove_before(&w.dests, th_wal_name(1, 5), false, &r, &err), "removed before segment 5");
	ok(r.files == 7 && r.kept == 3 + local_kept && r.bytes > 4 * 128,
	   "7 files removed; a user's file, two temporary files not proven ours kept%s",
	   local_kept ? ", and a link and a folder" : "");
	for (s = 1; s <= 4; s++)
		is_int(th_wal_holder(&w, th_wal_name(1, s)), -1, "segment %u is gone", s);
	for (s = 5; s <= 8; s++)
		ok(th_wal_holder(&w, th_wal_name(1, s)) >= 0, "segment %u is kept", s);
	ok(th_dest_exists(th_wal_archived(&w, 0, "000000010000000000000005.partial", path)) ||
	   th_dest_exists(th_wal_archived(&w, 1, "000000010000000000000005.partial", path)),
	   "the partial segment 5 is kept");
	ok(th_dest_exists(th_wal_archived(&w, 0, "00000002.history", path)) &&
	   th_dest_exists(th_wal_archived(&w, 1, "00000002.history", path)), "the history file is kept");
	ok(!th_dest_exists(th_wal_archived(&w, 0, backup_file, path)) &&
	   !th_dest_exists(th_wal_archived(&w, 1, backup_file, path)),
	   "the backup history file of segment 2 is removed");
	ok(th_dest_exists(junk), "the user's file is kept");
	if (!d->s3)
		ok(th_exists(link_path) && th_exists(outside), "the link and what it points to are kept");
	ok(!th_dest_exists(temp_ours) && th_dest_exists(temp_foreign),
	   "our temporary file is removed, another cluster's kept");
	like(r.detail, "kept", "the first kept file is said");
	ok(!sb_wal_remove_before(&w.dests, "00000002.history", false, &r, &err) && err.code == SB_EINVAL,
	   "a history file as the cutoff is refused");
	/* A destination gone: a folder renamed away; for a bucket, one that does not exist. */
	if (!d->s3)
		rename(w.f.dest[1], th_path(path, "%s/gone", w.f.root));
	else
		w.f.dests[1] = "s3://no-such-bucket-sb/gone";
	ok(sb_wal_remove_before(&w.dests, th_wal_name(1, 7), false, &r, &err) && r.files > 0 &&
	   !th_dest_exists(th_wal_archived(&w, 0, th_wal_name(1, 5), path)) &&
	   !th_dest_exists(th_wal_archived(&w, 0, "000000010000000000000005.partial", path)),
	   "with destination 2 missing, destination 1 is still cleaned");
	like(r.detail, "does not exist", "and the missing one said (%s)", r.detail);
	th_wal_fixture_done(&w);
}

void
test_wal_list_retention(void)
{
	th_each_driver(list_retention, NULL);
}
