/*
 * sb_progress.c
 *		Live progress of the running backup or restore: the worker publishes
 *		the engine's figures in shared memory about every 100 ms, keeping a
 *		sample a second per stripe for the recent rate;
 *		stripebackup_progress() reads them for the stripe_backup_progress view.
 */
#include "postgres.h"

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "executor/spi.h"

#include "sb_progress.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_worker.h"

/* Keep a sample about every second, the last few, for the recent rate. */
static void
sample(SbStripeLive *l, double now)
{
	int			last = l->nsamples - 1;

	if (l->nsamples > 0 && now - l->sample_time[last % SB_PROGRESS_SAMPLES] < 1.0)
		return;
	l->sample_time[l->nsamples % SB_PROGRESS_SAMPLES] = now;
	l->sample_done[l->nsamples % SB_PROGRESS_SAMPLES] = l->done;
	l->nsamples++;
}

bool
sb_worker_tick(void *arg, const SbProgress *p)
{
	double		now = p->elapsed_seconds;
	uint32_t	i;

	(void) arg;
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->bytes_done = p->raw_bytes_done;
	sb_shared->files_done = p->files_done;
	sb_shared->updated_at = GetCurrentTimestamp();
	for (i = 0; i < p->nstripes && i < (uint32_t) sb_shared->nstripes; i++)
	{
		SbStripeLive *l = &sb_shared->stripes[i];

		l->done = p->stripes[i].raw_bytes;
		l->stored = p->stripes[i].stored_bytes;
		l->in_flight = p->stripes[i].in_flight;
		sample(l, now);
	}
	LWLockRelease(sb_shared->lock);
	return !sb_worker_stop_requested();
}


PG_FUNCTION_INFO_V1(stripebackup_progress);

#define PROGRESS_COLUMNS 13

/* MB/s over the samples kept (the last few seconds); the average if too few. */
static double
recent_rate(const SbStripeLive *l, double average)
{
	int			newest = (l->nsamples - 1) % SB_PROGRESS_SAMPLES;
	int			oldest = l->nsamples <= SB_PROGRESS_SAMPLES ? 0 : l->nsamples % SB_PROGRESS_SAMPLES;
	double		dt;

	if (l->nsamples < 2)
		return average;
	dt = l->sample_time[newest] - l->sample_time[oldest];
	return dt > 0 ? (double) (l->sample_done[newest] - l->sample_done[oldest]) / 1e6 / dt : average;
}

static void
put_stripe(ReturnSetInfo *rs, const SbShared *snap, int i)
{
	const SbStripeLive *l = &snap->stripes[i];
	double		elapsed = l->nsamples > 0 ?
		l->sample_time[(l->nsamples - 1) % SB_PROGRESS_SAMPLES] : 0;
	double		average = elapsed > 0 ? (double) l->done / 1e6 / elapsed : 0;
	double		recent = recent_rate(l, average);
	Datum		v[PROGRESS_COLUMNS];
	bool		n[PROGRESS_COLUMNS];

	memset(n, false, sizeof(n));
	v[0] = CStringGetTextDatum(sb_job_kind_name(snap->args.kind));
	v[1] = Int64GetDatum(snap->args.id);
	v[2] = CStringGetTextDatum(snap->phase);
	v[3] = Int32GetDatum(i + 1);
	v[4] = CStringGetTextDatum(l->location);
	v[5] = Int64GetDatum((int64) l->done);
	v[6] = Int64GetDatum((int64) l->total);
	n[6] = l->total == 0;
	v[7] = Int64GetDatum((int64) l->stored);
	v[8] = Float8GetDatum(recent);
	v[9] = Float8GetDatum(average);
	v[10] = Int32GetDatum((int32) l->in_flight);
	v[11] = Float8GetDatum(l->total > l->done && recent > 0 ?
						   (double) (l->total - l->done) / 1e6 / recent : 0);
	n[11] = l->total == 0 || recent <= 0;
	v[12] = TimestampTzGetDatum(snap->updated_at);
	n[12] = snap->updated_at == 0;
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* A row per stripe of the running job; none when nothing runs. */
Datum
stripebackup_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbShared   *snap;
	bool		running;
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	if (sb_shared == NULL)
		return (Datum) 0;
	snap = palloc(sizeof(SbShared));
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	memcpy(snap, sb_shared, sizeof(SbShared));
	LWLockRelease(sb_shared->lock);
	running = snap->state == SB_JOB_RUNNING && sb_shmem_is_running(snap->args.kind, snap->args.id);
	for (i = 0; running && i < snap->nstripes; i++)
		put_stripe(rs, snap, i);
	return (Datum) 0;
}

/* The cluster's size: what a backup is expected to read, roughly. */
static uint64
cluster_size(void)
{
	bool		isnull;
	uint64		size = 0;

	sb_spi_begin();
	if (SPI_execute("SELECT sum(pg_database_size(oid))::bigint FROM pg_database "
					"WHERE datallowconn", true, 1) == SPI_OK_SELECT && SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			size = (uint64) DatumGetInt64(d);
	}
	sb_spi_end();
	return size;
}

void
sb_progress_begin_backup(const SbJobArgs *args)
{
	const char *locations[SB_MAX_STRIPES];
	uint64		totals[SB_MAX_STRIPES];
	uint64		total = cluster_size();
	double		sum = 0;
	int			i;

	for (i = 0; i < args->ndestinations; i++)
		sum += args->weights[i];
	/* Each destination's share by weight: exact when weighted, a start when adaptive. */
	for (i = 0; i < args->ndestinations; i++)
	{
		locations[i] = args->destinations[i];
		totals[i] = (uint64) ((double) total * args->weights[i] / sum);
	}
	sb_shmem_progress_begin(args->ndestinations, locations, totals, total);
}

void
sb_progress_begin_restore(const SbArchive *a)
{
	const char *locations[SB_MAX_STRIPES];
	uint64		totals[SB_MAX_STRIPES];
	uint32_t	i;

	for (i = 0; i < a->manifest->nstripes; i++)
	{
		locations[i] = a->stripe_paths[i];
		totals[i] = a->manifest->stripes[i].raw_bytes;
	}
	sb_shmem_progress_begin((int) a->manifest->nstripes, locations, totals,
							a->manifest->stream_bytes);
}
