/*
 * sb_startup.c
 *		At server start, and again after a crash restart, the history rows of
 *		backups and restores that were running when the server stopped (a
 *		worker killed, the server crashed or lost power) are marked failed,
 *		and the partial folders such a backup left in its destinations are
 *		removed.
 *
 * Two workers do it.  A static one, "stripebackup start-up", connects to no
 * database and looks up stripebackup.database_name, so that a missing
 * database is a LOG line rather than a FATAL one; it then starts a dynamic
 * worker in that database, which does the work if the extension is there.
 *
 * PostgreSQL forgets a static worker that exited with status 0, or that is
 * BGW_NEVER_RESTART, and does not start it again after a crash restart, the
 * very case this is for.  So the static worker always exits with status 1
 * (one LOG line from the postmaster) and asks to be restarted only after a
 * long interval; a crash restart starts it at once.  It keeps one of
 * max_worker_processes' slots reserved for that, as every static worker does.
 * Running it again at any time is harmless: a row is only marked when no
 * job of this server holds it (stripe_job_is_running()).
 *
 * The files a failed restore wrote into its target are left there: the
 * target may be a folder the user made, and the next restore into it is
 * refused while it is not empty.
 */
#include "postgres.h"

#include <sys/stat.h>
#include <unistd.h>

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_database.h"
#include "catalog/pg_type.h"
#include "commands/extension.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/rel.h"

#include "stripebackup/sb_manifest.h"
#include "sb_spi.h"
#include "sb_startup.h"
#include "sb_util.h"

/* Long enough to mean "after the next crash restart" (and under INT_MAX ms). */
#define SB_STARTUP_RESTART_SECONDS (14 * 24 * 3600)

#define SB_STALE_ERROR "the server restarted while it ran"

PGDLLEXPORT void stripebackup_startup_main(Datum main_arg);
PGDLLEXPORT void stripebackup_cleanup_main(Datum main_arg);

static char *sb_startup_database = NULL;

static void
fill_worker(BackgroundWorker *worker, const char *function)
{
	memset(worker, 0, sizeof(*worker));
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	strlcpy(worker->bgw_library_name, "stripebackup", BGW_MAXLEN);
	strlcpy(worker->bgw_function_name, function, BGW_MAXLEN);
	strlcpy(worker->bgw_name, "stripebackup start-up", BGW_MAXLEN);
	strlcpy(worker->bgw_type, "stripebackup start-up", BGW_MAXLEN);
}

void
sb_startup_register(void)
{
	BackgroundWorker worker;

	DefineCustomStringVariable("stripebackup.database_name",
							   "Database whose stripebackup history is checked at server start.",
							   "Backups and restores left running by a crash or restart are marked failed there.",
							   &sb_startup_database, "postgres",
							   PGC_SIGHUP, 0, NULL, NULL, NULL);	/* not POSTMASTER: CREATE EXTENSION may load us late */
	if (!process_shared_preload_libraries_in_progress)
		return;
	fill_worker(&worker, "stripebackup_startup_main");
	worker.bgw_restart_time = SB_STARTUP_RESTART_SECONDS;
	RegisterBackgroundWorker(&worker);
}

/*
 * The database's OID, or InvalidOid when there is none of that name.  Not
 * connected to a database, only shared catalogs can be read, and without
 * their indexes (get_database_oid() would use one).
 */
static Oid
database_oid(const char *name)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			oid = InvalidOid;

	StartTransactionCommand();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_database_datname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum(name));
	scan = systable_beginscan(rel, DatabaseNameIndexId, false, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		oid = ((Form_pg_database) GETSTRUCT(tuple))->oid;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
	return oid;
}

static void
start_cleanup(Oid database)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;

	fill_worker(&worker, "stripebackup_cleanup_main");
	worker.bgw_restart_time = BGW_NEVER_RESTART;
	worker.bgw_main_arg = ObjectIdGetDatum(database);
	if (!RegisterDynamicBackgroundWorker(&worker, &handle))
		ereport(LOG,
				(errmsg("stripebackup: could not check for backups left running: "
						"no background worker slot is free"),
				 errhint("You may need to increase \"max_worker_processes\".")));
}

void
stripebackup_startup_main(Datum main_arg)
{
	Oid			database;

	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	database = database_oid(sb_startup_database);
	if (OidIsValid(database))
		start_cleanup(database);
	else
		ereport(LOG,
				(errmsg("stripebackup: database \"%s\" does not exist; backups left running are not checked",
						sb_startup_database),
				 errhint("Set stripebackup.database_name to the database where CREATE EXTENSION stripebackup ran.")));
	/* Status 1 keeps this worker registered for the next crash restart. */
	proc_exit(1);
}

/* Does DEST/NAME hold a manifest, so that the backup may be complete? */
static bool
has_manifest(const char *dest, const char *name)
{
	char		path[MAXPGPATH];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s/%s", dest, name, SB_MANIFEST_FILE);
	return stat(path, &st) == 0;
}

/* Unlink PATH if it is there; say so in the log if it cannot be. */
static void
remove_file(const char *path)
{
	if (unlink(path) != 0 && errno != ENOENT)
		ereport(LOG, (errcode_for_file_access(), errmsg("could not remove \"%s\": %m", path)));
}

/*
 * What the backup writes into DEST/NAME before its manifest, as the engine's
 * abort removes it: stripe file NUMBER and a manifest being written.  The
 * folder goes only if nothing else is in it; anything else is not ours.
 */
static void
remove_partial_folder(const char *dest, const char *name, int number)
{
	char		folder[MAXPGPATH];
	char		file[32];
	char		path[MAXPGPATH];

	snprintf(folder, sizeof(folder), "%s/%s", dest, name);
	if (access(folder, F_OK) != 0)
		return;
	sb_stripe_file_name((uint32_t) number, file, sizeof(file));
	snprintf(path, sizeof(path), "%s/%s", folder, file);
	remove_file(path);
	snprintf(path, sizeof(path), "%s/%s.tmp", folder, SB_MANIFEST_FILE);
	remove_file(path);
	if (rmdir(folder) == 0)
		ereport(LOG, (errmsg("stripebackup: removed the partial backup folder \"%s\"", folder)));
	else
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("stripebackup: could not remove the partial backup folder \"%s\": %m", folder)));
}

/*
 * The folders backup NAME left in its destinations.  If any of them holds a
 * manifest, the backup may have been written in full before its row was
 * completed: then all are left for the user to verify.
 */
static void
remove_partial_backup(const char *name, Datum *dests, int ndests)
{
	int			i;

	/* The name comes from our history table; never a path. */
	if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 ||
		strcmp(name, "..") == 0)
		return;
	for (i = 0; i < ndests; i++)
		if (has_manifest(TextDatumGetCString(dests[i]), name))
		{
			ereport(LOG,
					(errmsg("stripebackup: left the folders of backup \"%s\": \"%s/%s\" holds a manifest",
							name, TextDatumGetCString(dests[i]), name),
					 errhint("Check them with stripebackup verify, then remove them.")));
			return;
		}
	for (i = 0; i < ndests; i++)
		remove_partial_folder(TextDatumGetCString(dests[i]), name, i + 1);
}

/* One row the UPDATE below returned: (id, name, destinations). */
static void
clean_backup_row(HeapTuple tuple, TupleDesc desc)
{
	bool		isnull;
	int64		id = DatumGetInt64(SPI_getbinval(tuple, desc, 1, &isnull));
	char	   *name = SPI_getvalue(tuple, desc, 2);
	Datum		array = SPI_getbinval(tuple, desc, 3, &isnull);
	Datum	   *dests;
	int			ndests;

	ereport(LOG,
			(errmsg("stripebackup: backup %lld was running when the server stopped; marked failed",
					(long long) id)));
	if (isnull || name == NULL)
		return;
	deconstruct_array(DatumGetArrayTypeP(array), TEXTOID, -1, false, TYPALIGN_INT,
					  &dests, NULL, &ndests);
	remove_partial_backup(name, dests, ndests);
}

/*
 * Mark failed the KIND ("backup" or "restore") rows left running that no job
 * of this server holds; SPI_tuptable then holds their id and COLUMNS.
 */
static void
mark_stale_rows(const char *schema, const char *kind, const char *columns)
{
	if (SPI_execute(psprintf("UPDATE %1$s.stripe_%2$s_history SET status = 'failed', "
							 "error = '" SB_STALE_ERROR "', finished_at = now() "
							 "WHERE status = 'running' AND NOT %1$s.stripe_job_is_running('%2$s', id) "
							 "RETURNING id, %3$s", schema, kind, columns),
					false, 0) != SPI_OK_UPDATE_RETURNING)
		elog(ERROR, "could not mark the %s rows left running", kind);
}

static void
mark_stale_backups(const char *schema)
{
	uint64		i;

	mark_stale_rows(schema, "backup", "name, destinations");
	for (i = 0; i < SPI_processed; i++)
		clean_backup_row(SPI_tuptable->vals[i], SPI_tuptable->tupdesc);
}

static void
mark_stale_restores(const char *schema)
{
	uint64		i;

	mark_stale_rows(schema, "restore", "target");
	for (i = 0; i < SPI_processed; i++)
		ereport(LOG,
				(errmsg("stripebackup: restore %s was running when the server stopped; marked failed",
						SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 1)),
				 errdetail("What it wrote into \"%s\" is left there.",
						   SPI_getvalue(SPI_tuptable->vals[i], SPI_tuptable->tupdesc, 2))));
}

void
stripebackup_cleanup_main(Datum main_arg)
{
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), BOOTSTRAP_SUPERUSERID, 0);
	pgstat_report_appname("stripebackup start-up");
	sb_spi_begin();
	if (OidIsValid(get_extension_oid("stripebackup", true)))
	{
		char	   *schema = sb_schema_quoted();

		mark_stale_backups(schema);
		mark_stale_restores(schema);
	}
	else
		ereport(LOG,
				(errmsg("stripebackup: extension \"stripebackup\" is not installed in database \"%s\"; "
						"backups left running are not checked", sb_startup_database),
				 errhint("Set stripebackup.database_name to the database where CREATE EXTENSION stripebackup ran.")));
	sb_spi_end();
}
