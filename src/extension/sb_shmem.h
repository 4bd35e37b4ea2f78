/*
 * sb_shmem.h
 *		Shared state of the one backup this server may run at a time: who
 *		asked for it, its arguments, the worker running it, a cancel flag, and
 *		its progress.
 */
#ifndef SB_SHMEM_H
#define SB_SHMEM_H

#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/timestamp.h"

#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_manifest.h"

#define SB_NAME_LEN 64
#define SB_LABEL_LEN 1024
#define SB_ERROR_LEN 1024
#define SB_MAX_MAPPINGS 16

typedef enum SbJobKind
{
	SB_JOB_BACKUP,
	SB_JOB_RESTORE
} SbJobKind;

typedef enum SbJobState
{
	SB_JOB_IDLE = 0,			/* nothing runs; a backup may start */
	SB_JOB_STARTING,			/* claimed by a caller, worker not yet running */
	SB_JOB_RUNNING				/* the worker runs it */
} SbJobState;

/* What the caller asks the worker to do. */
typedef struct SbJobArgs
{
	SbJobKind	kind;
	int64		id;
	Oid			database;
	char		requested_by[NAMEDATALEN];
	/* a backup's */
	char		name[SB_NAME_LEN];
	char		label[SB_LABEL_LEN];
	bool		has_label;
	int			ndestinations;
	char		destinations[SB_MAX_STRIPES][MAXPGPATH];
	double		weights[SB_MAX_STRIPES];
	SbCodec		codec;
	int			level;
	SbBalance	balance;
	int			buffer_count;
	int			chunk_size;
	int			workers;
	bool		fast_checkpoint;
	SbIoMethod	io_method;
	int			queue_depth;
	bool		direct_io;
	double		max_rates[SB_MAX_STRIPES];
	/* a restore's */
	int64		backup_id;		/* 0 when restoring from a location */
	char		location[MAXPGPATH];
	char		target[MAXPGPATH];
	int			nmappings;
	char		mappings[SB_MAX_MAPPINGS][2 * MAXPGPATH];	/* "OLD=NEW" */
} SbJobArgs;

#define SB_PROGRESS_SAMPLES 8

/* What one stripe of the running job has done so far. */
typedef struct SbStripeLive
{
	char		location[MAXPGPATH];	/* destination, or stripe folder (restore) */
	uint64		total;			/* raw bytes it is expected to move; 0 unknown */
	uint64		done;			/* raw bytes moved */
	uint64		stored;			/* bytes on its device */
	uint32		in_flight;		/* transfers queued to its device now */
	/* about one sample a second, for the recent rate */
	double		sample_time[SB_PROGRESS_SAMPLES];
	uint64		sample_done[SB_PROGRESS_SAMPLES];
	int			nsamples;
} SbStripeLive;

typedef struct SbShared
{
	LWLock	   *lock;
	SbJobState	state;
	SbJobArgs	args;
	pid_t		requester_pid;
	pid_t		worker_pid;
	Latch	   *worker_latch;
	Latch	   *requester_latch;
	bool		cancel_requested;
	char		cancel_reason[128];
	bool		registered;		/* the worker has written the history row */
	TimestampTz started_at;
	/* how the last job ended, written by its worker as it exits */
	SbJobKind	last_kind;
	int64		last_id;
	char		last_status[16];
	char		last_error[SB_ERROR_LEN];
	/* progress, written by the worker about every 100 ms */
	char		phase[32];
	uint64		bytes_done;
	uint64		bytes_total;	/* 0 when unknown */
	uint64		files_done;
	double		progress_started;	/* monotonic seconds */
	TimestampTz updated_at;
	int			nstripes;
	SbStripeLive stripes[SB_MAX_STRIPES];
} SbShared;

extern SbShared *sb_shared;

/* Ask for the shared memory and lock (from _PG_init). */
extern void sb_shmem_request(void);

/* "backup" or "restore" */
extern const char *sb_job_kind_name(SbJobKind kind);

/* Claim the one job slot for ARGS; ERROR if a backup or restore runs already. */
extern void sb_shmem_claim(const SbJobArgs *args);

/* Give the slot back (a worker that could not start, or one that ended). */
extern void sb_shmem_release(SbJobKind kind, int64 id);

/* Record how a job ended ("completed", "failed", "cancelled") and release the slot. */
extern void sb_shmem_finish(SbJobKind kind, int64 id, const char *status, const char *error);

/* The job's stripes: where each is, and the raw bytes each should move (0 unknown). */
extern void sb_shmem_progress_begin(int nstripes, const char *const *locations,
									const uint64 *totals, uint64 total);

/* Is job ID of KIND running now? */
extern bool sb_shmem_is_running(SbJobKind kind, int64 id);

/* Ask job ID of KIND to stop, saying why; false if it is not running. */
extern bool sb_shmem_request_cancel(SbJobKind kind, int64 id, const char *reason);

#endif							/* SB_SHMEM_H */
