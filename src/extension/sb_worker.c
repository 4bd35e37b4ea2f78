/*
 * sb_worker.c
 *		The background worker that runs one backup: it takes its arguments
 *		from shared memory, writes the history row, runs the backup, and
 *		records how it ended, whatever happens.
 *
 * SIGTERM (stripe_cancel, a fast shutdown, an invalidated WAL slot) sets a
 * flag; the backup notices it within 100 ms, stops cleanly (backup mode
 * ended, slot dropped, partial files removed) and is recorded 'cancelled'.
 */
#include "postgres.h"

#include <signal.h>

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "sb_history.h"
#include "sb_pgbackup.h"
#include "sb_pgrestore.h"
#include "sb_shmem.h"
#include "sb_util.h"
#include "sb_worker.h"

PGDLLEXPORT void stripebackup_worker_main(Datum main_arg);

static volatile sig_atomic_t got_sigterm = false;

static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

bool
sb_worker_stop_requested(void)
{
	return got_sigterm || sb_shared->cancel_requested || !PostmasterIsAlive();
}

const char *
sb_worker_stop_reason(void)
{
	if (!PostmasterIsAlive())
		return "canceled: the server stopped";
	if (sb_shared->cancel_requested)
		return sb_shared->cancel_reason;
	return "canceled: the backup worker was asked to terminate (server shutdown or pg_terminate_backend)";
}

void
sb_worker_raise(const SbError *err)
{
	if (err->code == SB_ECANCELED)
		ereport(ERROR, (errcode(ERRCODE_QUERY_CANCELED), errmsg("%s", sb_worker_stop_reason())));
	sb_raise(err);
}

/* Take this job's arguments; false if the claim is not ours any more. */
static bool
attach(int64 id, SbJobArgs *args)
{
	bool		ours;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	ours = sb_shared->state == SB_JOB_STARTING && sb_shared->args.id == id;
	if (ours)
	{
		*args = sb_shared->args;
		sb_shared->state = SB_JOB_RUNNING;
		sb_shared->worker_pid = MyProcPid;
		sb_shared->worker_latch = MyLatch;
	}
	LWLockRelease(sb_shared->lock);
	return ours;
}

static void
mark_registered(void)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->registered = true;
	if (sb_shared->requester_latch != NULL)
		SetLatch(sb_shared->requester_latch);
	LWLockRelease(sb_shared->lock);
}

/* What a job of either kind produced. */
typedef struct JobOutcome
{
	SbBackupOutcome backup;
	SbRestoreOutcome restore;
} JobOutcome;

static void
insert_history(const SbJobArgs *args)
{
	if (args->kind == SB_JOB_BACKUP)
		sb_history_insert(args);
	else
		sb_restore_history_insert(args);
}

static void
run_job(const SbJobArgs *args, JobOutcome *outcome)
{
	if (args->kind == SB_JOB_BACKUP)
		sb_pgbackup_run(args, &outcome->backup);
	else
		sb_pgrestore_run(args, &outcome->restore);
}

static void
finish_history(const SbJobArgs *args, const char *status, const char *error,
			   const JobOutcome *outcome)
{
	if (args->kind == SB_JOB_BACKUP)
		sb_history_finish(args, status, error, &outcome->backup);
	else
		sb_restore_history_finish(args, status, error, &outcome->restore);
}

/* Run the job; returns its status and sets *ERROR when it did not complete. */
static const char *
run(const SbJobArgs *args, JobOutcome *outcome, char **error)
{
	MemoryContext context = CurrentMemoryContext;
	const char *volatile status = "completed";

	PG_TRY();
	{
		run_job(args, outcome);
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		MemoryContextSwitchTo(context);
		edata = CopyErrorData();
		FlushErrorState();
		AbortOutOfAnyTransaction();
		if (MyReplicationSlot != NULL)
			ReplicationSlotRelease();
		ReplicationSlotCleanup();
		status = edata->sqlerrcode == ERRCODE_QUERY_CANCELED ? "cancelled" : "failed";
		*error = edata->message;
	}
	PG_END_TRY();
	ereport(LOG,
			(errmsg("stripebackup: %s %lld %s%s%s", sb_job_kind_name(args->kind),
					(long long) args->id, status, *error ? ": " : "", *error ? *error : "")));
	return status;
}

void
stripebackup_worker_main(Datum main_arg)
{
	int64		id = DatumGetInt64(main_arg);
	SbJobArgs  *args = palloc(sizeof(SbJobArgs));
	JobOutcome *outcome = palloc0(sizeof(JobOutcome));
	const char *status;
	char	   *error = NULL;

	pqsignal(SIGTERM, handle_sigterm);
	BackgroundWorkerUnblockSignals();
	if (!attach(id, args))
		return;
	/* The caller was checked; the worker acts for the extension itself. */
	BackgroundWorkerInitializeConnectionByOid(args->database, BOOTSTRAP_SUPERUSERID, 0);
	pgstat_report_appname("stripebackup");
	insert_history(args);
	mark_registered();
	/* Files and buffers used outside a transaction need an owner. */
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "stripebackup worker");
	status = run(args, outcome, &error);
	CurrentResourceOwner = NULL;
	PG_TRY();
	{
		finish_history(args, status, error, outcome);
	}
	PG_FINALLY();
	{
		sb_shmem_finish(args->kind, id, status, error);
		sb_manifest_free(outcome->backup.manifest);
	}
	PG_END_TRY();
}
