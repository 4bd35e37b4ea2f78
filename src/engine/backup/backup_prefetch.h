/*
 * backup_prefetch.h
 *		A folder's files opened and small ones read several at once, ahead of
 *		the copy (backup_prefetch.c): what it holds, for the memory check.
 */
#ifndef SB_BACKUP_PREFETCH_H
#define SB_BACKUP_PREFETCH_H

#define SB_PREFETCH_SLOTS 32	/* files opened ahead at most */
#define SB_PREFETCH_FILE_BYTES (64 * 1024)	/* a file this size or smaller is read whole */

struct SbPrefetch;

/* Join the helper threads and close what they opened; NULL is fine. */
extern void sb_prefetch_free(struct SbPrefetch *p);

#endif							/* SB_BACKUP_PREFETCH_H */
