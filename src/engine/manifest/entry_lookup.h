/*
 * entry_lookup.h
 *		A manifest's entries found by path, whether they are in memory or in
 *		its private file: a child backup looks up each of its files in its
 *		parent's manifest.
 *
 * A manifest read into a spool (SB_KEEP_LOOKUP, with the file stamps, or
 * SB_KEEP_STREAMED) is indexed here by a sorted array of the 64-bit hash of
 * each path and the entry's ordinal, and each ordinal's record offset: 24
 * bytes a file, where the table costs some 250.  A hash found is confirmed
 * by the record's own path, so two paths that share a hash cost a read,
 * never a wrong entry.
 */
#ifndef SB_ENTRY_LOOKUP_H
#define SB_ENTRY_LOOKUP_H

#include "stripebackup/sb_manifest.h"

typedef struct SbEntryLookup SbEntryLookup;

/* A lookup over M's entries (M outlives it); NULL on failure. */
extern SbEntryLookup *sb_entry_lookup_new(const SbManifest *m, SbError *err);

/*
 * M's entry at PATH into *E (its strings valid until the next call), or
 * *FOUND false when M has none.  False only on failure to read.
 */
extern bool sb_entry_lookup_find(SbEntryLookup *l, const char *path, SbEntry *e, bool *found,
								 SbError *err);

/*
 * The same, and the entry's ordinal (its index in M's order) into *ORDINAL,
 * SIZE_MAX when M has none.
 */
extern bool sb_entry_lookup_at(SbEntryLookup *l, const char *path, SbEntry *e, size_t *ordinal,
							   SbError *err);

/* M's entry ORDINAL (its index in M's order) into *E, its strings valid until the next call. */
extern bool sb_entry_lookup_ordinal(SbEntryLookup *l, size_t ordinal, SbEntry *e, SbError *err);

extern void sb_entry_lookup_free(SbEntryLookup *l);

#endif							/* SB_ENTRY_LOOKUP_H */
