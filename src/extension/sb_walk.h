/*
 * sb_walk.h
 *		Walking the data directory and the tablespaces with PostgreSQL's own
 *		rules of what a base backup copies and what it skips.
 */
#ifndef SB_WALK_H
#define SB_WALK_H

#include "nodes/pg_list.h"

#include "stripebackup/sb_backup.h"

struct SbWalkRun;

typedef struct SbWalk
{
	SbBackup   *backup;
	List	   *tablespaces;	/* tablespaceinfo, from do_pg_backup_start() */
	int64		skipped_files;	/* vanished while we walked */
	struct SbWalkRun *run;		/* regular files gathered, to add at once */
} SbWalk;

/* Add the data directory itself ("."), first. */
extern void sbx_walk_root(SbWalk *w);

/* Add what the data directory holds, except global/pg_control and the tablespaces. */
extern void sbx_walk_data_directory(SbWalk *w);

/* Add one tablespace as pg_tblspc/<oid>/<version directory>/... */
extern void sbx_walk_tablespace(SbWalk *w, const char *oid, const char *location);

/* Add one file (vanished files are skipped); ERROR on failure. */
extern void sbx_walk_add_file(SbWalk *w, const char *archive_path, const char *disk_path);

#endif							/* SB_WALK_H */
