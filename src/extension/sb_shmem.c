/*
 * sb_shmem.c
 *		The shared state: one job at a time, claimed under a lock.
 *
 * A claim whose owner is gone (the caller or worker died without releasing
 * it) is stale and may be taken over; after a server restart shared memory
 * starts empty.
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/procarray.h"
#include "storage/shmem.h"

#include "sb_shmem.h"

typedef struct SbShared
{
	LWLock	   *lock;
	SbSlotState state;
	SbJob		job;
	pid_t		requester_pid;
	pid_t		worker_pid;
	Latch	   *worker_latch;
	Latch	   *requester_latch;
	bool		cancel_requested;
	char		cancel_reason[SB_MESSAGE_LEN];
	bool		registered;		/* the worker has written the history row */
	TimestampTz started_at;
	/* how the last job ended, written by its worker as it exits */
	SbJobKind	last_kind;
	int64		last_id;
	SbJobEnd	last_end;
	SbLive		live;
	SbArchiveLive archive;
	int64		last_standby_id;	/* the last id given to a backup on this standby */
} SbShared;

static SbShared *sb_shared = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

static void
sbx_shmem_request_hook(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(SbShared)));
	RequestNamedLWLockTranche("stripebackup", 1);
}

static void
sbx_shmem_startup_hook(void)
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
sbx_shmem_request(void)
{
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sbx_shmem_request_hook;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sbx_shmem_startup_hook;
}

void
sbx_shmem_require(void)
{
	if (sb_shared == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stripebackup is not loaded at server start"),
				 errhint("Add stripebackup to shared_preload_libraries in postgresql.conf and restart the server.")));
}

bool
sbx_shmem_loaded(void)
{
	return sb_shared != NULL;
}

static bool
process_alive(pid_t pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* A claim nobody holds any more: its caller or its worker died.  Lock held. */
static bool
claim_is_stale(void)
{
	if (sb_shared->state == SB_SLOT_RUNNING)
		return !process_alive(sb_shared->worker_pid);
	if (sb_shared->state == SB_SLOT_STARTING)
		return !process_alive(sb_shared->requester_pid) && !process_alive(sb_shared->worker_pid);
	return false;
}

/* Is the slot held by job ID of KIND?  Lock held. */
static bool
holds(SbJobKind kind, int64 id)
{
	return sb_shared->state != SB_SLOT_IDLE && sb_shared->job.kind == kind &&
		sb_shared->job.id == id;
}

/* A new job in the slot: its arguments, nothing done yet.  Lock held. */
static void
take_slot(const SbJob *job)
{
	sb_shared->job = *job;
	sb_shared->state = SB_SLOT_STARTING;
	sb_shared->requester_pid = MyProcPid;
	sb_shared->requester_latch = MyLatch;
	sb_shared->worker_pid = 0;
	sb_shared->worker_latch = NULL;
	sb_shared->cancel_requested = false;
	sb_shared->cancel_reason[0] = '\0';
	sb_shared->registered = false;
	sb_shared->started_at = GetCurrentTimestamp();
	memset(&sb_shared->live, 0, sizeof(sb_shared->live));
	strlcpy(sb_shared->live.phase, "starting", SB_PHASE_LEN);
}

bool
sbx_shmem_claim(const SbJob *job, SbSlotHolder *holder)
{
	bool		free_slot;

	sbx_shmem_require();
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	free_slot = sb_shared->state == SB_SLOT_IDLE || claim_is_stale();
	if (free_slot)
		take_slot(job);
	else
	{
		holder->kind = sb_shared->job.kind;
		holder->id = sb_shared->job.id;
		strlcpy(holder->requested_by, sb_shared->job.requested_by, NAMEDATALEN);
		holder->since = sb_shared->started_at;
	}
	LWLockRelease(sb_shared->lock);
	return free_slot;
}

void
sbx_shmem_release(SbJobKind kind, int64 id)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	if (holds(kind, id))
	{
		sb_shared->state = SB_SLOT_IDLE;
		sb_shared->worker_pid = 0;
		sb_shared->worker_latch = NULL;
		strlcpy(sb_shared->live.phase, "idle", SB_PHASE_LEN);
	}
	LWLockRelease(sb_shared->lock);
}

bool
sbx_shmem_is_registered(SbJobKind kind, int64 id)
{
	bool		registered;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	registered = holds(kind, id) && sb_shared->registered;
	LWLockRelease(sb_shared->lock);
	return registered;
}

pid_t
sbx_shmem_worker_pid(SbJobKind kind, int64 id)
{
	pid_t		pid = 0;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	if (holds(kind, id))
		pid = sb_shared->worker_pid;
	LWLockRelease(sb_shared->lock);
	return pid;
}

bool
sbx_shmem_job_end(SbJobKind kind, int64 id, SbJobEnd *end)
{
	bool		found;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	found = sb_shared->last_kind == kind && sb_shared->last_id == id &&
		sb_shared->last_end.status[0] != '\0';
	if (found)
		*end = sb_shared->last_end;
	LWLockRelease(sb_shared->lock);
	return found;
}

bool
sbx_shmem_is_running(SbJobKind kind, int64 id)
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
sbx_shmem_backup_in_use(int64 backup_id)
{
	bool		busy;

	if (sb_shared == NULL)
		return false;
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	busy = sb_shared->state != SB_SLOT_IDLE && !claim_is_stale() &&
		sb_shared->job.backup_in_use == backup_id;
	LWLockRelease(sb_shared->lock);
	return busy;
}

bool
sbx_shmem_request_cancel(SbJobKind kind, int64 id, const char *reason)
{
	bool		found;
	pid_t		worker = 0;

	sbx_shmem_require();
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	found = holds(kind, id);
	if (found && !sb_shared->cancel_requested)
	{
		strlcpy(sb_shared->cancel_reason, reason, sizeof(sb_shared->cancel_reason));
		sb_shared->cancel_requested = true;
		worker = sb_shared->worker_pid;
		if (sb_shared->worker_latch != NULL)
			SetLatch(sb_shared->worker_latch);
	}
	LWLockRelease(sb_shared->lock);
	/* Ends PostgreSQL's own waits too, such as a spread start checkpoint. */
	if (worker > 0 && BackendPidGetProc(worker) != NULL)
		(void) kill(worker, SIGINT);
	return found;
}

void
sbx_shmem_live_snapshot(SbLiveSnapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (sb_shared == NULL)
		return;
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	snap->running = sb_shared->state == SB_SLOT_RUNNING && !claim_is_stale();
	snap->kind = sb_shared->job.kind;
	snap->id = sb_shared->job.id;
	snap->live = sb_shared->live;
	LWLockRelease(sb_shared->lock);
}

bool
sbx_shmem_attach(int64 id, SbJob *job)
{
	bool		ours;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	ours = sb_shared->state == SB_SLOT_STARTING && sb_shared->job.id == id;
	if (ours)
	{
		*job = sb_shared->job;
		sb_shared->state = SB_SLOT_RUNNING;
		sb_shared->worker_pid = MyProcPid;
		sb_shared->worker_latch = MyLatch;
	}
	LWLockRelease(sb_shared->lock);
	return ours;
}

void
sbx_shmem_mark_registered(void)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->registered = true;
	if (sb_shared->requester_latch != NULL)
		SetLatch(sb_shared->requester_latch);
	LWLockRelease(sb_shared->lock);
}

bool
sbx_shmem_cancel_requested(char *reason, size_t len)
{
	bool		requested;

	LWLockAcquire(sb_shared->lock, LW_SHARED);
	requested = sb_shared->cancel_requested;
	if (requested && reason != NULL)
		strlcpy(reason, sb_shared->cancel_reason, len);
	LWLockRelease(sb_shared->lock);
	return requested;
}

void
sbx_shmem_finish(const SbJob *job, const SbJobEnd *end)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->last_kind = job->kind;
	sb_shared->last_id = job->id;
	sb_shared->last_end = *end;
	if (sb_shared->requester_latch != NULL)
		SetLatch(sb_shared->requester_latch);
	LWLockRelease(sb_shared->lock);
	sbx_shmem_release(job->kind, job->id);
}

void
sbx_shmem_progress_begin(int nstripes, const char *const *locations, const uint64 *totals,
						uint64 total)
{
	int			i;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	sb_shared->live.nstripes = nstripes;
	sb_shared->live.bytes_total = total;
	sb_shared->live.elapsed = 0;
	for (i = 0; i < nstripes; i++)
	{
		SbStripeLive *l = &sb_shared->live.stripes[i];

		memset(l, 0, sizeof(*l));
		strlcpy(l->location, locations[i], sizeof(l->location));
		l->total = totals[i];
	}
	LWLockRelease(sb_shared->lock);
}

void
sbx_shmem_set_phase(const char *phase)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	strlcpy(sb_shared->live.phase, phase, SB_PHASE_LEN);
	LWLockRelease(sb_shared->lock);
}

/* Keep a sample about every second, the last few, for the recent rate. */
static void
sample(SbStripeLive *l, double now)
{
	int			last = l->nsamples - 1;

	if (l->nsamples > 0 && now - l->sample_time[last % SB_PROGRESS_SAMPLES] < 1.0)
		return;
	l->sample_time[l->nsamples % SB_PROGRESS_SAMPLES] = now;
	l->sample_done[l->nsamples % SB_PROGRESS_SAMPLES] = l->done;
	l->sample_stored[l->nsamples % SB_PROGRESS_SAMPLES] = l->stored;
	l->nsamples++;
}

void
sbx_shmem_progress_update(const SbProgress *p)
{
	SbLive	   *live = &sb_shared->live;
	uint32_t	i;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	live->bytes_done = p->raw_bytes_done;
	live->files_done = p->files_done;
	live->elapsed = p->elapsed_seconds;
	live->updated_at = GetCurrentTimestamp();
	for (i = 0; i < p->nstripes && i < (uint32_t) live->nstripes; i++)
	{
		SbStripeLive *l = &live->stripes[i];

		l->done = p->stripes[i].raw_bytes;
		l->stored = p->stripes[i].stored_bytes;
		l->in_flight = p->stripes[i].in_flight;
		l->busy_seconds = p->stripes[i].busy_seconds;
		sample(l, p->elapsed_seconds);
	}
	LWLockRelease(sb_shared->lock);
}

/* Count FILE into destination D's figures. */
static void
count_into(SbArchiveDestLive *d, const char *file, uint64 raw, uint64 stored, TimestampTz now)
{
	d->files++;
	d->bytes += raw;
	d->stored_bytes += stored;
	strlcpy(d->last_file, file, sizeof(d->last_file));
	d->last_time = now;
}

void
sbx_shmem_archive_destinations(int n, const char (*paths)[MAXPGPATH])
{
	SbArchiveLive *a;
	int			i;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	a = &sb_shared->archive;
	for (i = 0; i < n && i < a->ndests && strcmp(a->dests[i].path, paths[i]) == 0; i++)
		;
	if (i < n || n != a->ndests)
	{
		memset(a->dests, 0, sizeof(a->dests));
		for (i = 0; i < n; i++)
			strlcpy(a->dests[i].path, paths[i], MAXPGPATH);
		a->ndests = n;
	}
	LWLockRelease(sb_shared->lock);
}

void
sbx_shmem_archive_done(const char *file, uint64 dests, uint64 raw, uint64 stored, uint64 end_lsn)
{
	TimestampTz now = GetCurrentTimestamp();
	SbArchiveLive *a;
	int			i;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	a = &sb_shared->archive;
	if (a->started_at == 0)
		a->started_at = now;
	for (i = 0; i < a->ndests; i++)
		if (dests & ((uint64) 1 << i))
			count_into(&a->dests[i], file, raw, stored, now);
	strlcpy(a->last_file, file, sizeof(a->last_file));
	a->last_time = now;
	if (end_lsn > a->last_end_lsn)
		a->last_end_lsn = end_lsn;
	LWLockRelease(sb_shared->lock);
}

void
sbx_shmem_archive_dest_failed(int dest, const char *error)
{
	SbArchiveLive *a;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	a = &sb_shared->archive;
	if (dest >= 0 && dest < a->ndests)
	{
		a->dests[dest].failures++;
		strlcpy(a->dests[dest].last_error, error, sizeof(a->dests[dest].last_error));
	}
	LWLockRelease(sb_shared->lock);
}

void
sbx_shmem_archive_failed(const char *file, const char *error)
{
	SbArchiveLive *a;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	a = &sb_shared->archive;
	a->failures++;
	strlcpy(a->last_failed_file, file, sizeof(a->last_failed_file));
	a->last_failed_time = GetCurrentTimestamp();
	strlcpy(a->last_error, error, sizeof(a->last_error));
	LWLockRelease(sb_shared->lock);
}

void
sbx_shmem_archive_snapshot(SbArchiveLive *live)
{
	memset(live, 0, sizeof(*live));
	if (sb_shared == NULL)
		return;
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	*live = sb_shared->archive;
	LWLockRelease(sb_shared->lock);
}

int64
sbx_shmem_next_standby_id(int64 floor)
{
	int64		id;

	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	id = Max(floor, sb_shared->last_standby_id + 1);
	sb_shared->last_standby_id = id;
	LWLockRelease(sb_shared->lock);
	return id;
}
