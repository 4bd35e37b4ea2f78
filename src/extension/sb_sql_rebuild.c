/*
 * sb_sql_rebuild.c
 *		stripe_rebuild(backup, lost_destination, new_destination): the
 *		stripe of a backup with redundancy that LOST_DESTINATION held,
 *		written again from the others into NEW_DESTINATION/NAME
 *		(sb_archive_rebuild_stripe), then recorded there: the history's
 *		destinations say where the stripe is now, so stripe_verify,
 *		stripe_restore and stripe_restore_plan by id read it from there
 *		(sbx_backup_apply_recorded_stripes).  The manifest does not change
 *		(docs/DECISIONS.md).  Runs in the caller's backend: one stripe's
 *		worth of reads and writes.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "job_backup.h"
#include "sb_control.h"
#include "sb_handle.h"
#include "sb_launch.h"
#include "sb_s3_settings.h"
#include "sb_spi.h"
#include "stripebackup/sb_store.h"

PG_FUNCTION_INFO_V1(stripe_rebuild);

#define REBUILD_COLUMNS 6

/* A destination as given, without a trailing slash, for comparing with what the history records. */
static char *
trimmed(const char *dest)
{
	char	   *s = pstrdup(dest);
	size_t		len = strlen(s);

	while (len > 1 && s[len - 1] == '/')
		s[--len] = '\0';
	return s;
}

/* The destination stripe I of A is read from now: its path without "/NAME/stripe-I.sbs". */
static char *
read_from(const SbArchive *a, uint32_t i)
{
	char	   *dest = pstrdup(a->stripe_paths[i]);

	for (int up = 0; up < 2; up++)
		if (strrchr(dest, '/') != NULL)
			*strrchr(dest, '/') = '\0';
	return dest;
}

/*
 * The stripe (1-based) of A in LOST: where its manifest put it, or where it
 * was rebuilt since (the history's); ERROR naming them all when none is.
 */
static uint32_t
stripe_in(const SbArchive *a, int64 id, const char *lost)
{
	const SbManifest *m = a->manifest;
	StringInfoData all;

	for (uint32_t i = 0; i < m->nstripes; i++)
		if (strcmp(trimmed(m->stripes[i].destination), lost) == 0 || strcmp(read_from(a, i), lost) == 0)
			return i + 1;
	initStringInfo(&all);
	for (uint32_t i = 0; i < m->nstripes; i++)
		appendStringInfo(&all, "%s%u: \"%s\"", i ? ", " : "", i + 1, m->stripes[i].destination);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("backup %lld has no stripe in destination \"%s\"", (long long) id, lost),
			 errdetail("Its stripes' destinations: %s.", all.data)));
	pg_unreachable();
}

/* NEW_DEST as stripe_backup takes a destination: an absolute path or s3://bucket/prefix. */
static void
check_new_destination(const char *dest)
{
	if (sb_store_features_of(dest) & SB_STORE_CONNECTION)
		sbx_s3_settings_check_location(dest, true);
	else if (dest[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("new destination \"%s\" is neither an absolute path nor s3://bucket/prefix", dest)));
}

/* Stripe STRIPE of backup ID is now in NEW_DEST: what the history says of it. */
static void
record_new_place(int64 id, uint32_t stripe, const char *new_dest)
{
	Datum		values[3] = {Int64GetDatum(id), CStringGetTextDatum(new_dest), Int32GetDatum((int32) stripe)};
	SbSql		sql;

	sbx_sql_enter(&sql);
	(void) sbx_sql_run(SB_SQL_BACKUP_MOVE_STRIPE, values, NULL);
	(void) sbx_sql_run(SB_SQL_BACKUP_MOVE_STRIPE_ROW, values, NULL);
	sbx_sql_leave(&sql);
}

PGDLLEXPORT Datum
stripe_rebuild(PG_FUNCTION_ARGS)
{
	TupleDesc	desc;
	Datum		v[REBUILD_COLUMNS];
	bool		n[REBUILD_COLUMNS] = {0};
	SbRebuildResult result;
	SbArchive  *a;
	SbError		err;
	int64		id;
	char	   *lost;
	char	   *new_dest;
	uint32_t	stripe;

	sbx_launch_check_privileges(true, "rebuild a stripe");
	sbx_launch_check_writable("stripe_rebuild()");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1) || PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("backup, lost_destination and new_destination must not be NULL")));
	if (get_call_result_type(fcinfo, NULL, &desc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "stripe_rebuild must return a record");
	id = PG_GETARG_INT64(0);
	lost = trimmed(text_to_cstring(PG_GETARG_TEXT_PP(1)));
	new_dest = trimmed(text_to_cstring(PG_GETARG_TEXT_PP(2)));
	check_new_destination(new_dest);
	a = sbx_handle_open_archive(sbx_backup_recorded(id), SB_OPEN_TO_PLAN, NULL);
	stripe = stripe_in(a, id, lost);
	if (!sb_archive_rebuild_stripe(a, stripe, new_dest, false, &result, &err))
		sbx_raise(&err);
	record_new_place(id, stripe, new_dest);
	ereport(NOTICE,
			(errmsg("stripe %u of backup %lld rebuilt into \"%s\" and recorded there", stripe,
					(long long) id, result.path)));
	v[0] = Int32GetDatum((int32) stripe);
	v[1] = CStringGetTextDatum(result.folder);
	v[2] = Int64GetDatum((int64) result.data_records);
	v[3] = Int64GetDatum((int64) result.parity_records);
	v[4] = Int64GetDatum((int64) result.file_bytes);
	v[5] = Float8GetDatum(result.seconds);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(BlessTupleDesc(desc), v, n)));
}
