/*
 * restore_writeback.h
 *		Keeping every target device of a restore writing at once: one thread
 *		per device starts the write-out of what the workers wrote, and at the
 *		end syncs its file system, all devices together.
 */
#ifndef SB_RESTORE_WRITEBACK_H
#define SB_RESTORE_WRITEBACK_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

typedef struct SbWriteback SbWriteback;

/*
 * A thread for each device among the NDIRS output directories (open as
 * DIR_FDS, at DIR_PATHS; both kept until sb_writeback_finish).  NULL when
 * none could start: the caller then starts nothing and syncs each
 * directory itself.
 */
extern SbWriteback *sb_writeback_start(const int *dir_fds, const char *const *dir_paths,
									   uint32_t ndirs);

/*
 * LENGTH bytes at OFFSET of the file REL beneath DIR_FD were written: their
 * device's thread starts their write-out (a range too short to be worth it
 * is left to the final sync).  Never fails; waits only when that device has
 * a long queue already.  WB may be NULL.
 */
extern void sb_writeback_add(SbWriteback *wb, int dir_fd, const char *rel,
							 uint64_t offset, uint64_t length);

/*
 * The restore is written: with SYNC, each device's thread starts what it
 * has queued and syncs its file system (syncfs), all at once; without, it
 * drops its queue.  Then the threads end and WB is freed.  False, with the first failure in ERR, when
 * a sync failed.  WB may be NULL.
 */
extern bool sb_writeback_finish(SbWriteback *wb, bool sync, SbError *err);

#endif							/* SB_RESTORE_WRITEBACK_H */
