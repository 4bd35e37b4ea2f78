/*
 * sb_pgmanifest.h
 *		PostgreSQL's own backup_manifest for the restored data directory, so
 *		that pg_verifybackup can check a restore with PostgreSQL's own tool.
 */
#ifndef SB_PGMANIFEST_H
#define SB_PGMANIFEST_H

#include "access/xlogdefs.h"
#include "lib/stringinfo.h"

#include "stripebackup/sb_manifest.h"

/*
 * The text of a backup_manifest (version 1) listing every file of M outside
 * pg_wal, with the WAL range START..STOP on timeline TLI.
 */
extern char *sb_pgmanifest_build(const SbManifest *m, TimeLineID tli,
								 XLogRecPtr start, XLogRecPtr stop);

#endif							/* SB_PGMANIFEST_H */
