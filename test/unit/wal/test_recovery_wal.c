/*
 * test_recovery_wal.c
 *		Before a point-in-time restore (sb_recovery_check_wal): the WAL
 *		recovery will ask for after the backup, from the backup's last
 *		segment to the target's or the newest archived, across a timeline
 *		switch; a gap refused for "latest" and for an LSN beyond it, only
 *		reported for the targets PostgreSQL itself will not end short of.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "stripebackup/sb_pgrecovery.h"
#include "tests.h"
#include "wal_fixture.h"

#define STOP_LSN "0/200100"		/* in segment 2 of 1 MB segments */

static void
push_segment(ThWal *w, uint32_t timeline, uint64_t segno)
{
	char		path[PATH_MAX];
	const char *name = th_wal_name(timeline, segno);

	th_wal_source(w, name, TH_WAL_SEGMENT, (uint32_t) (timeline * 100 + segno), true, path);
	if (!th_wal_archive(w, name))
		diag("could not archive %s", name);
}

static bool
check(const ThWal *w, SbRecoveryKind kind, const char *value, const char *timeline, uint32_t backup_timeline,
	  SbRecoveryWal *r, SbError *err)
{
	SbRecoveryTarget t = {kind, value, true, timeline, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};

	return sb_recovery_check_wal(&w->dests, STOP_LSN, backup_timeline, &t, r, err);
}

void
test_recovery_wal_gaps(void)
{
	ThWal		w;
	SbRecoveryWal r;
	SbError		err;
	uint32_t	s;

	th_wal_fixture(&w, "recoverywal", 2);
	ok(check(&w, SB_RECOVERY_LATEST, NULL, NULL, 1, &r, &err) && r.checked && !r.complete && r.refuse,
	   "an empty archive: latest refused");
	like(r.message, "holds no WAL segment of timeline 1", "saying the archive holds nothing after the backup");
	for (s = 1; s <= 6; s++)
		if (s != 4)
			push_segment(&w, 1, s);
	ok(check(&w, SB_RECOVERY_IMMEDIATE, NULL, NULL, 1, &r, &err) && !r.checked,
	   "immediate needs only the backup's own WAL: nothing checked");
	ok(check(&w, SB_RECOVERY_LATEST, NULL, NULL, 1, &r, &err) && !r.complete && r.refuse,
	   "segment 4 missing: latest refused");
	is_str(r.from, th_wal_name(1, 2), "from the backup's last segment");
	is_str(r.to, th_wal_name(1, 6), "to the newest archived");
	like(r.message, th_wal_name(1, 4), "the gap named");
	ok(check(&w, SB_RECOVERY_TIME, "2026-11-30 12:00:00+00", NULL, 1, &r, &err) && !r.complete && !r.refuse,
	   "a time target: the gap reported, not refused (PostgreSQL will not end short of it)");
	ok(check(&w, SB_RECOVERY_LSN, "0/300010", NULL, 1, &r, &err) && r.complete && !r.refuse && r.segments == 2,
	   "an LSN before the gap: complete, segments 2 and 3");
	ok(r.held[0] + r.held[1] == 2 && r.raw_bytes == 2 * (uint64_t) TH_WAL_SEGMENT &&
	   r.stored_bytes[0] + r.stored_bytes[1] > 0, "what each destination holds of them: 2 segments in all");
	ok(check(&w, SB_RECOVERY_LSN, "0/500000", NULL, 1, &r, &err) && !r.complete && r.refuse,
	   "an LSN beyond the gap: refused");
	ok(!check(&w, SB_RECOVERY_LSN, "0/100000", NULL, 1, &r, &err) && err.code == SB_EINVAL,
	   "an LSN before the end of the backup: refused as bad input");
	like(err.message, "before the end of the backup", "saying so");
	ok(!check(&w, SB_RECOVERY_XID, "12x", NULL, 1, &r, &err) && err.code == SB_EINVAL, "a bad target refused");
	th_wal_fixture_done(&w);
}

void
test_recovery_wal_timelines(void)
{
	ThWal		w;
	SbRecoveryWal r;
	SbError		err;
	uint32_t	s;

	th_wal_fixture(&w, "recoverywaltli", 1);
	for (s = 1; s <= 6; s++)
		push_segment(&w, 1, s);
	ok(check(&w, SB_RECOVERY_LATEST, NULL, NULL, 1, &r, &err) && r.complete && r.segments == 5,
	   "segments 2 to 6 all there: complete");
	th_wal_archive_text(&w, "00000002.history", "1\t0/5000A0\tno recovery target specified\n");
	ok(check(&w, SB_RECOVERY_LATEST, NULL, NULL, 1, &r, &err) && r.timeline == 2 && r.complete,
	   "timeline 2 begun, nothing on it yet: follows it, complete up to the newest before it");
	for (s = 5; s <= 7; s++)
		push_segment(&w, 2, s);
	ok(check(&w, SB_RECOVERY_LATEST, NULL, "latest", 1, &r, &err) && r.timeline == 2 && r.complete &&
	   r.segments == 6, "timeline 2: 2 to 4 on timeline 1, 5 to 7 on timeline 2");
	is_str(r.to, th_wal_name(2, 7), "to timeline 2's newest");
	ok(check(&w, SB_RECOVERY_LATEST, NULL, "current", 1, &r, &err) && r.timeline == 1 && r.complete,
	   "timeline current: the backup's");
	is_str(r.to, th_wal_name(1, 6), "to timeline 1's newest");
	ok(!check(&w, SB_RECOVERY_LATEST, NULL, "1", 2, &r, &err) && err.code == SB_EINVAL,
	   "a timeline before the backup's refused");
	ok(!sb_recovery_check_wal(&w.dests, "zero", 1, &(SbRecoveryTarget) {SB_RECOVERY_LATEST, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0}, &r, &err) &&
	   err.code == SB_ECORRUPT, "a stop LSN that is none refused");

	/*
	 * An LSN on timeline 1 past where timeline 2 branched off and past
	 * timeline 2's end (a copy that promoted and wrote little): latest
	 * follows timeline 2 and would stop short; timeline 1 holds it.
	 */
	for (s = 7; s <= 9; s++)
		push_segment(&w, 1, s);
	ok(check(&w, SB_RECOVERY_LSN, "0/900010", "latest", 1, &r, &err) && r.refuse && r.timeline == 2,
	   "an LSN timeline 2 does not reach, latest given: refused along it");
	is_int(r.holding_timeline, 1, "timeline 1 named as the one that holds it");
	like(r.message, "timeline 1 holds the target", "said in the message");
	ok(check(&w, SB_RECOVERY_LSN, "0/900010", NULL, 1, &r, &err) && !r.refuse && r.complete &&
	   r.timeline == 1 && r.chosen_timeline == 1 && r.newest_timeline == 2,
	   "none given: timeline 1 chosen, every segment to the target's on it");
	like(r.chosen_why, "timeline 1 holds the target", "saying why timeline 2 was passed over");
	is_str(r.to, th_wal_name(1, 9), "to the target's segment on timeline 1");
	ok(check(&w, SB_RECOVERY_LSN, "0/900010", "2", 1, &r, &err) && r.refuse && r.holding_timeline == 0,
	   "timeline 2 asked for by number: refused, no other offered");
	ok(check(&w, SB_RECOVERY_LSN, "0/700010", NULL, 1, &r, &err) && !r.refuse && r.timeline == 2 &&
	   r.chosen_timeline == 0, "an LSN timeline 2 does reach: along it, as PostgreSQL goes, nothing chosen");

	/* A backup of timeline 1 that ended after timeline 2 branched off (at 0/5000A0). */
	{
		SbRecoveryTarget immediate = {SB_RECOVERY_IMMEDIATE, NULL, true, "latest", NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
		SbRecoveryTarget chosen = {SB_RECOVERY_IMMEDIATE, NULL, true, NULL, NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
		SbRecoveryTarget current = {SB_RECOVERY_IMMEDIATE, NULL, true, "current", NULL, SB_ARCHIVE_MODE_DEFAULT, false, 0};
		uint64_t	files,
					problems;

		ok(sb_recovery_check_wal(&w.dests, "0/700100", 1, &immediate, &r, &err) && r.not_child && r.refuse &&
		   r.timeline == 2 && r.holding_timeline == 1, "immediate along latest: timeline 2 is not a child, 1 holds it");
		like(r.message, "timeline 2 branched off timeline 1 at 0/5000A0, before the backup's end at 0/700100",
			 "said with both positions");
		ok(sb_recovery_check_wal(&w.dests, "0/700100", 1, &chosen, &r, &err) && !r.not_child && !r.refuse &&
		   r.chosen_timeline == 1 && r.newest_timeline == 2 && r.timeline == 1,
		   "immediate, no timeline given: timeline 1, which holds the backup, chosen");
		like(r.chosen_why, "timeline 1 holds the backup", "saying why");
		ok(sb_recovery_check_wal(&w.dests, "0/400100", 1, &chosen, &r, &err) && r.chosen_timeline == 0,
		   "a backup that the newest holds: nothing chosen");
		ok(sb_recovery_check_wal(&w.dests, "0/400100", 1, &immediate, &r, &err) && !r.not_child && !r.refuse,
		   "a backup that ended before the branch: timeline 2 holds it");
		ok(sb_recovery_check_wal(&w.dests, "0/700100", 1, &current, &r, &err) && !r.not_child && !r.refuse,
		   "the timeline asked for (current) is not second-guessed");
		ok(sb_recovery_verify_wal(&w.dests, "0/700100", 1, NULL, NULL, &r, &files, &problems, &err) &&
		   problems == 0 && r.timeline == 1 && r.passed_over == 2,
		   "verify of that backup: along timeline 1, timeline 2 passed over, no problem");
	}
	th_wal_fixture_done(&w);
}

static void
collect(void *arg, const char *message)
{
	char	   *all = arg;

	snprintf(all + strlen(all), 4096 - strlen(all), "%s\n", message);
}

/* Verify from the backup's start: each file read whole, the first gap and a damaged file named. */
void
test_recovery_wal_verify(void)
{
	ThWal		w;
	SbRecoveryWal r;
	SbError		err;
	char		problems[4096] = "";
	char		path[PATH_MAX];
	uint64_t	files,
				n;
	uint32_t	s;
	FILE	   *f;

	th_wal_fixture(&w, "recoverywalverify", 2);
	for (s = 1; s <= 6; s++)
		push_segment(&w, 1, s);
	ok(sb_recovery_verify_wal(&w.dests, "0/200100", 1, collect, problems, &r, &files, &n, &err) &&
	   n == 0 && files == 5, "segments 2 to 6 read whole: no problem");
	is_str(r.from, th_wal_name(1, 2), "from the segment of the backup's start");
	th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 5)), th_wal_name(1, 5), path);
	f = fopen(path, "r+b");
	ok(f != NULL && fseek(f, -100, SEEK_END) == 0 && fputc('x', f) != EOF && fclose(f) == 0,
	   "a byte of segment 5's payload changed");
	unlink(th_wal_archived(&w, (uint32_t) th_wal_holder(&w, th_wal_name(1, 3)), th_wal_name(1, 3), path));
	ok(sb_recovery_verify_wal(&w.dests, "0/200100", 1, collect, problems, &r, &files, &n, &err) && n == 2,
	   "segment 3 removed, segment 5 damaged: two problems");
	like(problems, th_wal_name(1, 3), "the gap named");
	like(problems, th_wal_name(1, 5), "the damaged file named");
	th_wal_fixture_done(&w);
}
