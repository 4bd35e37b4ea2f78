/*
 * source_tree.h
 *		The list of what "stripebackup create" copies: a directory tree walked
 *		in sorted order.  No link is stored: in a PostgreSQL data directory
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
	char	   *path;			/* relative to the root; "." is the root */
	char	   *full_path;
	SbEntryType type;
	uint32_t	mode;
	int64_t		mtime;
	uint64_t	size;
} SourceItem;

/* A tablespace of the data directory, as the manifest's metadata records it. */
typedef struct SourceTablespace
{
	char		oid[16];
	char	   *location;		/* the link's target; "pg_tblspc/<oid>" when in place */
	bool		in_place;		/* a directory in pg_tblspc, not a link */
} SourceTablespace;

typedef struct SourceTree
{
	SourceItem *items;
	size_t		nitems;
	size_t		cap;
	uint64_t	total_bytes;	/* sum of file sizes */
	bool		is_cluster;		/* ROOT holds PG_VERSION */
	SourceTablespace *tablespaces;
	size_t		ntablespaces;
	size_t		tablespaces_cap;
	char	  **roots;			/* canonical folders read: ROOT, then each link's target */
	size_t		nroots;
	size_t		roots_cap;
} SourceTree;

/*
 * Walk ROOT.  Sockets, pipes and devices are refused, and links but those
 * of a data directory: nothing is skipped silently.
 */
extern bool source_tree_scan(const char *root, SourceTree *tree, SbError *err);

extern void source_tree_free(SourceTree *tree);

#endif							/* SB_SOURCE_TREE_H */
