/*
 * location.c
 *		What the command says when a location it was given holds no backup
 *		it can open: a path that is not there, a destination rather than
 *		one of its backups, or a folder of something else is "not found"
 *		(exit 1: check the path); only a backup that is there and lacks a
 *		piece, or has a wrong one, is "damaged" (exit 3).
 *
 * The engine says SB_ENOTFOUND for both (a stripe missing, a manifest
 * missing), so a failure to open is looked at again, from a listing of the
 * place (sb_catalog_probe), only when it happened: the common case costs
 * nothing.  Destinations written to or read from (create, wal-verify)
 * are looked at before anything starts, the same way.
 */
#include <stdio.h>

#include "cli.h"
#include "stripebackup/sb_catalog.h"
#include "stripebackup/sb_store.h"

bool
cli_place_not_found(const char *location, SbPlaceKind kind, SbError *err)
{
	if (kind == SB_PLACE_MISSING)
		return sb_error_set(err, SB_ENOTFOUND, "\"%s\" does not exist", location);
	if (kind == SB_PLACE_DESTINATION)
		return sb_error_set(err, SB_ENOTFOUND, "\"%s\" is a destination, not a backup's folder: "
							"\"%s list %s\" lists the backups it holds", location, progname, location);
	return sb_error_set(err, SB_ENOTFOUND, "\"%s\" holds no backup (no %s there, nor any stripe file)",
						location, SB_MANIFEST_FILE);
}

int
cli_report_open_error(const char *location, const SbError *err)
{
	SbPlaceKind kind;
	SbError		probe_err;

	/* only "missing" may mean the place rather than a piece of the backup */
	if (err->code != SB_ENOTFOUND || !sb_catalog_probe(location, &kind, &probe_err) ||
		kind == SB_PLACE_BACKUP || kind == SB_PLACE_INCOMPLETE)
		return cli_report_error(err);
	cli_place_not_found(location, kind, &probe_err);
	return cli_report_lookup_error(&probe_err);
}

int
cli_destinations_there(const char *what, const char *const *dests, uint32_t n)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
		/* a relative one is refused as bad input by the checks after */
		if (sb_store_is_absolute(dests[i]) && sb_catalog_missing(dests[i]))
		{
			fprintf(stderr, "%s: error: %s \"%s\" does not exist (is its device mounted?)\n", progname, what,
					dests[i]);
			return EXIT_NOT_FOUND;
		}
	return EXIT_OK;
}
