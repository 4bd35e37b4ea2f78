/*
 * sb_worker.c
 *		The background worker that runs one backup: it takes its arguments
 *		from shared memory, writes the history row, runs the backup, and
 *		records how it ended, whatever happens.
 *
 * SIGTERM (pg_terminate_backend, a fast shutdown, the checkpointer
 * invalidating the WAL slot) sets a flag; the backup notices it within
 * 100 ms, stops cleanly (backup mode ended, slot dropped, partial files
 * removed) and is recorded 'cancelled', or 'failed' when its slot was lost.
 * SIGTERM also cancels what PostgreSQL's own code waits for, such as the
 * start checkpoint: the checkpointer that signals us waits for our slot.
 */
#include "postgres.h"

#include <signal.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "replication/slot.h"
#include "storage/ipc.h"
#include "storage/pmsignal.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/spin.h"
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

/* The job this worker runs, once attached. */
static const SbJobArgs *job = NULL;

/*
 * Besides the flag our code polls, a query cancel: PostgreSQL's own waits
 * (the start checkpoint) end with an ERROR that run() turns into the stop
 * reason.  Cancels are held off outside the job itself (history writes).
 */
static void
handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	if (!proc_exit_inprogress)
	{
		InterruptPending = true;
		QueryCancelPending = true;
	}
	SetLatch(MyLatch);
	errno = save_errno;
}

bool
sb_worker_stop_requested(void)
{
	return got_sigterm || sb_shared->cancel_requested || !PostmasterIsAlive();
}

/*
 * Is this backup's WAL slot invalidated, or about to be?  A checkpoint that
 * finds a slot more than max_slot_wal_keep_size behind sends SIGTERM to the
 * process holding it and invalidates it once released: at our SIGTERM the
 * slot is usually still valid, but its WAL is no longer reserved.
 */
static bool
wal_slot_lost(char *name, size_t len)
{
	ReplicationSlot *slot;
	XLogRecPtr	restart_lsn;
	XLogRecPtr	invalidated_at;
	WALAvailability availability;

	if (job == NULL || job->kind != SB_JOB_BACKUP)
		return false;
	snprintf(name, len, SB_WAL_SLOT_FORMAT, (long long) job->id);
	slot = SearchNamedReplicationSlot(name, true);
	if (slot == NULL)
		return false;
	SpinLockAcquire(&slot->mutex);
	restart_lsn = slot->data.restart_lsn;
	invalidated_at = slot->data.invalidated_at;
	SpinLockRelease(&slot->mutex);
	if (!XLogRecPtrIsInvalid(invalidated_at) || XLogRecPtrIsInvalid(restart_lsn))
		return true;
	availability = GetWALAvailability(restart_lsn);
	return availability == WALAVAIL_UNRESERVED || availability == WALAVAIL_REMOVED;
}

/* Why the job must stop; the SQLSTATE says whether it is a cancel or a failure. */
static int
stop_cause(const char **reason)
{
	char		slot[NAMEDATALEN];

	if (!PostmasterIsAlive())
		*reason = "canceled: the server stopped";
	else if (sb_shared->cancel_requested)
		*reason = sb_shared->cancel_reason;
	else if (got_sigterm && wal_slot_lost(slot, sizeof(slot)))
	{
		*reason = psprintf("the WAL this backup needs is no longer kept: its replication slot \"%s\" "
						   "fell more than max_slot_wal_keep_size (%dMB) behind and a checkpoint "
						   "invalidated it", slot, max_slot_wal_keep_size_mb);
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	}
	else
		*reason = "canceled: the backup worker was asked to terminate (server shutdown or pg_terminate_backend)";
	return ERRCODE_QUERY_CANCELED;
}

const char *
sb_worker_stop_reason(void)
{
	const char *reason;

	(void) stop_cause(&reason);
	return reason;
}

void
sb_worker_raise_stop(void)
{
	const char *reason;
	int			sqlstate = stop_cause(&reason);

	ereport(ERROR, (errcode(sqlstate), errmsg("%s", reason)));
	pg_unreachable();
}

void
sb_worker_raise(const SbError *err)
{
	if (err->code == SB_ECANCELED)
		sb_worker_raise_stop();
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

	RESUME_CANCEL_INTERRUPTS();
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
		/* A cancel by our SIGTERM inside PostgreSQL's code: say why (before the slot goes). */
		if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED && sb_worker_stop_requested())
		{
			const char *reason;

			edata->sqlerrcode = stop_cause(&reason);
			edata->message = pstrdup(reason);
		}
		if (MyReplicationSlot != NULL)
			ReplicationSlotRelease();
		ReplicationSlotCleanup();
		status = edata->sqlerrcode == ERRCODE_QUERY_CANCELED ? "cancelled" : "failed";
		*error = edata->message;
	}
	PG_END_TRY();
	HOLD_CANCEL_INTERRUPTS();
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
	/* Only the job itself is cancelled by SIGTERM (run()), not its bookkeeping. */
	HOLD_CANCEL_INTERRUPTS();
	BackgroundWorkerUnblockSignals();
	if (!attach(id, args))
		return;
	job = args;
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
