/*
 * sb_sql_expire.c
 *		stripe_expire(): retention.  Removes the files of expired backups from
 *		every destination, and their history, and says what it removed.
 *
 * A backup expires when it meets every rule given: not among the newest
 * KEEP_LAST completed backups; started before now - OLDER_THAN; older than
 * the newest completed backup that ended before the RECOVERY_WINDOW opened
 * (recovery to the window's first moment starts from that one, so it
 * stays, and everything after it); older than the newest KEEP_FULL
 * completed full backups.  Never the newest completed backup, never a
 * kept one (stripe_keep), never a backup that runs, never the one a running
 * restore reads.  A backup worker applies stripebackup.retention_full_count
 * and stripebackup.retention_window after each backup that completed
 * (sbx_expire_after_backup), as pgBackRest expires after each backup.  A backup is removed from every destination or
 * from none, and only the files it wrote (job_backup_folders.c): a folder
 * or destination that is a link, or holds anything else, keeps the whole
 * backup and its row, with a warning, and retention goes on with the others.
 * Chains stay whole: a backup that a differential or incremental backup
 * that stays depends on (directly or down its chain) stays too, with a
 * notice; children go before their parents, and a child that could not go
 * keeps its parents.
 *
 * On a standby, only its own backups (sb_standby_history.c) are looked at
 * and removed, their rows forgotten in its file; the primary's are the
 * primary's to expire, and so is the WAL archive.
 *
 * With a WAL archive (stripebackup.archive_destinations), the archived WAL
 * that no backup kept needs goes too: every file before the segment where
 * the oldest kept (or running) backup starts, as pg_archivecleanup would,
 * and only files whose header proves them this cluster's archive's
 * (sb_wal_remove_before).  A last row, backup_id NULL and status 'wal',
 * says what went.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"
#include "utils/timestamp.h"

#include "access/xact.h"
#include "utils/resowner.h"

#include "job_backup.h"
#include "sb_expire.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_standby_history.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_wal.h"

PG_FUNCTION_INFO_V1(stripe_expire);

static void
put_row(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row,
		const SbBackupRemoval *r)
{
	Datum		v[7];
	bool		n[7] = {false, false, false, false, false, false, false};

	if (rs == NULL)
	{
		/* After a backup, in its worker: the server log says what went. */
		if (r->removed)
			ereport(LOG,
					(errmsg("retention removed backup \"%s\": %lld files, %lld bytes",
							sbx_sql_text(sql, rows, row, 2), (long long) r->files, (long long) r->bytes)));
		return;
	}
	v[0] = sbx_sql_datum(sql, rows, row, 1, &n[0]);
	v[1] = CStringGetTextDatum(sbx_sql_text(sql, rows, row, 2));
	v[2] = CStringGetTextDatum(sbx_sql_text(sql, rows, row, 3));
	v[3] = sbx_sql_datum(sql, rows, row, 4, &n[3]);
	v[4] = Int64GetDatum(r->files);
	v[5] = Int64GetDatum(r->bytes);
	v[6] = BoolGetDatum(r->removed);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/*
 * The backups that stay although they expired, because a backup that stays
 * depends on them: rows come newest first, so a backup's children were
 * decided before it.
 */
typedef struct Keep
{
	int64	   *ids;			/* backups that must stay */
	int64	   *because;		/* the backup that needs each */
	int			n;
} Keep;

static void
keep_parent(Keep *k, int64 parent, int64 child)
{
	k->ids[k->n] = parent;
	k->because[k->n++] = child;
}

/* Must backup ROW stay for one that stays?  Says so, and keeps its own parent too. */
static bool
kept_for_child(Keep *k, const SbSql *sql, const SbRows *rows, uint64 row)
{
	bool		isnull,
				no_parent;
	int64		id = DatumGetInt64(sbx_sql_datum(sql, rows, row, 1, &isnull));
	Datum		parent = sbx_sql_datum(sql, rows, row, 7, &no_parent);
	Datum		needed_by = sbx_sql_datum(sql, rows, row, 8, &isnull);
	int64		child = isnull ? 0 : DatumGetInt64(needed_by);
	int			i;

	for (i = 0; child == 0 && i < k->n; i++)
		if (k->ids[i] == id)
			child = k->because[i];
	if (child == 0)
		return false;
	ereport(NOTICE,
			(errmsg("backup %lld is kept: backup %lld, which stays, depends on it",
					(long long) id, (long long) child)));
	if (!no_parent)
		keep_parent(k, DatumGetInt64(parent), child);
	return true;
}

static bool expire_backup(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row,
						  int64 id);

/* Remove expired backup ROW of ROWS, or keep it saying why; true when it went. */
static bool
expire_one(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row, Keep *k)
{
	bool		isnull;
	int64		id = DatumGetInt64(sbx_sql_datum(sql, rows, row, 1, &isnull));
	Datum		parent = sbx_sql_datum(sql, rows, row, 7, &isnull);

	if (kept_for_child(k, sql, rows, row))
		return false;
	if (!expire_backup(rs, sql, rows, row, id))
	{
		if (!isnull)
			keep_parent(k, DatumGetInt64(parent), id);
		return false;
	}
	return true;
}

/* Remove backup ID (ROW of ROWS) unless a job uses it; true when it went. */
static bool
expire_backup(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row, int64 id)
{
	bool		isnull;
	char	   *name = sbx_sql_text(sql, rows, row, 2);
	bool		completed = strcmp(sbx_sql_text(sql, rows, row, 3), "completed") == 0;
	Datum		destinations = sbx_sql_datum(sql, rows, row, 5, &isnull);
	Datum		uuid = sbx_sql_datum(sql, rows, row, 6, &isnull);
	SbBackupRemoval r;

	if (sbx_shmem_backup_in_use(id))
	{
		ereport(NOTICE, (errmsg("backup %lld is in use by a running job; kept", (long long) id)));
		return false;
	}
	r = sbx_backup_remove_folders(name, destinations, completed, isnull ? NULL : DatumGetUUIDP(uuid), WARNING);
	put_row(rs, sql, rows, row, &r);
	if (r.removed && RecoveryInProgress())
		sbx_standby_history_forget(id);
	else if (r.removed)
	{
		Datum		values[1] = {Int64GetDatum(id)};

		(void) sbx_sql_run(SB_SQL_EXPIRE_FORGET, values, NULL);
	}
	return r.removed;
}

/* The row of the WAL removed before segment BEFORE. */
static void
put_wal_row(ReturnSetInfo *rs, const char *before, const SbWalRemoval *r)
{
	Datum		v[7];
	bool		n[7] = {true, false, false, true, false, false, false};

	if (rs == NULL)
	{
		ereport(LOG, (errmsg("retention removed %llu archived WAL files before %s",
							 (unsigned long long) r->files, before)));
		return;
	}
	v[1] = CStringGetTextDatum(psprintf("WAL before %s", before));
	v[2] = CStringGetTextDatum("wal");
	v[4] = Int64GetDatum((int64) r->files);
	v[5] = Int64GetDatum((int64) r->bytes);
	v[6] = BoolGetDatum(r->files > 0);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Where point-in-time recovery can start now: the end of the oldest backup kept, if it is complete. */
static void
say_window(const SbSql *sql, const SbRows *oldest)
{
	bool		isnull;
	Datum		finished = sbx_sql_datum(sql, oldest, 0, 4, &isnull);

	if (isnull || strcmp(sbx_sql_text(sql, oldest, 0, 5), "completed") != 0)
		return;
	ereport(NOTICE,
			(errmsg("point-in-time recovery reaches back to %s, the end of backup %lld",
					timestamptz_to_str(DatumGetTimestampTz(finished)),
					(long long) DatumGetInt64(sbx_sql_datum(sql, oldest, 0, 3, &isnull)))));
}

/*
 * Remove the archived WAL that comes before every backup kept (REMOVED, an
 * int8[], the ones this call removed); nothing without an archive or a backup.
 */
static void
expire_wal(ReturnSetInfo *rs, const SbSql *sql, Datum removed)
{
	char		folders[SB_MAX_STRIPES][MAXPGPATH];
	const char *paths[SB_MAX_STRIPES];
	const char *why = "";
	char		before[MAXFNAMELEN];
	SbWalDests	dests;
	SbWalRemoval r;
	SbRows		oldest;
	SbError		err;
	XLogSegNo	segno;
	bool		isnull;
	int			n,
				i;

	/* a standby knows its own backups only: what the archive keeps is its primary's business */
	if (RecoveryInProgress())
		return;
	n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, folders, &why);
	if (n <= 0)
		return;
	oldest = sbx_sql_run(SB_SQL_EXPIRE_OLDEST_START, &removed, NULL);
	if (oldest.count == 0)
		return;
	XLByteToSeg(DatumGetLSN(sbx_sql_datum(sql, &oldest, 0, 1, &isnull)), segno, wal_segment_size);
	XLogFileName(before, DatumGetInt32(sbx_sql_datum(sql, &oldest, 0, 2, &isnull)), segno, wal_segment_size);
	for (i = 0; i < n; i++)
		paths[i] = folders[i];
	dests.paths = paths;
	dests.count = (uint32_t) n;
	dests.s3 = sbx_s3_settings();
	dests.system_identifier = GetSystemIdentifier();
	/* Retention recognises sealed files by their fields: no key needed, and a broken key file stops nothing. */
	dests.key = NULL;
	dests.redundancy = 0;
	if (!sb_wal_remove_before(&dests, before, false, &r, &err))
	{
		if (err.code == SB_ECANCELED)
			sbx_raise(&err);		/* raised as the cancel it is */
		ereport(WARNING, (errmsg("archived WAL before %s could not be removed: %s", before, err.message)));
		return;
	}
	if (r.kept > 0 || r.detail[0] != '\0')
		ereport(WARNING,
				(errmsg("%llu archived WAL files before %s were kept", (unsigned long long) r.kept, before),
				 errdetail("%s", r.detail)));
	put_wal_row(rs, before, &r);
	say_window(sql, &oldest);
}

/*
 * An interval rule (older_than, recovery_window) must reach into the past:
 * "-1 day" (or "0") would make every backup older than it, and expire all
 * but the newest.  Compared as PostgreSQL compares intervals (a month is 30
 * days).
 */
static void
check_positive(const char *name, Datum value)
{
	Interval	zero = {0};

	if (DatumGetBool(DirectFunctionCall2(interval_le, value, IntervalPGetDatum(&zero))))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" must be a positive interval", name,
						DatumGetCString(DirectFunctionCall1(interval_out, value))),
				 errhint("For example stripe_expire(%s => '30 days').", name)));
}

static void
check_count(const char *name, int value)
{
	if (value < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s %d must be at least 1", name, value)));
}

/* Remove what RULES expire; a row each into RS, or (NULL: a worker) a LOG line. */
static void
expire_in(const SbSql *sql, const SbExpireRules *rules, ReturnSetInfo *rs)
{
	SbRows		expired;
	Keep		keep;
	Datum	   *removed;
	int			nremoved = 0;
	bool		isnull;
	uint64		i;

	/* The DELETEs below replace SPI's last result; this one stays valid until we leave. */
	expired = sbx_sql_run(RecoveryInProgress() ? SB_SQL_STANDBY_EXPIRE_CANDIDATES : SB_SQL_EXPIRE_CANDIDATES,
						  (Datum *) rules->values, rules->nulls);
	removed = palloc(sizeof(Datum) * (expired.count + 1));
	keep.ids = palloc(sizeof(int64) * (expired.count + 1));
	keep.because = palloc(sizeof(int64) * (expired.count + 1));
	keep.n = 0;
	for (i = 0; i < expired.count; i++)
		if (expire_one(rs, sql, &expired, i, &keep))
			removed[nremoved++] = sbx_sql_datum(sql, &expired, i, 1, &isnull);
	expire_wal(rs, sql, PointerGetDatum(construct_array(removed, nremoved, INT8OID, sizeof(int64),
														FLOAT8PASSBYVAL, TYPALIGN_DOUBLE)));
}

/* Rule I of RULES: VALUE, or none when ISNULL. */
static void
set_rule(SbExpireRules *rules, int i, Datum value, bool isnull)
{
	rules->values[i] = isnull ? (Datum) 0 : value;
	rules->nulls[i] = isnull ? 'n' : ' ';
}

PGDLLEXPORT Datum
stripe_expire(PG_FUNCTION_ARGS)
{
	SbExpireRules rules;
	SbSql		sql;

	sbx_launch_check_privileges(true, "expire backups");
	if (PG_ARGISNULL(0) && PG_ARGISNULL(1) && PG_ARGISNULL(2) && PG_ARGISNULL(3))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("give keep_last, older_than, recovery_window or keep_full"),
				 errhint("For example stripe_expire(recovery_window => '7 days') keeps what recovery to any moment of the last seven days needs.")));
	if (!PG_ARGISNULL(0))
		check_count("keep_last", PG_GETARG_INT32(0));
	if (!PG_ARGISNULL(1))
		check_positive("older_than", PG_GETARG_DATUM(1));
	if (!PG_ARGISNULL(2))
		check_positive("recovery_window", PG_GETARG_DATUM(2));
	if (!PG_ARGISNULL(3))
		check_count("keep_full", PG_GETARG_INT32(3));
	InitMaterializedSRF(fcinfo, 0);
	set_rule(&rules, 0, PG_ARGISNULL(0) ? 0 : Int64GetDatum((int64) PG_GETARG_INT32(0)), PG_ARGISNULL(0));
	set_rule(&rules, 1, PG_GETARG_DATUM(1), PG_ARGISNULL(1));
	set_rule(&rules, 2, PG_GETARG_DATUM(2), PG_ARGISNULL(2));
	set_rule(&rules, 3, PG_ARGISNULL(3) ? 0 : Int64GetDatum((int64) PG_GETARG_INT32(3)), PG_ARGISNULL(3));
	sbx_sql_enter(&sql);
	expire_in(&sql, &rules, (ReturnSetInfo *) fcinfo->resultinfo);
	sbx_sql_leave(&sql);
	return (Datum) 0;
}

/* The rules of stripebackup.retention_*; false when none is set. */
static bool
settings_rules(SbExpireRules *rules)
{
	Interval   *window = palloc0(sizeof(Interval));

	window->time = (int64) sb_guc_retention_window * USECS_PER_SEC;
	set_rule(rules, 0, (Datum) 0, true);
	set_rule(rules, 1, (Datum) 0, true);
	set_rule(rules, 2, IntervalPGetDatum(window), sb_guc_retention_window == 0);
	set_rule(rules, 3, Int64GetDatum((int64) sb_guc_retention_full_count), sb_guc_retention_full_count == 0);
	return sb_guc_retention_window > 0 || sb_guc_retention_full_count > 0;
}

void
sbx_expire_after_backup(void)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	SbExpireRules rules;

	if (!settings_rules(&rules))
		return;
	/* The backup is completed and recorded: a retention that fails says so and leaves it so. */
	PG_TRY();
	{
		SbSql		sql;

		sbx_sql_begin(&sql);
		expire_in(&sql, &rules, NULL);
		sbx_sql_leave(&sql);
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(context);
		e = CopyErrorData();
		FlushErrorState();
		AbortCurrentTransaction();
		CurrentResourceOwner = owner;
		MemoryContextSwitchTo(context);
		ereport(WARNING,
				(errmsg("retention after the backup failed: %s", e->message),
				 errhint("stripebackup.retention_full_count and stripebackup.retention_window apply again after the next backup; stripe_expire() applies any rule now.")));
	}
	PG_END_TRY();
}
