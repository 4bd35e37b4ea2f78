/*
 * restore_writeback.h
 *		Keeping every target device of a restore writing at once, and the
 *		page cache as it was: one thread per device starts the write-out of
 *		what the workers wrote to it (on one device the workers start it),
 *		drops it from the cache once written, and at the end syncs its file
 *		system, all devices together.
 */
#ifndef SB_RESTORE_WRITEBACK_H
#define SB_RESTORE_WRITEBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

typedef struct SbWriteback SbWriteback;

/*
 * Write-out for the NDIRS output directories (open as DIR_FDS, at
 * DIR_PATHS; the descriptors and the paths' strings kept open and alive
 * until sb_writeback_finish, the arrays copied): a thread for each device
 * among them.  NULL when it could not be set up: the caller then syncs each
 * directory itself.
 */
extern SbWriteback *sb_writeback_start(const int *dir_fds, const char *const *dir_paths,
									   uint32_t ndirs);

/*
 * LENGTH bytes at OFFSET of the file REL beneath DIR_FD, open as FD, were
 * written: their write-out starts (a range too short to be worth it is left
 * to the final sync), here on one device, else on their device's thread
 * (which opens REL again: FD may be closed at once); once 64 MB more are
 * written to that device, the thread waits for these and drops them from
 * the page cache.  Never fails; waits only when the device has a long
 * queue already.  WB may be NULL.
 */
extern void sb_writeback_add(SbWriteback *wb, int fd, int dir_fd, const char *rel,
							 uint64_t offset, uint64_t length);

/*
 * The restore is written: with SYNC, each device's file system is synced
 * (syncfs), all at once, each by its thread after it has started what it
 * had queued; without, the queues are dropped.  Then the threads end and WB
 * is freed.  False, with the first failure in ERR, when a sync failed.  WB
 * may be NULL.
 */
extern bool sb_writeback_finish(SbWriteback *wb, bool sync, SbError *err);

#endif							/* SB_RESTORE_WRITEBACK_H */
