/*
 * sb_sql_expire.c
 *		stripe_expire(): retention.  Removes the files of expired backups from
 *		every destination, and their history, and says what it removed.
 *
 * A backup expires when it meets every condition given: not among the
 * newest KEEP_LAST completed backups, and started before now - OLDER_THAN.
 * Never the newest completed backup, never a backup that runs, never the one
 * a running restore reads.  A backup is removed from every destination or
 * from none, and only the files it wrote (job_backup_folders.c): a folder
 * or destination that is a link, or holds anything else, keeps the whole
 * backup and its row, with a warning, and retention goes on with the others.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "job_backup.h"
#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"

PG_FUNCTION_INFO_V1(stripe_expire);

static void
put_row(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row,
		const SbBackupRemoval *r)
{
	Datum		v[7];
	bool		n[7] = {false, false, false, false, false, false, false};

	v[0] = sb_sql_datum(sql, rows, row, 1, &n[0]);
	v[1] = CStringGetTextDatum(sb_sql_text(sql, rows, row, 2));
	v[2] = CStringGetTextDatum(sb_sql_text(sql, rows, row, 3));
	v[3] = sb_sql_datum(sql, rows, row, 4, &n[3]);
	v[4] = Int64GetDatum(r->files);
	v[5] = Int64GetDatum(r->bytes);
	v[6] = BoolGetDatum(r->removed);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Remove expired backup ROW of ROWS, or keep it saying why. */
static void
expire_one(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row)
{
	bool		isnull;
	int64		id = DatumGetInt64(sb_sql_datum(sql, rows, row, 1, &isnull));
	char	   *name = sb_sql_text(sql, rows, row, 2);
	Datum		destinations = sb_sql_datum(sql, rows, row, 5, &isnull);
	Datum		uuid = sb_sql_datum(sql, rows, row, 6, &isnull);
	SbBackupRemoval r;

	if (sb_shmem_backup_in_use(id))
	{
		ereport(NOTICE, (errmsg("backup %lld is in use by a running job; kept", (long long) id)));
		return;
	}
	r = sb_backup_remove_folders(name, destinations, isnull ? NULL : DatumGetUUIDP(uuid), WARNING);
	put_row(rs, sql, rows, row, &r);
	if (r.removed)
	{
		Datum		values[1] = {Int64GetDatum(id)};

		(void) sb_sql_run(SB_SQL_EXPIRE_FORGET, values, NULL);
	}
}

Datum
stripe_expire(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	Datum		values[2];
	char		nulls[2];
	SbSql		sql;
	SbRows		expired;
	uint64		i;

	sb_launch_check_privileges(true, "expire backups");
	if (PG_ARGISNULL(0) && PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("give keep_last, older_than or both"),
				 errhint("For example stripe_expire(keep_last => 7) keeps the newest seven completed backups.")));
	if (!PG_ARGISNULL(0) && PG_GETARG_INT32(0) < 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("keep_last %d must be at least 1", PG_GETARG_INT32(0))));
	InitMaterializedSRF(fcinfo, 0);
	values[0] = PG_ARGISNULL(0) ? (Datum) 0 : Int64GetDatum((int64) PG_GETARG_INT32(0));
	values[1] = PG_GETARG_DATUM(1);
	nulls[0] = PG_ARGISNULL(0) ? 'n' : ' ';
	nulls[1] = PG_ARGISNULL(1) ? 'n' : ' ';
	sb_sql_enter(&sql);
	/* The DELETEs below replace SPI's last result; this one stays valid until we leave. */
	expired = sb_sql_run(SB_SQL_EXPIRE_CANDIDATES, values, nulls);
	for (i = 0; i < expired.count; i++)
		expire_one(rs, &sql, &expired, i);
	sb_sql_leave(&sql);
	return (Datum) 0;
}
