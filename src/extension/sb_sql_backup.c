/*
 * sb_sql_backup.c
 *		stripe_backup(), stripe_cancel() and stripe_backup_is_running().
 *
 * stripe_backup() checks its arguments, claims the one backup slot, starts
 * a background worker and, with wait => true, waits for it: the worker, not
 * the calling session, runs the backup, so the caller's transaction never
 * holds the backup, and cancelling the caller (Ctrl-C, pg_cancel_backend,
 * statement_timeout) asks the worker to stop cleanly.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_authid.h"
#include "commands/sequence.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "sb_args.h"
#include "sb_shmem.h"
#include "sb_util.h"

PG_FUNCTION_INFO_V1(stripe_backup);
PG_FUNCTION_INFO_V1(stripe_cancel);
PG_FUNCTION_INFO_V1(stripe_backup_is_running);

/* Superuser, or both pg_read_server_files and pg_write_server_files. */
static void
check_privileges(void)
{
	Oid			role = GetUserId();

	if (superuser() ||
		(has_privs_of_role(role, ROLE_PG_READ_SERVER_FILES) &&
		 has_privs_of_role(role, ROLE_PG_WRITE_SERVER_FILES)))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to take a backup"),
			 errdetail("A backup reads every file of the cluster and writes server files."),
			 errhint("Only superusers and members of both pg_read_server_files and pg_write_server_files may take backups.")));
}

/* The next backup id; the caller was checked, not the sequence's ACL. */
static int64
next_backup_id(void)
{
	Oid			seq = get_relname_relid("stripe_backup_id_seq", sb_schema_oid());

	if (!OidIsValid(seq))
		elog(ERROR, "sequence stripe_backup_id_seq of extension stripebackup is missing");
	return nextval_internal(seq, false);
}

/* "20261130T031900Z-42": sorts by time, unique by id. */
static void
make_name(SbJobArgs *args)
{
	pg_time_t	now = (pg_time_t) time(NULL);
	char		stamp[32];

	pg_strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", pg_gmtime(&now));
	snprintf(args->name, sizeof(args->name), "%s-%lld", stamp, (long long) args->id);
}

static BackgroundWorkerHandle *
start_worker(int64 id)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "stripebackup", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "stripebackup_worker_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "stripebackup backup %lld", (long long) id);
	strlcpy(worker.bgw_type, "stripebackup", BGW_MAXLEN);
	worker.bgw_main_arg = Int64GetDatum(id);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a backup worker: no background worker slot is free"),
				 errhint("You may need to increase \"max_worker_processes\".")));
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a backup worker"),
				 errhint("More details may be available in the server log.")));
	return handle;
}

static bool
worker_stopped(BackgroundWorkerHandle *handle)
{
	pid_t		pid;

	return GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED;
}

static bool
worker_registered(int64 id)
{
	bool		registered;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	registered = sb_shared->args.id == id && sb_shared->registered;
	LWLockRelease(sb_shared->lock);
	return registered;
}

/*
 * Wait until the worker has written its history row (UNTIL_DONE false) or
 * has exited (true).  Interrupts are served: a cancel here cancels the backup.
 */
static void
wait_for_worker(int64 id, BackgroundWorkerHandle *handle, bool until_done)
{
	PG_TRY();
	{
		while (!worker_stopped(handle) && (until_done || !worker_registered(id)))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 until_done ? 1000 : 50, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		sb_shmem_request_cancel(id, "canceled: the session waiting for it was interrupted "
								"(cancel request, statement_timeout or disconnection)");
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * How the backup ended, as its worker left it in shared memory (the history
 * row says the same, but a REPEATABLE READ caller could not see it yet).
 */
static void
report_outcome(int64 id)
{
	char		status[16];
	char		error[SB_ERROR_LEN];
	bool		found;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	found = sb_shared->last_id == id;
	strlcpy(status, sb_shared->last_status, sizeof(status));
	strlcpy(error, sb_shared->last_error, sizeof(error));
	LWLockRelease(sb_shared->lock);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the worker of backup %lld exited without recording how the backup ended",
						(long long) id),
				 errhint("More details may be available in the server log.")));
	if (strcmp(status, "completed") != 0)
		ereport(ERROR,
				(errcode(strcmp(status, "cancelled") == 0 ? ERRCODE_QUERY_CANCELED : ERRCODE_IO_ERROR),
				 errmsg("backup %lld %s: %s", (long long) id, status, error)));
}

Datum
stripe_backup(PG_FUNCTION_ARGS)
{
	SbJobArgs  *args = palloc0(sizeof(SbJobArgs));
	BackgroundWorkerHandle *handle = NULL;
	bool		wait = PG_ARGISNULL(6) ? true : PG_GETARG_BOOL(6);

	check_privileges();
	sb_args_from_call(fcinfo, args);
	args->id = next_backup_id();
	args->database = MyDatabaseId;
	strlcpy(args->requested_by, GetUserNameFromId(GetUserId(), false), NAMEDATALEN);
	make_name(args);
	sb_shmem_claim(args);
	PG_TRY();
	{
		handle = start_worker(args->id);
	}
	PG_CATCH();
	{
		sb_shmem_release(args->id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	wait_for_worker(args->id, handle, wait);
	if (wait || worker_stopped(handle))
		report_outcome(args->id);
	PG_RETURN_INT64(args->id);
}

Datum
stripe_cancel(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	check_privileges();
	if (sb_shmem_request_cancel(id, psprintf("canceled by stripe_cancel() in the session of \"%s\"",
											 GetUserNameFromId(GetUserId(), false))))
		PG_RETURN_BOOL(true);
	ereport(NOTICE, (errmsg("backup %lld is not running", (long long) id)));
	PG_RETURN_BOOL(false);
}

Datum
stripe_backup_is_running(PG_FUNCTION_ARGS)
{
	PG_RETURN_BOOL(sb_shmem_is_running(PG_GETARG_INT64(0)));
}
