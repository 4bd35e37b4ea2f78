/*
 * test_wal_redundancy.c
 *		Archiving with redundancy: each segment in M + 1 distinct
 *		destinations, a missing destination done without (and said), too
 *		few destinations refused naming both numbers, and a find that may
 *		say "not in the archive" with up to M destinations missing.
 */
#include <stdio.h>
#include <string.h>

#include "tests.h"
#include "wal_fixture.h"

/* How many of W's three destinations hold NAME. */
static int
copies_of(const ThWal *w, const char *name)
{
	char		path[PATH_MAX];
	int			n = 0;
	uint32_t	i;

	for (i = 0; i < 3; i++)
		n += th_exists(th_wal_archived(w, i, name, path));
	return n;
}

void
test_wal_redundancy_copies(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	char		path[PATH_MAX];
	int			held[3] = {0};
	uint64_t	seg;
	uint32_t	i;

	th_wal_fixture(&w, "walredund", 3);
	th_wal_options(&o, &w);
	o.redundancy = 1;
	for (seg = 1; seg <= 6; seg++)
	{
		th_wal_source(&w, th_wal_name(1, seg), TH_WAL_SEGMENT, (uint32_t) seg, false, path);
		ok(th_wal_push_one(&o, &w, th_wal_name(1, seg), &r) && r.written == 2 && r.skipped == 0,
		   "segment %llu archived, written twice", (unsigned long long) seg);
		is_int(copies_of(&w, th_wal_name(1, seg)), 2, "segment %llu: in exactly two destinations",
			   (unsigned long long) seg);
		for (i = 0; i < 3; i++)
			held[i] += (r.holders >> i) & 1;
	}
	ok(held[0] == 4 && held[1] == 4 && held[2] == 4, "equal weights: 4 copies each (%d %d %d)",
	   held[0], held[1], held[2]);
	ok(th_wal_push_one(&o, &w, th_wal_name(1, 1), &r) && r.already_archived && r.written == 0,
	   "pushed again: already archived, nothing written");

	o.redundancy = 3;
	ok(!sb_wal_archive_check_options(&o, &r.error), "redundancy 3 over 3 destinations refused");
	like(r.error.message, "redundancy 3 needs at least 4 destinations; 3 are given", "naming both numbers");
	th_wal_fixture_done(&w);
}

void
test_wal_redundancy_missing_destination(void)
{
	ThWal		w;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbWalFound	found;
	SbWalDests	d;
	SbError		err;
	char		path[PATH_MAX];

	th_wal_fixture(&w, "walredmiss", 3);
	th_wal_options(&o, &w);
	o.redundancy = 1;
	th_rmtree(w.f.dests[1]);
	th_wal_source(&w, th_wal_name(1, 1), TH_WAL_SEGMENT, 1, true, path);
	ok(th_wal_push_one(&o, &w, th_wal_name(1, 1), &r), "archived with a destination missing");
	ok(r.skipped == 2 && r.holders == 5, "done without the missing one, in the other two (skipped %llx, holders %llx)",
	   (unsigned long long) r.skipped, (unsigned long long) r.holders);
	like(r.skip_error.message, "does not exist", "saying why");

	o.redundancy = 0;
	ok(!th_wal_push_one(&o, &w, th_wal_name(1, 1), &r), "without redundancy, a missing destination fails the push");

	d = w.dests;
	ok(!sb_wal_find(&d, th_wal_name(1, 9), &found, &err) && err.code == SB_EIO,
	   "without redundancy, a file held nowhere cannot be said absent");
	d.redundancy = 1;
	ok(!sb_wal_find(&d, th_wal_name(1, 9), &found, &err) && err.code == SB_ENOTFOUND,
	   "with redundancy 1 and one destination missing, it is not in the archive");
	ok(sb_wal_find(&d, th_wal_name(1, 1), &found, &err) && found.holders == 5, "and the copies are found");
	th_wal_fixture_done(&w);
}
