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

typedef struct SbRecoveryTarget
{
	SbRecoveryKind kind;
	const char *value;			/* time ("2026-11-30 14:05:00+00"), LSN ("0/5A0003B8"),
								 * xid (decimal) or name; NULL for the others */
	bool		inclusive;		/* stop just after the target (true) or just before */
	const char *timeline;		/* "latest" (NULL), "current", or a number */
	const char *action;			/* "promote" (NULL), "pause" or "shutdown" */
} SbRecoveryTarget;

/* Where the archive is, for restore_command. */
typedef struct SbRecoveryArchive
{
	const char *program;		/* absolute path of the stripebackup command */
	const char *const *destinations;
	uint32_t	ndestinations;
	uint64_t	system_identifier;
	uint32_t	prefetch;		/* segments wal-get fetches ahead */
} SbRecoveryArchive;

/* "time", "lsn", ...: KIND's name, as messages and options say it. */
extern const char *sb_recovery_kind_name(SbRecoveryKind kind);

/* Are T's values what PostgreSQL accepts for that kind of target?  SB_EINVAL naming them. */
extern bool sb_recovery_check_target(const SbRecoveryTarget *t, SbError *err);

/*
 * The files a point-in-time restore writes into its target (postgresql.auto.conf
 * appended to, recovery.signal created), into FILES (room for 2); *N how
 * many.  The texts are malloc'd: free them with sb_recovery_files_free.
 */
extern bool sb_recovery_files(const SbRecoveryTarget *t, const SbRecoveryArchive *archive,
							  SbRestoreFile *files, uint32_t *n, SbError *err);
extern void sb_recovery_files_free(SbRestoreFile *files, uint32_t n);

#endif							/* SB_PGRECOVERY_H */
