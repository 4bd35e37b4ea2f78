/*
 * job_backup_parent.c
 *		The parent of a differential or incremental backup: chosen and
 *		checked in the caller's session, opened again in the worker.
 *
 * A parent must be a completed backup of this system (system identifier)
 * whose WAL lies on the history of the timeline the server runs on now
 * (after a point-in-time restore to before it, it is of another past),
 * readable with its own chain, and older than the new backup's start.
 * Without one fit, a full backup is taken instead, and a NOTICE says why:
 * a scheduled "incr" never fails for want of a parent.
 */
#include "postgres.h"

#include "access/timeline.h"
#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/uuid.h"

#include "job_backup.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_spi.h"
#include "sb_standby_history.h"
#include "stripebackup/sb_pgmeta.h"

/* The newest completed backup that can be a parent of TYPE, from the history. */
typedef struct Candidate
{
	int64		id;
	uint8		uuid[SB_UUID_LEN];
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
} Candidate;

static bool
find_candidate(SbBackupType type, Candidate *c)
{
	Datum		values[1] = {BoolGetDatum(type == SB_BACKUP_INCR)};
	bool		isnull[5];
	SbSql		sql;
	SbRows		rows;
	int			i;

	sbx_sql_enter(&sql);
	/* on a standby, one of its own backups (sb_statements.c says why) */
	rows = sbx_sql_run(RecoveryInProgress() ? SB_SQL_STANDBY_BACKUP_PARENT : SB_SQL_BACKUP_PARENT, values, NULL);
	if (rows.count == 1)
	{
		Datum		d[5];

		for (i = 0; i < 5; i++)
			d[i] = sbx_sql_datum(&sql, &rows, 0, i + 1, &isnull[i]);
		c->id = DatumGetInt64(d[0]);
		if (!isnull[1])
			memcpy(c->uuid, DatumGetUUIDP(d[1])->data, SB_UUID_LEN);
		c->start_lsn = isnull[2] ? InvalidXLogRecPtr : DatumGetLSN(d[2]);
		c->stop_lsn = isnull[3] ? InvalidXLogRecPtr : DatumGetLSN(d[3]);
		c->timeline = isnull[4] ? 0 : DatumGetInt32(d[4]);
	}
	sbx_sql_leave(&sql);
	return rows.count == 1;
}

/*
 * C's backup, opened with its chain for the members alone, every manifest
 * authenticated and the backup the one its history row records (closed
 * with the memory context); NULL and *WHY if no destination holds it.
 */
static SbArchive *
open_candidate(const Candidate *c, SbArchiveExpect *expect, char **why)
{
	SbError		err;
	SbBackupRef *ref = sbx_backup_find_recorded(c->id, &err);
	SbArchive  *a;

	sbx_backup_expect_copy(expect, &ref->expect);
	if (ref->location == NULL)
	{
		*why = err.code != SB_OK ?
			psprintf("backup %lld cannot be read: %s", (long long) c->id, err.message) :
			psprintf("no destination of backup %lld holds it any more", (long long) c->id);
		return NULL;
	}
	a = sbx_handle_open_archive(ref, SB_OPEN_TO_CHECK, &err);
	if (a == NULL)
		*why = psprintf("backup %lld cannot be read: %s", (long long) c->id, err.message);
	else if (!a->authenticated)
	{
		*why = psprintf("backup %lld cannot be read: no stripe of it could be read", (long long) c->id);
		a = NULL;
	}
	return a;
}

/* Is A's cluster this one?  If not, *WHY. */
static bool
same_system(const Candidate *c, const SbArchive *a, char **why)
{
	char		mine[32];
	SbPgMeta	meta;
	SbError		err;
	bool		same;

	snprintf(mine, sizeof(mine), UINT64_FORMAT, GetSystemIdentifier());
	if (!sb_pgmeta_read(a->manifest, &meta, &err))
	{
		*why = psprintf("backup %lld says nothing readable of its cluster: %s", (long long) c->id,
						err.message);
		return false;
	}
	same = meta.is_postgresql && meta.system_identifier != NULL &&
		strcmp(meta.system_identifier, mine) == 0;
	if (!same)
		*why = psprintf("backup %lld is of another database system (%s; this one is %s)",
						(long long) c->id, meta.system_identifier ? meta.system_identifier : "none",
						mine);
	sb_pgmeta_free(&meta);
	return same;
}

/* Does the current timeline's history pass through C's whole backup?  If not, *WHY. */
static bool
on_current_history(const Candidate *c, char **why)
{
	TimeLineID	now;
	List	   *history;

	/* a standby's: the timeline it replays */
	if (RecoveryInProgress())
		(void) GetXLogReplayRecPtr(&now);
	else
		now = GetWALInsertionTimeLine();
	history = readTimeLineHistory(now);

	if (c->timeline != 0 && !XLogRecPtrIsInvalid(c->stop_lsn) &&
		tliOfPointInHistory(c->stop_lsn, history) == c->timeline)
		return true;
	*why = psprintf("backup %lld (timeline %u, up to %X/%X) is not in the history of the current timeline %u",
					(long long) c->id, c->timeline, LSN_FORMAT_ARGS(c->stop_lsn), now);
	return false;
}

static bool
parse_type(const char *name, SbBackupType *type)
{
	if (!sb_backup_type_parse(name, type))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("backup type \"%s\" is not one of full, diff or incr", name)));
	return *type != SB_BACKUP_FULL;
}

void
sbx_backup_choose_parent(SbBackupArgs *args, const char *type_name)
{
	SbBackupType type;
	Candidate	c;
	SbArchive  *a = NULL;
	char	   *why = NULL;
	bool		fit;

	args->type = SB_BACKUP_FULL;
	if (!parse_type(type_name, &type))
		return;
	if (args->chunk_size % BLCKSZ != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("a %s backup needs stripebackup.transfer_size_kb to be a multiple of %d, not %d",
						type_name, BLCKSZ / 1024, args->chunk_size / 1024)));
	memset(&c, 0, sizeof(c));
	if (!find_candidate(type, &c))
		why = psprintf("there is no completed %sbackup to be its parent",
					   type == SB_BACKUP_DIFF ? "full " : "");
	fit = why == NULL && (a = open_candidate(&c, &args->parent_expect, &why)) != NULL &&
		same_system(&c, a, &why) && on_current_history(&c, &why);
	if (!fit)
	{
		ereport(NOTICE,
				(errmsg("taking a full backup instead of %s one: %s",
						type == SB_BACKUP_DIFF ? "a differential" : "an incremental", why)));
		return;
	}
	args->type = type;
	args->parent_id = c.id;
	strlcpy(args->parent_location, sbx_archive_used_folder(a), sizeof(args->parent_location));
	memcpy(args->parent_uuid, c.uuid, SB_UUID_LEN);
	args->parent_start_lsn = c.start_lsn;
	args->parent_timeline = c.timeline;
	/* file times tell what a server did not write since its own backup only */
	args->skip_unchanged = sb_guc_skip_unchanged && !RecoveryInProgress() && c.id < SB_STANDBY_FIRST_ID;
	args->use_summaries = sb_guc_use_wal_summaries;
}

SbArchive *
sbx_backup_open_parent(const SbBackupArgs *args, XLogRecPtr start_lsn)
{
	SbBackupRef *ref = sbx_backup_ref_found(args->parent_location, args->parent_id,
										   &args->parent_expect);
	SbArchive  *a = sbx_handle_open_archive(ref, SB_OPEN_TO_LOOK_UP, NULL);

	if (!a->authenticated || memcmp(a->manifest->uuid, args->parent_uuid, SB_UUID_LEN) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the parent backup %lld at \"%s\" changed since the backup was asked for",
						(long long) args->parent_id, args->parent_location)));
	/*
	 * The same start is a standby's: no checkpoint came from the primary
	 * since the parent began, so both start at one restartpoint; the pages
	 * written since are still all that changed.
	 */
	if (args->parent_start_lsn > start_lsn)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the parent backup %lld starts at %X/%X, after this backup (%X/%X)",
						(long long) args->parent_id, LSN_FORMAT_ARGS(args->parent_start_lsn),
						LSN_FORMAT_ARGS(start_lsn))));
	return a;
}
