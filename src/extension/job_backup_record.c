/*
 * job_backup_record.c
 *		A backup's history row as one JSON object, for a standby, which keeps
 *		it in a file (sb_standby_history.c) instead of the tables: the
 *		columns of stripe_backup_history by name, "id" first, and "stripes",
 *		the rows of stripe_backup_stripe_history.  SQL reads it back with
 *		jsonb_populate_record(), so every value is written as that column's
 *		input function reads it (times in ISO 8601, whatever DateStyle is),
 *		and every column is there: a key left out would be NULL, not the
 *		column's default.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/timestamp.h"
#include "utils/uuid.h"

#include "job_backup.h"

static void
key(StringInfo s, const char *name)
{
	appendStringInfo(s, ", \"%s\": ", name);
}

static void
text_value(StringInfo s, const char *name, const char *value)
{
	key(s, name);
	if (value == NULL)
		appendStringInfoString(s, "null");
	else
		escape_json(s, value);
}

static void
int_value(StringInfo s, const char *name, int64 value, bool isnull)
{
	key(s, name);
	if (isnull)
		appendStringInfoString(s, "null");
	else
		appendStringInfo(s, INT64_FORMAT, value);
}

static void
time_value(StringInfo s, const char *name, TimestampTz t)
{
	char		buf[MAXDATELEN + 1];

	key(s, name);
	appendStringInfo(s, "\"%s\"", JsonEncodeDateTime(buf, TimestampTzGetDatum(t), TIMESTAMPTZOID, NULL));
}

static void
lsn_value(StringInfo s, const char *name, XLogRecPtr lsn)
{
	key(s, name);
	if (XLogRecPtrIsInvalid(lsn))
		appendStringInfoString(s, "null");
	else
		appendStringInfo(s, "\"%X/%X\"", LSN_FORMAT_ARGS(lsn));
}

static void
uuid_value(StringInfo s, const uint8 *uuid)
{
	pg_uuid_t	u;

	memcpy(u.data, uuid, UUID_LEN);
	text_value(s, "backup_uuid", DatumGetCString(DirectFunctionCall1(uuid_out, UUIDPGetDatum(&u))));
}

/* What the backup was asked to do: the columns its row has from the start. */
static void
asked(StringInfo s, const SbJob *job, TimestampTz started_at)
{
	const SbBackupArgs *a = SB_JOB_ARGS(job, SbBackupArgs);

	text_value(s, "name", a->name);
	text_value(s, "label", a->has_label ? a->label : NULL);
	time_value(s, "started_at", started_at);
	key(s, "destinations");
	appendStringInfoChar(s, '[');
	for (int i = 0; i < a->ndestinations; i++)
	{
		appendStringInfoString(s, i > 0 ? ", " : "");
		escape_json(s, a->destinations[i]);
	}
	appendStringInfoChar(s, ']');
	key(s, "weights");
	appendStringInfoChar(s, '[');
	for (int i = 0; i < a->ndestinations; i++)
		appendStringInfo(s, "%s%.17g", i > 0 ? ", " : "", a->weights[i]);
	appendStringInfoChar(s, ']');
	text_value(s, "compression", sb_codec_name(a->codec));
	int_value(s, "compression_level", a->codec == SB_CODEC_ZSTD ? a->level : 0, false);
	text_value(s, "balance", sb_balance_name(a->balance));
	text_value(s, "requested_by", job->requested_by);
	int_value(s, "worker_pid", MyProcPid, false);
	uuid_value(s, a->uuid);
	text_value(s, "type", sb_backup_type_name(a->type));
	int_value(s, "parent_id", a->parent_id, a->type == SB_BACKUP_FULL);
	int_value(s, "merged_from", a->merge.id, a->merge.id == 0);
	appendStringInfo(s, ", \"encrypted\": %s, \"keep\": false, \"note\": null",
					 a->encryption_key_file[0] != '\0' ? "true" : "false");
	int_value(s, "redundancy", a->redundancy, false);
}

static void
stripes(StringInfo s, const SbJob *job, const SbManifest *m)
{
	key(s, "stripes");
	appendStringInfoChar(s, '[');
	for (uint32_t i = 0; m != NULL && i < m->nstripes; i++)
	{
		const SbStripeInfo *st = &m->stripes[i];

		appendStringInfo(s, "%s{\"backup_id\": " INT64_FORMAT ", \"stripe\": %u", i > 0 ? ", " : "",
						 job->id, st->number);
		text_value(s, "destination", st->destination);
		appendStringInfo(s, ", \"weight\": %.17g, \"chunks\": " UINT64_FORMAT ", \"raw_bytes\": "
						 UINT64_FORMAT ", \"stored_bytes\": " UINT64_FORMAT ", \"seconds\": %.17g}",
						 st->weight, (uint64) st->chunks, (uint64) st->raw_bytes,
						 (uint64) st->stored_bytes, st->seconds);
	}
	appendStringInfoChar(s, ']');
}

/* How it ended: the columns its row has at the end. */
static void
ended(StringInfo s, const SbJob *job, const SbJobEnd *end, const SbBackupOutcome *o)
{
	const SbManifest *m = o->manifest;
	bool		failed = strcmp(end->status, "completed") != 0;

	time_value(s, "finished_at", GetCurrentTimestamp());
	text_value(s, "error", failed ? end->message : NULL);
	text_value(s, "sqlstate", failed ? unpack_sql_state(end->sqlstate) : NULL);
	int_value(s, "files", m ? (int64) sb_manifest_file_count(m) : 0, m == NULL);
	int_value(s, "bytes_read", m ? (int64) m->stream_bytes : 0, m == NULL);
	int_value(s, "bytes_written", m ? sbx_backup_bytes_written(m) : 0, m == NULL);
	lsn_value(s, "start_lsn", o->start_lsn);
	lsn_value(s, "stop_lsn", o->stop_lsn);
	int_value(s, "timeline", o->timeline, o->timeline == 0);
	int_value(s, "parity_bytes", m ? (int64) m->parity_bytes : 0, m == NULL);
	int_value(s, "stored_bytes", m ? (int64) m->stored_bytes : 0, m == NULL);
	text_value(s, "incremental_method", o->incremental_method);
	stripes(s, job, m);
}

StringInfo
sbx_backup_record(const SbJob *job, TimestampTz started_at, const SbJobEnd *end,
				  const SbBackupOutcome *outcome)
{
	StringInfo	s = makeStringInfo();

	/* "id" first: the file is read by it without parsing the rest */
	appendStringInfo(s, "{\"id\": " INT64_FORMAT, job->id);
	text_value(s, "status", end != NULL ? end->status : "running");
	asked(s, job, started_at);
	if (end != NULL)
		ended(s, job, end, outcome);
	else
		appendStringInfoString(s, ", \"stripes\": []");
	appendStringInfoChar(s, '}');
	return s;
}
