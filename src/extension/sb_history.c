/*
 * sb_history.c
 *		Writing the history rows.  Each write is its own committed
 *		transaction, so a row is visible while its backup runs and survives
 *		whatever the caller's transaction does.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/snapmgr.h"

#include "sb_history.h"
#include "sb_spi.h"
#include "sb_util.h"

static Datum
text_array(const SbJobArgs *a)
{
	Datum	   *elems = palloc(sizeof(Datum) * a->ndestinations);
	int			i;

	for (i = 0; i < a->ndestinations; i++)
		elems[i] = CStringGetTextDatum(a->destinations[i]);
	return PointerGetDatum(construct_array(elems, a->ndestinations, TEXTOID, -1, false,
										   TYPALIGN_INT));
}

static Datum
float_array(const SbJobArgs *a)
{
	Datum	   *elems = palloc(sizeof(Datum) * a->ndestinations);
	int			i;

	for (i = 0; i < a->ndestinations; i++)
		elems[i] = Float8GetDatum(a->weights[i]);
	return PointerGetDatum(construct_array(elems, a->ndestinations, FLOAT8OID, sizeof(float8),
										   FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
}

void
sb_history_insert(const SbJobArgs *a)
{
	Oid			types[11] = {INT8OID, TEXTOID, TEXTOID, TEXTARRAYOID, FLOAT8ARRAYOID,
	TEXTOID, INT4OID, TEXTOID, NAMEOID, INT4OID, TIMESTAMPTZOID};
	Datum		values[11];
	char		nulls[12] = "           ";

	sb_spi_begin();
	values[0] = Int64GetDatum(a->id);
	values[1] = CStringGetTextDatum(a->name);
	values[2] = a->has_label ? CStringGetTextDatum(a->label) : (Datum) 0;
	nulls[2] = a->has_label ? ' ' : 'n';
	values[3] = text_array(a);
	values[4] = float_array(a);
	values[5] = CStringGetTextDatum(sb_codec_name(a->codec));
	values[6] = Int32GetDatum(a->codec == SB_CODEC_ZSTD ? a->level : 0);
	values[7] = CStringGetTextDatum(sb_balance_name(a->balance));
	values[8] = CStringGetDatum(a->requested_by);
	values[9] = Int32GetDatum(MyProcPid);
	values[10] = TimestampTzGetDatum(GetCurrentTimestamp());
	sb_spi_write(psprintf("INSERT INTO %s.stripe_backup_history (id, name, label, status, destinations, "
					 "weights, compression, compression_level, balance, requested_by, worker_pid, "
					 "started_at) VALUES ($1, $2, $3, 'running', $4, $5, $6, $7, $8, $9, $10, $11)",
					 sb_schema_quoted()),
			11, types, values, nulls);
	sb_spi_end();
}

static void
insert_stripes(const SbJobArgs *a, const SbManifest *m)
{
	Oid			types[8] = {INT8OID, INT4OID, TEXTOID, FLOAT8OID, INT8OID, INT8OID, INT8OID, FLOAT8OID};
	char	   *sql = psprintf("INSERT INTO %s.stripe_backup_stripe_history (backup_id, stripe, "
							   "destination, weight, chunks, raw_bytes, stored_bytes, seconds) "
							   "VALUES ($1, $2, $3, $4, $5, $6, $7, $8)", sb_schema_quoted());
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];
		Datum		values[8];

		values[0] = Int64GetDatum(a->id);
		values[1] = Int32GetDatum((int32) s->number);
		values[2] = CStringGetTextDatum(s->destination);
		values[3] = Float8GetDatum(s->weight);
		values[4] = Int64GetDatum((int64) s->chunks);
		values[5] = Int64GetDatum((int64) s->raw_bytes);
		values[6] = Int64GetDatum((int64) s->stored_bytes);
		values[7] = Float8GetDatum(s->seconds);
		sb_spi_write(sql, 8, types, values, NULL);
	}
}

/* Each stripe's timeline, a row per second. */
static void
insert_timelines(const SbJobArgs *a, const SbManifest *m)
{
	Oid			types[4] = {INT8OID, INT4OID, INT4OID, INT8OID};
	char	   *sql = psprintf("INSERT INTO %s.stripe_backup_timeline_history (backup_id, stripe, "
							   "second, stored_bytes) VALUES ($1, $2, $3, $4)", sb_schema_quoted());
	uint32_t	i,
				t;

	for (i = 0; i < m->nstripes; i++)
		for (t = 0; t < m->stripes[i].ntimeline; t++)
		{
			Datum		values[4];

			values[0] = Int64GetDatum(a->id);
			values[1] = Int32GetDatum((int32) m->stripes[i].number);
			values[2] = Int32GetDatum((int32) t + 1);
			values[3] = Int64GetDatum((int64) m->stripes[i].timeline[t]);
			sb_spi_write(sql, 4, types, values, NULL);
		}
}

static int64
file_count(const SbManifest *m)
{
	int64		n = 0;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
		if (m->entries[i].type == SB_ENTRY_FILE)
			n++;
	return n;
}

static int64
bytes_written(const SbManifest *m)
{
	int64		n = 0;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		n += (int64) m->stripes[i].file_bytes;
	return n;
}

void
sb_history_finish(const SbJobArgs *a, const char *status, const char *error,
				  const SbBackupOutcome *o)
{
	Oid			types[9] = {INT8OID, TEXTOID, TEXTOID, INT8OID, INT8OID, INT8OID,
	PG_LSNOID, PG_LSNOID, INT4OID};
	Datum		values[9];
	char		nulls[10] = "         ";
	const SbManifest *m = o->manifest;

	sb_spi_begin();
	values[0] = Int64GetDatum(a->id);
	values[1] = CStringGetTextDatum(status);
	values[2] = error ? CStringGetTextDatum(error) : (Datum) 0;
	nulls[2] = error ? ' ' : 'n';
	values[3] = m ? Int64GetDatum(file_count(m)) : (Datum) 0;
	values[4] = m ? Int64GetDatum((int64) m->stream_bytes) : (Datum) 0;
	values[5] = m ? Int64GetDatum(bytes_written(m)) : (Datum) 0;
	nulls[3] = nulls[4] = nulls[5] = m ? ' ' : 'n';
	values[6] = LSNGetDatum(o->start_lsn);
	nulls[6] = XLogRecPtrIsInvalid(o->start_lsn) ? 'n' : ' ';
	values[7] = LSNGetDatum(o->stop_lsn);
	nulls[7] = XLogRecPtrIsInvalid(o->stop_lsn) ? 'n' : ' ';
	values[8] = Int32GetDatum((int32) o->timeline);
	nulls[8] = o->timeline == 0 ? 'n' : ' ';
	sb_spi_write(psprintf("UPDATE %s.stripe_backup_history SET status = $2, error = $3, files = $4, "
					 "bytes_read = $5, bytes_written = $6, start_lsn = $7, stop_lsn = $8, "
					 "timeline = $9, finished_at = clock_timestamp() WHERE id = $1",
					 sb_schema_quoted()),
			9, types, values, nulls);
	if (m != NULL)
	{
		insert_stripes(a, m);
		insert_timelines(a, m);
	}
	sb_spi_end();
}
