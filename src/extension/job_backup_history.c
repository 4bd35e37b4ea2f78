/*
 * job_backup_history.c
 *		The backup history (stripe_backup_history, its stripes and their
 *		timelines).  The worker writes each row in a committed transaction of
 *		its own, so a row is visible while its backup runs and survives
 *		whatever the caller's transaction does.  After a crash, rows left
 *		running are marked failed and their partial folders removed.
 */
#include "postgres.h"

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"
#include "utils/pg_lsn.h"
#include "utils/uuid.h"

#include "job_backup.h"
#include "sb_control.h"
#include "sb_expire.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_merge.h"
#include "sb_spi.h"
#include "sb_standby_history.h"

static Datum
destinations_array(const SbBackupArgs *a)
{
	Datum	   *elems = palloc(sizeof(Datum) * a->ndestinations);
	int			i;

	for (i = 0; i < a->ndestinations; i++)
		elems[i] = CStringGetTextDatum(a->destinations[i]);
	return sbx_sql_array(elems, NULL, a->ndestinations, TEXTOID);
}

static Datum
weights_array(const SbBackupArgs *a)
{
	Datum	   *elems = palloc(sizeof(Datum) * a->ndestinations);
	int			i;

	for (i = 0; i < a->ndestinations; i++)
		elems[i] = Float8GetDatum(a->weights[i]);
	return sbx_sql_array(elems, NULL, a->ndestinations, FLOAT8OID);
}

/*
 * Does this worker's job keep its row in the standby's file?  Decided when
 * the row is written first, so that a standby promoted meanwhile ends the
 * row where it began.
 */
static bool row_in_file = false;
static TimestampTz row_started_at;

static void standby_crash_cleanup(void);

void
sbx_backup_history_insert(const SbJob *job)
{
	const SbBackupArgs *a = SB_JOB_ARGS(job, SbBackupArgs);
	pg_uuid_t  *uuid = palloc(sizeof(pg_uuid_t));
	Datum		values[17];
	char		nulls[17];
	SbSql		sql;

	if (RecoveryInProgress())
	{
		standby_crash_cleanup();
		row_in_file = true;
		row_started_at = GetCurrentTimestamp();
		sbx_standby_history_append(sbx_backup_record(job, row_started_at, NULL, NULL));
		return;
	}
	sbx_standby_history_import();
	sbx_sql_begin(&sql);
	memset(nulls, ' ', sizeof(nulls));
	memcpy(uuid->data, a->uuid, UUID_LEN);
	values[0] = Int64GetDatum(job->id);
	values[1] = CStringGetTextDatum(a->name);
	values[2] = a->has_label ? CStringGetTextDatum(a->label) : (Datum) 0;
	nulls[2] = a->has_label ? ' ' : 'n';
	values[3] = destinations_array(a);
	values[4] = weights_array(a);
	values[5] = CStringGetTextDatum(sb_codec_name(a->codec));
	values[6] = Int32GetDatum(a->codec == SB_CODEC_ZSTD ? a->level : 0);
	values[7] = CStringGetTextDatum(sb_balance_name(a->balance));
	values[8] = CStringGetDatum(job->requested_by);
	values[9] = Int32GetDatum(MyProcPid);
	values[10] = TimestampTzGetDatum(GetCurrentTimestamp());
	values[11] = UUIDPGetDatum(uuid);
	values[12] = CStringGetTextDatum(sb_backup_type_name(a->type));
	values[13] = Int64GetDatum(a->parent_id);
	nulls[13] = a->type == SB_BACKUP_FULL ? 'n' : ' ';
	values[14] = Int64GetDatum(a->merge.id);
	nulls[14] = a->merge.id == 0 ? 'n' : ' ';
	values[15] = BoolGetDatum(a->encryption_key_file[0] != '\0');
	values[16] = Int32GetDatum(a->redundancy);
	(void) sbx_sql_run(SB_SQL_BACKUP_INSERT, values, nulls);
	sbx_sql_leave(&sql);
}

/* A row per stripe, as one statement over arrays. */
static void
insert_stripes(const SbJob *job, const SbManifest *m)
{
	int			n = (int) m->nstripes;
	Datum	   *cols[7];
	Datum		values[8];
	int			c,
				i;

	for (c = 0; c < 7; c++)
		cols[c] = palloc(sizeof(Datum) * n);
	for (i = 0; i < n; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		cols[0][i] = Int32GetDatum((int32) s->number);
		cols[1][i] = CStringGetTextDatum(s->destination);
		cols[2][i] = Float8GetDatum(s->weight);
		cols[3][i] = Int64GetDatum((int64) s->chunks);
		cols[4][i] = Int64GetDatum((int64) s->raw_bytes);
		cols[5][i] = Int64GetDatum((int64) s->stored_bytes);
		cols[6][i] = Float8GetDatum(s->seconds);
	}
	values[0] = Int64GetDatum(job->id);
	values[1] = sbx_sql_array(cols[0], NULL, n, INT4OID);
	values[2] = sbx_sql_array(cols[1], NULL, n, TEXTOID);
	values[3] = sbx_sql_array(cols[2], NULL, n, FLOAT8OID);
	values[4] = sbx_sql_array(cols[3], NULL, n, INT8OID);
	values[5] = sbx_sql_array(cols[4], NULL, n, INT8OID);
	values[6] = sbx_sql_array(cols[5], NULL, n, INT8OID);
	values[7] = sbx_sql_array(cols[6], NULL, n, FLOAT8OID);
	(void) sbx_sql_run(SB_SQL_BACKUP_STRIPES_INSERT, values, NULL);
}

/*
 * Each stripe's timeline, a row per figure with the time it was taken, as
 * one statement over arrays.
 */
static void
insert_timelines(const SbJob *job, const SbManifest *m)
{
	int			n = 0;
	Datum	   *stripes,
			   *samples,
			   *seconds,
			   *bytes;
	Datum		values[5];
	uint32_t	i,
				t;

	for (i = 0; i < m->nstripes; i++)
		n += (int) m->stripes[i].ntimeline;
	stripes = palloc(sizeof(Datum) * (n + 1));
	samples = palloc(sizeof(Datum) * (n + 1));
	seconds = palloc(sizeof(Datum) * (n + 1));
	bytes = palloc(sizeof(Datum) * (n + 1));
	n = 0;
	for (i = 0; i < m->nstripes; i++)
	{
		const SbStripeInfo *s = &m->stripes[i];

		for (t = 0; t < s->ntimeline; t++, n++)
		{
			stripes[n] = Int32GetDatum((int32) s->number);
			samples[n] = Int32GetDatum((int32) t + 1);
			seconds[n] = Float8GetDatum(sb_stripe_timeline_seconds(s, t));
			bytes[n] = Int64GetDatum((int64) s->timeline[t]);
		}
	}
	values[0] = Int64GetDatum(job->id);
	values[1] = sbx_sql_array(stripes, NULL, n, INT4OID);
	values[2] = sbx_sql_array(samples, NULL, n, INT4OID);
	values[3] = sbx_sql_array(seconds, NULL, n, FLOAT8OID);
	values[4] = sbx_sql_array(bytes, NULL, n, INT8OID);
	(void) sbx_sql_run(SB_SQL_BACKUP_TIMELINE_INSERT, values, NULL);
}

int64
sbx_backup_bytes_written(const SbManifest *m)
{
	int64		n = 0;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		n += (int64) m->stripes[i].file_bytes;
	return n;
}

/* The end's status, error and SQLSTATE as the first values of a finish statement. */
static void
end_values(const SbJob *job, const SbJobEnd *end, Datum *values, char *nulls)
{
	bool		failed = strcmp(end->status, "completed") != 0;

	values[0] = Int64GetDatum(job->id);
	values[1] = CStringGetTextDatum(end->status);
	values[2] = failed ? CStringGetTextDatum(end->message) : (Datum) 0;
	values[3] = failed ? CStringGetTextDatum(unpack_sql_state(end->sqlstate)) : (Datum) 0;
	nulls[2] = nulls[3] = failed ? ' ' : 'n';
}

void
sbx_backup_history_finish(const SbJob *job, const SbJobEnd *end, const void *outcome)
{
	const SbBackupOutcome *o = outcome;
	const SbManifest *m = o->manifest;
	Datum		values[13];
	char		nulls[13];
	SbSql		sql;

	if (row_in_file)
	{
		sbx_standby_history_append(sbx_backup_record(job, row_started_at, end, o));
		/* its own backups' retention, on a standby still (a promoted one imports first) */
		if (strcmp(end->status, "completed") == 0 && RecoveryInProgress())
			sbx_expire_after_backup();
		return;
	}
	sbx_sql_begin(&sql);
	memset(nulls, ' ', sizeof(nulls));
	end_values(job, end, values, nulls);
	values[4] = m ? Int64GetDatum((int64) sb_manifest_file_count(m)) : (Datum) 0;
	values[5] = m ? Int64GetDatum((int64) m->stream_bytes) : (Datum) 0;
	values[6] = m ? Int64GetDatum(sbx_backup_bytes_written(m)) : (Datum) 0;
	nulls[4] = nulls[5] = nulls[6] = m ? ' ' : 'n';
	values[7] = LSNGetDatum(o->start_lsn);
	nulls[7] = XLogRecPtrIsInvalid(o->start_lsn) ? 'n' : ' ';
	values[8] = LSNGetDatum(o->stop_lsn);
	nulls[8] = XLogRecPtrIsInvalid(o->stop_lsn) ? 'n' : ' ';
	values[9] = Int32GetDatum((int32) o->timeline);
	nulls[9] = o->timeline == 0 ? 'n' : ' ';
	values[10] = m ? Int64GetDatum((int64) m->parity_bytes) : (Datum) 0;
	values[11] = m ? Int64GetDatum((int64) m->stored_bytes) : (Datum) 0;
	nulls[10] = nulls[11] = m ? ' ' : 'n';
	values[12] = o->incremental_method ? CStringGetTextDatum(o->incremental_method) : (Datum) 0;
	nulls[12] = o->incremental_method ? ' ' : 'n';
	(void) sbx_sql_run(SB_SQL_BACKUP_FINISH, values, nulls);
	if (m != NULL)
	{
		insert_stripes(job, m);
		insert_timelines(job, m);
	}
	sbx_sql_leave(&sql);
	/* After the row says completed: retention never sees this backup running. */
	if (strcmp(end->status, "completed") == 0)
		sbx_expire_after_backup();
}

/*
 * Does DEST/NAME (a folder, or a bucket's prefix) hold a manifest?  When
 * it could not be told (not "it has none"), why goes into *FAILURE, the
 * first time: a backup whose bucket refuses us is not a backup that is gone.
 */
static bool
has_manifest(const char *dest, const char *name, SbError *failure)
{
	char		location[MAXPGPATH];
	SbError		err;

	snprintf(location, sizeof(location), "%s/%s", dest, name);
	if (sb_archive_has_manifest(location, sbx_s3_settings(), &err))
		return true;
	if (err.code != SB_ENOTFOUND && failure->code == SB_OK)
		*failure = err;
	return false;
}

/* The history row of completed backup ID: its name, destinations, uuid and whether it is encrypted. */
static void
read_recorded(int64 backup_id, char **name, Datum *destinations, SbArchiveExpect *expect)
{
	Datum		values[1] = {Int64GetDatum(backup_id)};
	Datum		uuid;
	bool		no_uuid,
				isnull;
	SbSql		sql;
	SbRows		rows;

	if (IsTransactionState())
		sbx_sql_enter(&sql);
	else
		sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_BACKUP_FOLDERS, values, NULL);
	if (rows.count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("there is no completed backup %lld", (long long) backup_id),
				 errhint("See SELECT id, status FROM stripe_backups.")));
	*name = sbx_sql_text(&sql, &rows, 0, 1);
	*destinations = sbx_sql_datum(&sql, &rows, 0, 2, &isnull);
	uuid = sbx_sql_datum(&sql, &rows, 0, 3, &no_uuid);
	expect->has_uuid = !no_uuid;
	if (!no_uuid)
		memcpy(expect->uuid, DatumGetUUIDP(uuid)->data, SB_UUID_LEN);
	expect->encryption = DatumGetBool(sbx_sql_datum(&sql, &rows, 0, 4, &isnull)) ?
		SB_EXPECT_ENCRYPTED : SB_EXPECT_PLAIN;
	sbx_sql_leave(&sql);
}

SbBackupRef *
sbx_backup_find_recorded(int64 backup_id, SbError *failure)
{
	SbBackupRef *ref = palloc0(sizeof(SbBackupRef));
	char	  **folders;
	char	   *name;
	Datum		array;
	Datum	   *dests;
	int			ndests,
				i;

	sb_error_clear(failure);
	read_recorded(backup_id, &name, &array, &ref->expect);
	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT, &dests, NULL,
					  &ndests);
	folders = palloc0(sizeof(char *) * (ndests + 1));
	for (i = 0; i < ndests; i++)
	{
		folders[i] = psprintf("%s/%s", TextDatumGetCString(dests[i]), name);
		if (ref->location == NULL && has_manifest(TextDatumGetCString(dests[i]), name, failure))
			ref->location = folders[i];
	}
	/* every recorded folder is tried in turn if the first is not the backup recorded */
	ref->expect.folders = (const char *const *) folders;
	ref->expect.nfolders = (uint32_t) ndests;
	ref->backup_id = backup_id;
	return ref;
}

SbBackupRef *
sbx_backup_recorded(int64 backup_id)
{
	SbError		failure;
	SbBackupRef *ref = sbx_backup_find_recorded(backup_id, &failure);

	if (ref->location == NULL && failure.code != SB_OK)
		sbx_raise(&failure);
	if (ref->location == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("no destination of backup %lld holds its manifest any more", (long long) backup_id),
				 errhint("Were its folders moved or removed?  Restore from a location instead.")));
	return ref;
}

void
sbx_backup_apply_recorded_stripes(SbArchive *a, int64 backup_id)
{
	SbArchiveExpect ignored;
	Datum		array;
	Datum	   *dests;
	char	   *name;
	int			ndests;
	SbError		err;

	read_recorded(backup_id, &name, &array, &ignored);
	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT, &dests, NULL,
					  &ndests);
	for (uint32_t i = 0; i < a->manifest->nstripes && i < (uint32_t) ndests; i++)
	{
		char	   *dest = TextDatumGetCString(dests[i]);

		/* only a stripe lost where the manifest says, and recorded elsewhere: rebuilt there */
		if (a->lost_why[i] == NULL || strcmp(dest, a->manifest->stripes[i].destination) == 0)
			continue;
		if (!sb_archive_set_stripe_dir(a, i + 1, psprintf("%s/%s", dest, a->manifest->name), &err))
			sbx_raise(&err);
	}
}

/* A merge's scratch folder beside backup NAME in DEST, the first destination. */
static void
remove_merge_staging(const char *dest, const char *name)
{
	char	   *staging = sbx_merge_staging(dest, name);
	bool		removed;
	SbError		err;

	if (!sb_merge_remove_staging(staging, name, &removed, &err))
		ereport(LOG,
				(errmsg("stripebackup: could not remove the scratch folder \"%s\" of merge \"%s\": %s",
						staging, name, err.message)));
	else if (removed)
		ereport(LOG, (errmsg("stripebackup: removed the scratch folder \"%s\"", staging)));
}

/*
 * The folders backup NAME left in its destinations (and a merge's scratch
 * folder).  If any of them holds a manifest, the backup may have been
 * written in full before its row was completed: then all are left for the
 * user to verify.  Otherwise only what the backup wrote goes, from every
 * destination or from none.
 */
static void
remove_partial_backup(const char *name, Datum destinations, const pg_uuid_t *uuid, bool merged)
{
	Datum	   *dests;
	int			ndests,
				i;
	SbError		failure;

	sb_error_clear(&failure);
	deconstruct_array(DatumGetArrayTypeP(destinations), TEXTOID, -1, false, TYPALIGN_INT,
					  &dests, NULL, &ndests);
	if (merged && ndests > 0)
		remove_merge_staging(TextDatumGetCString(dests[0]), name);
	for (i = 0; i < ndests; i++)
		if (has_manifest(TextDatumGetCString(dests[i]), name, &failure))
		{
			ereport(LOG,
					(errmsg("stripebackup: left the folders of backup \"%s\": \"%s/%s\" holds a manifest",
							name, TextDatumGetCString(dests[i]), name),
					 errhint("Check them with stripebackup verify, then remove them.")));
			return;
		}
	/* what could not be looked at may hold one: leave it all */
	if (failure.code != SB_OK)
	{
		ereport(LOG,
				(errmsg("stripebackup: left the folders of backup \"%s\": %s", name, failure.message)));
		return;
	}
	if (sbx_backup_remove_folders(name, destinations, false, uuid, LOG).removed)
		ereport(LOG, (errmsg("stripebackup: removed the partial folders of backup \"%s\"", name)));
}

/* Row I of ROWS (id, name, destinations, uuid, merged_from), left running: said, its partial folders removed. */
static void
clean_up_row(SbSql *sql, SbRows *rows, uint64 i)
{
	bool		no_dests,
				no_uuid,
				not_merged;
	char	   *id = sbx_sql_text(sql, rows, i, 1);
	char	   *name = sbx_sql_text(sql, rows, i, 2);
	Datum		dests = sbx_sql_datum(sql, rows, i, 3, &no_dests);
	Datum		uuid = sbx_sql_datum(sql, rows, i, 4, &no_uuid);

	(void) sbx_sql_datum(sql, rows, i, 5, &not_merged);
	ereport(LOG,
			(errmsg("stripebackup: backup %s was running when the server stopped; marked failed", id)));
	if (!no_dests && name != NULL)
		remove_partial_backup(name, dests, no_uuid ? NULL : DatumGetUUIDP(uuid), !not_merged);
}

/*
 * On a standby, the rows of its file left running (the standby stopped
 * during a backup): each ended by a line that says failed (the statement
 * gives it whole), then cleaned up.  The start-up worker runs once recovery
 * ends, which a standby's never does: its next backup does this instead.
 */
static void
standby_crash_cleanup(void)
{
	SbSql		sql;
	SbRows		rows;

	sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_STANDBY_MARK_STALE, NULL, NULL);
	for (uint64 i = 0; i < rows.count; i++)
	{
		StringInfoData line;

		initStringInfo(&line);
		appendStringInfoString(&line, sbx_sql_text(&sql, &rows, i, 6));
		sbx_standby_history_append(&line);
		clean_up_row(&sql, &rows, i);
	}
	sbx_sql_leave(&sql);
}

void
sbx_backup_crash_cleanup(void)
{
	SbSql		sql;
	SbRows		rows;

	sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_BACKUP_MARK_STALE, NULL, NULL);
	for (uint64 i = 0; i < rows.count; i++)
		clean_up_row(&sql, &rows, i);
	sbx_sql_leave(&sql);
}
