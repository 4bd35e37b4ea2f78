/*
 * sb_check.h
 *		stripe_check(): the pre-flight and monitoring checks, a row each
 *		(sb_sql_check.c, the configuration and the backups' history;
 *		sbx_check_archive.c, the WAL archive; sb_check_dest.c, the
 *		destinations), and the WAL archive's lag that stripe_health shows
 *		too (sbx_archive_lag.c).
 */
#ifndef SB_CHECK_H
#define SB_CHECK_H

#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog_internal.h"
#include "lib/stringinfo.h"
#include "utils/timestamp.h"

/* How bad a check's finding is: a warning is worth a look, a failure stops backups or restores. */
typedef enum SbCheckLevel
{
	SB_CHECK_OK,
	SB_CHECK_WARNING,
	SB_CHECK_FAILURE
} SbCheckLevel;

/* Where the rows go, and the names of the checks that failed (for raise => true). */
typedef struct SbCheckOut
{
	ReturnSetInfo *rs;
	StringInfoData failed;
	int			failures;
	int			warnings;
} SbCheckOut;

/* A row: CHECK, its LEVEL, DETAIL (what was found) and HINT (what to do, NULL when ok). */
extern void sbx_check_put(SbCheckOut *out, const char *check, SbCheckLevel level, const char *detail,
						 const char *hint);

/* The WAL archive's rows: archive_mode and archive_library against the destinations, a WAL switch archived within TIMEOUT_MS, the lag. */
extern void sbx_check_archive(SbCheckOut *out, long timeout_ms);

/* A row (or two) per destination of the last completed backup and of the WAL archive. */
extern void sbx_check_destinations(SbCheckOut *out);

/* How far the WAL archive is behind the server's WAL (pg_stat_archiver). */
typedef struct SbArchiveLag
{
	bool		archiving;		/* archive_mode is on (else nothing below is known) */
	bool		known;			/* a segment was archived since the statistics began */
	int64		segments;		/* finished segments not yet archived */
	double		seconds;		/* since the newest archived one, when segments > 0; else 0 */
	int64		archived_count;
	int64		failed_count;
	char		last_archived_wal[MAXFNAMELEN];
	TimestampTz last_archived_time;
	char		last_failed_wal[MAXFNAMELEN];
	TimestampTz last_failed_time;	/* 0: none */
} SbArchiveLag;

/* The lag as pg_stat_archiver tells it now (a fresh snapshot, not the transaction's). */
extern void sbx_archive_lag(SbArchiveLag *lag);

#endif							/* SB_CHECK_H */
