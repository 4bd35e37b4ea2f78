/*
 * sb_sql_stats.c
 *		stripe_calibrate() and stripe_backup_svg(): measuring destinations,
 *		and a picture of a backup.
 *
 * Calibration runs in the calling session (one destination after the
 * other, each with the engine's I/O path); the session's thread waits in the
 * engine and an interrupt stops it at the next tick.  Results are kept in
 * stripe_calibrations, where stripe_backup(weights => NULL) finds them.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "stripebackup/sb_calibrate.h"
#include "stripebackup/sb_store.h"
#include "stripebackup/sb_report.h"
#include "job_backup.h"
#include "sb_args.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_launch.h"
#include "sb_paths.h"
#include "sb_shmem.h"
#include "sb_s3_settings.h"
#include "sb_spi.h"

PG_FUNCTION_INFO_V1(stripe_calibrate);
PG_FUNCTION_INFO_V1(stripe_backup_svg);

#define MAX_RESULTS 32

static int
int_arg(FunctionCallInfo fcinfo, int n, const char *name, int min, int max)
{
	int			v;

	if (PG_ARGISNULL(n))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("%s must not be NULL", name)));
	v = PG_GETARG_INT32(n);
	if (v < min || v > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %d is out of range (%d to %d)", name, v, min, max)));
	return v;
}

/* Keep one measurement in stripe_calibrations. */
static void
remember(const char *destination, const SbCalibrationResult *r, int size_mb)
{
	Datum		values[8];
	SbSql		sql;

	sbx_sql_enter(&sql);
	values[0] = CStringGetTextDatum(destination);
	values[1] = CStringGetTextDatum(sb_calibration_test_name(r->test));
	values[2] = Int32GetDatum((int32) (r->block_size / 1024));
	values[3] = Int32GetDatum((int32) r->queue_depth);
	values[4] = Int32GetDatum(size_mb);
	values[5] = Float8GetDatum(r->mb_per_s);
	values[6] = Float8GetDatum(r->iops);
	values[7] = BoolGetDatum(r->direct);
	(void) sbx_sql_run(SB_SQL_CALIBRATION_INSERT, values, NULL);
	sbx_sql_leave(&sql);
}

static void
put_result(ReturnSetInfo *rs, const char *destination, const SbCalibrationResult *r)
{
	Datum		v[7];
	bool		n[7] = {false, false, false, false, false, false, false};

	v[0] = CStringGetTextDatum(destination);
	v[1] = CStringGetTextDatum(sb_calibration_test_name(r->test));
	v[2] = Int32GetDatum((int32) (r->block_size / 1024));
	v[3] = Int32GetDatum((int32) r->queue_depth);
	v[4] = Float8GetDatum(r->mb_per_s);
	v[5] = Float8GetDatum(r->iops);
	v[6] = BoolGetDatum(r->direct);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Measure one destination; a cancel stops it (the test file is removed). */
static void
calibrate_one(ReturnSetInfo *rs, SbCalibrationOptions *o, bool random, bool matrix, int size_mb)
{
	SbCalibrationResult results[MAX_RESULTS];
	int			n;
	int			i;
	SbError		err;

	if (!sb_calibrate(o, random, matrix, results, &n, &err))
	{
		CHECK_FOR_INTERRUPTS();
		sbx_raise(&err);
	}
	for (i = 0; i < n; i++)
	{
		remember(o->directory, &results[i], size_mb);
		put_result(rs, o->directory, &results[i]);
	}
}

PGDLLEXPORT Datum
stripe_calibrate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	char		(*dests)[MAXPGPATH] = palloc0(SB_MAX_STRIPES * MAXPGPATH);
	int			ndests;
	SbCalibrationOptions o;
	int			size_mb = int_arg(fcinfo, 1, "size_mb", 1, 1024 * 1024);
	int			block_kb = int_arg(fcinfo, 2, "block_kb", 4, 64 * 1024);
	bool		random = !PG_ARGISNULL(4) && PG_GETARG_BOOL(4);
	bool		matrix = !PG_ARGISNULL(5) && PG_GETARG_BOOL(5);
	double		rates[SB_MAX_STRIPES];
	int			i;

	sbx_launch_check_privileges(true, "calibrate destinations");
	sbx_launch_check_writable("stripe_calibrate()");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("destinations must not be NULL")));
	ndests = sbx_args_read_destinations(PG_GETARG_ARRAYTYPE_P(0), dests);
	memset(&o, 0, sizeof(o));
	o.s3 = sbx_s3_settings();
	o.size = (uint64) size_mb * 1024 * 1024;
	o.block_size = (uint32) block_kb * 1024;
	o.queue_depth = (uint32) int_arg(fcinfo, 3, "queue_depth", 1, 256);
	o.io_method = (SbIoMethod) sbx_guc_io_method_checked();
	o.tick = sbx_control_session_tick;
	for (i = 0; i < ndests; i++)
		if (sb_store_features_of(dests[i]) & SB_STORE_DESCRIPTORS)
			sbx_check_outside_cluster(dests[i], "destination");
	sbx_guc_max_rates(ndests, rates);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < ndests; i++)
	{
		o.directory = dests[i];
		o.max_rate = rates[i];
		calibrate_one(rs, &o, random, matrix, size_mb);
	}
	return (Datum) 0;
}

PGDLLEXPORT Datum
stripe_backup_svg(PG_FUNCTION_ARGS)
{
	SbArchive  *a;
	char	   *svg;
	text	   *result;
	SbError		err;

	sbx_launch_check_privileges(false, "read a backup");
	a = sbx_handle_open_archive(sbx_backup_recorded(PG_GETARG_INT64(0)), SB_OPEN_TO_PLAN, NULL);
	svg = sb_report_svg(a->manifest, &err);
	if (svg == NULL)
		sbx_raise(&err);
	result = cstring_to_text(svg);
	free(svg);
	PG_RETURN_TEXT_P(result);
}

PG_FUNCTION_INFO_V1(stripe_stats_reset);

/* Calibrations and timelines go; throughput statistics count from now. */
PGDLLEXPORT Datum
stripe_stats_reset(PG_FUNCTION_ARGS)
{
	SbSql		sql;

	sbx_launch_check_privileges(true, "reset the statistics");
	sbx_launch_check_writable("stripe_stats_reset()");
	sbx_sql_enter(&sql);
	(void) sbx_sql_run(SB_SQL_STATS_RESET, NULL, NULL);
	sbx_sql_leave(&sql);
	PG_RETURN_VOID();
}

/* ---------- live progress ---------- */

PG_FUNCTION_INFO_V1(stripebackup_progress);

#define PROGRESS_COLUMNS 16

/*
 * The columns of a progress row: per stripe, or for the whole job (scope
 * 'total', stripe and location NULL).
 */
typedef struct ProgressRow
{
	const char *scope;
	int			stripe;			/* 0 for the whole job */
	const char *location;
	uint64		done;
	uint64		total;			/* the estimate, 0 when unknown */
	uint64		stored;
	double		busy_seconds;	/* the seconds its rates are per; 0 none yet */
	double		recent;			/* data MB/s over the last few seconds */
	uint32		in_flight;
} ProgressRow;

/* Data MB/s over the samples kept (the last few seconds); the average over ELAPSED if too few. */
static double
recent_rate(const SbStripeLive *l, double elapsed)
{
	int			newest = (l->nsamples - 1) % SB_PROGRESS_SAMPLES;
	int			oldest = l->nsamples <= SB_PROGRESS_SAMPLES ? 0 : l->nsamples % SB_PROGRESS_SAMPLES;
	double		dt;

	if (l->nsamples < 2)
		return elapsed > 0 ? (double) l->done / 1e6 / elapsed : 0;
	dt = l->sample_time[newest] - l->sample_time[oldest];
	return dt > 0 ? (double) (l->sample_done[newest] - l->sample_done[oldest]) / 1e6 / dt : 0;
}

/*
 * The total shown: the estimate, raised to what is done when the job has
 * outrun it.  The estimate is taken before the walk (the files' sizes then,
 * each stripe's share by its weight); tables grow and WAL is written while
 * the backup reads, and an adaptive stripe takes more than its share, so
 * done may pass it.  A total that is at least done keeps the percentage at
 * or below 100 and the remainder (and so the ETA) at 0 rather than negative.
 */
static uint64
shown_total(uint64 estimate, uint64 done)
{
	return estimate > done ? estimate : done;
}

static void
put_row(ReturnSetInfo *rs, const SbLiveSnapshot *snap, const ProgressRow *r)
{
	uint64		total = r->total == 0 ? 0 : shown_total(r->total, r->done);
	Datum		v[PROGRESS_COLUMNS];
	bool		n[PROGRESS_COLUMNS];

	memset(n, false, sizeof(n));
	v[0] = CStringGetTextDatum(sbx_job_ops(snap->kind)->name);
	v[1] = Int64GetDatum(snap->id);
	v[2] = CStringGetTextDatum(snap->live.phase);
	v[3] = CStringGetTextDatum(r->scope);
	v[4] = Int32GetDatum(r->stripe);
	n[4] = r->stripe == 0;
	v[5] = CStringGetTextDatum(r->location != NULL ? r->location : "");
	n[5] = r->location == NULL;
	v[6] = Int64GetDatum((int64) r->done);
	v[7] = Int64GetDatum((int64) total);
	n[7] = total == 0;
	v[8] = Int64GetDatum((int64) r->stored);
	/* the one definition of a rate (sb_stripe_data_mb_per_s): bytes per second of writing */
	v[9] = Float8GetDatum((double) r->done / 1e6 / r->busy_seconds);
	v[10] = Float8GetDatum((double) r->stored / 1e6 / r->busy_seconds);
	n[9] = n[10] = r->busy_seconds <= 0;
	v[11] = Float8GetDatum(r->recent);
	v[12] = Int32GetDatum((int32) r->in_flight);
	v[13] = Float8GetDatum(total > r->done && r->recent > 0 ?
						   (double) (total - r->done) / 1e6 / r->recent : 0);
	n[13] = total == 0 || r->recent <= 0;
	v[14] = TimestampTzGetDatum(snap->live.updated_at);
	n[14] = snap->live.updated_at == 0;
	v[15] = Float8GetDatum(snap->live.elapsed);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Stripe I's row. */
static void
put_stripe(ReturnSetInfo *rs, const SbLiveSnapshot *snap, int i)
{
	const SbStripeLive *l = &snap->live.stripes[i];
	ProgressRow r = {"stripe", i + 1, l->location, l->done, l->total, l->stored,
	l->busy_seconds, recent_rate(l, snap->live.elapsed), l->in_flight};

	put_row(rs, snap, &r);
}

/*
 * The whole job's row: the stripes' sums, the job's total estimate, its
 * rates per second since it began (the stripes write side by side, so
 * their seconds do not add up).
 */
static void
put_whole(ReturnSetInfo *rs, const SbLiveSnapshot *snap)
{
	ProgressRow r = {"total", 0, NULL, 0, snap->live.bytes_total, 0,
	snap->live.elapsed, 0, 0};
	int			i;

	for (i = 0; i < snap->live.nstripes; i++)
	{
		const SbStripeLive *l = &snap->live.stripes[i];

		r.done += l->done;
		r.stored += l->stored;
		r.recent += recent_rate(l, snap->live.elapsed);
		r.in_flight += l->in_flight;
	}
	if (snap->live.bytes_done > r.done)
		r.done = snap->live.bytes_done;
	put_row(rs, snap, &r);
}

/* A row per stripe of the running job; none when nothing runs. */
PGDLLEXPORT Datum
stripebackup_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbLiveSnapshot *snap = palloc(sizeof(SbLiveSnapshot));
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	sbx_shmem_live_snapshot(snap);
	if (!snap->running)
		return (Datum) 0;
	put_whole(rs, snap);
	for (i = 0; i < snap->live.nstripes; i++)
		put_stripe(rs, snap, i);
	return (Datum) 0;
}
