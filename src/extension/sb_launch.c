/*
 * sb_launch.c
 *		The calling session's side of a job: claim the one job slot, start a
 *		dynamic background worker, wait for it while serving interrupts, and
 *		report how the job ended with the worker's own SQLSTATE.  The worker,
 *		not the calling session, does the work, so the caller's transaction
 *		never holds backup mode or restore files.
 *
 * Whatever ends the wait early (a cancel, statement_timeout, an ERROR, or a
 * FATAL such as pg_terminate_backend or a lost client) asks the worker to
 * stop: PG_ENSURE_ERROR_CLEANUP covers the FATAL cases that PG_CATCH does
 * not see.  A worker that waits for a lock this very transaction holds
 * would wait forever; the wait notices and fails the call instead.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "catalog/pg_authid.h"
#include "commands/sequence.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "utils/acl.h"
#include "utils/array.h"
#include "utils/fmgrprotos.h"
#include "utils/lsyscache.h"

#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_standby_history.h"

void
sbx_launch_check_privileges(bool write, const char *what)
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

void
sbx_launch_check_primary(SbJobKind kind)
{
	/* a backup on a standby keeps its history in a file of its own (sb_standby_history.c) */
	if (!RecoveryInProgress() || kind == SB_JOB_BACKUP)
		return;
	ereport(ERROR,
			(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
			 errmsg("a %s cannot run on a standby: it records its history in tables a standby cannot write",
					sbx_job_ops(kind)->name),
			 errhint("Run it on the primary, or restore with the stripebackup command.")));
}

void
sbx_launch_check_writable(const char *function)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("%s cannot run on a standby: it writes tables a standby cannot write", function),
				 errhint("Run it on the primary.")));
}

/* The job's id: the next of the extension's sequence, or on a standby (which cannot advance it) one of its own range. */
static int64
new_id(const SbJobOps *ops)
{
	Oid			seq = get_relname_relid(ops->id_sequence, sbx_sql_schema());

	if (RecoveryInProgress())
		return sbx_standby_next_id();
	if (!OidIsValid(seq))
		elog(ERROR, "sequence %s of extension stripebackup is missing", ops->id_sequence);
	return nextval_internal(seq, false);
}

SbJob *
sbx_launch_new_job(SbJobKind kind)
{
	SbJob	   *job = palloc0(sizeof(SbJob));

	/* nextval() would say "cannot execute nextval() in a read-only transaction" */
	sbx_launch_check_primary(kind);
	job->kind = kind;
	job->id = new_id(sbx_job_ops(kind));
	job->database = MyDatabaseId;
	strlcpy(job->requested_by, GetUserNameFromId(GetUserId(), false), NAMEDATALEN);
	return job;
}

static void
claim(const SbJob *job)
{
	SbSlotHolder holder;
	const SbJobOps *running;

	if (sbx_shmem_claim(job, &holder))
		return;
	running = sbx_job_ops(holder.kind);
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_IN_USE),
			 errmsg("%s %lld is already running", running->name, (long long) holder.id),
			 errdetail("Only one backup or restore runs at a time; that one was started by \"%s\" at %s.",
					   holder.requested_by, timestamptz_to_str(holder.since)),
			 errhint("Wait for it to finish, or stop it with %s(%lld).",
					 running->cancel_function, (long long) holder.id)));
}

static BackgroundWorkerHandle *
start_worker(const SbJob *job)
{
	const char *kind = sbx_job_ops(job->kind)->name;
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	pid_t		pid;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_ConsistentState;	/* a backup runs on a hot standby too */
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	strlcpy(worker.bgw_library_name, "stripebackup", BGW_MAXLEN);
	strlcpy(worker.bgw_function_name, "stripebackup_worker_main", BGW_MAXLEN);
	snprintf(worker.bgw_name, BGW_MAXLEN, "stripebackup %s %lld", kind, (long long) job->id);
	strlcpy(worker.bgw_type, "stripebackup", BGW_MAXLEN);
	worker.bgw_main_arg = Int64GetDatum(job->id);
	worker.bgw_notify_pid = MyProcPid;
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a %s worker: no background worker slot is free", kind),
				 errhint("You may need to increase \"max_worker_processes\".")));
	if (WaitForBackgroundWorkerStartup(handle, &pid) != BGWH_STARTED)
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_RESOURCES),
				 errmsg("could not start a %s worker", kind),
				 errhint("More details may be available in the server log.")));
	return handle;
}

static bool
worker_stopped(BackgroundWorkerHandle *handle)
{
	pid_t		pid;

	return GetBackgroundWorkerPid(handle, &pid) == BGWH_STOPPED;
}

/* ERROR if the job's worker waits for a lock this session holds. */
static void
check_not_blocking(const SbJob *job)
{
	pid_t		worker = sbx_shmem_worker_pid(job->kind, job->id);
	const char *kind = sbx_job_ops(job->kind)->name;
	Datum	   *pids;
	int			npids,
				i;

	if (worker <= 0)
		return;
	deconstruct_array(DatumGetArrayTypeP(DirectFunctionCall1(pg_blocking_pids, Int32GetDatum(worker))),
					  INT4OID, sizeof(int32), true, TYPALIGN_INT, &pids, NULL, &npids);
	for (i = 0; i < npids; i++)
		if (DatumGetInt32(pids[i]) == MyProcPid)
			ereport(ERROR,
					(errcode(ERRCODE_T_R_DEADLOCK_DETECTED),
					 errmsg("%s %lld waits for a lock that this transaction holds", kind,
							(long long) job->id),
					 errdetail("Its worker (PID %d) records the %s in the extension's tables, "
							   "which this transaction has locked.", (int) worker, kind),
					 errhint("Commit or roll back first, or take the %s outside that transaction.",
							 kind)));
}

/* Whatever ended the wait (ERROR or FATAL) stops the job too. */
static void
cancel_waited_job(int code, Datum arg)
{
	const SbJob *job = (const SbJob *) DatumGetPointer(arg);

	sbx_shmem_request_cancel(job->kind, job->id,
							"canceled: the session waiting for it was interrupted or ended "
							"(cancel request, statement_timeout, pg_terminate_backend or disconnection)");
}

/*
 * Wait until the worker has written its history row (UNTIL_DONE false) or
 * has exited (true).  Interrupts are served: a cancel here cancels the job.
 */
static void
wait_for_worker(const SbJob *job, BackgroundWorkerHandle *handle, bool until_done)
{
	PG_ENSURE_ERROR_CLEANUP(cancel_waited_job, PointerGetDatum(job));
	{
		while (!worker_stopped(handle) &&
			   (until_done || !sbx_shmem_is_registered(job->kind, job->id)))
		{
			(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
							 until_done ? 1000 : 50, PG_WAIT_EXTENSION);
			ResetLatch(MyLatch);
			CHECK_FOR_INTERRUPTS();
			check_not_blocking(job);
		}
	}
	PG_END_ENSURE_ERROR_CLEANUP(cancel_waited_job, PointerGetDatum(job));
}

/*
 * How the job ended, as its worker left it in shared memory (the history row
 * says the same, but a REPEATABLE READ caller could not see it yet).
 */
static void
report_end(const SbJob *job)
{
	const char *kind = sbx_job_ops(job->kind)->name;
	SbJobEnd	end;

	if (!sbx_shmem_job_end(job->kind, job->id, &end))
		ereport(ERROR,
				(errcode(ERRCODE_INTERNAL_ERROR),
				 errmsg("the worker of %s %lld exited without recording how it ended",
						kind, (long long) job->id),
				 errhint("More details may be available in the server log.")));
	if (strcmp(end.status, "completed") == 0)
		return;
	ereport(ERROR,
			(errcode(end.sqlstate),
			 errmsg("%s %lld %s: %s", kind, (long long) job->id, end.status, end.message),
			 end.detail[0] ? errdetail("%s", end.detail) : 0,
			 end.hint[0] ? errhint("%s", end.hint) : 0));
}

void
sbx_launch_run(const SbJob *job, bool wait)
{
	BackgroundWorkerHandle *handle = NULL;

	claim(job);
	PG_TRY();
	{
		handle = start_worker(job);
	}
	PG_CATCH();
	{
		sbx_shmem_release(job->kind, job->id);
		PG_RE_THROW();
	}
	PG_END_TRY();
	wait_for_worker(job, handle, wait);
	if (wait || worker_stopped(handle))
		report_end(job);
}
