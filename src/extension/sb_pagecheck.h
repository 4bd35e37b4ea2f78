/*
 * sb_pagecheck.h
 *		Page checksum verification while a backup reads relation files, with
 *		PostgreSQL's rule for pages being written meanwhile.
 */
#ifndef SB_PAGECHECK_H
#define SB_PAGECHECK_H

#include "access/xlogdefs.h"
#include "common/relpath.h"
#include "storage/block.h"

#include "stripebackup/sb_error.h"

typedef struct SbPageCheck SbPageCheck;

/* Checks pages older than START_LSN, if the cluster has data checksums. */
extern SbPageCheck *sbx_pagecheck_new(XLogRecPtr start_lsn);

/* The engine's read hook (SbReadHook): sees every block of every file read. */
extern bool sbx_pagecheck_hook(void *arg, const char *path, int fd, uint64_t file_offset,
							  const uint8_t *data, size_t len, SbError *err);

/*
 * Is PATH (relative to the data directory) a relation's file?  Its fork,
 * its database (InvalidOid in global/) and the number of its first block.
 */
extern bool sbx_relation_file(const char *path, ForkNumber *fork, Oid *database,
							 BlockNumber *first_block);

/* Pages checked so far. */
extern int64 sbx_pagecheck_pages(const SbPageCheck *pc);

/* Add FROM's findings (another thread's checker, done) to INTO's. */
extern void sbx_pagecheck_merge(SbPageCheck *into, const SbPageCheck *from);

/* ERROR naming the files and blocks if any page failed its checksum. */
extern void sbx_pagecheck_report(SbPageCheck *pc);

#endif							/* SB_PAGECHECK_H */
