/*
 * catalog_walk.c
 *		Every backup folder of a destination, its manifest opened to plan
 *		(catalog_walk.h).  The folders come from the engine's listing of the
 *		destination's store, so a bucket is walked as a local folder is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_walk.h"

/* DEST/NAME, malloc'd. */
static char *
location_of(const char *dest, const char *name)
{
	size_t		dest_len = strlen(dest);
	size_t		len = dest_len + strlen(name) + 2;
	char	   *location = malloc(len);

	/* "DEST/" as given takes no second slash: the name must match the stripes' recorded folders */
	if (location != NULL)
		snprintf(location, len, "%s%s%s", dest, dest_len > 0 && dest[dest_len - 1] == '/' ? "" : "/", name);
	return location;
}

/* One folder to W: opened when it has a manifest and W wants it. */
static void
walk_folder(const CliWalk *w, const char *location, const SbCatalogFolder *entry)
{
	CliFolder	f = {.location = location, .entry = entry};
	SbError		err;
	/* its members but its entries, without the chain it completes */
	SbArchiveOpenOptions members = {.key = w->key, .keep = SB_KEEP_COUNTS, .alone = true};

	if (w->wanted != NULL && !w->wanted(w->arg, location))
		return;
	if (entry->has_manifest &&
		(f.archive = sb_archive_open_with(location, &members, &err)) == NULL)
		f.open_error = &err;
	w->found(w->arg, &f);
	if (f.archive != NULL)
		sb_archive_close(f.archive);
}

bool
cli_catalog_walk(const char *dest, const CliWalk *w, SbError *err)
{
	SbCatalog	c;
	size_t		i;

	if (!sb_catalog_read(dest, &c, err))
		return false;
	for (i = 0; i < c.nfolders; i++)
	{
		char	   *location = location_of(dest, c.folders[i].name);

		if (location == NULL)
		{
			sb_catalog_free(&c);
			return sb_error_set(err, SB_ENOMEM, "out of memory walking destination \"%s\"", dest);
		}
		walk_folder(w, location, &c.folders[i]);
		free(location);
	}
	sb_catalog_free(&c);
	return true;
}
