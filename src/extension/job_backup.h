/*
 * job_backup.h
 *		The backup job: an online backup of the whole cluster, in a worker
 *		(job_backup.c), and its history rows (job_backup_history.c).
 */
#ifndef JOB_BACKUP_H
#define JOB_BACKUP_H

#include "access/xlogdefs.h"
#include "datatype/timestamp.h"
#include "lib/stringinfo.h"
#include "utils/uuid.h"

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"
#include "sb_handle.h"
#include "sb_job.h"

#define SB_NAME_LEN 64
#define SB_LABEL_LEN 1024
#define SB_UUID_LEN 16

/* The name of backup ID's temporary WAL slot. */
#define SB_WAL_SLOT_FORMAT "stripebackup_%lld"

/*
 * A merge's source: the newest backup of a chain, as the history records
 * it (a merge is a backup job whose files come from that chain).
 */
typedef struct SbMergeSource
{
	int64		id;				/* 0: a backup of the server */
	char		name[SB_NAME_LEN];
	char		location[MAXPGPATH];
	uint8		uuid[SB_UUID_LEN];
	SbArchiveExpect expect;		/* what its history row records (no folders) */
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
} SbMergeSource;

/* What stripe_backup() (or stripe_merge()) asks for, checked in the caller. */
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
	int			frame_size;		/* stripebackup.frame_size, in bytes */
	int			workers;
	bool		fast_checkpoint;
	SbIoMethod	io_method;
	int			queue_depth;
	bool		direct_io;
	double		max_rates[SB_MAX_STRIPES];
	uint64		max_memory;
	char		encryption_key_file[MAXPGPATH];	/* the caller's; empty: in the clear */
	int			redundancy;		/* destinations that may be lost; 0: none */
	/* a differential or incremental backup: the parent the caller chose */
	SbBackupType type;
	int64		parent_id;
	char		parent_location[MAXPGPATH];
	uint8		parent_uuid[SB_UUID_LEN];
	SbArchiveExpect parent_expect;	/* what its history row records (no folders) */
	XLogRecPtr	parent_start_lsn;
	TimeLineID	parent_timeline;
	bool		skip_unchanged;	/* stripebackup.skip_unchanged_files */
	bool		use_summaries;	/* stripebackup.use_wal_summaries */
	SbMergeSource merge;		/* stripe_merge(): the chain it folds */
} SbBackupArgs;

/* What a backup produced, as far as it got. */
typedef struct SbBackupOutcome
{
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
	const char *incremental_method; /* a diff or incr: "wal_summaries" or
									 * "page_lsn"; NULL for a full backup */
	SbManifest *manifest;		/* the engine's, on success */
} SbBackupOutcome;

extern const SbJobOps sb_backup_job;

/* The bytes a backup's stripes hold, as its history row counts them. */
extern int64 sbx_backup_bytes_written(const SbManifest *m);

/* ---------- job_backup_wal.c ---------- */

/*
 * On a standby: WAL segment FNAME (number SEGNO) of a backup that ends at
 * STOP, from the WAL archive when pg_wal does not hold it as far as needed,
 * into a private file (its path, for the caller to unlink once copied);
 * NULL when pg_wal holds it.  ERROR when neither does.
 */
extern char *sbx_backup_standby_wal(const char *fname, XLogSegNo segno, XLogRecPtr stop);

/* ---------- job_backup_record.c ---------- */

/* A backup's history row as JSON: as asked (END NULL: running), or as it ended. */
extern StringInfo sbx_backup_record(const SbJob *job, TimestampTz started_at, const SbJobEnd *end,
									const SbBackupOutcome *outcome);

/* Engine options for ARGS; DEST_PTRS must have room for SB_MAX_STRIPES. */
extern void sbx_backup_args_to_options(const SbBackupArgs *args, SbBackupOptions *options,
									  const char **dest_ptrs);

/* ---------- job_backup_parent.c ---------- */

/*
 * In stripe_backup(): TYPE ("full", "diff" or "incr") into ARGS, with the
 * parent a diff or incr completes; a full backup instead, said in a
 * NOTICE, when there is none fit to be one.
 */
extern void sbx_backup_choose_parent(SbBackupArgs *args, const char *type);

/*
 * In the worker, after the backup started at START_LSN: the parent the
 * caller chose, opened with its chain; ERROR if it changed or is not older.
 */
extern SbArchive *sbx_backup_open_parent(const SbBackupArgs *args, XLogRecPtr start_lsn);

/* ---------- job_merge.c ---------- */

/*
 * In stripe_merge(): backup ID, which must be a completed diff or incr
 * whose chain opens whole, into ARGS->merge, and its destinations into
 * ARGS (the default for the merged backup's).
 */
extern void sbx_merge_choose_source(SbBackupArgs *args, int64 id);

/* The worker's part: the chain restored into a scratch folder, written again as a full backup. */
extern void sbx_merge_run(const SbJob *job, SbBackupOutcome *outcome);

/* The scratch folder of the merge writing backup NAME whose first destination is DEST. */
extern char *sbx_merge_staging(const char *dest, const char *name);

/* ---------- job_backup_history.c ---------- */

extern void sbx_backup_history_insert(const SbJob *job);
extern void sbx_backup_history_finish(const SbJob *job, const SbJobEnd *end, const void *outcome);

/* Rows left running by a crash: marked failed, their partial folders removed. */
extern void sbx_backup_crash_cleanup(void);

/*
 * A stripe of backup ID that stripe_rebuild() wrote again elsewhere: the
 * history records its new destination, the manifest (which does not
 * change) the old one.  Each stripe of A lost where its manifest says is
 * read from its recorded destination instead, where that differs.
 */
extern void sbx_backup_apply_recorded_stripes(SbArchive *a, int64 backup_id);

/*
 * Completed backup ID as its history row records it: its folder in the
 * first destination that still holds a manifest, and what it must be (its
 * uuid, encrypted or not, its other folders to try), so that no other
 * backup put under its names is taken for it.  In a session or a worker
 * (a transaction of its own if none is open); ERROR if there is no such
 * backup, or no destination holds a manifest of it.
 */
extern SbBackupRef *sbx_backup_recorded(int64 backup_id);

/*
 * The same, its location NULL instead of an ERROR when no destination holds
 * a manifest of it; *FAILURE says why when a destination could not tell
 * (a bucket that refuses us), else is SB_OK.
 */
extern SbBackupRef *sbx_backup_find_recorded(int64 backup_id, SbError *failure);

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
 * said at ELEVEL (WARNING, or LOG in a worker).  COMPLETED: the backup
 * completed (a bucket that no longer exists keeps it, as a missing
 * destination does); one that did not is not kept for a missing bucket,
 * which holds nothing of it.
 */
extern SbBackupRemoval sbx_backup_remove_folders(const char *name, Datum destinations, bool completed,
												const pg_uuid_t *uuid, int elevel);

#endif							/* JOB_BACKUP_H */
