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

	sb_sql_enter(&sql);
	values[0] = CStringGetTextDatum(destination);
	values[1] = CStringGetTextDatum(sb_calibration_test_name(r->test));
	values[2] = Int32GetDatum((int32) (r->block_size / 1024));
	values[3] = Int32GetDatum((int32) r->queue_depth);
	values[4] = Int32GetDatum(size_mb);
	values[5] = Float8GetDatum(r->mb_per_s);
	values[6] = Float8GetDatum(r->iops);
	values[7] = BoolGetDatum(r->direct);
	(void) sb_sql_run(SB_SQL_CALIBRATION_INSERT, values, NULL);
	sb_sql_leave(&sql);
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
		sb_raise(&err);
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

	sb_launch_check_privileges(true, "calibrate destinations");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("destinations must not be NULL")));
	ndests = sb_args_read_destinations(PG_GETARG_ARRAYTYPE_P(0), dests);
	memset(&o, 0, sizeof(o));
	o.size = (uint64) size_mb * 1024 * 1024;
	o.block_size = (uint32) block_kb * 1024;
	o.queue_depth = (uint32) int_arg(fcinfo, 3, "queue_depth", 1, 256);
	o.io_method = (SbIoMethod) sb_guc_io_method_checked();
	o.tick = sb_control_session_tick;
	for (i = 0; i < ndests; i++)
		if (sb_store_features_of(dests[i]) & SB_STORE_DESCRIPTORS)
			sb_check_outside_cluster(dests[i], "destination");
	sb_guc_max_rates(ndests, rates);
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

	sb_launch_check_privileges(false, "read a backup");
	a = sb_handle_open_archive(sb_backup_recorded(PG_GETARG_INT64(0)), SB_OPEN_TO_PLAN, NULL);
	svg = sb_report_svg(a->manifest, &err);
	if (svg == NULL)
		sb_raise(&err);
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

	sb_launch_check_privileges(true, "reset the statistics");
	sb_sql_enter(&sql);
	(void) sb_sql_run(SB_SQL_STATS_RESET, NULL, NULL);
	sb_sql_leave(&sql);
	PG_RETURN_VOID();
}

/* ---------- live progress ---------- */

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
put_stripe(ReturnSetInfo *rs, const SbLiveSnapshot *snap, int i)
{
	const SbStripeLive *l = &snap->live.stripes[i];
	double		elapsed = l->nsamples > 0 ?
		l->sample_time[(l->nsamples - 1) % SB_PROGRESS_SAMPLES] : 0;
	double		average = elapsed > 0 ? (double) l->done / 1e6 / elapsed : 0;
	double		recent = recent_rate(l, average);
	Datum		v[PROGRESS_COLUMNS];
	bool		n[PROGRESS_COLUMNS];

	memset(n, false, sizeof(n));
	v[0] = CStringGetTextDatum(sb_job_ops(snap->kind)->name);
	v[1] = Int64GetDatum(snap->id);
	v[2] = CStringGetTextDatum(snap->live.phase);
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
	v[12] = TimestampTzGetDatum(snap->live.updated_at);
	n[12] = snap->live.updated_at == 0;
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* A row per stripe of the running job; none when nothing runs. */
PGDLLEXPORT Datum
stripebackup_progress(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbLiveSnapshot *snap = palloc(sizeof(SbLiveSnapshot));
	int			i;

	InitMaterializedSRF(fcinfo, 0);
	sb_shmem_live_snapshot(snap);
	for (i = 0; snap->running && i < snap->live.nstripes; i++)
		put_stripe(rs, snap, i);
	return (Datum) 0;
}
