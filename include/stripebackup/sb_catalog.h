/*
 * sb_catalog.h
 *		What a destination holds, from a listing alone (nothing opened, no
 *		stripe read): its backup folders and, for each, whether its manifest
 *		and which stripe files are there; and what any place given as a
 *		backup's location is.  The command's "list" and its answers to a
 *		location that holds no backup read it.  Destinations are reached
 *		through the store (a local folder or s3://bucket/prefix).
 */
#ifndef SB_CATALOG_H
#define SB_CATALOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_error.h"

/* A folder of a destination that holds (or held) a backup's files. */
typedef struct SbCatalogFolder
{
	char	   *name;			/* the folder's name in the destination */
	bool		has_manifest;	/* manifest.json is there */
	uint32_t	nstripe_files;	/* stripe-K.sbs files there */
} SbCatalogFolder;

/* The backup folders of one destination, sorted by name. */
typedef struct SbCatalog
{
	SbCatalogFolder *folders;
	size_t		nfolders;
} SbCatalog;

/*
 * The backup folders of destination DEST: its folders that hold a
 * manifest, a manifest's temporary file or a stripe file (a backup that
 * did not complete holds no manifest); the WAL archive's "wal" folder is
 * none.  SB_ENOTFOUND when DEST is not there.
 */
extern bool sb_catalog_read(const char *dest, SbCatalog *catalog, SbError *err);
extern void sb_catalog_free(SbCatalog *catalog);

/* What a place named as a backup's location is. */
typedef enum SbPlaceKind
{
	SB_PLACE_MISSING,			/* nothing there: no such folder, nothing
								 * under the prefix */
	SB_PLACE_BACKUP,			/* a backup folder: its manifest is there */
	SB_PLACE_INCOMPLETE,		/* a backup folder without its manifest: a
								 * stripe file or the manifest's temporary
								 * file, a backup that did not complete */
	SB_PLACE_DESTINATION,		/* a folder of backup folders */
	SB_PLACE_OTHER				/* something else, holding no backup */
} SbPlaceKind;

/*
 * What LOCATION is, into *KIND; false (ERR) only when it cannot be told (a
 * bucket that refuses the listing, an I/O error).
 */
extern bool sb_catalog_probe(const char *location, SbPlaceKind *kind, SbError *err);

/*
 * Is PLACE (a destination) known not to be there, without listing it?  A
 * local folder that does not exist is; a lazy store (a bucket, reached only
 * at its first request) never is here: its listing tells.
 */
extern bool sb_catalog_missing(const char *place);

/*
 * The cheap checks of the backup A (opened to plan) and its PLAN, without
 * reading a stripe's contents: the manifest copy in use authenticated and
 * none set aside, every stripe file there with its recorded size, and a
 * manifest copy beside each stripe of the same size as the one in use.
 * True when all pass; else the first problem, naming it, into PROBLEM.
 * Only "verify" reads everything.
 */
extern bool sb_catalog_check_backup(const SbArchive *a, const SbPlan *plan, char *problem,
									size_t len);

#endif							/* SB_CATALOG_H */
