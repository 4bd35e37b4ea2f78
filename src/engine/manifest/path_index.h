/*
 * path_index.h
 *		A manifest's entries found by path, in constant time: an incremental
 *		backup looks up each file in its parent's manifest, and a restore of
 *		a chain each file of the newest backup in the older ones.
 */
#ifndef SB_PATH_INDEX_H
#define SB_PATH_INDEX_H

#include "stripebackup/sb_manifest.h"

typedef struct SbPathIndex
{
	const SbManifest *manifest;
	size_t	   *slots;			/* entry index + 1; 0 is an empty slot */
	size_t		nslots;			/* a power of two, at least twice the entries */
} SbPathIndex;

extern bool sb_path_index_build(SbPathIndex *ix, const SbManifest *m, SbError *err);
extern void sb_path_index_free(SbPathIndex *ix);

/* The index of the entry at PATH, or SIZE_MAX. */
extern size_t sb_path_index_find(const SbPathIndex *ix, const char *path);

#endif							/* SB_PATH_INDEX_H */
