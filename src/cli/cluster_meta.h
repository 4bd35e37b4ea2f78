/*
 * cluster_meta.h
 *		The manifest metadata of a cold backup of a stopped PostgreSQL
 *		cluster: what an online backup records (docs/FORMAT.md 4.1), as far
 *		as the stopped cluster's files tell it, so that show and restore
 *		treat both alike (tablespaces relocated with --tablespace-mapping).
 */
#ifndef SB_CLUSTER_META_H
#define SB_CLUSTER_META_H

#include "source_tree.h"

/*
 * The metadata JSON object (malloc'd) for the data directory TREE was
 * walked from, or NULL with ERR clear when TREE is no data directory.
 */
extern char *cluster_meta_json(const SourceTree *tree, SbError *err);

#endif							/* SB_CLUSTER_META_H */
