/*
 * sb_launch.c
 *		The calling session's side of a job: claim the one job slot, start a
 *		dynamic background worker, wait for it while serving interrupts, and
 *		report how the job ended.  The worker, not the calling session, does
 *		the work, so the caller's transaction never holds backup mode or
 *		restore files, and a cancelled caller asks the worker to stop cleanly.
 */
#include "postgres.h"

#include "catalog/pg_authid.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/lsyscache.h"

#include "sb_launch.h"
#include "sb_util.h"

void
sb_launch_check_privileges(bool write, const char *what)
{
	Oid			role = GetUserId();

	if (superuser() ||
		(has_privs_of_role(role, ROLE_PG_READ_SERVER_FILES) &&
		 (!write || has_privs_of_role(role, ROLE_PG_WRITE_SERVER_FILES))))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to %s", what),
			 write ? errdetail("It reads and writes files of the server.")
			 : errdetail("It reads files of the server."),
			 write ? errhint("Only superusers and members of both pg_read_server_files and pg_write_server_files may do this.")
			 : errhint("Only superusers and members of pg_read_server_files may do this.")));
}

int64
sb_launch_next_id(const char *sequence)
{
	Oid			seq = get_relname_relid(sequence, sb_schema_oid());

	if (!OidIsValid(seq))
		elog(ERROR, "sequence %s of extension stripebackup is missing", sequence);
	return nextval_internal(seq, false);
}

static BackgroundWorkerHandle *
start_worker(const SbJobArgs *args)
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
	snprintf(worker.bgw_name, BGW_MAXLEN, "stripebackup %s %lld",
			 sb_job_kind_name(args->kind), (long long) args->id);
	strlcpy(worker.bgw_type, "stripebackup", BGW_MAXLEN);
	worker.bgw_main_arg = Int64GetDatum(args->id);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a %s worker: no background worker slot is free",
						sb_job_kind_name(args->kind)),
				 errhint("You may need to increase \"max_worker_processes\".")));
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a %s worker", sb_job_kind_name(args->kind)),
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
worker_registered(const SbJobArgs *args)
{
	bool		registered;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	registered = sb_shared->args.kind == args->kind && sb_shared->args.id == args->id &&
		sb_shared->registered;
	LWLockRelease(sb_shared->lock);
	return registered;
}

/*
 * Wait until the worker has written its history row (UNTIL_DONE false) or
 * has exited (true).  Interrupts are served: a cancel here cancels the job.
 */
static void
wait_for_worker(const SbJobArgs *args, BackgroundWorkerHandle *handle, bool until_done)
{
	PG_TRY();
	{
		while (!worker_stopped(handle) && (until_done || !worker_registered(args)))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 until_done ? 1000 : 50, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
		}
	}
	PG_CATCH();
	{
		sb_shmem_request_cancel(args->kind, args->id,
								"canceled: the session waiting for it was interrupted "
								"(cancel request, statement_timeout or disconnection)");
		PG_RE_THROW();
	}
	PG_END_TRY();
}

/*
 * How the job ended, as its worker left it in shared memory (the history row
 * says the same, but a REPEATABLE READ caller could not see it yet).
 */
static void
report_outcome(const SbJobArgs *args)
{
	const char *kind = sb_job_kind_name(args->kind);
	char		status[16];
	char		error[SB_ERROR_LEN];
	bool		found;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	found = sb_shared->last_kind == args->kind && sb_shared->last_id == args->id;
	strlcpy(status, sb_shared->last_status, sizeof(status));
	strlcpy(error, sb_shared->last_error, sizeof(error));
	LWLockRelease(sb_shared->lock);
	if (!found)
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the worker of %s %lld exited without recording how it ended",
						kind, (long long) args->id),
				 errhint("More details may be available in the server log.")));
	if (strcmp(status, "completed") != 0)
		ereport(ERROR,
				(errcode(strcmp(status, "cancelled") == 0 ? ERRCODE_QUERY_CANCELED : ERRCODE_IO_ERROR),
				 errmsg("%s %lld %s: %s", kind, (long long) args->id, status, error)));
}

void
sb_launch_run(const SbJobArgs *args, bool wait)
{
	BackgroundWorkerHandle *handle = NULL;

	sb_shmem_claim(args);
	PG_TRY();
	{
		handle = start_worker(args);
	}
	PG_CATCH();
	{
		sb_shmem_release(args->kind, args->id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	wait_for_worker(args, handle, wait);
	if (wait || worker_stopped(handle))
		report_outcome(args);
}
