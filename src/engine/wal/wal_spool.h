/*
 * wal_spool.h
 *		The spool of a WAL restore: segments fetched ahead, kept as the
 *		archived files they are (<name>.sbw), checked whole when used.
 */
#ifndef SB_WAL_SPOOL_H
#define SB_WAL_SPOOL_H

#include "wal/wal_internal.h"

typedef struct SbWalSpool
{
	int			fd;				/* the spool folder; -1 when there is none */
	char		path[PATH_MAX];
	uint64_t	sysid;
	const SbKey *key;			/* the archive's: a spool copy is read as it is */
	char		planned[SB_WAL_MAX_PREFETCH][SB_WAL_NAME_MAX + 1];	/* segments to fetch */
	uint32_t	nplanned;
	uint32_t	fetched;		/* copied in by this call (atomic: fetch tasks run at once) */
	uint32_t	removed;		/* stale or damaged files removed */
} SbWalSpool;

/* Open (make, 0700) the spool folder PATH of archive DESTS, never through a link; PATH NULL: no spool. */
extern bool sb_wal_spool_open(SbWalSpool *s, const char *path, const SbWalDests *dests,
							  SbError *err);
extern void sb_wal_spool_close(SbWalSpool *s);

/* Does the spool hold NAME with a good header?  INFO gets it; a bad copy is removed. */
extern bool sb_wal_spool_has(SbWalSpool *s, const char *name, SbWalInfo *info);

/* Read the spool's copy of NAME whole into OUT, checking everything; a bad copy is removed. */
extern bool sb_wal_spool_serve(SbWalSpool *s, SbWalWorker *w, const char *name, SbWalOut *out,
							   SbWalHeader *h, SbError *err);

/* NAME was restored from the spool: its copy is not needed again. */
extern void sb_wal_spool_served(SbWalSpool *s, const char *name);

/*
 * The file INFO describes is being restored: remove the spool's files of
 * earlier segments, and plan the next PREFETCH segments of its timeline
 * that the spool lacks (only after a segment, and with a spool).
 */
extern void sb_wal_spool_plan(SbWalSpool *s, const SbWalInfo *info, uint32_t prefetch);

/* Copy planned segment I from the archive into the spool; what fails is simply not there. */
extern void sb_wal_spool_fetch(SbWalSpool *s, SbWalWorker *w, const SbWalDests *dests, size_t i);

#endif							/* SB_WAL_SPOOL_H */
