/*
 * sb_job.h
 *		A job kind (backup, restore, ...) behind one interface.
 *
 * The job machinery (sb_launch.c in the calling session, sb_worker.c in the
 * background worker, sb_startup.c after a crash) knows this table and not
 * the kinds: a new kind is a new job_<kind>.c filling an SbJobOps, one
 * value below and one line in sb_jobs.c.
 */
#ifndef SB_JOB_H
#define SB_JOB_H

#include "datatype/timestamp.h"

typedef enum SbJobKind
{
	SB_JOB_BACKUP,
	SB_JOB_RESTORE,
	SB_JOB_NKINDS
} SbJobKind;

/* Room for the largest kind's arguments (64 destination paths, a restore's mappings and archive). */
#define SB_JOB_ARGS_SIZE (128 * 1024)

/*
 * A job as the caller hands it to its worker through shared memory: what
 * the machinery reads, then the kind's own arguments.
 */
typedef struct SbJob
{
	SbJobKind	kind;
	int64		id;
	Oid			database;
	char		requested_by[NAMEDATALEN];
	int64		backup_in_use;	/* the backup it writes or reads; 0 if none */
	union
	{
		char		data[SB_JOB_ARGS_SIZE];
		double		align;
	}			args;
} SbJob;

/* The kind's arguments, checked to fit: SB_JOB_ARGS(job, SbBackupArgs). */
#define SB_JOB_ARGS(job, type) \
	(StaticAssertExpr(sizeof(type) <= SB_JOB_ARGS_SIZE, "job arguments too large"), \
	 (type *) (job)->args.data)

#define SB_STATUS_LEN 16
#define SB_MESSAGE_LEN 1024
#define SB_HINT_LEN 512

/* How a job ended, with the error that ended it (empty when completed). */
typedef struct SbJobEnd
{
	char		status[SB_STATUS_LEN];	/* completed, failed, cancelled */
	int			sqlstate;
	char		message[SB_MESSAGE_LEN];
	char		detail[SB_MESSAGE_LEN];
	char		hint[SB_HINT_LEN];
} SbJobEnd;

/* Why a stop request stops the job, when the kind knows better (sb_control.h). */
typedef const char *(*SbStopReasonFn) (const SbJob *job, int *sqlstate);

typedef struct SbJobOps
{
	const char *name;			/* "backup": in messages, views, worker names */
	const char *id_sequence;	/* the extension's sequence of its ids */
	const char *cancel_function;	/* "stripe_cancel(%lld)", for hints */
	Size		outcome_size;	/* what run() fills in, as far as it gets */

	/* The history row, status 'running', in a transaction of its own. */
	void		(*history_insert) (const SbJob *job);
	/* Do the work (the worker's main thread); ERROR if it fails. */
	void		(*run) (const SbJob *job, void *outcome);
	/* The row's end and what the job produced, in a transaction of its own. */
	void		(*history_finish) (const SbJob *job, const SbJobEnd *end, const void *outcome);
	/* Optional: a stop reason more precise than "cancelled". */
	SbStopReasonFn stop_reason;
	/* At server start: rows left running by a crash, and what they left. */
	void		(*crash_cleanup) (void);
} SbJobOps;

/* The operations of KIND. */
extern const SbJobOps *sbx_job_ops(SbJobKind kind);

/* The kind called NAME ("backup"); false if there is none. */
extern bool sbx_job_kind_by_name(const char *name, SbJobKind *kind);

#endif							/* SB_JOB_H */
