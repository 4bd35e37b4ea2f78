/*
 * cluster_info.h
 *		What an online backup's manifest says about the PostgreSQL cluster it
 *		copied (its "metadata" object), and the tablespace relocations a
 *		restore of it needs.
 */
#ifndef SB_CLUSTER_INFO_H
#define SB_CLUSTER_INFO_H

#include "stripebackup/sb_archive.h"

typedef struct ClusterTablespace
{
	char		oid[16];
	char	   *location;
	bool		in_place;		/* a folder inside the data directory */
	char		what[64];		/* "directory of tablespace 16385" */
	char		archive_dir[32];	/* "pg_tblspc/16385" */
} ClusterTablespace;

typedef struct ClusterInfo
{
	bool		is_postgresql;	/* false for a cold backup of a plain tree */
	char	   *server_version;
	char	   *system_identifier;
	char	   *data_directory;
	char	   *start_lsn;
	char	   *stop_lsn;
	unsigned	timeline;
	ClusterTablespace *tablespaces;
	int			ntablespaces;
} ClusterInfo;

/* Read the manifest's metadata; a backup without any gives is_postgresql false. */
extern bool cluster_info_read(const SbManifest *m, ClusterInfo *info, SbError *err);

extern void cluster_info_free(ClusterInfo *info);

/*
 * One relocation per tablespace (not in place): to its original location, or
 * where a "--tablespace-mapping OLD=NEW" moves it.  RELOCS has room for every
 * tablespace.  A mapping that names no tablespace of the backup is an error.
 */
extern bool cluster_info_relocations(ClusterInfo *info, const char *const *mappings,
									 uint32_t nmappings, SbRelocation *relocs,
									 uint32_t *nrelocs, SbError *err);

#endif							/* SB_CLUSTER_INFO_H */
