/*
 * sb_expire.c
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
#include "executor/spi.h"
#include "fmgr.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "sb_launch.h"
#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_util.h"

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

/* The backup a running restore reads, if any (0 when restoring a location). */
static bool
in_use(int64 id)
{
	bool		busy;

	if (sb_shared == NULL)
		return false;
	LWLockAcquire(sb_shared->lock, LW_SHARED);
	busy = sb_shared->state != SB_JOB_IDLE &&
		((sb_shared->args.kind == SB_JOB_BACKUP && sb_shared->args.id == id) ||
		 (sb_shared->args.kind == SB_JOB_RESTORE && sb_shared->args.backup_id == id));
	LWLockRelease(sb_shared->lock);
	return busy;
}

/* The expired backups, oldest first: id, name, status, started_at, destinations. */
static void
select_expired(Datum keep_last, bool keep_null, Datum older_than, bool older_null)
{
	Oid			types[2] = {INT4OID, INTERVALOID};
	Datum		values[2] = {keep_last, older_than};
	char		nulls[3] = {keep_null ? 'n' : ' ', older_null ? 'n' : ' ', '\0'};
	char	   *sql = psprintf(
		"WITH ranked AS ("
		"  SELECT h.*, count(*) FILTER (WHERE status = 'completed')"
		"           OVER (ORDER BY started_at DESC, id DESC) AS newer_completed"
		"  FROM %1$s.stripe_backup_history h)"
		" SELECT id, name, status, started_at, destinations FROM ranked"
		" WHERE (status <> 'running' OR NOT %1$s.stripe_job_is_running('backup', id))"
		"   AND NOT (status = 'completed' AND newer_completed = 1)"
		"   AND ($1 IS NULL OR newer_completed > $1"
		"        OR (status <> 'completed' AND newer_completed >= $1))"
		"   AND ($2 IS NULL OR started_at < now() - $2)"
		" ORDER BY started_at, id", sb_schema_quoted());

	if (SPI_execute_with_args(sql, 2, types, values, nulls, true, 0) != SPI_OK_SELECT)
		elog(ERROR, "could not read the backup history");
}

/* Every folder of the backup, or none: a backup is never left half removed. */
static Removal
remove_backup(HeapTuple tuple, TupleDesc desc)
{
	bool		isnull;
	char	   *name = SPI_getvalue(tuple, desc, 2);
	ArrayType  *dests = DatumGetArrayTypeP(SPI_getbinval(tuple, desc, 5, &isnull));
	Datum	   *elems;
	char	  **folders;
	int			n,
				i;
	Removal		r = {0, 0, true};

	deconstruct_array(dests, TEXTOID, -1, false, TYPALIGN_INT, &elems, NULL, &n);
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
forget(int64 id)
{
	Oid			types[1] = {INT8OID};
	Datum		values[1] = {Int64GetDatum(id)};

	if (SPI_execute_with_args(psprintf("DELETE FROM %s.stripe_backup_history WHERE id = $1",
									   sb_schema_quoted()),
							  1, types, values, NULL, false, 0) != SPI_OK_DELETE)
		elog(ERROR, "could not remove backup %lld from the history", (long long) id);
}

static void
put_row(ReturnSetInfo *rs, HeapTuple tuple, TupleDesc desc, const Removal *r, bool *isnull)
{
	Datum		v[7];
	bool		n[7] = {false, false, false, false, false, false, false};

	v[0] = SPI_getbinval(tuple, desc, 1, isnull);
	v[1] = CStringGetTextDatum(SPI_getvalue(tuple, desc, 2));
	v[2] = CStringGetTextDatum(SPI_getvalue(tuple, desc, 3));
	v[3] = SPI_getbinval(tuple, desc, 4, isnull);
	v[4] = Int64GetDatum(r->files);
	v[5] = Int64GetDatum(r->bytes);
	v[6] = BoolGetDatum(r->complete);
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

Datum
stripe_expire(PG_FUNCTION_ARGS)
{
	SbSavedUser saved_user;
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SPITupleTable *expired;
	uint64		nexpired;
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
	saved_user = sb_spi_connect_as_extension();
	select_expired(PG_GETARG_DATUM(0), PG_ARGISNULL(0), PG_GETARG_DATUM(1), PG_ARGISNULL(1));
	/* The DELETEs below replace SPI_tuptable; this result stays valid until SPI_finish. */
	expired = SPI_tuptable;
	nexpired = SPI_processed;
	for (i = 0; i < nexpired; i++)
	{
		HeapTuple	tuple = expired->vals[i];
		TupleDesc	desc = expired->tupdesc;
		bool		isnull;
		int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
		Removal		r;

		if (in_use(id))
		{
			ereport(NOTICE, (errmsg("backup %lld is in use by a running job; kept", (long long) id)));
			continue;
		}
		r = remove_backup(tuple, desc);
		put_row(rs, tuple, desc, &r, &isnull);
		if (r.complete)
			forget(id);
	}
	sb_spi_finish_as_extension(saved_user);
	return (Datum) 0;
}
