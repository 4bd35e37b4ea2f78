/*
 * sb_pgmanifest.h
 *		PostgreSQL's own backup_manifest for the restored data directory, so
 *		that pg_verifybackup can check a restore with PostgreSQL's own tool.
 */
#ifndef SB_PGMANIFEST_H
#define SB_PGMANIFEST_H

#include "access/xlogdefs.h"
#include "storage/fd.h"

#include "stripebackup/sb_manifest.h"

/*
 * Write a backup_manifest (version 1) listing every file of M outside
 * pg_wal, with the WAL range START..STOP on timeline TLI, into a temporary
 * file as it grows (its size follows the number of files, without limit).
 * The file is open, at FilePathName(); closing it removes it, and so does
 * the release of the current resource owner.
 */
extern File sb_pgmanifest_write(const SbManifest *m, TimeLineID tli,
								XLogRecPtr start, XLogRecPtr stop);

#endif							/* SB_PGMANIFEST_H */
