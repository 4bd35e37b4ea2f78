/*
 * sb_sql_keep.c
 *		stripe_keep(backup, keep, note): a backup kept out of retention, or
 *		given back to it, and annotated (Barman's keep, pgBackRest's
 *		annotate).  Only the backup's row is marked: a kept diff or incr
 *		keeps the backups it completes through the chain rule of retention
 *		(a backup that stays keeps what it needs), so giving it back gives
 *		them back too.
 *
 * Each folder of the backup gets a label too, keep.json beside its manifest
 * (sb_keep.h), or loses it when the backup is given back: what the command's
 * list shows without the server.  The row stays the authority for
 * retention, so a folder that cannot be labelled is a WARNING, not a reason
 * to refuse the keep.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/uuid.h"

#include "sb_control.h"
#include "sb_launch.h"
#include "sb_s3_settings.h"
#include "sb_spi.h"
#include "stripebackup/sb_keep.h"
#include "stripebackup/sb_store.h"

PG_FUNCTION_INFO_V1(stripe_keep);

/* The status of backup ID as stripe_backups shows it; ERROR when there is none. */
static char *
backup_status(const SbSql *sql, int64 id)
{
	Datum		values[1] = {Int64GetDatum(id)};
	SbRows		rows = sbx_sql_run(SB_SQL_BACKUP_STATUS, values, NULL);

	if (rows.count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_OBJECT),
				 errmsg("backup %lld does not exist", (long long) id),
				 errhint("stripe_backups lists the backups.")));
	return sbx_sql_text(sql, &rows, 0, 1);
}

/*
 * The note as a label holds it: in UTF-8 (JSON's), whatever the database's
 * encoding; one kept before labels may be longer, and is cut at a character.
 */
static char *
label_note(const SbSql *sql, const SbRows *kept)
{
	bool		isnull;
	char	   *note;

	(void) sbx_sql_datum(sql, kept, 0, 4, &isnull);
	if (isnull)
		return NULL;
	note = sbx_sql_text(sql, kept, 0, 4);
	note[pg_mbcliplen(note, strlen(note), SB_KEEP_LABEL_NOTE_MAX)] = '\0';
	note = pg_server_to_any(note, strlen(note), PG_UTF8);
	/* a character that grew in UTF-8 may take it over the bound again: cut there too */
	note[pg_encoding_mbcliplen(PG_UTF8, note, strlen(note), SB_KEEP_LABEL_NOTE_MAX)] = '\0';
	return note;
}

/* Put (KEEP) or remove the label in folder NAME of DEST; a WARNING when it cannot be. */
static void
label_folder(const char *dest, const char *name, bool keep, const pg_uuid_t *uuid, const char *note)
{
	SbError		err;
	bool		ok;

	if (sb_store_features_of(dest) & SB_STORE_CONNECTION)
		sbx_s3_settings_check_location(dest, true);
	ok = keep ? sb_keep_label_put(dest, sbx_s3_settings(), name, uuid->data, note, &err)
		: sb_keep_label_remove(dest, sbx_s3_settings(), name, &err);
	if (ok)
		return;
	if (err.code == SB_ECANCELED)
		sbx_raise(&err);
	ereport(WARNING,
			(errmsg("could not %s %s in \"%s/%s\": %s", keep ? "write" : "remove", SB_KEEP_LABEL_FILE, dest, name,
					err.message),
			 errdetail("The backup's history says whether it is kept; the label is only what the command's list shows.")));
}

/* The label in every folder of the backup KEPT (the row SB_SQL_BACKUP_KEEP returned). */
static void
label_folders(const SbSql *sql, const SbRows *kept, bool keep)
{
	bool		isnull;
	char	   *name = sbx_sql_text(sql, kept, 0, 1);
	Datum		destinations = sbx_sql_datum(sql, kept, 0, 2, &isnull);
	Datum		uuid = sbx_sql_datum(sql, kept, 0, 3, &isnull);
	char	   *note = label_note(sql, kept);
	Datum	   *dests;
	int			ndests;

	/* a backup recorded before it had a uuid has no folder a label could name */
	if (isnull)
		return;
	deconstruct_array(DatumGetArrayTypeP(destinations), TEXTOID, -1, false, TYPALIGN_INT, &dests, NULL, &ndests);
	for (int i = 0; i < ndests; i++)
		label_folder(TextDatumGetCString(dests[i]), name, keep, DatumGetUUIDP(uuid), note);
}

PGDLLEXPORT Datum
stripe_keep(PG_FUNCTION_ARGS)
{
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	SbSql		sql;
	SbRows		kept;
	char	   *status;

	sbx_launch_check_privileges(true, "keep backups");
	sbx_launch_check_writable("stripe_keep()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("backup and keep must not be NULL")));
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2) ? 'n' : ' ';
	/* The note is also stored in each folder's label (sb_keep.h): bounded there. */
	if (!PG_ARGISNULL(2) && VARSIZE_ANY_EXHDR(PG_GETARG_TEXT_PP(2)) > SB_KEEP_LABEL_NOTE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
				 errmsg("a note is at most %d bytes; this one is %zu", SB_KEEP_LABEL_NOTE_MAX,
						(size_t) VARSIZE_ANY_EXHDR(PG_GETARG_TEXT_PP(2)))));
	sbx_sql_enter(&sql);
	status = backup_status(&sql, PG_GETARG_INT64(0));
	/* Keeping what never completed would keep nothing restorable, and its files forever. */
	if (PG_GETARG_BOOL(1) && strcmp(status, "completed") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backup %lld is %s: only a completed backup can be kept", (long long) PG_GETARG_INT64(0),
						status)));
	kept = sbx_sql_run(SB_SQL_BACKUP_KEEP, values, nulls);
	if (kept.count == 1)
		label_folders(&sql, &kept, PG_GETARG_BOOL(1));
	sbx_sql_leave(&sql);
	PG_RETURN_VOID();
}
