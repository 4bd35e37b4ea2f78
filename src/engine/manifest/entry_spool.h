/*
 * entry_spool.h
 *		A manifest's entries kept in a private file instead of in memory: each
 *		entry, once checked, appended as a binary record to an unlinked file,
 *		then read back in order, one at a time, as often as needed.
 *
 * A restore or verify of a million files so holds a few entries at a time
 * (entry_window.h), not the file table.  The file is the process's own (no
 * name, mode 0600), so what is read back is what was checked.
 */
#ifndef SB_ENTRY_SPOOL_H
#define SB_ENTRY_SPOOL_H

#include "stripebackup/sb_manifest.h"

typedef struct SbEntrySpool SbEntrySpool;

/*
 * An empty spool in an unlinked file in DIR, keeping the entries' file
 * stamps if STAMPS (a child backup looks them up: entry_lookup.h; a
 * restore or verify wants none).
 */
extern SbEntrySpool *sb_entry_spool_new(const char *dir, bool stamps, SbError *err);

/* Append E (with its file stamps if the spool keeps them). */
extern bool sb_entry_spool_add(SbEntrySpool *s, const SbEntry *e, SbError *err);

/* Entries appended so far. */
extern uint64_t sb_entry_spool_count(const SbEntrySpool *s);

/* From now on, read from the first entry (what was appended is flushed). */
extern bool sb_entry_spool_rewind(SbEntrySpool *s, SbError *err);

/*
 * The next entry into *E: its path, link target and extents stay valid
 * until the next call.  False at the end (*END set) or on failure.
 */
extern bool sb_entry_spool_next(SbEntrySpool *s, SbEntry *e, bool *end, SbError *err);

/* While reading: where the entry the next call reads starts, for read_at. */
extern uint64_t sb_entry_spool_tell(const SbEntrySpool *s);

/*
 * While reading: the entry at OFFSET (as tell gave it) into *E, its strings
 * and extents valid until the next read_at (a buffer apart from next's).
 */
extern bool sb_entry_spool_read_at(SbEntrySpool *s, uint64_t offset, SbEntry *e, SbError *err);

extern void sb_entry_spool_free(SbEntrySpool *s);

#endif							/* SB_ENTRY_SPOOL_H */
