/*
 * job_backup.c
 *		The backup job: one online backup of the whole cluster, in a worker.
 *
 *		1. a temporary physical replication slot keeps every WAL segment the
 *		   backup will need from being removed or recycled;
 *		2. backup start (a checkpoint; full-page writes forced);
 *		3. the data directory and every tablespace, by PostgreSQL's rules,
 *		   with page checksums verified as the files are read (a diff or
 *		   incr: of relations, only the pages changed since its parent
 *		   began, job_backup_parent.c, and sb_summary.c's WAL summaries
 *		   or else sb_changed.c's page LSNs), then
 *		   global/pg_control last, then backup_label;
 *		4. backup stop (which switches WAL, so the last segment is complete);
 *		5. the WAL from the start segment to the stop segment, with
 *		   archive_status/<segment>.done and timeline history files;
 *		6. PostgreSQL's own backup_manifest, and our manifest's metadata;
 *		7. the engine syncs every stripe and writes the manifests.
 *
 * Everything between start and stop runs under PG_ENSURE_ERROR_CLEANUP, so
 * any error or FATAL ends backup mode.  The engine's backup is owned by the
 * job's memory context: when an error ends the job, the worker deletes that
 * context and the engine is aborted, its partial files removed.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <time.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/pg_tablespace_d.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "job_backup.h"
#include "sb_changed.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_key.h"
#include "sb_pagecheck.h"
#include "sb_pgmanifest.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_summary.h"
#include "sb_walk.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_version.h"

/* A tablespace, as pg_tblspc shows it. */
typedef struct Tablespace
{
	char	   *oid;
	char	   *location;		/* absolute, or pg_tblspc/<oid> when in place */
	bool		in_place;
} Tablespace;

typedef struct Run
{
	const SbJob *job;
	const SbBackupArgs *args;
	SbBackupOutcome *out;
	SbHandle   *handle;			/* owns the engine's backup */
	SbBackup   *backup;
	SbPageCheck *pagecheck;
	SbPageCheck *lane_pagecheck[SB_MAX_SOURCE_LANES];	/* each source lane's */
	uint32		source_lanes;
	SbPgManifest *pgmanifest;	/* PostgreSQL's backup_manifest, as files are recorded */
	SbChanged  *changed;		/* a diff or incr: which blocks changed */
	SbSummary  *summary;		/* and, from WAL summaries, without reading them */
	SbArchive  *parent;
	SbWalk		walk;
	SbCompatBackup server;		/* backup start's label, map and timeline */
	List	   *tablespaces;
} Run;

void
sbx_backup_args_to_options(const SbBackupArgs *args, SbBackupOptions *o, const char **dest_ptrs)
{
	int			i;

	memset(o, 0, sizeof(*o));
	o->s3 = sbx_s3_settings();
	for (i = 0; i < args->ndestinations; i++)
		dest_ptrs[i] = args->destinations[i];
	o->destinations = dest_ptrs;
	o->ndestinations = (uint32_t) args->ndestinations;
	o->weights = args->weights;
	o->name = args->name;
	o->label = args->has_label ? args->label : NULL;
	o->tool = SB_TOOL_NAME;
	o->codec = args->codec;
	o->level = args->level;
	o->balance = args->balance;
	o->chunk_size = (uint32_t) args->chunk_size;
	o->frame_size = (uint32_t) args->frame_size;
	o->buffer_count = (uint32_t) args->buffer_count;
	o->workers = (uint32_t) args->workers;
	o->detect_holes = false;	/* a live relation file is never read as holes */
	o->file_stamps = true;		/* any backup may be the parent of a diff or incr */
	o->io_method = args->io_method;
	o->queue_depth = (uint32_t) args->queue_depth;
	o->direct_io = args->direct_io;
	o->max_rates = args->max_rates;
	o->max_memory = args->max_memory;
	o->encryption_key = sbx_key_current();	/* the caller's file, which it captured */
	o->redundancy = (uint32_t) args->redundancy;
	StaticAssertStmt(sizeof(o->uuid) == sizeof(args->uuid), "backup uuid sizes differ");
	memcpy(o->uuid, args->uuid, sizeof(o->uuid));
}

static void
check_server(void)
{
	CheckSlotRequirements();
}

/* The cluster's size: what a backup is expected to read, roughly. */
static uint64
cluster_size(void)
{
	SbSql		sql;
	SbRows		rows;
	bool		isnull = true;
	uint64		size = 0;

	sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_CLUSTER_SIZE, NULL, NULL);
	if (rows.count == 1)
	{
		Datum		d = sbx_sql_datum(&sql, &rows, 0, 1, &isnull);

		if (!isnull)
			size = (uint64) DatumGetInt64(d);
	}
	sbx_sql_leave(&sql);
	return size;
}

/* Each destination's share of the cluster by weight: exact when weighted, a start when adaptive. */
static void
begin_progress(const SbBackupArgs *args)
{
	const char *locations[SB_MAX_STRIPES];
	uint64		totals[SB_MAX_STRIPES];
	uint64		total = cluster_size();
	double		sum = 0;
	int			i;

	for (i = 0; i < args->ndestinations; i++)
		sum += args->weights[i];
	for (i = 0; i < args->ndestinations; i++)
	{
		locations[i] = args->destinations[i];
		totals[i] = (uint64) ((double) total * args->weights[i] / sum);
	}
	sbx_shmem_progress_begin(args->ndestinations, locations, totals, total);
}

/*
 * A temporary slot: dropped when this process exits, whatever happens.
 * ReplicationSlotReserveWal() keeps the WAL from the last checkpoint on, but
 * the backup needs it only from the checkpoint it is about to request, which
 * starts after now: keeping more, the start checkpoint itself would
 * invalidate the slot under max_slot_wal_keep_size after much WAL.
 */
static void
create_slot(const SbJob *job)
{
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), SB_WAL_SLOT_FORMAT, (long long) job->id);
	sbx_compat_slot_create_temporary(name);
	ReplicationSlotReserveWal();
	/* a standby's backup starts at a restartpoint it made already: the slot keeps its redo point */
	if (!RecoveryInProgress())
	{
		SpinLockAcquire(&MyReplicationSlot->mutex);
		MyReplicationSlot->data.restart_lsn = GetXLogInsertRecPtr();
		SpinLockRelease(&MyReplicationSlot->mutex);
	}
	ReplicationSlotsComputeRequiredLSN();
	ReplicationSlotMarkDirty();
	ReplicationSlotRelease();
}

/*
 * Is this backup's WAL slot invalidated, or about to be?  A checkpoint that
 * finds a slot more than max_slot_wal_keep_size behind sends SIGTERM to the
 * process holding it and invalidates it once released: at our SIGTERM the
 * slot is usually still valid, but its WAL is no longer reserved.
 */
static bool
wal_slot_lost(const SbJob *job, char *name, size_t len)
{
	ReplicationSlot *slot;
	XLogRecPtr	restart_lsn;
	bool		invalidated;
	WALAvailability availability;

	snprintf(name, len, SB_WAL_SLOT_FORMAT, (long long) job->id);
	slot = SearchNamedReplicationSlot(name, true);
	if (slot == NULL)
		return false;
	SpinLockAcquire(&slot->mutex);
	restart_lsn = slot->data.restart_lsn;
	invalidated = sbx_compat_slot_invalidated(slot);
	SpinLockRelease(&slot->mutex);
	if (invalidated || XLogRecPtrIsInvalid(restart_lsn))
		return true;
	availability = GetWALAvailability(restart_lsn);
	return availability == WALAVAIL_UNRESERVED || availability == WALAVAIL_REMOVED;
}

/* A SIGTERM because the checkpointer gave up our slot is a failure, not a cancel. */
static const char *
backup_stop_reason(const SbJob *job, int *sqlstate)
{
	char		slot[NAMEDATALEN];

	if (!wal_slot_lost(job, slot, sizeof(slot)))
		return NULL;
	*sqlstate = ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	return psprintf("the WAL this backup needs is no longer kept: its replication slot \"%s\" "
					"fell more than max_slot_wal_keep_size (%dMB) behind and a checkpoint "
					"invalidated it", slot, max_slot_wal_keep_size_mb);
}

/* The tablespaces, from the links in pg_tblspc (in-place ones are folders). */
static List *
list_tablespaces(void)
{
	DIR		   *dir = AllocateDir("pg_tblspc");
	struct dirent *de;
	List	   *list = NIL;

	while ((de = ReadDir(dir, "pg_tblspc")) != NULL)
	{
		Tablespace *ts;
		char		link[MAXPGPATH];
		char		target[MAXPGPATH];
		ssize_t		len;
		struct stat st;

		if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(link, sizeof(link), "pg_tblspc/%s", de->d_name);
		if (lstat(link, &st) != 0)
			continue;			/* dropped meanwhile */
		ts = palloc0(sizeof(Tablespace));
		ts->oid = pstrdup(de->d_name);
		ts->in_place = S_ISDIR(st.st_mode);
		if (ts->in_place)
			ts->location = pstrdup(link);
		else
		{
			len = readlink(link, target, sizeof(target) - 1);
			if (len < 0)
				ereport(ERROR,
						(errcode_for_file_access(),
						 errmsg("could not read symbolic link \"%s\": %m", link)));
			target[len] = '\0';
			ts->location = pstrdup(target);
		}
		list = lappend(list, ts);
	}
	FreeDir(dir);
	return list;
}

/*
 * One source lane a device the files come from (the data directory, pg_wal,
 * each tablespace), so that a cluster over several disks is read from all of
 * them at once; none when they are all on one.
 */
static uint32
source_lanes(List *tablespaces)
{
	const char **folders = palloc((list_length(tablespaces) + 2) * sizeof(char *));
	size_t		n = 0;
	ListCell   *lc;

	folders[n++] = ".";
	folders[n++] = XLOGDIR;
	foreach(lc, tablespaces)
		folders[n++] = ((Tablespace *) lfirst(lc))->location;
	return sb_source_lanes_for(folders, n);
}

/* How many of the devices the files are on this backup reads at once, when they are several. */
static void
log_source_lanes(const Run *r)
{
	uint32		lanes = sb_backup_source_lanes(r->backup);

	if (r->source_lanes == 0 || r->args->type != SB_BACKUP_FULL)
		return;
	if (lanes == r->source_lanes)
		ereport(LOG, (errmsg("backup %lld reads its files from %u devices at once",
							 (long long) r->job->id, lanes)));
	else if (lanes > 0)
		ereport(LOG, (errmsg("backup %lld reads its files from %u of their %u devices at once",
							 (long long) r->job->id, lanes, r->source_lanes),
					  errhint("Raise stripebackup.buffer_count to read from more at once.")));
	else
		ereport(LOG, (errmsg("backup %lld reads its files from %u devices one after the other",
							 (long long) r->job->id, r->source_lanes),
					  errhint("Reading several devices at once needs stripebackup.buffer_count 8 or more.")));
}

static void
abort_backup(void *object)
{
	sb_backup_abort(object);
}

static void
begin_engine(Run *r)
{
	SbBackupOptions options;
	const char *dests[SB_MAX_STRIPES];
	SbError		err;

	sbx_backup_args_to_options(r->args, &options, dests);
	options.hooks.tick = sbx_control_worker_tick;
	options.hooks.tick_arg = r;
	options.hooks.read = sbx_pagecheck_hook;
	options.hooks.read_arg = r->pagecheck;
	options.source_lanes = r->source_lanes = source_lanes(r->tablespaces);
	for (uint32 i = 0; i < r->source_lanes; i++)
		options.hooks.read_lane_args[i] = r->lane_pagecheck[i] = sbx_pagecheck_new(r->out->start_lsn);
	r->pgmanifest = sbx_pgmanifest_begin();
	options.hooks.entry = sbx_pgmanifest_add;
	options.hooks.entry_arg = r->pgmanifest;
	options.spill_dir = sbx_temp_folder();
	if (r->args->type != SB_BACKUP_FULL)
	{
		r->parent = sbx_backup_open_parent(r->args, r->out->start_lsn);
		r->changed = sbx_changed_new(r->args->parent_start_lsn);
		options.type = r->args->type;
		options.parent = r->parent->manifest;
		options.block_size = BLCKSZ;
		options.hooks.file_filter = sbx_changed_file;
		options.hooks.block_filter = sbx_changed_block;
		options.hooks.filter_arg = r->changed;
		if (r->args->use_summaries)
			r->summary = sbx_summary_load(r->server.start_tli, r->args->parent_timeline,
										  r->args->parent_start_lsn, r->out->start_lsn);
		if (r->summary != NULL)
		{
			options.hooks.changed_blocks = sbx_summary_blocks;
			options.hooks.changed_blocks_arg = r->summary;
		}
		r->out->incremental_method = r->summary != NULL ? "wal_summaries" : "page_lsn";
		/* file times are trusted on the parent's timeline only */
		if (r->args->skip_unchanged && r->args->parent_timeline == r->server.start_tli)
			options.hooks.skip_filter = sbx_changed_relation;
	}
	r->handle = sbx_handle_new(abort_backup);
	r->backup = sb_backup_begin(&options, &err);
	if (r->backup == NULL)
		sbx_control_raise(&err);
	sbx_handle_own(r->handle, r->backup);
	log_source_lanes(r);
}

static void
add_data(Run *r, const char *path, const char *data, size_t len)
{
	SbError		err;

	if (!sb_backup_add_data(r->backup, path, data, len, pg_file_create_mode,
							(int64_t) time(NULL), &err))
		sbx_control_raise(&err);
}

/* A file that must be there (pg_control, WAL): its absence is an error. */
static void
add_required_file(Run *r, const char *archive_path, const char *disk_path)
{
	SbError		err;

	if (!sb_backup_add_file(r->backup, archive_path, disk_path, &err))
		sbx_control_raise(&err);
}

/*
 * Every file handed to a source lane read (before pg_control, which comes
 * last, and before the backup's stop), and the lanes' page checks counted.
 */
static void
wait_for_lanes(Run *r)
{
	SbError		err;

	if (!sb_backup_files_read(r->backup, &err))
		sbx_control_raise(&err);
	r->walk.skipped_files += (int64) sb_backup_files_vanished(r->backup);
	for (uint32 i = 0; i < r->source_lanes; i++)
		sbx_pagecheck_merge(r->pagecheck, r->lane_pagecheck[i]);
}

/* The data directory and its tablespaces, pg_control last, then backup_label. */
static void
copy_cluster(Run *r)
{
	ListCell   *lc;

	sbx_shmem_set_phase("copying files");
	r->walk.backup = r->backup;
	sbx_walk_root(&r->walk);

	/*
	 * The tablespaces before the rest of the data directory: with source
	 * lanes each tablespace's device starts on its large files while the walk
	 * goes on, instead of once the data directory's files (read on the walk's
	 * own device, behind its lane's reads) are all walked.
	 */
	foreach(lc, r->tablespaces)
	{
		Tablespace *ts = lfirst(lc);

		sbx_walk_tablespace(&r->walk, ts->oid, ts->location);
	}
	sbx_walk_data_directory(&r->walk);
	wait_for_lanes(r);
	add_required_file(r, XLOG_CONTROL_FILE, XLOG_CONTROL_FILE);
	sbx_pagecheck_report(r->pagecheck);
	if (r->changed != NULL)
		sbx_changed_report(r->changed);
	add_data(r, BACKUP_LABEL_FILE, r->server.label->data, r->server.label->len);
}

/* pg_wal/FNAME, read from SOURCE, with its archive_status/FNAME.done. */
static void
add_wal_file(Run *r, const char *fname, const char *source)
{
	char		path[MAXPGPATH];

	snprintf(path, sizeof(path), XLOGDIR "/%s", fname);
	add_required_file(r, path, source != NULL ? source : path);
	snprintf(path, sizeof(path), XLOGDIR "/archive_status/%s.done", fname);
	add_data(r, path, "", 0);
}

/* WAL segments from the start segment to the one holding the stop point. */
static void
copy_wal(Run *r, XLogRecPtr start, XLogRecPtr stop, TimeLineID tli)
{
	XLogSegNo	first,
				last,
				seg;
	DIR		   *dir;
	struct dirent *de;

	sbx_shmem_set_phase("copying WAL");
	XLByteToSeg(start, first, wal_segment_size);
	XLByteToPrevSeg(stop, last, wal_segment_size);
	for (seg = first; seg <= last; seg++)
	{
		char		fname[MAXFNAMELEN];

		char	   *fetched = NULL;

		CheckXLogRemoved(seg, tli);
		XLogFileName(fname, tli, seg, wal_segment_size);
		/* a standby's pg_wal may lack it, or hold a recycled file by its name */
		if (r->server.from_standby)
			fetched = sbx_backup_standby_wal(fname, seg, stop);
		add_wal_file(r, fname, fetched);
		if (fetched != NULL)
			unlink(fetched);	/* read: adding a file reads it whole */
	}
	/* Every timeline history file: recovery reads them to follow timelines. */
	dir = AllocateDir(XLOGDIR);
	while ((de = ReadDir(dir, XLOGDIR)) != NULL)
		if (IsTLHistoryFileName(de->d_name))
			add_wal_file(r, de->d_name, NULL);
	FreeDir(dir);
}

static void
append_tablespaces_json(StringInfo s, List *tablespaces)
{
	ListCell   *lc;

	appendStringInfoString(s, "\"tablespaces\": [");
	foreach(lc, tablespaces)
	{
		Tablespace *ts = lfirst(lc);

		appendStringInfo(s, "%s{\"oid\": %s, \"location\": ", lc == list_head(tablespaces) ? "" : ", ",
						 ts->oid);
		escape_json(s, ts->location);
		appendStringInfo(s, ", \"in_place\": %s}", ts->in_place ? "true" : "false");
	}
	appendStringInfoString(s, "]");
}

/*
 * The WAL archive in force (stripebackup.archive_destinations), as a hint
 * for a restore without the server: the command checks that each holds an
 * archive of this system before it uses one.  With its copies
 * (stripebackup.archive_redundancy), so that the command's restore_command
 * can let as many destinations be missing as the archive has copies for.
 */
static void
append_archive_json(StringInfo s)
{
	char		dests[SB_MAX_STRIPES][MAXPGPATH];
	const char *why = NULL;
	int			n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, dests, &why);
	int			i;

	if (n <= 0)
		return;
	appendStringInfoString(s, ", \"archive_destinations\": [");
	for (i = 0; i < n; i++)
	{
		if (i > 0)
			appendStringInfoString(s, ", ");
		escape_json(s, dests[i]);
	}
	appendStringInfoString(s, "]");
	if (sb_guc_archive_redundancy > 0)
		appendStringInfo(s, ", \"archive_redundancy\": %d", sb_guc_archive_redundancy);
}

/* What a restore of this backup needs to know about the cluster. */
static char *
metadata_json(Run *r, XLogRecPtr stop)
{
	StringInfoData s;

	initStringInfo(&s);
	appendStringInfo(&s, "{\"kind\": \"postgresql\", \"system_identifier\": \"" UINT64_FORMAT "\", "
					 "\"server_version_num\": %d, \"server_version\": ",
					 GetSystemIdentifier(), PG_VERSION_NUM);
	escape_json(&s, PG_VERSION);
	appendStringInfoString(&s, ", \"data_directory\": ");
	escape_json(&s, DataDir);
	appendStringInfo(&s, ", \"backup_id\": %lld, \"timeline\": %u, \"start_lsn\": \"%X/%X\", "
					 "\"stop_lsn\": \"%X/%X\", \"data_checksums\": %s, \"pages_checked\": %lld, ",
					 (long long) r->job->id, r->server.start_tli, LSN_FORMAT_ARGS(r->out->start_lsn),
					 LSN_FORMAT_ARGS(stop), DataChecksumsEnabled() ? "true" : "false",
					 (long long) sbx_pagecheck_pages(r->pagecheck));
	appendStringInfoString(&s, "\"backup_label\": ");
	escape_json(&s, r->server.label->data);
	appendStringInfoString(&s, ", \"tablespace_map\": ");
	escape_json(&s, r->server.tablespace_map->data);
	appendStringInfoString(&s, ", ");
	append_tablespaces_json(&s, r->tablespaces);
	append_archive_json(&s);
	if (r->out->incremental_method != NULL)
		appendStringInfo(&s, ", \"incremental_method\": \"%s\"", r->out->incremental_method);
	if (r->server.from_standby)
		appendStringInfoString(&s, ", \"backup_from\": \"standby\"");
	appendStringInfoString(&s, "}");
	return s.data;
}

static void
free_manifest(void *object)
{
	sb_manifest_free(object);
}

/*
 * The engine syncs and publishes.  Its manifest is part of the outcome, so
 * it lives as long as the outcome, which outlives the job's own memory.
 */
static void
finish_engine(Run *r)
{
	SbBackup   *b = sbx_handle_release(r->handle);
	MemoryContext old = MemoryContextSwitchTo(GetMemoryChunkContext(r->out));
	SbHandle   *manifest = sbx_handle_new(free_manifest);
	SbError		err;

	MemoryContextSwitchTo(old);
	/* finish consumes the backup, whether it succeeds or not */
	if (!sb_backup_finish(b, &r->out->manifest, &err))
		sbx_control_raise(&err);
	sbx_handle_own(manifest, r->out->manifest);
}

/* After stop: WAL, PostgreSQL's manifest, metadata, then the engine's finish. */
static void
complete(Run *r, XLogRecPtr stop, TimeLineID stop_tli)
{
	File		pgmanifest;
	SbError		err;

	if (stop_tli != r->server.start_tli)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the timeline changed during the backup (from %u to %u)",
						r->server.start_tli, stop_tli)));
	copy_wal(r, r->out->start_lsn, stop, r->server.start_tli);
	sbx_shmem_set_phase("finishing");
	pgmanifest = sbx_pgmanifest_finish(r->pgmanifest, r->server.start_tli, r->out->start_lsn, stop);
	add_required_file(r, "backup_manifest", FilePathName(pgmanifest));
	if (!sb_backup_set_metadata(r->backup, metadata_json(r, stop), &err))
		sbx_control_raise(&err);
	r->out->stop_lsn = stop;
	r->out->timeline = r->server.start_tli;
	finish_engine(r);
	sbx_pgmanifest_close(r->pgmanifest);
}

/* A backup taken on a standby cannot end once it is promoted: stop copying at once. */
static const char *
standby_promoted(void)
{
	return RecoveryInProgress() ? NULL : "the standby was promoted during the backup";
}

/* Backup start to backup stop; the engine is created and filled in between. */
static XLogRecPtr
between_start_and_stop(Run *r, TimeLineID *stop_tli)
{
	const char *id = r->args->has_label ? r->args->label : r->args->name;

	sbx_shmem_set_phase("starting");
	sbx_compat_backup_start(&r->server, id, r->args->fast_checkpoint);
	r->out->start_lsn = r->server.start_lsn;
	if (r->server.from_standby)
		sbx_control_set_abort_check(standby_promoted);
	r->tablespaces = list_tablespaces();
	r->pagecheck = sbx_pagecheck_new(r->out->start_lsn);
	begin_engine(r);
	copy_cluster(r);
	sbx_shmem_set_phase("stopping");
	return sbx_compat_backup_stop(&r->server, stop_tli);
}

static void
run_backup(const SbJob *job, void *outcome)
{
	Run		   *r = palloc0(sizeof(Run));
	TimeLineID	stop_tli;
	XLogRecPtr	stop;

	r->job = job;
	r->args = SB_JOB_ARGS(job, SbBackupArgs);
	r->out = outcome;
	sbx_key_file_use_for_job(r->args->encryption_key_file);
	if (r->args->merge.id != 0)
	{
		sbx_merge_run(job, outcome);		/* from a chain, not from the server */
		return;
	}
	check_server();
	begin_progress(r->args);
	create_slot(job);
	PG_ENSURE_ERROR_CLEANUP(do_pg_abort_backup, BoolGetDatum(false));
	{
		stop = between_start_and_stop(r, &stop_tli);
	}
	PG_END_ENSURE_ERROR_CLEANUP(do_pg_abort_backup, BoolGetDatum(false));
	complete(r, stop, stop_tli);
	sbx_compat_slot_cleanup();
}

const SbJobOps sb_backup_job = {
	.name = "backup",
	.id_sequence = "stripe_backup_id_seq",
	.cancel_function = "stripe_cancel",
	.outcome_size = sizeof(SbBackupOutcome),
	.history_insert = sbx_backup_history_insert,
	.run = run_backup,
	.history_finish = sbx_backup_history_finish,
	.stop_reason = backup_stop_reason,
	.crash_cleanup = sbx_backup_crash_cleanup,
};
