/*
 * entry_lookup.h
 *		A manifest's entries found by path, whether they are in memory or in
 *		its private file: a child backup looks up each of its files in its
 *		parent's manifest.
 *
 * A manifest read SB_KEEP_LOOKUP keeps its entries (with their file stamps)
 * in its spool and is indexed here by a sorted array of the 64-bit hash of
 * each path and where its record starts: 16 bytes a file, where the table
 * costs some 250.  A hash found is confirmed by the record's own path, so
 * two paths that share a hash cost a read, never a wrong entry.
 */
#ifndef SB_ENTRY_LOOKUP_H
#define SB_ENTRY_LOOKUP_H

#include "stripebackup/sb_manifest.h"

typedef struct SbEntryLookup SbEntryLookup;

/* A lookup over M's entries (M outlives it); NULL on failure. */
extern SbEntryLookup *sb_entry_lookup_new(SbManifest *m, SbError *err);

/*
 * M's entry at PATH into *E (its strings valid until the next call), or
 * *FOUND false when M has none.  False only on failure to read.
 */
extern bool sb_entry_lookup_find(SbEntryLookup *l, const char *path, SbEntry *e, bool *found,
								 SbError *err);

extern void sb_entry_lookup_free(SbEntryLookup *l);

#endif							/* SB_ENTRY_LOOKUP_H */
