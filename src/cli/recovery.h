/*
 * recovery.h
 *		The point-in-time options of restore and plan (--target-time ...,
 *		--archive): where the WAL archive is, whether it holds what recovery
 *		will ask for, and the files that make the restored copy recover.
 */
#ifndef SB_CLI_RECOVERY_H
#define SB_CLI_RECOVERY_H

#include "read_args.h"
#include "stripebackup/sb_pgmeta.h"

typedef struct CliRecovery
{
	const char *dests[SB_MAX_STRIPES];	/* the archive: --archive, else the backup's destinations */
	char	   *owned[SB_MAX_STRIPES];	/* those found from the backup */
	uint32_t	ndests;
	uint64_t	system_identifier;	/* the backup's */
	SbWalDests	where;			/* the above, as the engine takes them */
	SbRecoveryWal wal;			/* what the archive holds */
	char		timeline[16];	/* no --target-timeline: the one chosen (wal.chosen_timeline),
								 * for recovery_target_timeline; "" for none */
	bool		recorded;		/* the archive is the one the backup's metadata names */
	uint32_t	passed_over;	/* destinations of it that hold none of the system now */
	uint32_t	redundancy;		/* wal-get --redundancy in restore_command: the
								 * destinations of DESTS that may be missing */
	char		redundancy_why[160];	/* where it comes from, said by the restore */
} CliRecovery;

/*
 * The WAL archive of the backup A (META its metadata): --archive, or else
 * the backup's destinations that hold one of its system (none: SB_EINVAL
 * asking for --archive), and the archive redundancy restore_command
 * carries (--archive-redundancy, or the metadata's for the archive it
 * names, else 0).  Free with cli_recovery_free.
 */
extern bool cli_recovery_archive(const ReadArgs *args, const SbArchive *a, const SbPgMeta *meta,
								 CliRecovery *r, SbError *err);

/*
 * Find the archive of the backup A (META its metadata) and check that it
 * holds the WAL recovery to ARGS' target asks for, printing what it found.
 * False with ERR when it cannot be checked, or (REFUSE) when recovery would
 * stop short of the target unnoticed.  Without --target-timeline, the
 * timeline that holds the target when the newest does not reach it is
 * chosen and said (R->timeline).  Free with cli_recovery_free.
 */
extern bool cli_recovery_check(const ReadArgs *args, const SbArchive *a, const SbPgMeta *meta,
							   bool refuse, CliRecovery *r, SbError *err);
extern void cli_recovery_free(CliRecovery *r);

/* The files a restore writes for R's target into FILES (room for 2); free with sb_recovery_files_free. */
extern bool cli_recovery_files(const ReadArgs *args, const CliRecovery *r, SbRestoreFile *files,
							   uint32_t *n, SbError *err);

#endif							/* SB_CLI_RECOVERY_H */
