/*
 * sb_worker.c
 *		The background worker that runs one job of any kind: it takes the job
 *		from shared memory, writes its history row, runs it, and records how
 *		it ended (in the row and in shared memory for a waiting caller),
 *		whatever happens.
 *
 * The worker connects to the caller's database as the bootstrap superuser,
 * to act for the extension, and pins the settings that database's owner
 * could use to redirect or stall it (sbx_control_pin_settings()).
 *
 * The job runs in a memory context of its own.  Engine objects belong to it
 * (sb_handle.c): when the job fails, deleting that context aborts them
 * (threads stopped, partial files removed) before the end is recorded.
 * Cancel interrupts are held except while the job itself runs, so a cancel
 * never interrupts the bookkeeping.
 */
#include "postgres.h"

#include <sys/resource.h>

#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "replication/slot.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "sb_control.h"
#include "sb_job.h"
#include "sb_shmem.h"

PGDLLEXPORT void stripebackup_worker_main(Datum main_arg);

/* The current error as the job's end; clears the error state. */
static void
end_from_error(SbJobEnd *end, MemoryContext context)
{
	ErrorData  *edata;

	MemoryContextSwitchTo(context);
	edata = CopyErrorData();
	FlushErrorState();
	/* A cancel by our own signals inside PostgreSQL's code: say why. */
	if (edata->sqlerrcode == ERRCODE_QUERY_CANCELED && sbx_control_stop_requested())
	{
		const char *reason;

		edata->sqlerrcode = sbx_control_stop_cause(&reason);
		edata->message = pstrdup(reason);
		edata->detail = NULL;
		edata->hint = NULL;
	}
	strlcpy(end->status, edata->sqlerrcode == ERRCODE_QUERY_CANCELED ? "cancelled" : "failed",
			sizeof(end->status));
	end->sqlstate = edata->sqlerrcode;
	strlcpy(end->message, edata->message ? edata->message : "", sizeof(end->message));
	strlcpy(end->detail, edata->detail ? edata->detail : "", sizeof(end->detail));
	strlcpy(end->hint, edata->hint ? edata->hint : "", sizeof(end->hint));
	FreeErrorData(edata);
}

/*
 * The worker's peak resident memory so far: a worker runs one job, so this
 * is the job's (the shared buffers it touched included, as top counts them).
 */
static long
peak_memory_mib(void)
{
	struct rusage usage;

	if (getrusage(RUSAGE_SELF, &usage) != 0)
		return -1;
	return usage.ru_maxrss / 1024;	/* Linux counts KiB */
}

/*
 * Run the job in JOB_CONTEXT and fill END.  Whatever happens, the job's
 * memory (and the engine objects it owns) is gone when this returns, and so
 * is the WAL slot a backup may hold.
 */
static void
run(const SbJob *job, const SbJobOps *ops, void *outcome, SbJobEnd *end)
{
	MemoryContext outer = CurrentMemoryContext;
	MemoryContext job_context = AllocSetContextCreate(outer, "stripebackup job",
													  ALLOCSET_DEFAULT_SIZES);

	strlcpy(end->status, "completed", sizeof(end->status));
	RESUME_CANCEL_INTERRUPTS();
	PG_TRY();
	{
		MemoryContextSwitchTo(job_context);
		sbx_control_check_stop();
		ops->run(job, outcome);
		MemoryContextSwitchTo(outer);
	}
	PG_CATCH();
	{
		end_from_error(end, outer);
		AbortOutOfAnyTransaction();
	}
	PG_END_TRY();
	HOLD_CANCEL_INTERRUPTS();
	MemoryContextDelete(job_context);
	if (MyReplicationSlot != NULL)
		ReplicationSlotRelease();
	sbx_compat_slot_cleanup();
	ereport(LOG,
			(errmsg("stripebackup: %s %lld %s%s%s (peak memory %ld MiB)", ops->name,
					(long long) job->id, end->status, end->message[0] ? ": " : "", end->message,
					peak_memory_mib())));
}

/*
 * The row's end.  If it cannot be written, the job is reported failed with
 * that error: a backup nobody can find in the history is of no use to a
 * caller who waited for it.
 */
static void
finish_history(const SbJob *job, const SbJobOps *ops, SbJobEnd *end, const void *outcome)
{
	MemoryContext context = CurrentMemoryContext;

	PG_TRY();
	{
		ops->history_finish(job, end, outcome);
	}
	PG_CATCH();
	{
		end_from_error(end, context);
		AbortOutOfAnyTransaction();
		strlcpy(end->status, "failed", sizeof(end->status));
		ereport(LOG,
				(errmsg("stripebackup: could not record the end of %s %lld: %s", ops->name,
						(long long) job->id, end->message)));
	}
	PG_END_TRY();
}

/* The history row, before anything else: false (END filled in) if it failed. */
static bool
insert_history(const SbJob *job, const SbJobOps *ops, SbJobEnd *end)
{
	MemoryContext context = CurrentMemoryContext;
	volatile bool ok = true;

	PG_TRY();
	{
		ops->history_insert(job);
	}
	PG_CATCH();
	{
		end_from_error(end, context);
		AbortOutOfAnyTransaction();
		ok = false;
	}
	PG_END_TRY();
	return ok;
}

void
stripebackup_worker_main(Datum main_arg)
{
	SbJob	   *job = palloc(sizeof(SbJob));
	const SbJobOps *ops;
	ResourceOwner owner;
	SbJobEnd   *end = palloc0(sizeof(SbJobEnd));
	void	   *outcome;

	pqsignal(SIGTERM, sbx_control_handle_sigterm);
	/* Only the job itself is cancelled (run()), not its bookkeeping. */
	HOLD_CANCEL_INTERRUPTS();
	BackgroundWorkerUnblockSignals();
	if (!sbx_shmem_attach(DatumGetInt64(main_arg), job))
		return;
	ops = sbx_job_ops(job->kind);
	sbx_control_begin(job, ops->stop_reason);
	/* The caller was checked; the worker acts for the extension itself. */
	BackgroundWorkerInitializeConnectionByOid(job->database, BOOTSTRAP_SUPERUSERID, 0);
	sbx_control_pin_settings();
	pgstat_report_appname("stripebackup");
	outcome = palloc0(ops->outcome_size);
	/* Files and buffers used outside a transaction need an owner. */
	owner = ResourceOwnerCreate(NULL, "stripebackup worker");
	CurrentResourceOwner = owner;
	if (insert_history(job, ops, end))
	{
		sbx_shmem_mark_registered();
		run(job, ops, outcome, end);
		CurrentResourceOwner = owner;
		finish_history(job, ops, end, outcome);
	}
	sbx_shmem_finish(job, end);
	CurrentResourceOwner = NULL;
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_BEFORE_LOCKS, false, true);
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_LOCKS, false, true);
	ResourceOwnerRelease(owner, RESOURCE_RELEASE_AFTER_LOCKS, false, true);
	ResourceOwnerDelete(owner);
}
