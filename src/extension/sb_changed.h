/*
 * sb_changed.h
 *		Which blocks of a relation changed since a parent backup began: the
 *		engine's file and block filters for a differential or incremental
 *		backup (SbFileFilter, SbBlockFilter).
 */
#ifndef SB_CHANGED_H
#define SB_CHANGED_H

#include "access/xlogdefs.h"

typedef struct SbChanged SbChanged;

/* Blocks whose page LSN is at or after SINCE (the parent's start) changed. */
extern SbChanged *sbx_changed_new(XLogRecPtr since);

/* Only a relation's main fork is judged block by block; anything else is copied whole. */
extern bool sbx_changed_file(void *arg, const char *path);

/* Any fork of a relation: what may be taken from the parent unread when its times did not change. */
extern bool sbx_changed_relation(void *arg, const char *path);

/* Did the block at FILE_OFFSET of PATH change (or can it not be told)? */
extern bool sbx_changed_block(void *arg, const char *path, int fd, uint64_t file_offset,
							 const uint8_t *block);

/* Blocks judged, and copied, so far. */
extern void sbx_changed_counts(const SbChanged *c, int64 *judged, int64 *copied);

/* A WARNING if any page had an LSN past the end of WAL (copied, as changed). */
extern void sbx_changed_report(const SbChanged *c);

#endif							/* SB_CHANGED_H */
