/*
 * job_backup.h
 *		The backup job: an online backup of the whole cluster, in a worker
 *		(job_backup.c), and its history rows (job_backup_history.c).
 */
#ifndef JOB_BACKUP_H
#define JOB_BACKUP_H

#include "access/xlogdefs.h"
#include "utils/uuid.h"

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"
#include "sb_job.h"

#define SB_NAME_LEN 64
#define SB_LABEL_LEN 1024
#define SB_UUID_LEN 16

/* The name of backup ID's temporary WAL slot. */
#define SB_WAL_SLOT_FORMAT "stripebackup_%lld"

/* What stripe_backup() asks for, checked in the caller. */
typedef struct SbBackupArgs
{
	char		name[SB_NAME_LEN];	/* the backup folder in every destination */
	char		label[SB_LABEL_LEN];
	bool		has_label;
	uint8		uuid[SB_UUID_LEN];
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
	uint64		max_memory;
	/* a differential or incremental backup: the parent the caller chose */
	SbBackupType type;
	int64		parent_id;
	char		parent_location[MAXPGPATH];
	uint8		parent_uuid[SB_UUID_LEN];
	XLogRecPtr	parent_start_lsn;
	TimeLineID	parent_timeline;
	bool		skip_unchanged;	/* stripebackup.skip_unchanged_files */
} SbBackupArgs;

/* What a backup produced, as far as it got. */
typedef struct SbBackupOutcome
{
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
	SbManifest *manifest;		/* the engine's, on success */
} SbBackupOutcome;

extern const SbJobOps sb_backup_job;

/* Engine options for ARGS; DEST_PTRS must have room for SB_MAX_STRIPES. */
extern void sb_backup_args_to_options(const SbBackupArgs *args, SbBackupOptions *options,
									  const char **dest_ptrs);

/* ---------- job_backup_parent.c ---------- */

/*
 * In stripe_backup(): TYPE ("full", "diff" or "incr") into ARGS, with the
 * parent a diff or incr completes; a full backup instead, said in a
 * NOTICE, when there is none fit to be one.
 */
extern void sb_backup_choose_parent(SbBackupArgs *args, const char *type);

/*
 * In the worker, after the backup started at START_LSN: the parent the
 * caller chose, opened with its chain; ERROR if it changed or is not older.
 */
extern SbArchive *sb_backup_open_parent(const SbBackupArgs *args, XLogRecPtr start_lsn);

/* ---------- job_backup_history.c ---------- */

extern void sb_backup_history_insert(const SbJob *job);
extern void sb_backup_history_finish(const SbJob *job, const SbJobEnd *end, const void *outcome);

/* Rows left running by a crash: marked failed, their partial folders removed. */
extern void sb_backup_crash_cleanup(void);

/*
 * The backup folder of completed backup ID in the first destination that
 * still holds its manifest (caller's session); ERROR if there is none.
 */
extern char *sb_backup_location(int64 backup_id);

/* ---------- job_backup_folders.c ---------- */

/* What removing a backup's folders did. */
typedef struct SbBackupRemoval
{
	int64		files;
	int64		bytes;
	bool		removed;		/* every folder is gone (or never was) */
} SbBackupRemoval;

/*
 * Remove backup NAME (UUID) from each of DESTINATIONS (a text[]): only the
 * files it wrote, from every destination or from none.  What keeps it is
 * said at ELEVEL (WARNING, or LOG in a worker).
 */
extern SbBackupRemoval sb_backup_remove_folders(const char *name, Datum destinations,
												const pg_uuid_t *uuid, int elevel);

#endif							/* JOB_BACKUP_H */
