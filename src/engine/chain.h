/*
 * chain.h
 *		A differential or incremental backup and the backups it completes,
 *		newest first: link 0 is the backup asked for, the last a full one.
 *
 * The newest manifest says which files exist and how long they are; a
 * file stored as changed blocks ("incremental") takes the rest from the
 * same path in the parent, and so on down to a backup that stored it whole.
 * A restore writes the backups oldest first, each what it holds of the
 * files of the newest below their length, the newer over the older: what
 * each older backup writes (its "owned" extents) follows from the manifests
 * alone, before anything is read.  (Writing each block once, newest first,
 * around what newer backups wrote, took seven times the writes and 1.5 times
 * the time on the benchmark: a changed block splits every large write of
 * the full backup.)
 */
#ifndef SB_CHAIN_H
#define SB_CHAIN_H

#include <stdatomic.h>

#include "stripebackup/sb_archive.h"

#define SB_MAX_CHAIN 1000

typedef struct SbChainLink
{
	SbArchive  *archive;		/* not owned */
	size_t	   *final_of;		/* per entry: the newest manifest's entry it
								 * gives bytes to, or SIZE_MAX */
	SbExtent  **owned;			/* per entry: the file bytes it writes */
	uint32_t   *nowned;
	bool		gives;			/* some file of the newest takes bytes from it */
} SbChainLink;

typedef struct SbChain
{
	uint32_t	nlinks;
	SbChainLink *links;			/* [0]: the newest */
	uint64_t   *expected;		/* per newest entry: bytes older links write */
	_Atomic uint64_t *written;	/* per newest entry: bytes they did write */
} SbChain;

/* Open the parents of A, recursively (sb_archive_open calls it). */
extern bool sb_archive_open_parents(SbArchive *a, SbError *err);

/* One backup at LOCATION, its entries kept as KEEP says (archive.c). */
extern SbArchive *sb_archive_open_link(const char *location, const SbKey *key, SbEntryKeep keep,
									   SbError *err);

/*
 * Work out what each link writes, and check the chain covers every byte of
 * every file (SB_ECORRUPT naming the file and the bytes if not).
 */
extern bool sb_chain_build(SbArchive *newest, SbChain *chain, SbError *err);
extern void sb_chain_free(SbChain *chain);

/* Every older link wrote all it owned; else SB_ECORRUPT naming the file. */
extern bool sb_chain_check_written(const SbChain *chain, SbError *err);

#endif							/* SB_CHAIN_H */
