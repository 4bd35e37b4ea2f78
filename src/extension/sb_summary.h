/*
 * sb_summary.h
 *		Which blocks changed since a parent backup began, from PostgreSQL
 *		17's WAL summaries: the engine's SbChangedBlocks hook for a diff or
 *		incr, which then reads only those blocks of a relation's main fork.
 */
#ifndef SB_SUMMARY_H
#define SB_SUMMARY_H

#include "access/xlogdefs.h"

typedef struct SbSummary SbSummary;

/*
 * The blocks the WAL summaries of timeline TLI name changed from SINCE (the
 * parent's start) to UNTIL (this backup's), waiting a little for the
 * summarizer to reach UNTIL; NULL, said in a LOG, when they do not cover
 * that range (summarize_wal off, the parent on timeline PARENT_TLI, not
 * TLI, summaries removed or not written yet), or before PostgreSQL 17.
 */
extern SbSummary *sbx_summary_load(TimeLineID tli, TimeLineID parent_tli, XLogRecPtr since,
								   XLogRecPtr until);

/* The engine's SbChangedBlocks: the blocks of PATH (SIZE bytes) to read, when it can tell. */
extern bool sbx_summary_blocks(void *arg, const char *path, uint64_t size,
							   const uint32_t **blocks, uint32_t *nblocks);

/* Files whose blocks it named, and blocks named, so far. */
extern void sbx_summary_counts(const SbSummary *s, int64 *files, int64 *blocks);

#endif							/* SB_SUMMARY_H */
