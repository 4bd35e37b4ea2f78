/*
 * catalog_walk.h
 *		Every backup folder of a destination, each with a manifest opened to
 *		plan (its members, not its file table): what "list" shows and what
 *		"restore DEST --target-*" picks from, one walk for both.
 */
#ifndef SB_CATALOG_WALK_H
#define SB_CATALOG_WALK_H

#include "cli.h"

/* One backup folder at LOCATION: what the walk found of it. */
typedef struct CliFolder
{
	const char *location;		/* DEST/NAME */
	const SbCatalogFolder *entry;	/* its manifest and stripe files, by name */
	SbArchive  *archive;		/* opened to plan, alone; NULL: no manifest,
								 * or it could not be opened (open_error) */
	const SbError *open_error;	/* why it could not be opened, or NULL */
} CliFolder;

typedef struct CliWalk
{
	const SbKey *key;			/* opens encrypted backups; NULL: none */
	/* whether to open the folder at LOCATION at all (NULL: every one) */
	bool		(*wanted) (void *arg, const char *location);
	/* each folder, its archive closed after */
	void		(*found) (void *arg, const CliFolder *folder);
	void	   *arg;
} CliWalk;

/*
 * Each backup folder of DEST (sb_catalog_read: local folders and buckets
 * alike) to W->found, in name order.  False (ERR) when DEST cannot be
 * listed: SB_ENOTFOUND when it is not there.
 */
extern bool cli_catalog_walk(const char *dest, const CliWalk *w, SbError *err);

#endif							/* SB_CATALOG_WALK_H */
