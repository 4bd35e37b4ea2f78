/*
 * sb_pgrecovery.h
 *		What a point-in-time restore writes so that PostgreSQL recovers to the
 *		target with no further step: recovery.signal, and in
 *		postgresql.auto.conf a restore_command that fetches WAL from the
 *		archive (stripebackup wal-get) and the recovery_target_* settings.
 *		Shared by the command and the extension; no PostgreSQL code.
 */
#ifndef SB_PGRECOVERY_H
#define SB_PGRECOVERY_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_error.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_wal.h"

typedef enum SbRecoveryKind
{
	SB_RECOVERY_NONE,			/* no archive: to the end of the backup, as without PITR */
	SB_RECOVERY_TIME,			/* recovery_target_time */
	SB_RECOVERY_LSN,			/* recovery_target_lsn */
	SB_RECOVERY_XID,			/* recovery_target_xid */
	SB_RECOVERY_NAME,			/* recovery_target_name (pg_create_restore_point) */
	SB_RECOVERY_IMMEDIATE,		/* recovery_target = 'immediate': consistent, then stop */
	SB_RECOVERY_LATEST			/* every WAL file the archive holds */
} SbRecoveryKind;

/*
 * Whether the restored copy archives WAL as its source did.  A copy
 * restored to a target (a test, a repair) that archives writes its new
 * timeline into the source's archive, where later restores with
 * recovery_target_timeline 'latest' follow it: by default such a copy
 * gets archive_mode = off.  A standby, and a restore to the end of the
 * archive (the copy replaces its source), keep the source's archiving.
 */
typedef enum SbArchiveMode
{
	SB_ARCHIVE_MODE_DEFAULT,	/* off with a recovery target, else keep */
	SB_ARCHIVE_MODE_OFF,		/* archive_mode = off in postgresql.auto.conf */
	SB_ARCHIVE_MODE_KEEP		/* the source's settings, untouched */
} SbArchiveMode;

typedef struct SbRecoveryTarget
{
	SbRecoveryKind kind;
	const char *value;			/* time ("2026-11-30 14:05:00+00"), LSN ("0/5A0003B8"),
								 * xid (decimal) or name; NULL for the others */
	bool		inclusive;		/* stop just after the target (true) or just before */
	const char *timeline;		/* "latest", "current", or a number; NULL: none given,
								 * PostgreSQL's latest unless sb_recovery_check_wal
								 * chooses the timeline that holds the target */
	const char *action;			/* "promote" (NULL), "pause" or "shutdown" */
	SbArchiveMode archive_mode; /* the copy's archiving */
	bool		has_time;		/* TIME below holds a time target's value: set by a
								 * caller that can read VALUE as PostgreSQL will (the
								 * server's timestamptz input, the command's zoned
								 * times); without it a time target is not placed on
								 * a timeline */
	int64_t		time;			/* microseconds since 2000-01-01 00:00 UTC */
} SbRecoveryTarget;

/* WAL segments restore_command fetches ahead of recovery, by default. */
#define SB_RECOVERY_PREFETCH 8

/* Where the archive is, for restore_command. */
typedef struct SbRecoveryArchive
{
	const char *program;		/* absolute path of the stripebackup command */
	const char *const *destinations;
	uint32_t	ndestinations;
	uint64_t	system_identifier;
	uint32_t	prefetch;		/* segments wal-get fetches ahead */
	uint32_t	redundancy;		/* the archive's copies (wal-get --redundancy): up to this
								 * many destinations missing still let it say "not
								 * in the archive"; 0: none may be */
	const char *key_file;		/* absolute path of the key the archive is sealed with
								 * (the path goes into restore_command, never the
								 * key); NULL: an archive in the clear */
	const SbS3Settings *s3;		/* how the archive's buckets are reached, given to
								 * restore_command as its environment; NULL: this
								 * process's environment alone */
} SbRecoveryArchive;

/*
 * A restore as a standby: standby.signal, and the settings with which it
 * follows its primary, streaming (primary_conninfo, primary_slot_name)
 * and from the archive when there is one (restore_command); it takes no
 * recovery target.
 */
typedef struct SbStandby
{
	bool		enabled;
	const char *primary_conninfo;	/* NULL: none (the archive only, or set later) */
	const char *primary_slot_name;	/* NULL: none */
} SbStandby;

/* Longest primary_conninfo a standby restore writes. */
#define SB_CONNINFO_MAX 1023

/* Are S's values what PostgreSQL accepts?  SB_EINVAL naming the bad one. */
extern bool sb_standby_check(const SbStandby *s, SbError *err);

/* "time", "lsn", ...: KIND's name, as messages and options say it. */
extern const char *sb_recovery_kind_name(SbRecoveryKind kind);

/* "off" or "keep" into *MODE; SB_EINVAL naming WORD and OPTION (the caller's spelling) else. */
extern bool sb_archive_mode_parse(const char *word, const char *option, SbArchiveMode *mode,
								  SbError *err);

/*
 * What T's archive_mode comes to for a restore (AS_STANDBY: of a standby):
 * the one given, else off for a recovery target, keep for a standby or a
 * restore to the latest WAL or to the end of the backup.
 */
extern SbArchiveMode sb_recovery_archive_mode(const SbRecoveryTarget *t, bool as_standby);

/* Are T's values what PostgreSQL accepts for that kind of target?  SB_EINVAL naming them. */
extern bool sb_recovery_check_target(const SbRecoveryTarget *t, SbError *err);

/*
 * The files a point-in-time or standby restore writes into its target
 * (postgresql.auto.conf appended to, recovery.signal or standby.signal
 * created), into FILES (room for 2); *N how many (none for a restore to
 * the end of the backup that keeps archiving; postgresql.auto.conf alone
 * for one with archive_mode off).  When the copy's archiving comes to off
 * (sb_recovery_archive_mode), archive_mode = off is among the settings.  STANDBY may be NULL.  A standby's archive may
 * have no destinations: then it has no restore_command.  The texts are
 * malloc'd: free them with sb_recovery_files_free.
 */
extern bool sb_recovery_files(const SbRecoveryTarget *t, const SbStandby *standby,
							  const SbRecoveryArchive *archive, SbRestoreFile *files,
							  uint32_t *n, SbError *err);
extern void sb_recovery_files_free(SbRestoreFile *files, uint32_t n);

/* What the archive holds of the WAL a recovery replays after the backup. */
typedef struct SbRecoveryWal
{
	bool		checked;		/* false: the target needs no archived WAL (none, immediate) */
	bool		complete;		/* every segment from FROM to TO is archived */
	bool		refuse;			/* the gap lies before the target, or the target is "latest":
								 * recovery would stop short of it (for time, xid and name
								 * targets PostgreSQL itself refuses to end short of them) */
	uint32_t	timeline;		/* the timeline recovery follows */
	uint64_t	segments;		/* segments checked */
	char		from[SB_WAL_NAME_MAX + 1];	/* the backup's last segment */
	char		to[SB_WAL_NAME_MAX + 1];	/* the target LSN's segment, else the newest
											 * one archived on TIMELINE */
	char		message[640];	/* when not complete: the first gap */
	uint32_t	holding_timeline;	/* an LSN target the timeline followed does not
									 * reach, or (not_child) a timeline that does
									 * not hold the backup: an older one, from the
									 * backup's on, that does (0: none) */
	bool		not_child;		/* the newest timeline (target timeline latest)
								 * branched off before the backup's end: recovery
								 * cannot follow it (refuse; verify follows
								 * holding_timeline instead) */
	uint32_t	passed_over;	/* verify: that newest timeline, not followed */
	uint32_t	chosen_timeline;	/* no target timeline given (T->timeline NULL):
									 * the one chosen because the newest does not
									 * reach the target or hold the backup and this
									 * one does; the copy's recovery_target_timeline
									 * (0: none chosen, PostgreSQL's latest) */
	uint32_t	newest_timeline;	/* then: the newest, passed over */
	char		chosen_why[640];	/* then: why it was passed over */
	char		path[256];		/* the timelines recovery replays from the backup's
								 * end when it switches: "timeline 1 to 0/4000000,
								 * then 2" ("" when it stays on one) */
	bool		target_looked;	/* a time, xid or name target was looked for in the
								 * archived WAL (a timeline forks after the backup) */
	uint64_t	target_lsn;		/* where the record recovery stops at is (0: not found) */
	uint32_t	target_on;		/* on which timeline */
	char		target_message[512];	/* what the look found, or why it could not
										 * look (then nothing is refused for it) */
	/* What recovery fetches, per destination: segments from FROM to TO (of
	 * the timelines from the backup's to TIMELINE) and their stored bytes. */
	uint32_t	held[SB_MAX_STRIPES];
	uint64_t	stored_bytes[SB_MAX_STRIPES];
	uint64_t	raw_bytes;		/* their bytes once restored */
} SbRecoveryWal;

/*
 * Does the archive DESTS hold every WAL segment recovery to T will ask for
 * after a backup that ended at STOP_LSN ("X/X") on BACKUP_TIMELINE?  The
 * segments from the backup's last to the target's (an LSN target) or to
 * the newest archived on the timeline recovery follows, across timeline
 * switches.  SB_EINVAL when the target comes before the end of the backup
 * or its timeline before the backup's.  With no timeline given (T->timeline
 * NULL), when the newest would not reach the target and another does,
 * RESULT describes recovery along that one, RESULT->chosen_timeline: the
 * caller writes it as recovery_target_timeline.
 */
extern bool sb_recovery_check_wal(const SbWalDests *dests, const char *stop_lsn,
								  uint32_t backup_timeline, const SbRecoveryTarget *t,
								  SbRecoveryWal *result, SbError *err);

/*
 * Verify the WAL a backup that started at START_LSN on BACKUP_TIMELINE can
 * recover with: every segment from its first to the newest archived on the
 * latest timeline there (the first gap is a problem), each read whole and
 * checked, with the history files.  Each problem goes to FN; *FILES counts
 * the files read, *PROBLEMS the problems.  False only when the check could
 * not run.
 */
extern bool sb_recovery_verify_wal(const SbWalDests *dests, const char *start_lsn,
								   uint32_t backup_timeline, SbWalProblemFn fn, void *arg,
								   SbRecoveryWal *result, uint64_t *files, uint64_t *problems,
								   SbError *err);

#endif							/* SB_PGRECOVERY_H */
