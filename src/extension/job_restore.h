/*
 * job_restore.h
 *		The restore job: a restore into a directory while the server runs, in
 *		a worker (job_restore.c), and its history rows and the estimates of
 *		restore plans (job_restore_history.c).
 */
#ifndef JOB_RESTORE_H
#define JOB_RESTORE_H

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_pgmeta.h"
#include "stripebackup/sb_pgrecovery.h"
#include "sb_handle.h"
#include "sb_job.h"

#define SB_MAX_MAPPINGS 16
#define SB_MAPPING_LEN (2 * MAXPGPATH)
#define SB_RECOVERY_VALUE_LEN 128
#define SB_RECOVERY_WORD_LEN 16

/* What stripe_restore() asks for, checked in the caller. */
typedef struct SbRestoreArgs
{
	int64		backup_id;		/* 0 when restoring from a location */
	char		encryption_key_file[MAXPGPATH];	/* the caller's: opens an encrypted backup */
	char		location[MAXPGPATH];
	char		target[MAXPGPATH];
	int			nmappings;
	char		mappings[SB_MAX_MAPPINGS][SB_MAPPING_LEN];	/* "OLD=NEW" */
	int			buffer_count;
	int			workers;
	SbIoMethod	io_method;
	int			queue_depth;
	double		max_rates[SB_MAX_STRIPES];
	uint64		max_memory;
	/* point-in-time recovery: NONE restores to the end of the backup, as without an archive */
	SbRecoveryKind recovery_kind;
	char		recovery_value[SB_RECOVERY_VALUE_LEN];
	int64		recovery_time;	/* a TimestampTz: a time target, as recovery reads it: for placing it on a timeline */
	bool		recovery_inclusive;
	char		recovery_timeline[SB_RECOVERY_WORD_LEN];
	char		recovery_action[SB_RECOVERY_WORD_LEN];
	SbArchiveMode archive_mode; /* the copy's archiving: archive_mode => 'off' or 'keep' */
	char		program[MAXPGPATH];	/* the stripebackup command, for restore_command */
	uint64		system_identifier;
	int			narchive;		/* the WAL archive's destinations */
	char		archive[SB_MAX_STRIPES][MAXPGPATH];
	/* a standby: follows its primary (no recovery target) */
	bool		standby;
	char		primary_conninfo[SB_CONNINFO_MAX + 1];	/* "" for none */
	char		primary_slot_name[NAMEDATALEN]; /* "" for none */
	bool		delta;			/* the target may hold a stopped copy: rewrite what differs */
	bool		allow_unencrypted;	/* from a location, under a key: a backup in the clear too */
	SbArchiveExpect expect;		/* by id: what the history row records (no folders) */
} SbRestoreArgs;

/* What a restore measured, as far as it got. */
typedef struct SbRestoreOutcome
{
	bool		planned;
	SbPlan		plan;			/* with the estimates it started from; a chain's
								 * links' reads added in */
	uint64_t	bytes_to_write; /* the files' bytes (a chain's links overlap) */
	char		destinations[SB_MAX_STRIPES][MAXPGPATH];
	bool		completed;
	SbRestoreStats stats;
} SbRestoreOutcome;

extern const SbJobOps sb_restore_job;

/* What a delta restore writes last: a copy it cut short cannot start without it. */
#define SB_DELTA_GUARD "global/pg_control"

/* The words restore ID leaves in the directories it writes into while it runs. */
extern char *sbx_restore_marker(int64 id);

/*
 * The backup ARGS restore and what it must be: by id, as its history row
 * records it (ARGS->expect, kept by the caller); else the location, as the
 * caller allowed.
 */
extern SbBackupRef *sbx_restore_backup_ref(const SbRestoreArgs *args);

/* The PostgreSQL metadata of A's backup, freed with the current memory context. */
extern SbPgMeta *sbx_restore_read_pgmeta(const SbArchive *a);

/* The recovery target ARGS name, as the engine takes it (pointing into ARGS). */
extern void sbx_restore_recovery_target(const SbRestoreArgs *args, SbRecoveryTarget *t);

/*
 * Where the tablespaces of the backup described by META go: their original
 * locations, or where ARGS' mappings say.  ERROR on a mapping that names no
 * tablespace.  *N receives the number of relocations.
 */
extern SbRelocation *sbx_restore_relocations(const SbRestoreArgs *args, SbPgMeta *meta, uint32_t *n);

/* ---------- job_restore_history.c ---------- */

/* The read speed (stored MB/s) the latest restore measured for DESTINATION; 0 when none did. */
extern double sbx_restore_measured_speed(const char *destination);

/* The destination folder a stripe was read from (DEST of DEST/NAME/stripe-K.sbs). */
extern void sbx_restore_stripe_destination(const SbArchive *a, uint32_t stripe, char *buf,
										  size_t len);

/* Where and how a plan samples a restore (sb_restore_sample). */
typedef struct SbPlanSampling
{
	const char *dir;			/* a folder is made for the sample here */
	bool		sync_fs;		/* it is where the restore will write: its file
								 * system synced, as a restore ends */
	SbRestoreSample taken;		/* out: chunks 0 when none was taken; its cost
								 * of finishing (the final sync) -1 when a
								 * restore's was used instead */
} SbPlanSampling;

/*
 * The plan of A with estimates from the measured speed of each destination
 * in past restores, or stripe_calibrate's.  With SAMPLING, when a speed is a
 * calibration's, what the rest of a restore costs is measured on a sample of
 * A.  Needs a transaction.
 */
extern void sbx_restore_plan_with_history(const SbArchive *a, SbPlan *plan, SbPlanSampling *sampling);

/*
 * An older backup of a chain, planned with history: its totals added into
 * PLAN's (the fixed part, creating and finishing the files, is paid once).
 */
extern void sbx_restore_plan_add_link(SbPlan *plan, const SbPlan *older);

/*
 * A delta restore's time into TARGET (seconds; < 0 unknown), from PLAN
 * (with history, a chain's links added in) and E: the copy compared as fast
 * as the latest delta restore compared (into TARGET if one did), which
 * *COMPARE_MBPS returns (0: none did).  Needs a transaction.
 */
extern double sbx_restore_delta_seconds(const SbPlan *plan, const SbDeltaEstimate *e, bool chain,
									   const char *target, double *compare_mbps);

extern void sbx_restore_history_insert(const SbJob *job);

/* The directories restore JOB writes into, kept for the clean-up after a crash. */
extern void sbx_restore_history_directories(const SbJob *job, const char *const *dirs, int n);

extern void sbx_restore_history_finish(const SbJob *job, const SbJobEnd *end, const void *outcome);

/* Rows left running by a crash: marked failed. */
extern void sbx_restore_crash_cleanup(void);

#endif							/* JOB_RESTORE_H */
