/*
 * sb_shmem.c
 *		The shared state: one backup at a time, claimed under a lock.
 *
 * A claim whose owner is gone (the caller or worker died without releasing
 * it) is stale and may be taken over; after a server restart shared memory
 * starts empty.
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"

#include "sb_shmem.h"

SbShared   *sb_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
sb_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(SbShared)));
	RequestNamedLWLockTranche("stripebackup", 1);
}

static void
sb_shmem_startup_hook(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	sb_shared = ShmemInitStruct("stripebackup", sizeof(SbShared), &found);
	if (!found)
	{
		memset(sb_shared, 0, sizeof(SbShared));
		sb_shared->lock = &(GetNamedLWLockTranche("stripebackup"))->lock;
	}
	LWLockRelease(AddinShmemInitLock);
}

void
sb_shmem_request(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sb_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sb_shmem_startup_hook;
}

static void
require_preload(void)
{
	if (sb_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stripebackup is not loaded at server start"),
				 errhint("Add stripebackup to shared_preload_libraries in postgresql.conf and restart the server.")));
}

static bool
process_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* A claim nobody holds any more: its caller or its worker died. Lock held. */
static bool
claim_is_stale(void)
{
	if (sb_shared->state == SB_JOB_RUNNING)
		return !process_alive(sb_shared->worker_pid);
	if (sb_shared->state == SB_JOB_STARTING)
		return !process_alive(sb_shared->requester_pid) && !process_alive(sb_shared->worker_pid);
	return false;
}

const char *
sb_job_kind_name(SbJobKind kind)
{
	return kind == SB_JOB_RESTORE ? "restore" : "backup";
}

/* Is the slot held by job ID of KIND?  Lock held. */
static bool
holds(SbJobKind kind, int64 id)
{
	return sb_shared->state != SB_JOB_IDLE && sb_shared->args.kind == kind &&
		sb_shared->args.id == id;
}

void
sb_shmem_claim(const SbJobArgs *args)
{
	require_preload();
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	if (sb_shared->state != SB_JOB_IDLE && !claim_is_stale())
	{
		SbJobKind	kind = sb_shared->args.kind;
		int64		running = sb_shared->args.id;
		char		who[NAMEDATALEN];
		TimestampTz since = sb_shared->started_at;

		strlcpy(who, sb_shared->args.requested_by, sizeof(who));
		LWLockRelease(sb_shared->lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_IN_USE),
				 errmsg("%s %lld is already running", sb_job_kind_name(kind), (long long) running),
				 errdetail("Only one backup or restore runs at a time; that one was started by \"%s\" at %s.",
						   who, timestamptz_to_str(since)),
				 errhint("Wait for it to finish, or stop it with %s(%lld).",
						 kind == SB_JOB_RESTORE ? "stripe_cancel_restore" : "stripe_cancel",
						 (long long) running)));
	}
	memset(sb_shared->stripes, 0, sizeof(sb_shared->stripes));
	sb_shared->nstripes = 0;
	sb_shared->bytes_total = 0;
	sb_shared->args = *args;
	sb_shared->state = SB_JOB_STARTING;
	sb_shared->worker_pid = 0;
	sb_shared->worker_latch = NULL;
	sb_shared->requester_latch = MyLatch;
	sb_shared->cancel_requested = false;
	sb_shared->registered = false;
	sb_shared->started_at = GetCurrentTimestamp();
	sb_shared->bytes_done = 0;
	sb_shared->files_done = 0;
	strlcpy(sb_shared->phase, "starting", sizeof(sb_shared->phase));
	sb_shared->requester_pid = MyProcPid;
	LWLockRelease(sb_shared->lock);
}

void
sb_shmem_progress_begin(int nstripes, const char *const *locations, const uint64 *totals,
						uint64 total)
{
	int			i;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->nstripes = nstripes;
	sb_shared->bytes_total = total;
	for (i = 0; i < nstripes; i++)
	{
		SbStripeLive *l = &sb_shared->stripes[i];

		memset(l, 0, sizeof(*l));
		strlcpy(l->location, locations[i], sizeof(l->location));
		l->total = totals[i];
	}
	LWLockRelease(sb_shared->lock);
}

void
sb_shmem_release(SbJobKind kind, int64 id)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	if (holds(kind, id))
	{
		sb_shared->state = SB_JOB_IDLE;
		sb_shared->worker_pid = 0;
		sb_shared->worker_latch = NULL;
		strlcpy(sb_shared->phase, "idle", sizeof(sb_shared->phase));
	}
	LWLockRelease(sb_shared->lock);
}

void
sb_shmem_finish(SbJobKind kind, int64 id, const char *status, const char *error)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->last_kind = kind;
	sb_shared->last_id = id;
	strlcpy(sb_shared->last_status, status, sizeof(sb_shared->last_status));
	strlcpy(sb_shared->last_error, error ? error : "", sizeof(sb_shared->last_error));
	if (sb_shared->requester_latch != NULL)
		SetLatch(sb_shared->requester_latch);
	LWLockRelease(sb_shared->lock);
	sb_shmem_release(kind, id);
}

bool
sb_shmem_is_running(SbJobKind kind, int64 id)
{
	bool		running;

	if (sb_shared == NULL)
		return false;
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	running = holds(kind, id) && !claim_is_stale();
	LWLockRelease(sb_shared->lock);
	return running;
}

bool
sb_shmem_request_cancel(SbJobKind kind, int64 id, const char *reason)
{
	bool		found;

	require_preload();
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	found = holds(kind, id);
	if (found && !sb_shared->cancel_requested)
	{
		strlcpy(sb_shared->cancel_reason, reason, sizeof(sb_shared->cancel_reason));
		sb_shared->cancel_requested = true;
		if (sb_shared->worker_latch != NULL)
			SetLatch(sb_shared->worker_latch);
	}
	LWLockRelease(sb_shared->lock);
	return found;
}
