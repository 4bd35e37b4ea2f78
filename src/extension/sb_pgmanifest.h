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
 * A backup_manifest (version 1) listing every file outside pg_wal, written
 * into a temporary file as the files are recorded (its size follows the
 * number of files, without limit; its memory does not).  The file is open,
 * at FilePathName(), until sbx_pgmanifest_close or the end of the current
 * memory context, on an error too; closing it removes it.
 */
typedef struct SbPgManifest SbPgManifest;

extern SbPgManifest *sbx_pgmanifest_begin(void);

/* List E (an SbEntryHook, ARG the SbPgManifest); entries after the finish are not listed. */
extern bool sbx_pgmanifest_add(void *arg, const SbEntry *e, SbError *err);

/* The WAL range START..STOP on timeline TLI, and the checksum: the file, complete. */
extern File sbx_pgmanifest_finish(SbPgManifest *pm, TimeLineID tli,
								 XLogRecPtr start, XLogRecPtr stop);

/* Close (and so remove) the file, once it is no longer needed; again is nothing. */
extern void sbx_pgmanifest_close(SbPgManifest *pm);

#endif							/* SB_PGMANIFEST_H */
