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
 * job of this server holds it (stripe_job_is_running()).  What each kind
 * cleans up is its own business (its crash_cleanup operation).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_authid_d.h"
#include "catalog/pg_database.h"
#include "commands/extension.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "storage/ipc.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/rel.h"
#include "utils/resowner.h"

#include "sb_control.h"
#include "sb_job.h"
#include "sb_startup.h"

/* Long enough to mean "after the next crash restart" (and under INT_MAX ms). */
#define SB_STARTUP_RESTART_SECONDS (14 * 24 * 3600)

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

const char *
sbx_startup_database_name(void)
{
	return sb_startup_database;
}

void
sbx_startup_register(void)
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

/* Is the extension in the database this worker connected to? */
static bool
extension_installed(void)
{
	bool		installed;

	StartTransactionCommand();
	installed = OidIsValid(get_extension_oid("stripebackup", true));
	CommitTransactionCommand();
	return installed;
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

void
stripebackup_cleanup_main(Datum main_arg)
{
	int			kind;

	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnectionByOid(DatumGetObjectId(main_arg), BOOTSTRAP_SUPERUSERID, 0);
	sbx_control_pin_settings();
	pgstat_report_appname("stripebackup start-up");
	if (!extension_installed())
	{
		ereport(LOG,
				(errmsg("stripebackup: extension \"stripebackup\" is not installed in database \"%s\"; "
						"backups left running are not checked", sb_startup_database),
				 errhint("Set stripebackup.database_name to the database where CREATE EXTENSION stripebackup ran.")));
		return;
	}
	/* Files and buffers used outside a transaction need an owner. */
	CurrentResourceOwner = ResourceOwnerCreate(NULL, "stripebackup start-up");
	for (kind = 0; kind < SB_JOB_NKINDS; kind++)
		sbx_job_ops((SbJobKind) kind)->crash_cleanup();
}
