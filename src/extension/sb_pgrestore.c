/*
 * sb_pgrestore.c
 *		A restore while the server runs, in the worker of stripe_restore():
 *		the same engine restore as the command's, into a directory outside
 *		the running cluster, with tablespaces put where the mapping says.
 *		The result starts on another port with no further step.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/pmsignal.h"
#include "utils/builtins.h"

#include "stripebackup/sb_pgmeta.h"
#include "sb_args.h"
#include "sb_pgrestore.h"
#include "sb_progress.h"
#include "sb_spi.h"
#include "sb_util.h"
#include "sb_worker.h"

SbArchive *
sb_pgrestore_open(const char *location)
{
	SbArchive  *a;
	SbError		err;

	if (location[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("location \"%s\" is not an absolute path", location)));
	a = sb_archive_open(location, &err);
	if (a == NULL)
		sb_raise(&err);
	return a;
}

char *
sb_pgrestore_location_of(int64 backup_id)
{
	SbSavedUser saved_user;
	char	   *sql = psprintf("SELECT d || '/' || name FROM %s.stripe_backup_history, "
							   "unnest(destinations) d WHERE id = %lld AND status = 'completed'",
							   sb_schema_quoted(), (long long) backup_id);
	MemoryContext caller = CurrentMemoryContext;
	char	   *found = NULL;
	uint64		i;

	saved_user = sb_spi_connect_as_extension();
	if (SPI_execute(sql, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the backup history");
	for (i = 0; i < SPI_processed && found == NULL; i++)
	{
		char	   *folder = SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1);
		char		manifest[MAXPGPATH];

		snprintf(manifest, sizeof(manifest), "%s/%s", folder, SB_MANIFEST_FILE);
		if (access(manifest, R_OK) == 0)
			found = MemoryContextStrdup(caller, folder);
	}
	if (SPI_processed == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("there is no completed backup %lld", (long long) backup_id),
				 errhint("See SELECT id, status FROM stripe_backups.")));
	sb_spi_finish_as_extension(saved_user);
	if (found == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("no destination of backup %lld holds its manifest any more", (long long) backup_id),
				 errhint("Were its folders moved or removed?  Restore from a location instead.")));
	return found;
}

/* Estimates from history, to compare with what this restore measures. */
static void
plan(const SbArchive *a, SbRestoreOutcome *out)
{
	uint32_t	i;

	sb_spi_begin();
	sb_restore_plan_with_history(a, &out->plan);
	sb_spi_end();
	for (i = 0; i < out->plan.nstripes; i++)
		sb_restore_stripe_destination(a, i, out->destinations[i], MAXPGPATH);
	out->planned = true;
}

/* Tablespaces go to their locations, or where the mapping says; each checked. */
static SbRelocation *
relocations(const SbJobArgs *args, SbPgMeta *meta, uint32_t *n)
{
	const char *mappings[SB_MAX_MAPPINGS];
	SbRelocation *relocs = palloc0(sizeof(SbRelocation) * (meta->ntablespaces + 1));
	SbError		err;
	uint32_t	i;

	for (i = 0; i < (uint32_t) args->nmappings; i++)
		mappings[i] = args->mappings[i];
	if (!sb_pgmeta_relocations(meta, mappings, (uint32_t) args->nmappings, relocs, n, &err))
		sb_raise(&err);
	for (i = 0; i < *n; i++)
		sb_check_outside_cluster(relocs[i].to, relocs[i].what);
	return relocs;
}

static void
restore(const SbJobArgs *args, SbArchive *a, SbRestoreOutcome *out)
{
	SbRestoreOptions options;
	SbPgMeta	meta;
	SbError		err;
	bool		ok;

	memset(&options, 0, sizeof(options));
	if (!sb_pgmeta_read(a->manifest, &meta, &err))
		sb_raise(&err);
	options.relocations = relocations(args, &meta, &options.nrelocations);
	options.target = args->target;
	options.read.workers = (uint32_t) args->workers;
	options.read.buffer_count = (uint32_t) args->buffer_count;
	options.read.io_method = args->io_method;
	options.read.queue_depth = (uint32_t) args->queue_depth;
	options.read.max_rates = args->max_rates;
	options.read.tick = sb_worker_tick;
	options.stats = &out->stats;
	ok = sb_archive_restore(a, &options, &err);
	sb_pgmeta_free(&meta);
	if (!ok)
	{
		if (err.code == SB_EEXIST)
			ereport(ERROR,
					(errcode(ERRCODE_DUPLICATE_FILE), errmsg("%s", err.message),
					 errhint("Restore into an empty or new directory; map each tablespace in use "
							 "with tablespace_mapping => ARRAY['OLD=NEW'].")));
		sb_worker_raise(&err);
	}
	out->completed = true;
}

void
sb_pgrestore_run(const SbJobArgs *args, SbRestoreOutcome *out)
{
	SbArchive  *volatile a = sb_pgrestore_open(args->location);

	PG_TRY();
	{
		sb_check_outside_cluster(args->target, "restore target");
		sb_progress_begin_restore(a);
		plan(a, out);
		restore(args, a, out);
	}
	PG_FINALLY();
	{
		sb_archive_close(a);
	}
	PG_END_TRY();
}
