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
#include "stripebackup/sb_pgmeta.h"

/* The newest completed backup that can be a parent of TYPE, from the history. */
typedef struct Candidate
{
	int64		id;
	char	   *name;
	Datum		destinations;
	uint8		uuid[SB_UUID_LEN];
	XLogRecPtr	start_lsn;
	XLogRecPtr	stop_lsn;
	TimeLineID	timeline;
} Candidate;

static bool
find_candidate(SbBackupType type, Candidate *c)
{
	Datum		values[1] = {BoolGetDatum(type == SB_BACKUP_INCR)};
	bool		isnull[7];
	SbSql		sql;
	SbRows		rows;
	int			i;

	sb_sql_enter(&sql);
	rows = sb_sql_run(SB_SQL_BACKUP_PARENT, values, NULL);
	if (rows.count == 1)
	{
		Datum		d[7];

		for (i = 0; i < 7; i++)
			d[i] = sb_sql_datum(&sql, &rows, 0, i + 1, &isnull[i]);
		c->id = DatumGetInt64(d[0]);
		c->name = sb_sql_text(&sql, &rows, 0, 2);
		c->destinations = d[2];
		if (!isnull[3])
			memcpy(c->uuid, DatumGetUUIDP(d[3])->data, SB_UUID_LEN);
		c->start_lsn = isnull[4] ? InvalidXLogRecPtr : DatumGetLSN(d[4]);
		c->stop_lsn = isnull[5] ? InvalidXLogRecPtr : DatumGetLSN(d[5]);
		c->timeline = isnull[6] ? 0 : DatumGetInt32(d[6]);
	}
	sb_sql_leave(&sql);
	return rows.count == 1;
}

/*
 * The first destination of C that holds its backup, opened with its chain
 * for the members alone, every manifest authenticated (closed with the
 * memory context); NULL and *WHY if none.
 */
static SbArchive *
open_candidate(const Candidate *c, char **why)
{
	Datum	   *dests;
	int			ndests,
				i;

	*why = psprintf("no destination of backup %lld holds it any more", (long long) c->id);
	deconstruct_array(DatumGetArrayTypeP(c->destinations), TEXTOID, -1, false, TYPALIGN_INT,
					  &dests, NULL, &ndests);
	for (i = 0; i < ndests; i++)
	{
		char	   *location = psprintf("%s/%s", TextDatumGetCString(dests[i]), c->name);
		SbError		err;
		SbArchive  *a = sb_handle_open_archive_to_check(location, &err);

		if (a != NULL && a->authenticated &&
			memcmp(a->manifest->uuid, c->uuid, SB_UUID_LEN) == 0)
			return a;
		if (a == NULL && err.code != SB_ENOTFOUND)
			*why = psprintf("backup %lld cannot be read: %s", (long long) c->id, err.message);
	}
	return NULL;
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
	TimeLineID	now = GetWALInsertionTimeLine();
	List	   *history = readTimeLineHistory(now);

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
sb_backup_choose_parent(SbBackupArgs *args, const char *type_name)
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
	fit = why == NULL && (a = open_candidate(&c, &why)) != NULL &&
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
	strlcpy(args->parent_location, a->location, sizeof(args->parent_location));
	memcpy(args->parent_uuid, c.uuid, SB_UUID_LEN);
	args->parent_start_lsn = c.start_lsn;
	args->parent_timeline = c.timeline;
	args->skip_unchanged = sb_guc_skip_unchanged;
}

SbArchive *
sb_backup_open_parent(const SbBackupArgs *args, XLogRecPtr start_lsn)
{
	SbArchive  *a = sb_handle_open_archive_to_look_up(args->parent_location);

	if (!a->authenticated || memcmp(a->manifest->uuid, args->parent_uuid, SB_UUID_LEN) != 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the parent backup %lld at \"%s\" changed since the backup was asked for",
						(long long) args->parent_id, args->parent_location)));
	if (args->parent_start_lsn >= start_lsn)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the parent backup %lld starts at %X/%X, not before this backup (%X/%X)",
						(long long) args->parent_id, LSN_FORMAT_ARGS(args->parent_start_lsn),
						LSN_FORMAT_ARGS(start_lsn))));
	return a;
}
