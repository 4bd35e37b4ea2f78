/*
 * job_merge.c
 *		stripe_merge(): a chain (a diff or incr and the backups it completes)
 *		folded into a new full backup of the same moment, without touching
 *		the cluster.  It is a backup job whose files come from the chain:
 *		its row is a backup's (type full, merged_from the chain's newest),
 *		stripe_cancel() stops it, retention and crash clean-up treat it as
 *		any backup.
 *
 * The engine (sb_merge.h) restores the chain, checking every chunk, into a
 * scratch folder beside the new backup in its first destination, and
 * writes it again; PostgreSQL's backup_manifest is written anew, with the
 * checksum of every file (the chain's newest lists its incremental files
 * without one).  The new backup keeps the newest's start and stop LSN,
 * timeline, backup_label and WAL: it restores to the same moment.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "storage/fd.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgrprotos.h"
#include "utils/json.h"
#include "utils/memutils.h"
#include "utils/pg_lsn.h"
#include "utils/uuid.h"

#include "job_backup.h"
#include "sb_args.h"
#include "sb_control.h"
#include "sb_handle.h"
#include "sb_pgmanifest.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "stripebackup/sb_merge.h"

#define PG_BACKUP_MANIFEST "backup_manifest"

char *
sbx_merge_staging(const char *dest, const char *name)
{
	return psprintf("%s/%s.merging", dest, name);
}

/* The history's row of backup ID into S and ARGS' destinations; its type is returned. */
static char *
read_source(int64 id, SbMergeSource *s, SbBackupArgs *args)
{
	Datum		values[1] = {Int64GetDatum(id)};
	bool		isnull[6];
	Datum		d[6];
	char	   *type;
	SbSql		sql;
	SbRows		rows;
	int			i;

	sbx_sql_enter(&sql);
	rows = sbx_sql_run(SB_SQL_MERGE_SOURCE, values, NULL);
	if (rows.count == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NO_DATA_FOUND),
				 errmsg("there is no completed backup %lld", (long long) id),
				 errhint("See SELECT id, status FROM stripe_backups.")));
	for (i = 0; i < 6; i++)
		d[i] = sbx_sql_datum(&sql, &rows, 0, i + 1, &isnull[i]);
	type = sbx_sql_text(&sql, &rows, 0, 7);
	strlcpy(s->name, TextDatumGetCString(d[0]), sizeof(s->name));
	args->ndestinations = sbx_args_read_destinations(DatumGetArrayTypeP(d[1]), args->destinations);
	if (isnull[2] || isnull[3] || isnull[4] || isnull[5])
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backup %lld has no identity or WAL position in its history row", (long long) id)));
	memcpy(s->uuid, DatumGetUUIDP(d[2])->data, SB_UUID_LEN);
	s->start_lsn = DatumGetLSN(d[3]);
	s->stop_lsn = DatumGetLSN(d[4]);
	s->timeline = (TimeLineID) DatumGetInt32(d[5]);
	sbx_sql_leave(&sql);
	s->id = id;
	return type;
}

/*
 * The chain of S, found as REF says and authenticated (closed with the
 * memory context): to merge, each backup's entries in a private file (the
 * newest's with the file stamps the merged backup records); else for its
 * members alone.
 */
static SbArchive *
open_chain(const SbMergeSource *s, const SbBackupRef *ref, bool to_merge)
{
	SbArchive  *a = sbx_handle_open_archive(ref, to_merge ? SB_OPEN_TO_MERGE : SB_OPEN_TO_CHECK, NULL);

	if (!a->authenticated || memcmp(a->manifest->uuid, s->uuid, SB_UUID_LEN) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the backup at \"%s\" is not backup %lld any more", ref->location,
						(long long) s->id)));
	if (a->manifest->metadata_json == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("backup %lld records nothing of its cluster", (long long) s->id)));
	return a;
}

void
sbx_merge_choose_source(SbBackupArgs *args, int64 id)
{
	SbMergeSource *s = &args->merge;
	char	   *type = read_source(id, s, args);
	SbBackupRef *ref;
	SbArchive  *a;

	if (strcmp(type, "full") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("backup %lld is a full backup: there is no chain to merge", (long long) id),
				 errhint("Merge a diff or incr backup: its chain becomes one full backup.")));
	ref = sbx_backup_recorded(id);
	sbx_backup_expect_copy(&s->expect, &ref->expect);
	/* a missing or damaged link is refused here, before anything is written */
	a = open_chain(s, ref, false);
	/* the worker opens what was found here (a recorded folder, if the first was set aside) */
	strlcpy(s->location, sbx_archive_used_folder(a), sizeof(s->location));
}

/* The chain's metadata, as this backup's: its id, and where it came from. */
static char *
merged_metadata(const SbJob *job, const SbArchive *chain)
{
	const SbMergeSource *s = &SB_JOB_ARGS(job, SbBackupArgs)->merge;
	StringInfoData add;
	Datum		merged;

	initStringInfo(&add);
	appendStringInfo(&add, "{\"backup_id\": %lld, \"merged_from\": {\"backup_id\": %lld, \"name\": ",
					 (long long) job->id, (long long) s->id);
	escape_json(&add, s->name);
	appendStringInfoString(&add, "}}");
	merged = DirectFunctionCall2(jsonb_concat,
								 DirectFunctionCall1(jsonb_in, CStringGetDatum(chain->manifest->metadata_json)),
								 DirectFunctionCall1(jsonb_in, CStringGetDatum(add.data)));
	return DatumGetCString(DirectFunctionCall1(jsonb_out, merged));
}

static void
abort_merge(void *object)
{
	sb_merge_abort(object);
}

static void
fill_options(const SbJob *job, const SbArchive *chain, SbPgManifest *pgmanifest,
			 SbMergeOptions *o, const char **dests)
{
	const SbBackupArgs *args = SB_JOB_ARGS(job, SbBackupArgs);
	static const char *const later[] = {PG_BACKUP_MANIFEST};

	memset(o, 0, sizeof(*o));
	sbx_backup_args_to_options(args, &o->backup, dests);
	o->backup.hooks.tick = sbx_control_worker_tick;
	o->backup.metadata_json = merged_metadata(job, chain);
	o->read.workers = (uint32_t) args->workers;
	o->read.buffer_count = (uint32_t) args->buffer_count;
	o->read.io_method = args->io_method;
	o->read.queue_depth = (uint32_t) args->queue_depth;
	o->read.max_memory = args->max_memory;
	o->read.tick = sbx_control_worker_tick;
	o->staging = sbx_merge_staging(args->destinations[0], args->name);
	/* no file table: the entries and PostgreSQL's manifest written as they come */
	o->backup.spill_dir = sbx_temp_folder();
	o->backup.hooks.entry = sbx_pgmanifest_add;
	o->backup.hooks.entry_arg = pgmanifest;
	o->later = later;
	o->nlater = lengthof(later);
}

static bool
add_file_size(void *arg, const SbEntry *e, SbError *err)
{
	(void) err;
	*(uint64 *) arg += e->size;
	return true;
}

static void
begin_progress(const SbBackupArgs *args, const SbArchive *chain)
{
	const char *locations[SB_MAX_STRIPES];
	uint64		totals[SB_MAX_STRIPES];
	uint64		total = 0;
	size_t		i;
	SbError		err;

	if (!sb_manifest_each_entry(chain->manifest, add_file_size, &total, &err))
		sbx_control_raise(&err);
	for (i = 0; i < (size_t) args->ndestinations; i++)
	{
		locations[i] = args->destinations[i];
		totals[i] = total / (uint64) args->ndestinations;
	}
	sbx_shmem_progress_begin(args->ndestinations, locations, totals, total);
}

/* PostgreSQL's backup_manifest, written anew as the merged backup recorded its files. */
static void
add_pg_manifest(SbMerge *m, SbPgManifest *pgmanifest, const SbMergeSource *s)
{
	SbBackup   *b = sb_merge_backup(m);
	File		f = sbx_pgmanifest_finish(pgmanifest, s->timeline, s->start_lsn, s->stop_lsn);
	SbError		err;

	if (!sb_backup_add_file(b, PG_BACKUP_MANIFEST, FilePathName(f), &err))
		sbx_control_raise(&err);
	sbx_pgmanifest_close(pgmanifest);
}

static void
free_manifest(void *object)
{
	sb_manifest_free(object);
}

void
sbx_merge_run(const SbJob *job, SbBackupOutcome *out)
{
	const SbBackupArgs *args = SB_JOB_ARGS(job, SbBackupArgs);
	SbArchive  *chain = open_chain(&args->merge,
								   sbx_backup_ref_found(args->merge.location, args->merge.id,
													   &args->merge.expect), true);
	SbPgManifest *pgmanifest = sbx_pgmanifest_begin();
	SbMergeOptions o;
	const char *dests[SB_MAX_STRIPES];
	SbHandle   *handle = sbx_handle_new(abort_merge);
	SbHandle   *manifest;
	SbMerge    *m;
	SbError		err;
	MemoryContext old;

	begin_progress(args, chain);
	fill_options(job, chain, pgmanifest, &o, dests);
	sbx_shmem_set_phase("restoring the chain");
	m = sb_merge_begin(chain, &o, &err);
	if (m == NULL)
		sbx_control_raise(&err);
	sbx_handle_own(handle, m);
	sbx_shmem_set_phase("copying files");
	if (!sb_merge_copy(m, &err))
		sbx_control_raise(&err);
	sbx_shmem_set_phase("finishing");
	add_pg_manifest(m, pgmanifest, &args->merge);
	out->start_lsn = args->merge.start_lsn;
	out->stop_lsn = args->merge.stop_lsn;
	out->timeline = args->merge.timeline;
	/* the manifest is part of the outcome, which outlives the job's memory */
	old = MemoryContextSwitchTo(GetMemoryChunkContext(out));
	manifest = sbx_handle_new(free_manifest);
	MemoryContextSwitchTo(old);
	if (!sb_merge_finish(sbx_handle_release(handle), &out->manifest, &err))
		sbx_control_raise(&err);
	sbx_handle_own(manifest, out->manifest);
}
