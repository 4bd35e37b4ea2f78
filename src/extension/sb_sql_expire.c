/*
 * sb_sql_expire.c
 *		stripe_expire(): retention.  Removes the files of expired backups from
 *		every destination, and their history, and says what it removed.
 *
 * A backup expires when it meets every condition given: not among the
 * newest KEEP_LAST completed backups, and started before now - OLDER_THAN.
 * Never the newest completed backup, never a backup that runs, never the one
 * a running restore reads.  A backup whose folders hold only what
 * stripebackup wrote (the manifest and the stripe files) is removed whole; if
 * any folder holds anything else, nothing of that backup is removed, with a
 * warning, and its row stays.
 */
#include "postgres.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"

PG_FUNCTION_INFO_V1(stripe_expire);

/* What removing one backup folder did. */
typedef struct Removal
{
	int64		files;
	int64		bytes;
	bool		complete;		/* the folder is gone (or never was) */
} Removal;

/* Files stripebackup writes into a backup folder. */
static bool
is_ours(const char *name)
{
	return strcmp(name, SB_MANIFEST_FILE) == 0 ||
		strcmp(name, SB_MANIFEST_FILE ".tmp") == 0 ||
		(strncmp(name, "stripe-", 7) == 0 && strlen(name) > 11 &&
		 strcmp(name + strlen(name) - 4, ".sbs") == 0);
}

/* Does FOLDER hold only what stripebackup writes (or is it gone)? */
static bool
only_ours(const char *folder)
{
	DIR		   *dir = opendir(folder);
	struct dirent *de;
	bool		ours = true;

	if (dir == NULL)
		return true;
	while ((de = readdir(dir)) != NULL)
	{
		char		path[MAXPGPATH];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", folder, de->d_name);
		if (!is_ours(de->d_name) || lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
			ours = false;
	}
	closedir(dir);
	if (!ours)
		ereport(WARNING,
				(errmsg("backup folder \"%s\" holds files stripebackup did not write; the backup was kept",
						folder)));
	return ours;
}

/* Remove a backup folder that holds only our files. */
static void
remove_folder(const char *folder, Removal *r)
{
	DIR		   *dir = opendir(folder);
	struct dirent *de;

	if (dir == NULL)
		return;					/* already gone: nothing to do */
	while ((de = readdir(dir)) != NULL)
	{
		char		path[MAXPGPATH];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", folder, de->d_name);
		if (lstat(path, &st) != 0 || unlink(path) != 0)
			ereport(ERROR,
					(errcode_for_file_access(), errmsg("could not remove \"%s\": %m", path)));
		r->files++;
		r->bytes += st.st_size;
	}
	closedir(dir);
	if (rmdir(folder) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not remove \"%s\": %m", folder)));
}

/* Every folder of the backup, or none: a backup is never left half removed. */
static Removal
remove_backup(const char *name, Datum destinations)
{
	Datum	   *elems;
	char	  **folders;
	int			n,
				i;
	Removal		r = {0, 0, true};

	deconstruct_array(DatumGetArrayTypeP(destinations), TEXTOID, -1, false, TYPALIGN_INT,
					  &elems, NULL, &n);
	folders = palloc(sizeof(char *) * (n + 1));
	for (i = 0; i < n; i++)
	{
		folders[i] = psprintf("%s/%s", TextDatumGetCString(elems[i]), name);
		r.complete = only_ours(folders[i]) && r.complete;
	}
	for (i = 0; r.complete && i < n; i++)
		remove_folder(folders[i], &r);
	return r;
}

static void
put_row(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row, const Removal *r)
{
	Datum		v[7];
	bool		n[7] = {false, false, false, false, false, false, false};

	v[0] = sb_sql_datum(sql, rows, row, 1, &n[0]);
	v[1] = CStringGetTextDatum(sb_sql_text(sql, rows, row, 2));
	v[2] = CStringGetTextDatum(sb_sql_text(sql, rows, row, 3));
	v[3] = sb_sql_datum(sql, rows, row, 4, &n[3]);
	v[4] = Int64GetDatum(r->files);
	v[5] = Int64GetDatum(r->bytes);
	v[6] = BoolGetDatum(r->complete);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Remove expired backup ROW of ROWS, or keep it saying why. */
static void
expire_one(ReturnSetInfo *rs, const SbSql *sql, const SbRows *rows, uint64 row)
{
	bool		isnull;
	int64		id = DatumGetInt64(sb_sql_datum(sql, rows, row, 1, &isnull));
	char	   *name = sb_sql_text(sql, rows, row, 2);
	Removal		r;

	if (sb_shmem_backup_in_use(id))
	{
		ereport(NOTICE, (errmsg("backup %lld is in use by a running job; kept", (long long) id)));
		return;
	}
	r = remove_backup(name, sb_sql_datum(sql, rows, row, 5, &isnull));
	put_row(rs, sql, rows, row, &r);
	if (r.complete)
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
