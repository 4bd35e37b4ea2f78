/*
 * source_tree.h
 *		The list of what "stripebackup create" copies: a directory tree walked
 *		in sorted order, without following symlinks.
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
	char	   *link_target;
} SourceItem;

typedef struct SourceTree
{
	SourceItem *items;
	size_t		nitems;
	size_t		cap;
	uint64_t	total_bytes;	/* sum of file sizes */
} SourceTree;

/* Walk ROOT.  Sockets, pipes and devices are refused: nothing is skipped silently. */
extern bool source_tree_scan(const char *root, SourceTree *tree, SbError *err);

extern void source_tree_free(SourceTree *tree);

#endif							/* SB_SOURCE_TREE_H */
