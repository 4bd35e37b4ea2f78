/*
 * job_restore_history.c
 *		Restore history and the estimates of restore plans.
 *
 * A restore records, per stripe, how long its reader took from the start of
 * the read to its last chunk: the effective speed of that destination under
 * a real restore (reads, checks, decompression and writes all included).  A
 * plan expects each destination to read at the speed its latest completed
 * restore measured, and each file to cost what creating and finishing files
 * cost then.  A destination no restore has read but stripe_calibrate
 * measured reads at the calibrated speed, which is of reading alone: the
 * CPU a restore spends on each byte, and (when no restore measured them)
 * creating and finishing the files, are then measured on a sample of the
 * backup restored where the restore will write (or, not said, into the data
 * directory's temporary folder).  A
 * destination never measured has no estimate (NULL).
 */
#include "postgres.h"

#include <libgen.h>

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "job_restore.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_spi.h"

void
sbx_restore_stripe_destination(const SbArchive *a, uint32_t stripe, char *buf, size_t len)
{
	char		path[MAXPGPATH];

	strlcpy(path, a->stripe_paths[stripe], sizeof(path));
	/* DEST/NAME/stripe-K.sbs: two levels up is the destination */
	strlcpy(buf, dirname(dirname(path)), len);
}

/* A float8 result, or FALLBACK when there is none. */
static double
float_result(const SbSql *sql, const SbRows *rows, int column, double fallback)
{
	bool		isnull = true;
	Datum		d = rows->count == 1 ? sbx_sql_datum(sql, rows, 0, column, &isnull) : (Datum) 0;

	return isnull ? fallback : DatumGetFloat8(d);
}

/* Latest measured speed (stored MB/s) of a destination; 0 when never measured. */
static double
measured_speed(const SbSql *sql, const char *destination)
{
	Datum		values[1] = {CStringGetTextDatum(destination)};
	SbRows		rows = sbx_sql_run(SB_SQL_RESTORE_SPEED, values, NULL);

	return float_result(sql, &rows, 1, 0);
}

/*
 * How fast a restore should read DESTINATION: as the latest restore from it
 * did, or, before any has, as stripe_calibrate read it (MB/s of the stripe
 * file, which is what the read pipeline reads); 0 when neither was measured.
 */
static double
expected_speed(const SbSql *sql, const char *destination, SbEstimateFrom *from)
{
	double		speed = measured_speed(sql, destination);
	Datum		values[2] = {CStringGetTextDatum(destination), CStringGetTextDatum("sequential read")};
	SbRows		rows;

	*from = SB_ESTIMATE_RESTORE;
	if (speed > 0)
		return speed;
	*from = SB_ESTIMATE_CALIBRATION;
	rows = sbx_sql_run(SB_SQL_CALIBRATED_SPEED, values, NULL);
	return float_result(sql, &rows, 1, 0);
}

double
sbx_restore_measured_speed(const char *destination)
{
	SbSql		sql;
	double		speed;

	sbx_sql_enter(&sql);
	speed = measured_speed(&sql, destination);
	sbx_sql_leave(&sql);
	return speed;
}

/* What the latest restore paid per file to create the tree and per byte to finish it; -1 unknown. */
static void
fixed_costs(const SbSql *sql, SbRestoreCosts *costs)
{
	SbRows		rows = sbx_sql_run(SB_SQL_RESTORE_FIXED_COSTS, NULL, NULL);

	memset(costs, 0, sizeof(*costs));
	costs->setup_per_file = float_result(sql, &rows, 1, -1);
	costs->finish_per_byte = costs->setup_per_file < 0 ? -1 : float_result(sql, &rows, 2, -1);
}

/*
 * What a restore of A costs here beyond reading its stripes, measured on a
 * sample of it as SAMPLING says; false, with a NOTICE saying why, when no
 * sample could be restored.
 */
static bool
sample_costs(const SbArchive *a, SbPlanSampling *sampling)
{
	SbReadOptions o;
	double		rates[SB_MAX_STRIPES];
	SbError		err;

	sbx_guc_read_options(&o, rates);
	o.tick = sbx_control_session_tick;
	/* the engine's read pipeline takes the archive it reads as writable; a sample writes nothing to it */
	if (sb_restore_sample(unconstify(SbArchive *, a), &o, sampling->dir, sampling->sync_fs, &sampling->taken,
						  &err))
		return true;
	CHECK_FOR_INTERRUPTS();		/* a cancel: raise it as PostgreSQL does */
	ereport(NOTICE,
			(errmsg("no sample of the backup could be restored to measure what a restore costs beyond reading: %s",
					err.message)));
	return false;
}

/* Does every stripe that holds data have a speed, some of them only stripe_calibrate's? */
static bool
needs_sample(const SbPlan *plan, const double *speeds, const SbEstimateFrom *from)
{
	bool		calibrated = false;
	uint32_t	i;

	for (i = 0; i < plan->nstripes; i++)
	{
		if (speeds[i] <= 0 && plan->stripes[i].stored_bytes > 0)
			return false;
		calibrated = calibrated || (speeds[i] > 0 && from[i] == SB_ESTIMATE_CALIBRATION);
	}
	return calibrated;
}

void
sbx_restore_plan_with_history(const SbArchive *a, SbPlan *plan, SbPlanSampling *sampling)
{
	double		speeds[SB_MAX_STRIPES];
	SbEstimateFrom from[SB_MAX_STRIPES];
	SbRestoreCosts costs;
	SbError		err;
	SbSql		sql;
	uint32_t	i;

	if (sampling != NULL)
		memset(&sampling->taken, 0, sizeof(sampling->taken));
	if (!sb_archive_plan(a, plan, &err))
		sbx_raise(&err);
	sbx_sql_enter(&sql);
	for (i = 0; i < plan->nstripes; i++)
	{
		char		destination[MAXPGPATH];

		sbx_restore_stripe_destination(a, i, destination, sizeof(destination));
		speeds[i] = expected_speed(&sql, destination, &from[i]);
	}
	fixed_costs(&sql, &costs);
	sbx_sql_leave(&sql);

	/*
	 * A calibrated speed is of reading alone: what the rest costs, measured
	 * on a sample.  Its cost per file, too, when there is a restore's: that
	 * one (setup_seconds) is of creating the tree before the read, while the
	 * sample's is of all a restore does per file (creating, filling, timing,
	 * syncing a small file as the read goes): 16,000 files cost 0.05 s the
	 * one way and 0.49 the other, where the restore's read took 0.45 s more
	 * than its bytes.  The final sync per byte is the sample's when it synced
	 * where the restore will write, else the latest restore's.
	 */
	if (sampling != NULL && needs_sample(plan, speeds, from) && sample_costs(a, sampling))
	{
		SbRestoreCosts *taken = &sampling->taken.costs;

		costs.cpu_per_byte = taken->cpu_per_byte;
		costs.cpus = taken->cpus;
		costs.write_per_byte = taken->write_per_byte;
		costs.setup_per_file = taken->setup_per_file;
		if (sampling->taken.synced_files || costs.finish_per_byte < 0)
			costs.finish_per_byte = taken->finish_per_byte;
		else
			taken->finish_per_byte = -1;
	}
	sb_plan_estimate(plan, speeds, from, &costs);
}

void
sbx_restore_plan_add_link(SbPlan *plan, const SbPlan *older)
{
	plan->chunks += older->chunks;
	plan->stored_bytes += older->stored_bytes;
	plan->raw_bytes += older->raw_bytes;
	if (plan->estimated_seconds >= 0 && older->estimated_seconds >= 0)
		plan->estimated_seconds += older->estimated_seconds - Max(older->fixed_seconds, 0);
	else
		plan->estimated_seconds = -1;
	plan->estimate_from = plan->estimated_seconds < 0 ? SB_ESTIMATE_NONE :
		Max(plan->estimate_from, older->estimate_from);
}

double
sbx_restore_delta_seconds(const SbPlan *plan, const SbDeltaEstimate *e, bool chain, const char *target,
						 double *compare_mbps)
{
	Datum		values[1] = {CStringGetTextDatum(target)};
	SbRestoreCosts costs;
	SbSql		sql;
	SbRows		rows;

	sbx_sql_enter(&sql);
	rows = sbx_sql_run(SB_SQL_DELTA_COMPARE_SPEED, values, NULL);
	*compare_mbps = float_result(&sql, &rows, 1, 0);
	fixed_costs(&sql, &costs);
	sbx_sql_leave(&sql);
	return sb_delta_plan_seconds(plan, e, chain, *compare_mbps, costs.setup_per_file, costs.finish_per_byte);
}

static Datum
text_array(const char *const *texts, int n)
{
	Datum	   *elems = palloc(sizeof(Datum) * (n + 1));
	int			i;

	for (i = 0; i < n; i++)
		elems[i] = CStringGetTextDatum(texts[i]);
	return sbx_sql_array(elems, NULL, n, TEXTOID);
}

void
sbx_restore_history_insert(const SbJob *job)
{
	const SbRestoreArgs *a = SB_JOB_ARGS(job, SbRestoreArgs);
	const char *mappings[SB_MAX_MAPPINGS];
	Datum		values[10];
	char		nulls[10];
	SbSql		sql;
	int			i;

	sbx_sql_begin(&sql);
	memset(nulls, ' ', sizeof(nulls));
	for (i = 0; i < a->nmappings; i++)
		mappings[i] = a->mappings[i];
	values[0] = Int64GetDatum(job->id);
	values[1] = Int64GetDatum(a->backup_id);
	nulls[1] = a->backup_id > 0 ? ' ' : 'n';
	values[2] = CStringGetTextDatum(a->location);
	values[3] = CStringGetTextDatum(a->target);
	values[4] = text_array(mappings, a->nmappings);
	nulls[4] = a->nmappings > 0 ? ' ' : 'n';
	values[5] = CStringGetDatum(job->requested_by);
	values[6] = Int32GetDatum(MyProcPid);
	values[7] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[8] = BoolGetDatum(a->standby);
	values[9] = BoolGetDatum(a->delta);
	(void) sbx_sql_run(SB_SQL_RESTORE_INSERT, values, nulls);
	sbx_sql_leave(&sql);
}

void
sbx_restore_history_directories(const SbJob *job, const char *const *dirs, int n)
{
	Datum		values[2];
	SbSql		sql;

	sbx_sql_begin(&sql);
	values[0] = Int64GetDatum(job->id);
	values[1] = text_array(dirs, n);
	(void) sbx_sql_run(SB_SQL_RESTORE_DIRECTORIES, values, NULL);
	sbx_sql_leave(&sql);
}

/* A plan's estimate, or NULL when unknown. */
static Datum
estimate(double seconds, bool *null)
{
	*null = seconds < 0;
	return Float8GetDatum(seconds);
}

/* A row per stripe, as one statement over arrays. */
static void
insert_stripes(const SbJob *job, const SbRestoreOutcome *o)
{
	int			n = (int) o->plan.nstripes;
	Datum	   *cols[7];
	bool	   *estimate_nulls = palloc0(sizeof(bool) * (n + 1));
	Datum		values[8];
	int			c,
				i;

	for (c = 0; c < 7; c++)
		cols[c] = palloc(sizeof(Datum) * (n + 1));
	for (i = 0; i < n; i++)
	{
		const SbPlanStripe *s = &o->plan.stripes[i];

		cols[0][i] = Int32GetDatum((int32) s->number);
		cols[1][i] = CStringGetTextDatum(o->destinations[i]);
		cols[2][i] = Int64GetDatum((int64) s->chunks);
		cols[3][i] = Int64GetDatum((int64) s->stored_bytes);
		cols[4][i] = Int64GetDatum((int64) s->raw_bytes);
		cols[5][i] = estimate(s->estimated_seconds, &estimate_nulls[i]);
		cols[6][i] = Float8GetDatum(o->stats.stripe_seconds[i]);
	}
	values[0] = Int64GetDatum(job->id);
	values[1] = sbx_sql_array(cols[0], NULL, n, INT4OID);
	values[2] = sbx_sql_array(cols[1], NULL, n, TEXTOID);
	values[3] = sbx_sql_array(cols[2], NULL, n, INT8OID);
	values[4] = sbx_sql_array(cols[3], NULL, n, INT8OID);
	values[5] = sbx_sql_array(cols[4], NULL, n, INT8OID);
	values[6] = sbx_sql_array(cols[5], estimate_nulls, n, FLOAT8OID);
	values[7] = sbx_sql_array(cols[6], NULL, n, FLOAT8OID);
	(void) sbx_sql_run(SB_SQL_RESTORE_STRIPES_INSERT, values, NULL);
}

void
sbx_restore_history_finish(const SbJob *job, const SbJobEnd *end, const void *outcome)
{
	const SbRestoreOutcome *o = outcome;
	bool		failed = strcmp(end->status, "completed") != 0;
	bool		null;
	bool		delta = SB_JOB_ARGS(job, SbRestoreArgs)->delta;
	Datum		values[14];
	char		nulls[14];
	SbSql		sql;

	sbx_sql_begin(&sql);
	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(job->id);
	values[1] = CStringGetTextDatum(end->status);
	values[2] = failed ? CStringGetTextDatum(end->message) : (Datum) 0;
	values[3] = failed ? CStringGetTextDatum(unpack_sql_state(end->sqlstate)) : (Datum) 0;
	nulls[2] = nulls[3] = failed ? ' ' : 'n';
	values[4] = Int64GetDatum((int64) o->plan.files);
	/* a delta restore reads and writes only the chunks its target did not hold */
	values[5] = Int64GetDatum((int64) (o->plan.stored_bytes - o->stats.delta_held_stored));
	values[6] = Int64GetDatum((int64) (delta ? o->stats.delta_written : o->bytes_to_write));
	nulls[4] = nulls[5] = nulls[6] = o->planned ? ' ' : 'n';
	values[7] = estimate(o->planned ? o->plan.estimated_seconds : -1, &null);
	nulls[7] = null ? 'n' : ' ';
	values[8] = Float8GetDatum(o->stats.setup_seconds);
	values[9] = Float8GetDatum(o->stats.read_seconds);
	values[10] = Float8GetDatum(o->stats.finish_seconds);
	nulls[8] = nulls[9] = nulls[10] = o->completed ? ' ' : 'n';
	values[11] = Int64GetDatum((int64) o->stats.delta_compared);
	values[12] = Int64GetDatum((int64) o->stats.delta_removed);
	values[13] = Float8GetDatum(o->stats.delta_compare_seconds);
	nulls[11] = nulls[12] = nulls[13] = delta && o->completed ? ' ' : 'n';
	(void) sbx_sql_run(SB_SQL_RESTORE_FINISH, values, nulls);
	/* each stripe's read speed is measured by whole restores only */
	if (o->completed && !delta)
		insert_stripes(job, o);
	sbx_sql_leave(&sql);
}

/* Restore ID wrote into DIR when it stopped: what it wrote goes, if its marker says it is its. */
static void
remove_incomplete(int64 id, const char *dir)
{
	SbIncompleteRestore found;
	SbError		err;

	if (!sb_restore_remove_incomplete(dir, sbx_restore_marker(id), &found, &err))
		ereport(LOG,
				(errmsg("stripebackup: could not remove what restore %lld left in \"%s\": %s",
						(long long) id, dir, err.message)));
	else if (found.removed)
		ereport(LOG,
				(errmsg("stripebackup: removed what restore %lld left in \"%s\"", (long long) id, dir)));
	else if (found.delta)
		ereport(LOG,
				(errmsg("stripebackup: left the copy that delta restore %lld was refreshing in \"%s\": "
						"it cannot start until a restore into it completes", (long long) id, dir)));
	else if (found.exists)
		ereport(LOG,
				(errmsg("stripebackup: left \"%s\": it does not hold the marker of restore %lld",
						dir, (long long) id)));
}

/* The directories a stale restore row lists: each cleared of what it wrote. */
static void
clean_restore_row(const SbSql *sql, const SbRows *rows, uint64 row)
{
	bool		isnull;
	int64		id = DatumGetInt64(sbx_sql_datum(sql, rows, row, 1, &isnull));
	Datum		array = sbx_sql_datum(sql, rows, row, 3, &isnull);
	Datum	   *dirs;
	int			ndirs,
				i;

	ereport(LOG,
			(errmsg("stripebackup: restore %lld was running when the server stopped; marked failed",
					(long long) id)));
	if (isnull)
		return;					/* it stopped before it wrote anything */
	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT, &dirs, NULL,
					  &ndirs);
	for (i = 0; i < ndirs; i++)
		remove_incomplete(id, TextDatumGetCString(dirs[i]));
}

void
sbx_restore_crash_cleanup(void)
{
	SbSql		sql;
	SbRows		rows;
	uint64		i;

	sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_RESTORE_MARK_STALE, NULL, NULL);
	for (i = 0; i < rows.count; i++)
		clean_restore_row(&sql, &rows, i);
	sbx_sql_leave(&sql);
}
