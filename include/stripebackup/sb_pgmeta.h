/*
 * sb_pgmeta.h
 *		What an online backup's manifest says about the PostgreSQL cluster it
 *		copied (its "metadata" object, docs/FORMAT.md 4.1), and the tablespace
 *		relocations a restore of it needs.  Shared by the command and the
 *		extension; it reads JSON only, no PostgreSQL code.
 */
#ifndef SB_PGMETA_H
#define SB_PGMETA_H

#include "stripebackup/sb_archive.h"

typedef struct SbPgTablespace
{
	char		oid[16];
	char	   *location;
	bool		in_place;		/* a folder inside the data directory */
	char		what[64];		/* "directory of tablespace 16385" */
	char		archive_dir[32];	/* "pg_tblspc/16385" */
} SbPgTablespace;

typedef struct SbPgMeta
{
	bool		is_postgresql;	/* false for a cold backup of a plain tree */
	char	   *server_version;
	char	   *system_identifier;
	char	   *data_directory;
	char	   *start_lsn;
	char	   *stop_lsn;
	unsigned	timeline;
	bool		from_standby;	/* taken on a standby ("backup_from": "standby") */
	SbPgTablespace *tablespaces;
	int			ntablespaces;
	char	  **archive_destinations;	/* the WAL archive in force at the backup
										 * (a hint: it may have moved since) */
	uint32_t	narchive_destinations;
	uint32_t	archive_redundancy; /* stripebackup.archive_redundancy then (each
									 * segment in M + 1 of them); 0 when absent
									 * or not valid */
	char		bad_archive_redundancy[32]; /* what the metadata holds instead of
											 * an integer below the number of
											 * destinations ("": nothing wrong) */
} SbPgMeta;

/*
 * Read the manifest's metadata; a backup without any gives is_postgresql
 * false.  On failure (a malformed tablespace) nothing is left to free.
 */
extern bool sb_pgmeta_read(const SbManifest *m, SbPgMeta *info, SbError *err);

extern void sb_pgmeta_free(SbPgMeta *info);

/*
 * One relocation per tablespace (not in place): to its original location, or
 * where a mapping "OLD=NEW" moves it (sb_policy_parse_mapping: "\=" is an
 * "=" of a path).  RELOCS has room for every tablespace.  A mapping that is
 * malformed or names no tablespace of the backup is an error naming it as
 * SPELLING says ("tablespace_mapping", "--tablespace-mapping").
 */
extern bool sb_pgmeta_relocations(SbPgMeta *info, const char *const *mappings,
								  uint32_t nmappings, const char *spelling, SbRelocation *relocs,
								  uint32_t *nrelocs, SbError *err);

#endif							/* SB_PGMETA_H */
