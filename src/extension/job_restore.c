/*
 * job_restore.c
 *		The restore job, in the worker of stripe_restore(): the same engine
 *		restore as the command's, into a directory outside the running
 *		cluster, with tablespaces put where the mapping says.  The result
 *		starts on another port with no further step.
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"

#include "job_restore.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_key.h"
#include "sb_paths.h"
#include "sb_s3_settings.h"
#include "sb_shmem.h"
#include "sb_spi.h"

char *
sbx_restore_marker(int64 id)
{
	return psprintf("stripebackup restore %lld of the cluster with system identifier " UINT64_FORMAT,
					(long long) id, GetSystemIdentifier());
}

SbRelocation *
sbx_restore_relocations(const SbRestoreArgs *args, SbPgMeta *meta, uint32_t *n)
{
	const char *mappings[SB_MAX_MAPPINGS];
	SbRelocation *relocs = palloc0(sizeof(SbRelocation) * (meta->ntablespaces + 1));
	SbError		err;
	int			i;

	for (i = 0; i < args->nmappings; i++)
		mappings[i] = args->mappings[i];
	if (!sb_pgmeta_relocations(meta, mappings, (uint32_t) args->nmappings, "tablespace_mapping", relocs, n, &err))
		sbx_raise(&err);
	return relocs;
}

static void
free_pgmeta(void *object)
{
	sb_pgmeta_free(object);
	free(object);
}

SbPgMeta *
sbx_restore_read_pgmeta(const SbArchive *a)
{
	SbHandle   *h = sbx_handle_new(free_pgmeta);
	SbPgMeta   *meta = calloc(1, sizeof(SbPgMeta));
	SbError		err;

	if (meta == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	sbx_handle_own(h, meta);
	if (!sb_pgmeta_read(a->manifest, meta, &err))
		sbx_raise(&err);
	return meta;
}

static void
begin_progress(const SbArchive *a)
{
	const char *locations[SB_MAX_STRIPES];
	uint64		totals[SB_MAX_STRIPES];
	uint32_t	i;

	for (i = 0; i < a->manifest->nstripes; i++)
	{
		locations[i] = a->stripe_paths[i];
		totals[i] = a->manifest->stripes[i].raw_bytes;
	}
	sbx_shmem_progress_begin((int) a->manifest->nstripes, locations, totals,
							a->manifest->stream_bytes);
}

/* Estimates from history, to compare with what this restore measures. */
static void
plan(const SbArchive *a, SbRestoreOutcome *out)
{
	const SbArchive *link;
	SbPlan	   *older = palloc(sizeof(SbPlan));
	SbSql		sql;
	uint32_t	i;

	sbx_sql_begin(&sql);
	sbx_restore_plan_with_history(a, &out->plan, NULL);
	out->bytes_to_write = a->parent != NULL ? out->plan.logical_bytes : out->plan.raw_bytes;
	for (link = a->parent; link != NULL; link = link->parent)
	{
		sbx_restore_plan_with_history(link, older, NULL);
		sbx_restore_plan_add_link(&out->plan, older);
	}
	sbx_sql_leave(&sql);
	for (i = 0; i < out->plan.nstripes; i++)
		sbx_restore_stripe_destination(a, i, out->destinations[i], MAXPGPATH);
	out->planned = true;
}

void
sbx_restore_recovery_target(const SbRestoreArgs *args, SbRecoveryTarget *t)
{
	t->kind = args->recovery_kind;
	t->value = args->recovery_value[0] ? args->recovery_value : NULL;
	t->inclusive = args->recovery_inclusive;
	t->timeline = args->recovery_timeline[0] ? args->recovery_timeline : NULL;
	t->action = args->recovery_action[0] ? args->recovery_action : NULL;
	t->archive_mode = args->archive_mode;
	/* TimestampTz counts microseconds from 2000-01-01 UTC, as the engine's time does */
	t->has_time = args->recovery_kind == SB_RECOVERY_TIME;
	t->time = args->recovery_time;
}

static void
free_recovery_files(void *object)
{
	SbRestoreFile *files = object;

	sb_recovery_files_free(files, 2);
	free(files);
}

/* What a point-in-time or standby restore writes into the target: the signal file and settings. */
static void
recovery_files(const SbRestoreArgs *args, SbRestoreOptions *options)
{
	SbStandby	standby = {args->standby,
		args->primary_conninfo[0] ? args->primary_conninfo : NULL,
	args->primary_slot_name[0] ? args->primary_slot_name : NULL};
	SbHandle   *h = sbx_handle_new(free_recovery_files);
	SbRestoreFile *files = calloc(2, sizeof(SbRestoreFile));
	const char *dests[SB_MAX_STRIPES];
	SbRecoveryTarget t;
	SbRecoveryArchive a;
	char	   *key_path = NULL;
	SbError		err;
	bool		ok;
	int			i;

	if (files == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	sbx_handle_own(h, files);
	for (i = 0; i < args->narchive; i++)
		dests[i] = args->archive[i];
	sbx_restore_recovery_target(args, &t);
	a.program = args->program;
	a.destinations = dests;
	a.ndestinations = (uint32_t) args->narchive;
	a.system_identifier = args->system_identifier;
	a.prefetch = SB_RECOVERY_PREFETCH;
	/* The archive's copies: wal-get may then do without that many destinations. */
	a.redundancy = (uint32_t) sb_guc_archive_redundancy;
	/* The caller's key file, by the path restore_command can use from the copy's folder. */
	a.key_file = NULL;
	a.s3 = sbx_s3_settings();
	if (args->encryption_key_file[0] != '\0' &&
		(a.key_file = key_path = make_absolute_path(args->encryption_key_file)) == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	ok = sb_recovery_files(&t, &standby, &a, files, &options->nextra_files, &err);
	free(key_path);
	if (!ok)
		sbx_raise(&err);
	options->extra_files = files;
}

/* Every directory the restore writes into, recorded before it writes. */
static void
record_directories(const SbJob *job, const SbRestoreArgs *args, const SbRelocation *relocs,
				   uint32_t n)
{
	const char **dirs = palloc(sizeof(char *) * (n + 1));
	uint32_t	i;

	dirs[0] = args->target;
	for (i = 0; i < n; i++)
		dirs[i + 1] = relocs[i].to;
	sbx_restore_history_directories(job, dirs, (int) n + 1);
}

/* A delta restore's history records its own estimate, not a plain restore's. */
static void
estimate_delta(const SbRestoreArgs *args, const SbArchive *a, const SbRestoreOptions *o,
			   SbRestoreOutcome *out)
{
	SbDeltaEstimate *e = palloc(sizeof(SbDeltaEstimate));
	double		compare_mbps;
	SbError		err;
	SbSql		sql;

	/* a target it cannot look at is the restore's to refuse, with the reason */
	if (!sb_delta_estimate(a->manifest, args->target, o->relocations, o->nrelocations, e, &err))
	{
		out->plan.estimated_seconds = -1;
		return;
	}
	sbx_sql_begin(&sql);
	out->plan.estimated_seconds = sbx_restore_delta_seconds(&out->plan, e, a->parent != NULL,
														   args->target, &compare_mbps);
	sbx_sql_leave(&sql);
}

static void
restore(const SbJob *job, const SbRestoreArgs *args, SbArchive *a, SbRestoreOutcome *out)
{
	SbRestoreOptions options;
	SbError		err;
	uint32_t	i;

	memset(&options, 0, sizeof(options));
	options.relocations = sbx_restore_relocations(args, sbx_restore_read_pgmeta(a), &options.nrelocations);
	for (i = 0; i < options.nrelocations; i++)
		sbx_check_outside_cluster(options.relocations[i].to, options.relocations[i].what);
	record_directories(job, args, options.relocations, options.nrelocations);
	if (args->delta)
		estimate_delta(args, a, &options, out);
	options.target = args->target;
	options.delta = args->delta;
	options.delta_guard = SB_DELTA_GUARD;
	options.marker = sbx_restore_marker(job->id);
	recovery_files(args, &options);
	options.read.workers = (uint32_t) args->workers;
	options.read.buffer_count = (uint32_t) args->buffer_count;
	options.read.io_method = args->io_method;
	options.read.queue_depth = (uint32_t) args->queue_depth;
	options.read.max_rates = args->max_rates;
	options.read.max_memory = args->max_memory;
	options.read.tick = sbx_control_worker_tick;
	options.stats = &out->stats;
	if (sb_archive_restore(a, &options, &err))
	{
		out->completed = true;
		return;
	}
	if (err.code == SB_EEXIST)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_FILE), errmsg("%s", err.message),
				 errhint("Restore into an empty or new directory; map each tablespace in use "
						 "with tablespace_mapping => ARRAY['OLD=NEW'].")));
	sbx_control_raise(&err);
}

SbBackupRef *
sbx_restore_backup_ref(const SbRestoreArgs *args)
{
	if (args->backup_id == 0)
		return sbx_backup_ref_at(args->location, args->allow_unencrypted);
	return sbx_backup_ref_found(args->location, args->backup_id, &args->expect);
}

static void
run_restore(const SbJob *job, void *outcome)
{
	const SbRestoreArgs *args = SB_JOB_ARGS(job, SbRestoreArgs);
	SbArchive  *a;

	sbx_key_file_use_for_job(args->encryption_key_file);
	/* a window of files at a time, a delta restore and each backup of a chain too */
	a = sbx_handle_open_archive(sbx_restore_backup_ref(args), SB_OPEN_TO_READ, NULL);

	sbx_check_outside_cluster(args->target, "restore target");
	begin_progress(a);
	plan(a, outcome);
	sbx_shmem_set_phase("restoring");
	restore(job, args, a, outcome);
}

const SbJobOps sb_restore_job = {
	.name = "restore",
	.id_sequence = "stripe_restore_id_seq",
	.cancel_function = "stripe_cancel_restore",
	.outcome_size = sizeof(SbRestoreOutcome),
	.history_insert = sbx_restore_history_insert,
	.run = run_restore,
	.history_finish = sbx_restore_history_finish,
	.stop_reason = NULL,
	.crash_cleanup = sbx_restore_crash_cleanup,
};
