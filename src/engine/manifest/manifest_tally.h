/*
 * manifest_tally.h
 *		A manifest's entries counted as they are read, not kept
 *		(manifest_tally.c): what a plan needs, in memory that does not grow
 *		with the file count.
 */
#ifndef SB_MANIFEST_TALLY_H
#define SB_MANIFEST_TALLY_H

#include "stripebackup/sb_manifest.h"

/*
 * From now on M's entries are counted, not kept.  LAYOUT (owned by M from
 * now) is the manifest's members read before the entries, indexed
 * (sb_manifest_index_layout): where each chunk is.
 */
extern bool sb_manifest_tally_begin(SbManifest *m, SbManifest *layout, SbError *err);

/* Count E (its path already checked) into M->tally. */
extern bool sb_manifest_tally_entry(SbManifest *m, const SbEntry *e, SbError *err);

/*
 * Once M's members are all read and its layout indexed: the layout the
 * entries were counted by is M's, and the files' data fills the stream.
 */
extern bool sb_manifest_tally_finish(SbManifest *m, SbError *err);

extern void sb_manifest_tally_free(SbEntryTally *t);

#endif							/* SB_MANIFEST_TALLY_H */
