/*
 * sb_sql_backup.c
 *		stripe_backup(), stripe_cancel(), stripe_cancel_restore() and
 *		stripe_job_is_running().
 *
 * stripe_backup() checks its arguments (nothing is created if one is bad),
 * then a background worker takes the backup (sb_launch.c, job_backup.c).
 */
#include "postgres.h"

#include <time.h>

#include "fmgr.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "utils/builtins.h"

#include "job_backup.h"
#include "sb_args.h"
#include "sb_launch.h"
#include "sb_shmem.h"

PG_FUNCTION_INFO_V1(stripe_backup);
PG_FUNCTION_INFO_V1(stripe_merge);
PG_FUNCTION_INFO_V1(stripe_cancel);
PG_FUNCTION_INFO_V1(stripe_cancel_restore);
PG_FUNCTION_INFO_V1(stripe_job_is_running);

/* "20261130T031900Z-42": sorts by time, unique by id. */
static void
make_name(SbBackupArgs *args, int64 id)
{
	pg_time_t	now = (pg_time_t) time(NULL);
	char		stamp[32];

	pg_strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", pg_gmtime(&now));
	snprintf(args->name, sizeof(args->name), "%s-%lld", stamp, (long long) id);
}

/* A random (version 4) UUID: the backup's identity in its stripes and history. */
static void
make_uuid(uint8 *uuid)
{
	if (!pg_strong_random(uuid, SB_UUID_LEN))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR), errmsg("could not generate a random backup id")));
	uuid[6] = (uuid[6] & 0x0F) | 0x40;
	uuid[8] = (uuid[8] & 0x3F) | 0x80;
}

PGDLLEXPORT Datum
stripe_backup(PG_FUNCTION_ARGS)
{
	SbBackupArgs *args = palloc0(sizeof(SbBackupArgs));
	bool		wait = PG_ARGISNULL(6) ? true : PG_GETARG_BOOL(6);
	SbJob	   *job;

	sbx_launch_check_privileges(true, "take a backup");
	sbx_launch_check_primary(SB_JOB_BACKUP);
	sbx_args_from_call(fcinfo, 0, 8, args);
	sbx_backup_choose_parent(args, PG_ARGISNULL(7) ? "full" : text_to_cstring(PG_GETARG_TEXT_PP(7)));
	job = sbx_launch_new_job(SB_JOB_BACKUP);
	make_name(args, job->id);
	make_uuid(args->uuid);
	job->backup_in_use = job->id;
	memcpy(SB_JOB_ARGS(job, SbBackupArgs), args, sizeof(SbBackupArgs));
	sbx_launch_run(job, wait);
	PG_RETURN_INT64(job->id);
}

/*
 * stripe_merge(backup, destinations, weights, label, compression,
 * compression_level, balance, wait, redundancy): the chain of BACKUP folded
 * into a new full backup (job_merge.c), in its destinations unless others
 * are given, with the redundancy asked for (NULL: stripebackup.redundancy),
 * not the chain's: a merged backup is a new backup.
 */
PGDLLEXPORT Datum
stripe_merge(PG_FUNCTION_ARGS)
{
	SbBackupArgs *args = palloc0(sizeof(SbBackupArgs));
	bool		wait = PG_ARGISNULL(7) ? true : PG_GETARG_BOOL(7);
	SbJob	   *job;

	sbx_launch_check_privileges(true, "merge backups");
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("backup must not be NULL")));
	sbx_merge_choose_source(args, PG_GETARG_INT64(0));
	sbx_args_from_call(fcinfo, 1, 8, args);
	args->type = SB_BACKUP_FULL;
	job = sbx_launch_new_job(SB_JOB_BACKUP);
	make_name(args, job->id);
	make_uuid(args->uuid);
	job->backup_in_use = args->merge.id;	/* the chain stays while it is read */
	memcpy(SB_JOB_ARGS(job, SbBackupArgs), args, sizeof(SbBackupArgs));
	sbx_launch_run(job, wait);
	PG_RETURN_INT64(job->id);
}

/* Cancel job ID of KIND on behalf of the caller. */
static bool
cancel(SbJobKind kind, int64 id, const char *function)
{
	if (sbx_shmem_request_cancel(kind, id,
								psprintf("canceled by %s() in the session of \"%s\"", function,
										 GetUserNameFromId(GetUserId(), false))))
		return true;
	ereport(NOTICE, (errmsg("%s %lld is not running", sbx_job_ops(kind)->name, (long long) id)));
	return false;
}

PGDLLEXPORT Datum
stripe_cancel(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(true, "cancel a backup");
	PG_RETURN_BOOL(cancel(SB_JOB_BACKUP, PG_GETARG_INT64(0), "stripe_cancel"));
}

PGDLLEXPORT Datum
stripe_cancel_restore(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(true, "cancel a restore");
	PG_RETURN_BOOL(cancel(SB_JOB_RESTORE, PG_GETARG_INT64(0), "stripe_cancel_restore"));
}

PGDLLEXPORT Datum
stripe_job_is_running(PG_FUNCTION_ARGS)
{
	char	   *name = text_to_cstring(PG_GETARG_TEXT_PP(0));
	SbJobKind	kind;

	if (!sbx_job_kind_by_name(name, &kind))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("unknown job kind \"%s\"", name)));
	PG_RETURN_BOOL(sbx_shmem_is_running(kind, PG_GETARG_INT64(1)));
}
