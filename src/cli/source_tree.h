/*
 * source_tree.h
 *		What "stripebackup create" copies: a directory tree walked in sorted
 *		order, each item handed over as it is found (a list of a million
 *		files would cost more than the backup's own file table).  No link is stored: in a PostgreSQL data directory
 *		the pg_wal link and each pg_tblspc/<oid> link are followed and their
 *		contents listed as a directory of that name (as the online backup
 *		and pg_basebackup do); any other link is refused.
 */
#ifndef SB_SOURCE_TREE_H
#define SB_SOURCE_TREE_H

#include <stdint.h>

#include "stripebackup/sb_manifest.h"

typedef struct SourceItem
{
	const char *path;			/* relative to the root; "." is the root */
	const char *full_path;
	int			dirfd;			/* its directory, open while it is visited (or AT_FDCWD) */
	const char *name;			/* in that directory (or FULL_PATH) */
	SbEntryType type;
	uint32_t	mode;			/* mode, time and size: 0 for a regular file */
	int64_t		mtime;			/* of a walk that visits (its status is */
	uint64_t	size;			/* taken where it is read) */
} SourceItem;

/* A tablespace of the data directory, as the manifest's metadata records it. */
typedef struct SourceTablespace
{
	char		oid[16];
	char	   *location;		/* the link's target; "pg_tblspc/<oid>" when in place */
	bool		in_place;		/* a directory in pg_tblspc, not a link */
} SourceTablespace;

/* Takes each item of the walk (its strings last until it returns); false (ERR) to stop. */
typedef bool (*SourceItemFn) (void *arg, const SourceItem *item, SbError *err);

/*
 * Takes a run of N regular files of one directory (open at DIRFD), in the
 * walk's order, as ITEMS (at most SOURCE_FILES_MAX, no status taken): so
 * that they can be opened and read several at once.
 */
typedef bool (*SourceFilesFn) (void *arg, int dirfd, const SourceItem *items, size_t n,
							   SbError *err);

#define SOURCE_FILES_MAX 64

struct SourceFileRun;

typedef struct SourceTree
{
	SourceItemFn visit;			/* or NULL: only count */
	SourceFilesFn visit_files;	/* or NULL: regular files to VISIT too */
	void	   *visit_arg;
	struct SourceFileRun *run;	/* the files gathered for VISIT_FILES */
	size_t		nitems;
	uint64_t	total_bytes;	/* sum of file sizes; a walk that visits does not
								 * stat regular files, so only a walk without VISIT */
	bool		is_cluster;		/* ROOT holds PG_VERSION */
	SourceTablespace *tablespaces;
	size_t		ntablespaces;
	size_t		tablespaces_cap;
	char	  **roots;			/* canonical folders read: ROOT, then each link's target */
	size_t		nroots;
	size_t		roots_cap;
} SourceTree;

/*
 * Walk ROOT, each item to VISIT (NULL: only what TREE counts and records),
 * runs of regular files to VISIT_FILES when not NULL.  Sockets, pipes and
 * devices are refused, and links but those of a data directory: nothing is
 * skipped silently.
 */
extern bool source_tree_scan(const char *root, SourceTree *tree, SourceItemFn visit,
							 SourceFilesFn visit_files, void *arg, SbError *err);

extern void source_tree_free(SourceTree *tree);

#endif							/* SB_SOURCE_TREE_H */
