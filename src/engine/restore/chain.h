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
 * each older backup writes follows from the manifests alone, before
 * anything is read.  (Writing each block once, newest first,
 * around what newer backups wrote, took seven times the writes and 1.5 times
 * the time on the benchmark: a changed block splits every large write of
 * the full backup.)
 */
#ifndef SB_CHAIN_H
#define SB_CHAIN_H

#include <stdatomic.h>

#include "stripebackup/sb_archive.h"
#include "manifest/entry_window.h"

#define SB_MAX_CHAIN 1000

typedef struct SbEntryLookup SbEntryLookup;

typedef struct SbChainLink
{
	SbArchive  *archive;		/* not owned */
	bool		gives;			/* some file of the newest takes bytes from it */
} SbChainLink;

/*
 * What each link writes follows from one figure a file of the newest: the
 * oldest link that gives it bytes (its "depth"; 0 for a file stored whole).
 * Link K, 0 < K <= depth, writes its file of the same path below the
 * newest's length.  That is a few bytes a file whether the manifests are
 * tables or spools (entry_lookup.h finds a path in the newest, either way),
 * so a chain of a million files is restored a window at a time as a single
 * backup is.
 */
typedef struct SbChain
{
	uint32_t	nlinks;
	SbChainLink *links;			/* [0]: the newest */
	SbEntryLookup *newest;		/* the newest's entries by path */
	uint16_t   *depth;			/* per newest entry (SB_MAX_CHAIN fits), and
								 * SB_CHAIN_WHOLE */
	bool	   *open;			/* per newest entry, while tracing (then
								 * NULL): an incremental file no older
								 * backup traced so far stored whole */
	uint64_t	expected;		/* the bytes older links are to write */
	_Atomic uint64_t written;	/* the bytes they did write (each file they
								 * read is checked whole as well) */
} SbChain;

/*
 * In a file's depth: the one backup that gives it bytes stored it whole,
 * in one chunk, and no newer one stored any of it; so it is created,
 * written and closed in one go by that backup's read, as a full backup's
 * small files are.
 */
#define SB_CHAIN_WHOLE 0x8000

static inline uint32_t
sb_chain_depth(const SbChain *chain, size_t i)
{
	return chain->depth[i] & ~SB_CHAIN_WHOLE;
}

static inline bool
sb_chain_given_whole(const SbChain *chain, size_t i)
{
	return (chain->depth[i] & SB_CHAIN_WHOLE) != 0;
}

/* Open the parents of A, recursively (sb_archive_open calls it). */
extern bool sb_archive_open_parents(SbArchive *a, SbError *err);

/*
 * The backup in FOLDER alone, to be CHILD's parent: with CHILD's key, its
 * entries kept as CHILD's parents are (archive.c).  Plain or encrypted:
 * CHILD's manifest, which names it by uuid and SHA-256, binds it.
 */
extern SbArchive *sb_archive_open_parent(const char *folder, const SbArchive *child, SbError *err);

/*
 * Work out what each link writes, and check the chain covers every byte of
 * every file (SB_ECORRUPT naming the file and the bytes if not).
 */
extern bool sb_chain_build(SbArchive *newest, SbChain *chain, SbError *err);
extern void sb_chain_free(SbChain *chain);

/*
 * Older link K's file at PATH gives bytes to the newest file R->into (its
 * ordinal), those below R->limit (the newest's length), which has R->mode
 * and R->mtime; R->into SIZE_MAX when it gives none.  Not thread-safe (the
 * newest's lookup reads its spool).
 */
extern bool sb_chain_receiver(SbChain *chain, uint32_t k, const char *path, SbChainReceiver *r,
							  SbError *err);

/* The older links wrote all they give; else SB_ECORRUPT. */
extern bool sb_chain_check_written(const SbChain *chain, SbError *err);

#endif							/* SB_CHAIN_H */
