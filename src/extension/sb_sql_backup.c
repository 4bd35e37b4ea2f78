/*
 * sb_sql_backup.c
 *		stripe_backup(), stripe_cancel() and stripe_job_is_running().
 *
 * stripe_backup() checks its arguments (nothing is created if one is bad),
 * then a background worker takes the backup (sb_launch.c, sb_pgbackup.c).
 */
#include "postgres.h"

#include <time.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/builtins.h"

#include "sb_args.h"
#include "sb_launch.h"
#include "sb_shmem.h"

PG_FUNCTION_INFO_V1(stripe_backup);
PG_FUNCTION_INFO_V1(stripe_cancel);
PG_FUNCTION_INFO_V1(stripe_job_is_running);

/* "20261130T031900Z-42": sorts by time, unique by id. */
static void
make_name(SbJobArgs *args)
{
	pg_time_t	now = (pg_time_t) time(NULL);
	char		stamp[32];

	pg_strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", pg_gmtime(&now));
	snprintf(args->name, sizeof(args->name), "%s-%lld", stamp, (long long) args->id);
}

Datum
stripe_backup(PG_FUNCTION_ARGS)
{
	SbJobArgs  *args = palloc0(sizeof(SbJobArgs));
	bool		wait = PG_ARGISNULL(6) ? true : PG_GETARG_BOOL(6);

	sb_launch_check_privileges(true, "take a backup");
	sb_args_from_call(fcinfo, args);
	args->kind = SB_JOB_BACKUP;
	args->id = sb_launch_next_id("stripe_backup_id_seq");
	args->database = MyDatabaseId;
	strlcpy(args->requested_by, GetUserNameFromId(GetUserId(), false), NAMEDATALEN);
	make_name(args);
	sb_launch_run(args, wait);
	PG_RETURN_INT64(args->id);
}

/* Cancel job ID of KIND on behalf of the caller. */
static bool
cancel(SbJobKind kind, int64 id, const char *function)
{
	if (sb_shmem_request_cancel(kind, id,
								psprintf("canceled by %s() in the session of \"%s\"", function,
										 GetUserNameFromId(GetUserId(), false))))
		return true;
	ereport(NOTICE, (errmsg("%s %lld is not running", sb_job_kind_name(kind), (long long) id)));
	return false;
}

Datum
stripe_cancel(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(true, "cancel a backup");
	PG_RETURN_BOOL(cancel(SB_JOB_BACKUP, PG_GETARG_INT64(0), "stripe_cancel"));
}

PG_FUNCTION_INFO_V1(stripe_cancel_restore);

Datum
stripe_cancel_restore(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(true, "cancel a restore");
	PG_RETURN_BOOL(cancel(SB_JOB_RESTORE, PG_GETARG_INT64(0), "stripe_cancel_restore"));
}

Datum
stripe_job_is_running(PG_FUNCTION_ARGS)
{
	char	   *kind = text_to_cstring(PG_GETARG_TEXT_PP(0));

	PG_RETURN_BOOL(sb_shmem_is_running(strcmp(kind, "restore") == 0 ? SB_JOB_RESTORE : SB_JOB_BACKUP,
									   PG_GETARG_INT64(1)));
}
