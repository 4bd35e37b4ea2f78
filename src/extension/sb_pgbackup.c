/*
 * sb_pgbackup.c
 *		One online backup of the whole cluster, in the backup worker:
 *
 *		1. a temporary physical replication slot keeps every WAL segment the
 *		   backup will need from being removed or recycled;
 *		2. backup start (a checkpoint; full-page writes forced);
 *		3. the data directory and every tablespace, by PostgreSQL's rules,
 *		   with page checksums verified as the files are read, then
 *		   global/pg_control last, then backup_label;
 *		4. backup stop (which switches WAL, so the last segment is complete);
 *		5. the WAL from the start segment to the stop segment, with
 *		   archive_status/<segment>.done and timeline history files;
 *		6. PostgreSQL's own backup_manifest, and our manifest's metadata;
 *		7. the engine syncs every stripe and writes the manifests.
 *
 * Everything between start and stop runs under PG_ENSURE_ERROR_CLEANUP, so
 * any error or FATAL ends backup mode; the engine is aborted (its partial
 * files removed) before an error leaves this file.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <time.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "common/file_perm.h"
#include "common/relpath.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/spin.h"
#include "utils/builtins.h"
#include "utils/json.h"
#include "utils/timestamp.h"

#include "sb_args.h"
#include "sb_pagecheck.h"
#include "sb_pgbackup.h"
#include "sb_pgmanifest.h"
#include "sb_progress.h"
#include "sb_util.h"
#include "sb_walk.h"
#include "sb_worker.h"

/* A tablespace, as pg_tblspc shows it. */
typedef struct Tablespace
{
	char	   *oid;
	char	   *location;		/* absolute, or pg_tblspc/<oid> when in place */
	bool		in_place;
} Tablespace;

typedef struct Run
{
	const SbJobArgs *args;
	SbBackupOutcome *out;
	SbBackup   *backup;
	SbPageCheck *pagecheck;
	SbWalk		walk;
	StringInfo	label;
	StringInfo	tablespace_map;
	List	   *tablespaces;
	TimeLineID	start_tli;
} Run;

static void
set_phase(const char *phase)
{
	LWLockAcquire(sb_shared->lock, LW_EXCLUSIVE);
	strlcpy(sb_shared->phase, phase, sizeof(sb_shared->phase));
	LWLockRelease(sb_shared->lock);
}

static void
check_server(void)
{
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("stripe_backup() cannot run while the server is in recovery"),
				 errhint("Take the backup on the primary.")));
	CheckSlotRequirements();
}

/*
 * A temporary slot: dropped when this process exits, whatever happens.
 * ReplicationSlotReserveWal() keeps the WAL from the last checkpoint on, but
 * the backup needs it only from the checkpoint it is about to request, which
 * starts after now: keeping more, the start checkpoint itself would
 * invalidate the slot under max_slot_wal_keep_size after much WAL.
 */
static void
create_slot(const SbJobArgs *args)
{
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), SB_WAL_SLOT_FORMAT, (long long) args->id);
	ReplicationSlotCreate(name, false, RS_TEMPORARY, false);
	ReplicationSlotReserveWal();
	SpinLockAcquire(&MyReplicationSlot->mutex);
	MyReplicationSlot->data.restart_lsn = GetXLogInsertRecPtr();
	SpinLockRelease(&MyReplicationSlot->mutex);
	ReplicationSlotsComputeRequiredLSN();
	ReplicationSlotMarkDirty();
	ReplicationSlotRelease();
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

static SbBackup *
begin_engine(Run *r)
{
	SbBackupOptions options;
	const char *dests[SB_MAX_STRIPES];
	SbBackup   *b;
	SbError		err;

	sb_args_to_options(r->args, &options, dests);
	options.tick = sb_worker_tick;
	options.tick_arg = r;
	options.read_hook = sb_pagecheck_hook;
	options.read_hook_arg = r->pagecheck;
	b = sb_backup_begin(&options, &err);
	if (b == NULL)
		sb_worker_raise(&err);
	return b;
}

static void
add_data(Run *r, const char *path, const char *data, size_t len)
{
	SbError		err;

	if (!sb_backup_add_data(r->backup, path, data, len, pg_file_create_mode,
							(int64_t) time(NULL), &err))
		sb_worker_raise(&err);
}

/* A file that must be there (pg_control, WAL): its absence is an error. */
static void
add_required_file(Run *r, const char *path)
{
	SbError		err;

	if (!sb_backup_add_file(r->backup, path, path, &err))
		sb_worker_raise(&err);
}

/* Data directory, tablespaces, pg_control last, then backup_label. */
static void
copy_cluster(Run *r)
{
	ListCell   *lc;

	set_phase("copying files");
	r->walk.backup = r->backup;
	sb_walk_data_directory(&r->walk);
	foreach(lc, r->tablespaces)
	{
		Tablespace *ts = lfirst(lc);

		sb_walk_tablespace(&r->walk, ts->oid, ts->location);
	}
	add_required_file(r, XLOG_CONTROL_FILE);
	sb_pagecheck_report(r->pagecheck);
	add_data(r, BACKUP_LABEL_FILE, r->label->data, r->label->len);
}

static void
add_wal_file(Run *r, const char *fname)
{
	char		path[MAXPGPATH];

	snprintf(path, sizeof(path), XLOGDIR "/%s", fname);
	add_required_file(r, path);
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

	set_phase("copying WAL");
	XLByteToSeg(start, first, wal_segment_size);
	XLByteToPrevSeg(stop, last, wal_segment_size);
	for (seg = first; seg <= last; seg++)
	{
		char		fname[MAXFNAMELEN];

		CheckXLogRemoved(seg, tli);
		XLogFileName(fname, tli, seg, wal_segment_size);
		add_wal_file(r, fname);
	}
	/* Every timeline history file: recovery reads them to follow timelines. */
	dir = AllocateDir(XLOGDIR);
	while ((de = ReadDir(dir, XLOGDIR)) != NULL)
		if (IsTLHistoryFileName(de->d_name))
			add_wal_file(r, de->d_name);
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
					 (long long) r->args->id, r->start_tli, LSN_FORMAT_ARGS(r->out->start_lsn),
					 LSN_FORMAT_ARGS(stop), DataChecksumsEnabled() ? "true" : "false",
					 (long long) sb_pagecheck_pages(r->pagecheck));
	appendStringInfoString(&s, "\"backup_label\": ");
	escape_json(&s, r->label->data);
	appendStringInfoString(&s, ", \"tablespace_map\": ");
	escape_json(&s, r->tablespace_map->data);
	appendStringInfoString(&s, ", ");
	append_tablespaces_json(&s, r->tablespaces);
	appendStringInfoString(&s, "}");
	return s.data;
}

/* After stop: WAL, PostgreSQL's manifest, metadata, then the engine's finish. */
static void
complete(Run *r, XLogRecPtr stop, TimeLineID stop_tli)
{
	char	   *pgmanifest;
	SbError		err;

	if (stop_tli != r->start_tli)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the timeline changed during the backup (from %u to %u)",
						r->start_tli, stop_tli)));
	copy_wal(r, r->out->start_lsn, stop, r->start_tli);
	set_phase("finishing");
	pgmanifest = sb_pgmanifest_build(sb_backup_manifest(r->backup), r->start_tli,
									 r->out->start_lsn, stop);
	add_data(r, "backup_manifest", pgmanifest, strlen(pgmanifest));
	if (!sb_backup_set_metadata(r->backup, metadata_json(r, stop), &err))
		sb_worker_raise(&err);
	r->out->stop_lsn = stop;
	r->out->timeline = r->start_tli;
	/* finish consumes the backup, whether it succeeds or not */
	if (!sb_backup_finish(r->backup, &r->out->manifest, &err))
	{
		r->backup = NULL;
		sb_worker_raise(&err);
	}
	r->backup = NULL;
}

/* Backup start to backup stop; the engine is created and filled in between. */
static XLogRecPtr
between_start_and_stop(Run *r, TimeLineID *stop_tli)
{
	const char *id = r->args->has_label ? r->args->label : r->args->name;
	XLogRecPtr	stop;

	set_phase("starting");
	r->label = makeStringInfo();
	r->tablespace_map = makeStringInfo();
	r->out->start_lsn = do_pg_backup_start(id, r->args->fast_checkpoint, &r->start_tli,
										   r->label, NULL, r->tablespace_map);
	r->tablespaces = list_tablespaces();
	r->pagecheck = sb_pagecheck_new(r->out->start_lsn);
	r->backup = begin_engine(r);
	copy_cluster(r);
	set_phase("stopping");
	stop = do_pg_backup_stop(r->label->data, false, stop_tli);
	return stop;
}

static void
run(Run *r)
{
	TimeLineID	stop_tli;
	XLogRecPtr	stop;

	PG_ENSURE_ERROR_CLEANUP(do_pg_abort_backup, BoolGetDatum(false));
	{
		stop = between_start_and_stop(r, &stop_tli);
	}
	PG_END_ENSURE_ERROR_CLEANUP(do_pg_abort_backup, BoolGetDatum(false));
	complete(r, stop, stop_tli);
}

void
sb_pgbackup_run(const SbJobArgs *args, SbBackupOutcome *out)
{
	Run		   *r = palloc0(sizeof(Run));

	r->args = args;
	r->out = out;
	check_server();
	sb_progress_begin_backup(args);
	create_slot(args);
	PG_TRY();
	{
		run(r);
	}
	PG_CATCH();
	{
		/* Stop the engine's threads and remove its partial files first. */
		if (r->backup != NULL)
			sb_backup_abort(r->backup);
		r->backup = NULL;
		PG_RE_THROW();
	}
	PG_END_TRY();
	ReplicationSlotCleanup();
}
