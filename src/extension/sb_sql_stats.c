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
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "stripebackup/sb_calibrate.h"
#include "stripebackup/sb_report.h"
#include "sb_args.h"
#include "sb_guc.h"
#include "sb_launch.h"
#include "sb_pgrestore.h"
#include "sb_spi.h"
#include "sb_util.h"

PG_FUNCTION_INFO_V1(stripe_calibrate);
PG_FUNCTION_INFO_V1(stripe_backup_svg);

#define MAX_RESULTS 32

static bool
session_tick(void *arg, const SbProgress *progress)
{
	return !(InterruptPending && (QueryCancelPending || ProcDiePending));
}

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
	SbSavedUser saved_user;
	Oid			types[8] = {TEXTOID, TEXTOID, INT4OID, INT4OID, INT4OID, FLOAT8OID, FLOAT8OID, BOOLOID};
	Datum		values[8];

	values[0] = CStringGetTextDatum(destination);
	values[1] = CStringGetTextDatum(sb_calibration_test_name(r->test));
	values[2] = Int32GetDatum((int32) (r->block_size / 1024));
	values[3] = Int32GetDatum((int32) r->queue_depth);
	values[4] = Int32GetDatum(size_mb);
	values[5] = Float8GetDatum(r->mb_per_s);
	values[6] = Float8GetDatum(r->iops);
	values[7] = BoolGetDatum(r->direct);
	saved_user = sb_spi_connect_as_extension();
	if (SPI_execute_with_args(psprintf("INSERT INTO %s.stripe_calibrations (destination, test, "
									   "block_kb, queue_depth, size_mb, mb_per_s, iops, direct_io) "
									   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", sb_schema_quoted()),
							  8, types, values, NULL, false, 0) != SPI_OK_INSERT)
		elog(ERROR, "could not record the calibration of \"%s\"", destination);
	sb_spi_finish_as_extension(saved_user);
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

Datum
stripe_calibrate(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbJobArgs  *dests = palloc0(sizeof(SbJobArgs));
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
	sb_args_read_destinations(PG_GETARG_ARRAYTYPE_P(0), dests);
	memset(&o, 0, sizeof(o));
	o.size = (uint64) size_mb * 1024 * 1024;
	o.block_size = (uint32) block_kb * 1024;
	o.queue_depth = (uint32) int_arg(fcinfo, 3, "queue_depth", 1, 256);
	o.io_method = (SbIoMethod) sb_guc_io_method_checked();
	o.tick = session_tick;
	for (i = 0; i < dests->ndestinations; i++)
		sb_check_outside_cluster(dests->destinations[i], "destination");
	sb_guc_max_rates(dests->ndestinations, rates);
	InitMaterializedSRF(fcinfo, 0);
	for (i = 0; i < dests->ndestinations; i++)
	{
		o.directory = dests->destinations[i];
		o.max_rate = rates[i];
		calibrate_one(rs, &o, random, matrix, size_mb);
	}
	return (Datum) 0;
}

Datum
stripe_backup_svg(PG_FUNCTION_ARGS)
{
	SbArchive  *volatile a;
	char	   *svg = NULL;
	text	   *result;
	SbError		err;

	sb_launch_check_privileges(false, "read a backup");
	a = sb_pgrestore_open(sb_pgrestore_location_of(PG_GETARG_INT64(0)));
	svg = sb_report_svg(a->manifest, &err);
	sb_archive_close(a);
	if (svg == NULL)
		sb_raise(&err);
	result = cstring_to_text(svg);
	free(svg);
	PG_RETURN_TEXT_P(result);
}
