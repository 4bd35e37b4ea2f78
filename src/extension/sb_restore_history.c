/*
 * sb_restore_history.c
 *		Restore history and the estimates of restore plans.
 *
 * A restore records, per stripe, how long its reader took from the start of
 * the read to its last chunk: the effective speed of that destination under
 * a real restore (reads, checks, decompression and writes all included).  A
 * plan expects each destination to read at the speed its latest completed
 * restore measured, and each file to cost what creating and finishing files
 * cost then; a destination never measured has no estimate (NULL).
 */
#include "postgres.h"

#include <libgen.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "sb_restore_history.h"
#include "sb_spi.h"
#include "sb_util.h"

void
sb_restore_stripe_destination(const SbArchive *a, uint32_t stripe, char *buf, size_t len)
{
	char		path[MAXPGPATH];

	strlcpy(path, a->stripe_paths[stripe], sizeof(path));
	/* DEST/NAME/stripe-K.sbs: two levels up is the destination */
	strlcpy(buf, dirname(dirname(path)), len);
}

/* Latest measured speed (stored MB/s) of a destination; 0 when never measured. */
static double
measured_speed(const char *destination)
{
	Oid			types[1] = {TEXTOID};
	Datum		values[1];
	bool		isnull;
	double		mbps = 0;

	values[0] = CStringGetTextDatum(destination);
	if (SPI_execute_with_args(psprintf("SELECT (s.stored_bytes / 1e6 / s.seconds)::float8 "
									   "FROM %1$s.stripe_restore_stripe_history s "
									   "JOIN %1$s.stripe_restore_history r ON r.id = s.restore_id "
									   "WHERE r.status = 'completed' AND s.destination = $1 "
									   "AND s.seconds > 0 AND s.stored_bytes > 0 "
									   "ORDER BY s.restore_id DESC LIMIT 1", sb_schema_quoted()),
							  1, types, values, NULL, true, 1) == SPI_OK_SELECT &&
		SPI_processed == 1)
	{
		Datum		d = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &isnull);

		if (!isnull)
			mbps = DatumGetFloat8(d);
	}
	return mbps;
}

/*
 * What the latest restore paid to create the tree, per file, and to finish
 * it (modes, times and above all the final sync of what it wrote), per byte;
 * -1 for both when there is none.
 */
static void
measured_fixed_costs(double *setup_per_file, double *finish_per_byte)
{
	*setup_per_file = -1;
	*finish_per_byte = -1;
	if (SPI_execute(psprintf("SELECT setup_seconds / files, finish_seconds / bytes_written "
							 "FROM %s.stripe_restore_history WHERE status = 'completed' "
							 "AND files > 0 AND bytes_written > 0 "
							 "ORDER BY id DESC LIMIT 1", sb_schema_quoted()),
					true, 1) == SPI_OK_SELECT && SPI_processed == 1)
	{
		bool		null1,
					null2;
		Datum		d1 = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1, &null1);
		Datum		d2 = SPI_getbinval(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2, &null2);

		if (!null1 && !null2)
		{
			*setup_per_file = DatumGetFloat8(d1);
			*finish_per_byte = DatumGetFloat8(d2);
		}
	}
}

void
sb_restore_plan_with_history(const SbArchive *a, SbPlan *plan)
{
	SbSavedUser saved_user;
	double		speeds[SB_MAX_STRIPES];
	double		setup_per_file,
				finish_per_byte;
	SbError		err;
	uint32_t	i;

	if (!sb_archive_plan(a, plan, &err))
		sb_raise(&err);
	saved_user = sb_spi_connect_as_extension();
	for (i = 0; i < plan->nstripes; i++)
	{
		char		destination[MAXPGPATH];

		sb_restore_stripe_destination(a, i, destination, sizeof(destination));
		speeds[i] = measured_speed(destination);
	}
	measured_fixed_costs(&setup_per_file, &finish_per_byte);
	sb_plan_estimate(plan, speeds, setup_per_file, finish_per_byte);
	sb_spi_finish_as_extension(saved_user);
}

static Datum
mappings_array(const SbJobArgs *a)
{
	Datum	   *elems = palloc(sizeof(Datum) * (a->nmappings + 1));
	int			i;

	for (i = 0; i < a->nmappings; i++)
		elems[i] = CStringGetTextDatum(a->mappings[i]);
	return PointerGetDatum(construct_array(elems, a->nmappings, TEXTOID, -1, false, TYPALIGN_INT));
}

void
sb_restore_history_insert(const SbJobArgs *a)
{
	Oid			types[8] = {INT8OID, INT8OID, TEXTOID, TEXTOID, TEXTARRAYOID, NAMEOID, INT4OID,
	TIMESTAMPTZOID};
	Datum		values[8];
	char		nulls[9] = "        ";

	sb_spi_begin();
	values[0] = Int64GetDatum(a->id);
	values[1] = Int64GetDatum(a->backup_id);
	nulls[1] = a->backup_id > 0 ? ' ' : 'n';
	values[2] = CStringGetTextDatum(a->location);
	values[3] = CStringGetTextDatum(a->target);
	values[4] = mappings_array(a);
	nulls[4] = a->nmappings > 0 ? ' ' : 'n';
	values[5] = CStringGetDatum(a->requested_by);
	values[6] = Int32GetDatum(MyProcPid);
	values[7] = TimestampTzGetDatum(GetCurrentTimestamp());
	sb_spi_write(psprintf("INSERT INTO %s.stripe_restore_history (id, backup_id, location, target, "
						  "tablespace_mapping, status, requested_by, worker_pid, started_at) "
						  "VALUES ($1, $2, $3, $4, $5, 'running', $6, $7, $8)", sb_schema_quoted()),
				 8, types, values, nulls);
	sb_spi_end();
}

/* A plan's estimate as a Datum, or NULL when unknown. */
static Datum
estimate(double seconds, char *null)
{
	*null = seconds >= 0 ? ' ' : 'n';
	return Float8GetDatum(seconds);
}

static void
insert_stripes(const SbJobArgs *a, const SbRestoreOutcome *o)
{
	Oid			types[8] = {INT8OID, INT4OID, TEXTOID, INT8OID, INT8OID, INT8OID, FLOAT8OID, FLOAT8OID};
	char	   *sql = psprintf("INSERT INTO %s.stripe_restore_stripe_history (restore_id, stripe, "
							   "destination, chunks, stored_bytes, raw_bytes, estimated_seconds, seconds) "
							   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", sb_schema_quoted());
	uint32_t	i;

	for (i = 0; i < o->plan.nstripes; i++)
	{
		const SbPlanStripe *s = &o->plan.stripes[i];
		Datum		values[8];
		char		nulls[9] = "        ";

		values[0] = Int64GetDatum(a->id);
		values[1] = Int32GetDatum((int32) s->number);
		values[2] = CStringGetTextDatum(o->destinations[i]);
		values[3] = Int64GetDatum((int64) s->chunks);
		values[4] = Int64GetDatum((int64) s->stored_bytes);
		values[5] = Int64GetDatum((int64) s->raw_bytes);
		values[6] = estimate(s->estimated_seconds, &nulls[6]);
		values[7] = Float8GetDatum(o->stats.stripe_seconds[i]);
		sb_spi_write(sql, 8, types, values, nulls);
	}
}

void
sb_restore_history_finish(const SbJobArgs *a, const char *status, const char *error,
						  const SbRestoreOutcome *o)
{
	Oid			types[11] = {INT8OID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID, FLOAT8OID,
	FLOAT8OID, FLOAT8OID, FLOAT8OID, TIMESTAMPTZOID};
	Datum		values[11];
	char		nulls[12] = "           ";
	bool		done = o->completed;

	sb_spi_begin();
	values[0] = Int64GetDatum(a->id);
	values[1] = CStringGetTextDatum(status);
	values[2] = error ? CStringGetTextDatum(error) : (Datum) 0;
	nulls[2] = error ? ' ' : 'n';
	values[3] = Int64GetDatum((int64) o->plan.files);
	values[4] = Int64GetDatum((int64) o->plan.stored_bytes);
	values[5] = Int64GetDatum((int64) o->plan.raw_bytes);
	nulls[3] = nulls[4] = nulls[5] = o->planned ? ' ' : 'n';
	values[6] = estimate(o->planned ? o->plan.estimated_seconds : -1, &nulls[6]);
	values[7] = Float8GetDatum(o->stats.setup_seconds);
	values[8] = Float8GetDatum(o->stats.read_seconds);
	values[9] = Float8GetDatum(o->stats.finish_seconds);
	nulls[7] = nulls[8] = nulls[9] = done ? ' ' : 'n';
	values[10] = TimestampTzGetDatum(GetCurrentTimestamp());
	sb_spi_write(psprintf("UPDATE %s.stripe_restore_history SET status = $2, error = $3, files = $4, "
						  "bytes_read = $5, bytes_written = $6, estimated_seconds = $7, "
						  "setup_seconds = $8, read_seconds = $9, finish_seconds = $10, "
						  "finished_at = $11 WHERE id = $1", sb_schema_quoted()),
				 11, types, values, nulls);
	if (done)
		insert_stripes(a, o);
	sb_spi_end();
}
