/*
 * sb_shmem.h
 *		Shared state of the one job (backup or restore) this server runs at a
 *		time: the job and who asked for it, the worker running it, a cancel
 *		request, its live progress, and how the last job ended.
 */
#ifndef SB_SHMEM_H
#define SB_SHMEM_H

#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_progress.h"
#include "sb_job.h"

typedef enum SbSlotState
{
	SB_SLOT_IDLE = 0,			/* nothing runs; a job may start */
	SB_SLOT_STARTING,			/* claimed by a caller, worker not yet running */
	SB_SLOT_RUNNING				/* the worker runs it */
} SbSlotState;

#define SB_PROGRESS_SAMPLES 8
#define SB_PHASE_LEN 32

/* What one stripe of the running job has done so far. */
typedef struct SbStripeLive
{
	char		location[MAXPGPATH];	/* destination, or stripe file (restore) */
	uint64		total;			/* raw bytes it is expected to move; 0 unknown */
	uint64		done;			/* raw bytes moved */
	uint64		stored;			/* bytes on its device */
	uint32		in_flight;		/* transfers queued to its device now */
	double		busy_seconds;	/* its writer's (reader's) time with I/O in flight */
	/* about one sample a second, for the recent rate */
	double		sample_time[SB_PROGRESS_SAMPLES];
	uint64		sample_done[SB_PROGRESS_SAMPLES];
	uint64		sample_stored[SB_PROGRESS_SAMPLES];
	int			nsamples;
} SbStripeLive;

/* The running job's progress, written by its worker about every 100 ms. */
typedef struct SbLive
{
	char		phase[SB_PHASE_LEN];
	uint64		bytes_done;
	uint64		bytes_total;	/* 0 when unknown */
	uint64		files_done;
	double		elapsed;		/* seconds since the job's pipeline began */
	TimestampTz updated_at;
	int			nstripes;
	SbStripeLive stripes[SB_MAX_STRIPES];
} SbLive;

/* The running job as stripebackup_progress() sees it. */
typedef struct SbLiveSnapshot
{
	bool		running;
	SbJobKind	kind;
	int64		id;
	SbLive		live;
} SbLiveSnapshot;

/* Who holds the slot, for the error a second caller gets. */
typedef struct SbSlotHolder
{
	SbJobKind	kind;
	int64		id;
	char		requested_by[NAMEDATALEN];
	TimestampTz since;
} SbSlotHolder;

#define SB_WAL_FILE_LEN 64

/* What the WAL archive module archived into one destination since the server started. */
typedef struct SbArchiveDestLive
{
	char		path[MAXPGPATH];
	uint64		files;
	uint64		bytes;			/* the WAL files' own bytes */
	uint64		stored_bytes;	/* as stored, compressed */
	char		last_file[SB_WAL_FILE_LEN];
	TimestampTz last_time;
	uint64		failures;		/* files it failed (archive_redundancy: done without) */
	char		last_error[SB_MESSAGE_LEN];	/* why, the last time */
} SbArchiveDestLive;

/* The WAL archive module's figures since the server started. */
typedef struct SbArchiveLive
{
	TimestampTz started_at;		/* its first file */
	int			ndests;
	SbArchiveDestLive dests[SB_MAX_STRIPES];
	char		last_file[SB_WAL_FILE_LEN];
	TimestampTz last_time;
	uint64		last_end_lsn;	/* end of the newest segment archived */
	uint64		failures;
	char		last_failed_file[SB_WAL_FILE_LEN];
	TimestampTz last_failed_time;
	char		last_error[SB_MESSAGE_LEN];
} SbArchiveLive;

/* Ask for the shared memory and lock (from _PG_init). */
extern void sbx_shmem_request(void);

/* ERROR unless the library was preloaded (so the shared state exists). */
extern void sbx_shmem_require(void);

/* Whether it was (stripe_check() says so instead of failing). */
extern bool sbx_shmem_loaded(void);

/* ---------- the calling session ---------- */

/* Claim the one job slot for JOB; false (and who holds it) if taken. */
extern bool sbx_shmem_claim(const SbJob *job, SbSlotHolder *holder);

/* Give the slot back (a worker that could not start, or one that ended). */
extern void sbx_shmem_release(SbJobKind kind, int64 id);

/* Has the worker of job ID of KIND written its history row? */
extern bool sbx_shmem_is_registered(SbJobKind kind, int64 id);

/* The pid of job ID's worker, or 0 when it has none (yet). */
extern pid_t sbx_shmem_worker_pid(SbJobKind kind, int64 id);

/* How job ID of KIND ended; false if its worker recorded nothing. */
extern bool sbx_shmem_job_end(SbJobKind kind, int64 id, SbJobEnd *end);

/* Is job ID of KIND running now? */
extern bool sbx_shmem_is_running(SbJobKind kind, int64 id);

/* Is backup ID being written, or read by a running restore? */
extern bool sbx_shmem_backup_in_use(int64 backup_id);

/*
 * Ask job ID of KIND to stop, saying why: the worker's own checks see the
 * flag, and a query cancel (SIGINT) ends whatever PostgreSQL code it waits
 * in.  False if that job is not running.
 */
extern bool sbx_shmem_request_cancel(SbJobKind kind, int64 id, const char *reason);

/* The running job and its progress (none running: RUNNING false). */
extern void sbx_shmem_live_snapshot(SbLiveSnapshot *snap);

/* ---------- the worker ---------- */

/* Take job ID's arguments into JOB and mark it running; false if not ours. */
extern bool sbx_shmem_attach(int64 id, SbJob *job);

/* The history row is written: a caller with wait => false may return. */
extern void sbx_shmem_mark_registered(void);

/* Has someone asked the running job to stop?  Its reason, if so. */
extern bool sbx_shmem_cancel_requested(char *reason, size_t len);

/* Record how the job ended, wake its caller and release the slot. */
extern void sbx_shmem_finish(const SbJob *job, const SbJobEnd *end);

/* The job's stripes: where each is, and the raw bytes each should move (0 unknown). */
extern void sbx_shmem_progress_begin(int nstripes, const char *const *locations,
									const uint64 *totals, uint64 total);

extern void sbx_shmem_set_phase(const char *phase);

/* The engine's latest figures. */
extern void sbx_shmem_progress_update(const SbProgress *progress);

/* ---------- the WAL archive module (in the archiver) ---------- */

/* The destinations archived to now; their figures start anew if they changed. */
extern void sbx_shmem_archive_destinations(int n, const char (*paths)[MAXPGPATH]);

/*
 * FILE is archived: into the destinations of DESTS (bit i: destination i);
 * RAW and STORED bytes; END_LSN the end of the segment it is (0 otherwise).
 */
extern void sbx_shmem_archive_done(const char *file, uint64 dests, uint64 raw, uint64 stored,
								  uint64 end_lsn);

/* Destination DEST (0-based) failed FILE, for the reason ERROR (the file may still be archived elsewhere). */
extern void sbx_shmem_archive_dest_failed(int dest, const char *error);

/* FILE could not be archived, for the reason ERROR. */
extern void sbx_shmem_archive_failed(const char *file, const char *error);

/* A copy of the figures. */
extern void sbx_shmem_archive_snapshot(SbArchiveLive *live);

/* An id not below FLOOR and above every one given before (backups on a standby). */
extern int64 sbx_shmem_next_standby_id(int64 floor);

#endif							/* SB_SHMEM_H */
