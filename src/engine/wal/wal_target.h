/*
 * wal_target.h
 *		Which timeline holds a time, xid or restore-point target
 *		(wal_target.c), and the timelines a recovery replays, said.
 */
#ifndef SB_WAL_TARGET_H
#define SB_WAL_TARGET_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_pgrecovery.h"
#include "wal/wal_internal.h"

/* The most segments one placement reads (4 GB of 16 MB segments); past them it says it could not tell. */
#define SB_TARGET_MAX_SEGMENTS 256

/*
 * For a time, xid or name target T of a backup ended at STOP on
 * BACKUP_TLI, recovered along R->timeline: when another archived timeline
 * that holds the backup parts from that one after STOP, read the
 * archived WAL (listing L, segments of SEGMENT_SIZE bytes) for the record
 * recovery stops at.  R->target_looked, target_lsn, target_on and
 * target_message say what was found; when the timeline followed does not
 * reach the target and another does, R->refuse, R->holding_timeline that
 * one and R->message why.  False only when the look could not run at all
 * (memory, a history PostgreSQL would not read).
 */
extern bool sb_wal_place_target(const SbWalDests *dests, const SbWalListing *l, uint32_t segment_size,
								uint64_t stop, uint32_t backup_tli, const SbRecoveryTarget *t,
								SbRecoveryWal *r, SbError *err);

/*
 * The timelines recovery along H replays from STOP on, into OUT: "timeline
 * 1 to 0/4000000, then 2"; "" when it stays on one.
 */
extern void sb_wal_describe_path(const SbWalHistory *h, uint32_t backup_tli, uint64_t stop, char *out,
								 size_t size);

#endif							/* SB_WAL_TARGET_H */
