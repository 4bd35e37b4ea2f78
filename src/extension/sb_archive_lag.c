/*
 * sbx_archive_lag.c
 *		How far the WAL archive is behind the server's WAL, as
 *		pg_stat_archiver tells it, whatever archives (our module, another
 *		library, an archive_command): stripe_check() judges it and
 *		stripe_health shows it, through stripe_archive_lag().
 */
#include "postgres.h"

#include "access/xlog.h"
#include "pgstat.h"
#include "utils/builtins.h"

#include "sb_check.h"

PG_FUNCTION_INFO_V1(stripe_archive_lag);

/* The segment number of archived file NAME (a segment, or a backup history file named after one); false for a timeline history file. */
static bool
archived_segment(const char *name, XLogSegNo *segno)
{
	char		segment[XLOG_FNAME_LEN + 1];
	TimeLineID	tli;

	if (strlen(name) < XLOG_FNAME_LEN || strspn(name, "0123456789ABCDEF") < XLOG_FNAME_LEN)
		return false;
	strlcpy(segment, name, sizeof(segment));
	XLogFromFileName(segment, &tli, segno, wal_segment_size);
	return true;
}

void
sbx_archive_lag(SbArchiveLag *lag)
{
	PgStat_ArchiverStats *s;
	XLogSegNo	archived;
	XLogSegNo	finished;

	memset(lag, 0, sizeof(*lag));
	lag->archiving = XLogArchivingActive();
	if (!lag->archiving)
		return;
	/* A check polls: each call must see the archiver's latest report, not the snapshot of the transaction. */
	pgstat_clear_snapshot();
	s = pgstat_fetch_stat_archiver();
	lag->archived_count = s->archived_count;
	lag->failed_count = s->failed_count;
	strlcpy(lag->last_archived_wal, s->last_archived_wal, sizeof(lag->last_archived_wal));
	lag->last_archived_time = s->last_archived_timestamp;
	strlcpy(lag->last_failed_wal, s->last_failed_wal, sizeof(lag->last_failed_wal));
	lag->last_failed_time = s->last_failed_timestamp;
	if (RecoveryInProgress() || !archived_segment(s->last_archived_wal, &archived))
		return;
	/* The segment being written is not due yet: the one before it is the newest finished one. */
	XLByteToSeg(GetXLogInsertRecPtr(), finished, wal_segment_size);
	finished--;
	lag->known = true;
	lag->segments = finished > archived ? (int64) (finished - archived) : 0;
	if (lag->segments > 0)
		lag->seconds = (double) (GetCurrentTimestamp() - lag->last_archived_time) / USECS_PER_SEC;
}

/* One row: segments and seconds behind, NULL when unknown (no archiving, nothing archived yet). */
PGDLLEXPORT Datum
stripe_archive_lag(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		v[2];
	bool		n[2] = {true, true};
	SbArchiveLag lag;

	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "stripe_archive_lag must return a row");
	sbx_archive_lag(&lag);
	if (lag.known)
	{
		v[0] = Int64GetDatum(lag.segments);
		v[1] = Float8GetDatum(lag.seconds);
		n[0] = n[1] = false;
	}
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), v, n)));
}
