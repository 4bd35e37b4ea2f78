/*
 * sb_sql_check.c
 *		stripe_check(): what a DBA checks before trusting the backups, and
 *		what a monitoring job checks every hour, a row each (check, ok,
 *		detail, hint, severity): the library preloaded and
 *		stripebackup.database_name naming this database; the WAL archive
 *		(sbx_check_archive.c); every destination (sb_check_dest.c); the
 *		newest backup that ended not failed, and the newest completed one
 *		not older than stripebackup.check_max_backup_age.
 *
 * A warning (severity 'warning', ok false) is worth a look and stops
 * nothing; a failure stops backups, WAL archiving or restores to a point
 * in time.  With raise => true, failures end in an ERROR naming them, so
 * that a scheduler (pg_cron) records the job as failed.
 */
#include "postgres.h"

#include "miscadmin.h"
#include "commands/dbcommands.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "sb_check.h"
#include "sb_guc.h"
#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_startup.h"

PG_FUNCTION_INFO_V1(stripe_check);

#define CHECK_COLUMNS 5

static const char *const level_names[] = {"ok", "warning", "failure"};

void
sbx_check_put(SbCheckOut *out, const char *check, SbCheckLevel level, const char *detail, const char *hint)
{
	Datum		v[CHECK_COLUMNS];
	bool		n[CHECK_COLUMNS] = {false, false, false, hint == NULL, false};

	v[0] = CStringGetTextDatum(check);
	v[1] = BoolGetDatum(level == SB_CHECK_OK);
	v[2] = CStringGetTextDatum(detail);
	v[3] = hint ? CStringGetTextDatum(hint) : (Datum) 0;
	v[4] = CStringGetTextDatum(level_names[level]);
	tuplestore_putvalues(out->rs->setResult, out->rs->setDesc, v, n);
	if (level == SB_CHECK_WARNING)
		out->warnings++;
	if (level != SB_CHECK_FAILURE)
		return;
	appendStringInfo(&out->failed, "%s%s", out->failures > 0 ? ", " : "", check);
	out->failures++;
}

/* The library preloaded, and stripebackup.database_name naming this database. */
static void
check_loading(SbCheckOut *out)
{
	const char *here = get_database_name(MyDatabaseId);
	const char *named = sbx_startup_database_name();

	if (sbx_shmem_loaded())
		sbx_check_put(out, "shared_preload_libraries", SB_CHECK_OK, "stripebackup is loaded at server start", NULL);
	else
		sbx_check_put(out, "shared_preload_libraries", SB_CHECK_FAILURE,
					 "stripebackup is not loaded at server start: no backup can run",
					 "Add stripebackup to shared_preload_libraries in postgresql.conf and restart the server.");
	if (named != NULL && strcmp(named, here) == 0)
		sbx_check_put(out, "stripebackup.database_name", SB_CHECK_OK,
					 psprintf("\"%s\", where the extension is", here), NULL);
	else
		sbx_check_put(out, "stripebackup.database_name", SB_CHECK_FAILURE,
					 psprintf("\"%s\", but the extension is in \"%s\": backups left running by a crash are never marked failed",
							  named ? named : "", here),
					 psprintf("Set stripebackup.database_name = '%s' and reload the server.", here));
}

/* The newest backup that ended must not have failed. */
static void
check_last_ended(SbCheckOut *out, const SbSql *sql)
{
	SbRows		rows = sbx_sql_run(SB_SQL_CHECK_LAST_ENDED, NULL, NULL);
	bool		isnull;
	int64		id;
	char	   *at,
			   *error,
			   *sqlstate;

	if (rows.count == 0 || strcmp(sbx_sql_text(sql, &rows, 0, 2), "failed") != 0)
	{
		sbx_check_put(out, "last backup", SB_CHECK_OK,
					 rows.count == 0 ? "no backup has ended yet" : "the newest backup that ended completed", NULL);
		return;
	}
	id = DatumGetInt64(sbx_sql_datum(sql, &rows, 0, 1, &isnull));
	at = sbx_sql_text(sql, &rows, 0, 3);	/* NULL: it died with the server */
	error = sbx_sql_text(sql, &rows, 0, 4);
	sqlstate = sbx_sql_text(sql, &rows, 0, 5);
	sbx_check_put(out, "last backup", SB_CHECK_FAILURE,
				 psprintf("backup %lld failed%s%s: %s (SQLSTATE %s)", (long long) id, at ? " at " : "",
						  at ? at : "", error ? error : "no error recorded", sqlstate ? sqlstate : "none"),
				 "See stripe_backups; the failure stays reported until a backup completes.");
}

/* The newest completed backup, not older than stripebackup.check_max_backup_age. */
static void
check_age(SbCheckOut *out, const SbSql *sql)
{
	SbRows		rows = sbx_sql_run(SB_SQL_CHECK_LAST_COMPLETED, NULL, NULL);
	bool		isnull;
	int64		id;
	double		age;

	if (rows.count == 0)
	{
		sbx_check_put(out, "backup age", SB_CHECK_FAILURE, "no backup has completed",
					 "Take one: SELECT stripe_backup(ARRAY['/backup/a', '/backup/b']);");
		return;
	}
	id = DatumGetInt64(sbx_sql_datum(sql, &rows, 0, 1, &isnull));
	age = (double) (GetCurrentTimestamp() -
					DatumGetTimestampTz(sbx_sql_datum(sql, &rows, 0, 3, &isnull))) / USECS_PER_SEC;
	if (sb_guc_check_max_backup_age > 0 && age > sb_guc_check_max_backup_age)
		sbx_check_put(out, "backup age", SB_CHECK_FAILURE,
					 psprintf("the newest completed backup, %lld (%s), ended %.0f s ago, more than stripebackup.check_max_backup_age (%d s)",
							  (long long) id, sbx_sql_text(sql, &rows, 0, 2), age, sb_guc_check_max_backup_age),
					 "Check the backup schedule (cron.job_run_details) and stripe_backups for failures.");
	else
		sbx_check_put(out, "backup age", SB_CHECK_OK,
					 psprintf("the newest completed backup, %lld (%s), ended %.0f s ago%s", (long long) id,
							  sbx_sql_text(sql, &rows, 0, 2), age,
							  sb_guc_check_max_backup_age > 0 ? "" : " (stripebackup.check_max_backup_age is not set)"),
					 NULL);
}

static void
check_backups(SbCheckOut *out)
{
	SbSql		sql;

	sbx_sql_enter(&sql);
	check_last_ended(out, &sql);
	check_age(out, &sql);
	sbx_sql_leave(&sql);
}

/* TIMEOUT in milliseconds: positive, at most a day (a check that waits longer checks nothing). */
static long
timeout_ms(Datum timeout)
{
	Interval   *i = DatumGetIntervalP(timeout);
	double		ms = (double) i->time / 1000.0 + ((double) i->day + (double) i->month * DAYS_PER_MONTH) * 86400000.0;

	if (ms <= 0 || ms > 86400000.0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("timeout \"%s\" must be a positive interval of at most a day",
						DatumGetCString(DirectFunctionCall1(interval_out, timeout))),
				 errhint("For example stripe_check(timeout => '30 s').")));
	return (long) ms;
}

PGDLLEXPORT Datum
stripe_check(PG_FUNCTION_ARGS)
{
	SbCheckOut	out;
	long		ms;

	sbx_launch_check_privileges(true, "check backups");
	if (PG_ARGISNULL(0) || PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("timeout and raise must not be NULL")));
	ms = timeout_ms(PG_GETARG_DATUM(0));
	InitMaterializedSRF(fcinfo, 0);
	memset(&out, 0, sizeof(out));
	out.rs = (ReturnSetInfo *) fcinfo->resultinfo;
	initStringInfo(&out.failed);
	check_loading(&out);
	sbx_check_archive(&out, ms);
	sbx_check_destinations(&out);
	check_backups(&out);
	if (PG_GETARG_BOOL(1) && out.failures > 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stripebackup check failed: %s", out.failed.data),
				 errhint("SELECT * FROM stripe_check() WHERE NOT ok says why.")));
	return (Datum) 0;
}
