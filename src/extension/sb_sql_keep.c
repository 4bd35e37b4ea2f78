/*
 * sb_sql_keep.c
 *		stripe_keep(backup, keep, note): a backup kept out of retention, or
 *		given back to it, and annotated (Barman's keep, pgBackRest's
 *		annotate).  Only the backup's row is marked: a kept diff or incr
 *		keeps the backups it completes through the chain rule of retention
 *		(a backup that stays keeps what it needs), so giving it back gives
 *		them back too.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include "sb_launch.h"
#include "sb_spi.h"

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

PGDLLEXPORT Datum
stripe_keep(PG_FUNCTION_ARGS)
{
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	SbSql		sql;
	char	   *status;

	sbx_launch_check_privileges(true, "keep backups");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("backup and keep must not be NULL")));
	values[0] = PG_GETARG_DATUM(0);
	values[1] = PG_GETARG_DATUM(1);
	values[2] = PG_GETARG_DATUM(2);
	nulls[2] = PG_ARGISNULL(2) ? 'n' : ' ';
	sbx_sql_enter(&sql);
	status = backup_status(&sql, PG_GETARG_INT64(0));
	/* Keeping what never completed would keep nothing restorable, and its files forever. */
	if (PG_GETARG_BOOL(1) && strcmp(status, "completed") != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backup %lld is %s: only a completed backup can be kept", (long long) PG_GETARG_INT64(0),
						status)));
	(void) sbx_sql_run(SB_SQL_BACKUP_KEEP, values, nulls);
	sbx_sql_leave(&sql);
	PG_RETURN_VOID();
}
