/*
 * sbx_check_archive.c
 *		stripe_check()'s rows on the WAL archive: whether the settings send
 *		WAL where stripebackup.archive_destinations says, whether a segment
 *		switched now reaches the archive in time (as pgbackrest check does:
 *		an archive that takes nothing is found before a restore needs it),
 *		and how far the archive is behind.
 *
 * The switch is judged by pg_stat_archiver, which counts a segment once
 * archive_library returned true: our module returns true only when the
 * segment is durable in every destination (sb_archive_module.c), so the
 * statistics prove it is there without reading the archive back.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "sb_check.h"
#include "sb_compat.h"
#include "sb_guc.h"
#include "sb_shmem.h"

#define POLL_MS 100

static bool
library_is_ours(void)
{
	return XLogArchiveLibrary != NULL && strcmp(XLogArchiveLibrary, "stripebackup") == 0;
}

/* How the server archives, for messages. */
static const char *
archiver_name(void)
{
	if (XLogArchiveLibrary != NULL && XLogArchiveLibrary[0] != '\0')
		return psprintf("archive_library \"%s\"", XLogArchiveLibrary);
	return "archive_command";
}

/* archive_mode and archive_library against the destinations (NDEST, or -1 and WHY); true when WAL is archived. */
static bool
check_settings(SbCheckOut *out, int ndest, const char *why)
{
	const char *hint = "Set archive_mode = on and archive_library = 'stripebackup' in postgresql.conf and restart the server.";

	if (ndest < 0)
		sbx_check_put(out, "archive_mode", SB_CHECK_FAILURE,
					 psprintf("stripebackup.archive_destinations is not valid: %s", why),
					 "Give absolute folders or s3:// locations, separated by commas.");
	else if (!XLogArchivingActive() && ndest > 0)
		sbx_check_put(out, "archive_mode", SB_CHECK_FAILURE,
					 "archive_mode is off but stripebackup.archive_destinations is set: no WAL reaches them, and no restore to a point in time can start",
					 hint);
	else if (!XLogArchivingActive())
		sbx_check_put(out, "archive_mode", SB_CHECK_WARNING,
					 "WAL is not archived: a restore reaches only the end of a backup", hint);
	else if (library_is_ours() && ndest == 0)
		sbx_check_put(out, "archive_mode", SB_CHECK_FAILURE,
					 "archive_library is stripebackup but stripebackup.archive_destinations is empty: every segment fails to archive and pg_wal grows",
					 "Set stripebackup.archive_destinations and reload the server.");
	else if (!library_is_ours() && ndest > 0)
		sbx_check_put(out, "archive_mode", SB_CHECK_FAILURE,
					 psprintf("stripebackup.archive_destinations is set but WAL goes to %s: the destinations receive nothing",
							  archiver_name()),
					 hint);
	else if (library_is_ours() && sb_guc_archive_redundancy >= ndest)
		sbx_check_put(out, "archive_mode", SB_CHECK_FAILURE,
					 psprintf("stripebackup.archive_redundancy is %d but stripebackup.archive_destinations has %d destination%s: each segment needs %d, so none is archived",
							  sb_guc_archive_redundancy, ndest, ndest == 1 ? "" : "s",
							  sb_guc_archive_redundancy + 1),
					 "Add archive destinations or lower stripebackup.archive_redundancy, and reload the server.");
	else
		sbx_check_put(out, "archive_mode", SB_CHECK_OK,
					 library_is_ours() ? psprintf("WAL is archived by stripebackup into %d destination%s", ndest,
												  ndest == 1 ? "" : "s")
					 : psprintf("WAL is archived by %s", archiver_name()),
					 NULL);
	return ndest >= 0 && XLogArchivingActive();
}

/* Has the archiver reported SEGMENT (or a later file) archived?  A history file's name is no segment's. */
static bool
archived_past(const SbArchiveLag *lag, const char *segment)
{
	const char *last = lag->last_archived_wal;

	if (strspn(last, "0123456789ABCDEF") < XLOG_FNAME_LEN)
		return false;
	return strncmp(last, segment, XLOG_FNAME_LEN) > 0 || strcmp(last, segment) == 0;
}

/* Wait until SEGMENT is archived, at most TIMEOUT_MS; LAG as last seen. */
static bool
wait_archived(const char *segment, long timeout_ms, SbArchiveLag *lag)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);

	for (;;)
	{
		sbx_archive_lag(lag);
		if (archived_past(lag, segment))
			return true;
		if (GetCurrentTimestamp() >= deadline)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, POLL_MS, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* What the archiver said last, for a failure's detail. */
static const char *
archiver_story(const SbArchiveLag *lag)
{
	StringInfoData s;
	SbArchiveLive *live;

	initStringInfo(&s);
	appendStringInfo(&s, "the archiver last archived %s",
					 lag->last_archived_wal[0] ? lag->last_archived_wal : "nothing");
	if (lag->last_failed_time != 0)
		appendStringInfo(&s, "; it failed %lld times, last on %s at %s", (long long) lag->failed_count,
						 lag->last_failed_wal, timestamptz_to_str(lag->last_failed_time));
	if (!library_is_ours() || !sbx_shmem_loaded())
		return s.data;
	live = palloc(sizeof(SbArchiveLive));
	sbx_shmem_archive_snapshot(live);
	if (live->last_error[0] != '\0')
		appendStringInfo(&s, ": %s", live->last_error);
	return s.data;
}

/* A segment switched now must be archived within TIMEOUT_MS. */
static void
check_switch(SbCheckOut *out, long timeout_ms)
{
	TimestampTz start = GetCurrentTimestamp();
	char		segment[MAXFNAMELEN];
	XLogSegNo	segno;
	SbArchiveLag lag;

	if (RecoveryInProgress())
	{
		sbx_check_put(out, "WAL archived", SB_CHECK_OK,
					 "this server is a standby: the switch is checked on its primary", NULL);
		return;
	}
	/* A record to switch away from: with none since the last switch, no segment would finish. */
	(void) XLogRestorePoint("stripebackup check");
	XLByteToPrevSeg(RequestXLogSwitch(false), segno, wal_segment_size);
	XLogFileName(segment, GetWALInsertionTimeLine(), segno, wal_segment_size);
	if (wait_archived(segment, timeout_ms, &lag))
		sbx_check_put(out, "WAL archived", SB_CHECK_OK,
					 psprintf("segment %s, switched now, was archived in %.1f s", segment,
							  (double) (GetCurrentTimestamp() - start) / USECS_PER_SEC),
					 NULL);
	else
		sbx_check_put(out, "WAL archived", SB_CHECK_FAILURE,
					 psprintf("segment %s, switched now, was not archived within %.1f s: %s", segment,
							  (double) timeout_ms / 1000.0, archiver_story(&lag)),
					 "See the server log and stripe_wal_archive.last_error; check that every archive destination is mounted and writable.");
}

/* How far the archive is behind: a failure while the archiver's newest attempt failed. */
static void
check_lag(SbCheckOut *out)
{
	SbArchiveLag lag;

	sbx_archive_lag(&lag);
	if (lag.last_failed_time > lag.last_archived_time)
		sbx_check_put(out, "WAL archive lag", SB_CHECK_FAILURE,
					 psprintf("archiving fails: %s", archiver_story(&lag)),
					 "See the server log; WAL accumulates in pg_wal until archiving succeeds.");
	else if (!lag.known)
		sbx_check_put(out, "WAL archive lag", SB_CHECK_OK, "nothing archived since the statistics began", NULL);
	else
		sbx_check_put(out, "WAL archive lag", SB_CHECK_OK,
					 psprintf("%lld finished segments not yet archived (%.0f s); the newest archived is %s",
							  (long long) lag.segments, lag.seconds, lag.last_archived_wal),
					 NULL);
}

void
sbx_check_archive(SbCheckOut *out, long timeout_ms)
{
	char		folders[SB_MAX_STRIPES][MAXPGPATH];
	const char *why = "";
	int			n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, folders, &why);

	if (!check_settings(out, n, why))
		return;
	check_switch(out, timeout_ms);
	check_lag(out);
}
