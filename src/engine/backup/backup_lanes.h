/*
 * backup_lanes.h
 *		How many source lanes a backup's options allow, and what they hold
 *		(backup_lanes.c), for the backup and its memory check.
 */
#ifndef SB_BACKUP_LANES_H
#define SB_BACKUP_LANES_H

#include "stripebackup/sb_backup.h"

/* Files waiting for a lane, each by its two paths. */
#define SB_LANE_QUEUE 4096

/*
 * Entries waiting for a file placed before them, while lanes read: past
 * that, whoever places the next entry waits for the line to move.
 */
#define SB_PENDING_ENTRIES_MAX 16384

/* What the memory check counts a waiting file or entry for (its paths, mostly). */
#define SB_LANE_ITEM_BYTES 256

/*
 * The lanes the options allow: source_lanes, at most SB_MAX_SOURCE_LANES,
 * as many as leave the pipeline buffers (each lane holds at most two open),
 * with a read hook argument each; 0 below two, and with a parent.
 */
extern uint32_t sb_lanes_allowed(const SbBackupOptions *o);

#endif							/* SB_BACKUP_LANES_H */
