/*
 * sb_sql_archive.c
 *		stripe_wal_archive_status(), behind the view stripe_wal_archive: what
 *		the WAL archive module did since the server started, per destination,
 *		and how far the archive is behind the server's WAL.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "sb_shmem.h"

PG_FUNCTION_INFO_V1(stripe_wal_archive_status);

#define ARCHIVE_COLUMNS 14

/* MB/s over the time D has been archived to; NULL (false) before a second has passed. */
static bool
rate(const SbArchiveLive *a, const SbArchiveDestLive *d, double *mbps)
{
	long		secs;
	int			usecs;
	double		elapsed;

	TimestampDifference(a->started_at, d->last_time, &secs, &usecs);
	elapsed = (double) secs + (double) usecs / 1e6;
	if (d->files == 0 || elapsed < 1.0)
		return false;
	*mbps = (double) d->bytes / 1e6 / elapsed;
	return true;
}

static void
put_destination(ReturnSetInfo *rs, const SbArchiveLive *a, int i, uint64 insert_lsn)
{
	const SbArchiveDestLive *d = &a->dests[i];
	Datum		v[ARCHIVE_COLUMNS];
	bool		n[ARCHIVE_COLUMNS];
	double		mbps = 0;

	memset(n, false, sizeof(n));
	v[0] = CStringGetTextDatum(d->path);
	v[1] = Int64GetDatum((int64) d->files);
	v[2] = Int64GetDatum((int64) d->bytes);
	v[3] = Int64GetDatum((int64) d->stored_bytes);
	v[4] = CStringGetTextDatum(d->last_file);
	n[4] = d->last_file[0] == '\0';
	v[5] = TimestampTzGetDatum(d->last_time);
	n[5] = d->last_time == 0;
	n[6] = !rate(a, d, &mbps);
	v[6] = Float8GetDatum(mbps);
	v[7] = Int64GetDatum((int64) (insert_lsn - a->last_end_lsn));
	n[7] = a->last_end_lsn == 0 || insert_lsn < a->last_end_lsn;
	v[8] = Int64GetDatum((int64) a->failures);
	v[9] = CStringGetTextDatum(a->last_failed_file);
	n[9] = a->last_failed_file[0] == '\0';
	v[10] = TimestampTzGetDatum(a->last_failed_time);
	n[10] = a->last_failed_time == 0;
	v[11] = CStringGetTextDatum(a->last_error);
	n[11] = a->last_error[0] == '\0';
	v[12] = Int64GetDatum((int64) d->failures);
	v[13] = CStringGetTextDatum(d->last_error);
	n[13] = d->last_error[0] == '\0';
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* A row per destination archived to since the server started; none before. */
PGDLLEXPORT Datum
stripe_wal_archive_status(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbArchiveLive *a = palloc(sizeof(SbArchiveLive));
	uint64		insert_lsn = RecoveryInProgress() ? 0 : GetXLogInsertRecPtr();
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	sbx_shmem_archive_snapshot(a);
	for (i = 0; i < a->ndests; i++)
		put_destination(rs, a, i, insert_lsn);
	return (Datum) 0;
}
