/*
 * sb_archive_module.c
 *		The WAL archive module (archive_library = 'stripebackup').
 *
 * PostgreSQL's archiver (15 to 18) hands the module one WAL file at a time.  The
 * module archives that file and, beside it, the files already marked ready
 * after it (up to stripebackup.archive_batch), in parallel over the
 * destinations with the engine's sb_wal_push_many: a busy server's WAL
 * keeps up although the archiver asks one file at a time, and the later
 * calls find their file done (the engine remembers what it wrote, and
 * takes it as archived when the file in pg_wal is still the one it read).  A segment goes to one destination
 * (stripebackup.archive_redundancy + 1 of them), a timeline or backup history file to every one
 * (docs/FORMAT.md); a destination done without is counted per destination and logged.
 *
 * The callback runs in the archiver process: no transaction, no database.
 * An ERROR inside it would become FATAL and restart the archiver, so it runs
 * under an error handler of its own that logs the error and returns false;
 * PostgreSQL then keeps the WAL and tries again.  It returns true only for
 * a file the engine has made durable in the archive; a file already there
 * with the same contents is true, with other contents false (and logged):
 * WAL is never dropped silently.
 *
 * With stripebackup.encryption_key_file set, every file is sealed with
 * that key.  The file is loaded as a backup's is (sb_key.c: only its owner
 * may read it), at every call whose settings or key file changed: a key
 * file that cannot be loaded fails the call with its reason, and the WAL
 * stays in pg_wal; the module never archives in the clear instead.
 */
#include "postgres.h"

#include <dirent.h>
#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"
#include "port/pg_bitutils.h"
#include "utils/memutils.h"

#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_store.h"
#include "stripebackup/sb_wal.h"
#include "sb_compat.h"
#include "sb_guc.h"
#include "sb_key.h"
#include "sb_s3_settings.h"
#include "sb_shmem.h"

#define READY_SUFFIX ".ready"

/* Memory of one call, reset after it. */
static MemoryContext call_context = NULL;

/* The archive, open while the settings it was opened with hold. */
static SbWalArchive *archive = NULL;
static char *archive_settings = NULL;

static bool
archive_configured(void)
{
	static char dests[SB_MAX_STRIPES][MAXPGPATH];
	const char *why = NULL;

	return sbx_guc_archive_destination_list(sb_guc_archive_destinations, dests, &why) > 0;
}

/*
 * The key file as it is now: its path and what tells a new file, new
 * contents or a new mode (inode, size, modification and change times), so
 * that a key replaced or made readable by others is loaded (and refused)
 * again, without reading the secret at every call.
 */
static char *
key_file_state(void)
{
	const char *path = sb_guc_encryption_key_file;
	struct stat st;

	if (path == NULL || path[0] == '\0')
		return pstrdup("none");
	if (stat(path, &st) != 0)
		return psprintf("%s|missing", path);
	return psprintf("%s|%llu|%lld|%lld.%09ld|%lld.%09ld", path, (unsigned long long) st.st_ino,
					(long long) st.st_size, (long long) st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
					(long long) st.st_ctim.tv_sec, st.st_ctim.tv_nsec);
}

/* The settings the archive depends on, as one text to compare. */
static char *
current_settings(void)
{
	return psprintf("%s|%d|%d|%d|%d|%d|%llu|%s", sb_guc_archive_destinations,
					sb_guc_archive_compression, sb_guc_archive_level, sb_guc_archive_workers,
					sb_guc_archive_batch, sb_guc_archive_redundancy,
					(unsigned long long) sbx_guc_max_memory_bytes(),
					key_file_state());
}

static void
close_archive(void)
{
	sb_wal_archive_close(archive);
	archive = NULL;
	if (archive_settings != NULL)
		pfree(archive_settings);
	archive_settings = NULL;
}

/* Open the archive as the settings say now (again if they changed); ERROR if it cannot be. */
static void
ensure_open(void)
{
	static char dests[SB_MAX_STRIPES][MAXPGPATH];
	const char *paths[SB_MAX_STRIPES];
	char	   *settings = current_settings();
	SbWalArchiveOptions o;
	const char *why = "no destination is set";
	SbError		err;
	int			n,
				i;

	if (archive != NULL && strcmp(settings, archive_settings) == 0)
		return;
	close_archive();
	n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, dests, &why);
	if (n <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("stripebackup.archive_destinations is not usable: %s", why)));
	for (i = 0; i < n; i++)
	{
		paths[i] = dests[i];
		if (sb_store_features_of(paths[i]) & SB_STORE_CONNECTION)
			sbx_s3_settings_check_location(paths[i], true);
	}
	memset(&o, 0, sizeof(o));
	o.destinations = paths;
	o.ndestinations = (uint32_t) n;
	o.s3 = sbx_s3_settings();	/* kept while the archive is open: the settings as they are now */
	o.system_identifier = GetSystemIdentifier();
	o.balance = SB_BALANCE_ADAPTIVE;
	o.codec = (SbCodec) sb_guc_archive_compression;
	o.level = sb_guc_archive_level;
	o.workers = (uint32_t) sb_guc_archive_workers;
	o.segment_size = (uint32_t) wal_segment_size;
	o.max_memory = sbx_guc_max_memory_bytes();
	o.redundancy = (uint32_t) sb_guc_archive_redundancy;
	/* ERROR when the key file is set and cannot be loaded: the call fails, nothing goes in the clear. */
	o.encryption_key = sbx_key_current();
	archive = sb_wal_archive_open(&o, &err);
	if (archive == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("could not open the WAL archive: %s", err.message)));
	archive_settings = MemoryContextStrdup(TopMemoryContext, settings);
	sbx_shmem_archive_destinations(n, (const char (*)[MAXPGPATH]) dests);
}

/* History files first, then by name: the order PostgreSQL's archiver takes them in. */
static int
compare_ready(const ListCell *a, const ListCell *b)
{
	const char *x = lfirst(a);
	const char *y = lfirst(b);
	bool		xh = strstr(x, ".history") != NULL;
	bool		yh = strstr(y, ".history") != NULL;

	if (xh != yh)
		return xh ? -1 : 1;
	return strcmp(x, y);
}

/* The first MAX of the WAL files marked ready but FILE, in archiving order. */
static int
list_ready(const char *file, char **names, int max)
{
	DIR		   *dir = opendir(XLOGDIR "/archive_status");
	struct dirent *de;
	List	   *ready = NIL;
	ListCell   *lc;
	int			n = 0;

	if (dir == NULL)
		return 0;				/* archiving ahead is an optimization only */
	while ((de = readdir(dir)) != NULL)
	{
		size_t		len = strlen(de->d_name);
		size_t		suffix = strlen(READY_SUFFIX);

		if (len <= suffix || len - suffix >= SB_WAL_FILE_LEN ||
			strcmp(de->d_name + len - suffix, READY_SUFFIX) != 0)
			continue;
		if (strncmp(de->d_name, file, len - suffix) != 0 || file[len - suffix] != '\0')
			ready = lappend(ready, pnstrdup(de->d_name, len - suffix));
	}
	closedir(dir);
	list_sort(ready, compare_ready);
	foreach(lc, ready)
		if (n < max)
			names[n++] = lfirst(lc);
	return n;
}

/* Where the segment FILE ends in WAL, for the archive's lag; 0 for other files. */
static uint64
segment_end(const char *file)
{
	SbWalName	name;
	SbError		err;

	if (!sb_wal_name_parse(file, &name, &err) || name.kind != SB_WAL_SEGMENT)
		return 0;
	return (sb_wal_segment_number(&name, (uint32_t) wal_segment_size) + 1) * (uint64) wal_segment_size;
}

/*
 * Destinations FILE went without (archive_redundancy): counted against
 * each, and a WARNING, so that fewer copies than asked never go unseen.
 */
static void
record_skipped(const SbWalFile *file, const SbWalPushResult *r)
{
	int			d;

	for (d = 0; d < SB_MAX_STRIPES; d++)
		if (r->skipped & ((uint64) 1 << d))
			sbx_shmem_archive_dest_failed(d, r->skip_error.message);
	if (r->archived)
		ereport(WARNING,
				(errmsg("stripebackup: WAL file \"%s\" archived without %d destination(s): %s",
						file->name, pg_popcount64(r->skipped), r->skip_error.message)));
}

/* What became of FILE: counted, or logged with its reason. */
static void
record(const SbWalFile *file, const SbWalPushResult *r)
{
	if (r->skipped != 0)
		record_skipped(file, r);
	if (r->archived)
	{
		sbx_shmem_archive_done(file->name, r->holders, r->raw_bytes, r->stored_bytes,
							  segment_end(file->name));
		return;
	}
	sbx_shmem_archive_failed(file->name, r->error.message);
	ereport(WARNING, (errmsg("stripebackup: %s", r->error.message)));
}

/* Archive FILE at PATH, and the ready files after it; is FILE durable in the archive? */
static bool
archive_one(const char *file, const char *path)
{
	int			batch = Max(sb_guc_archive_batch, 1);
	char	  **ready = palloc(sizeof(char *) * batch);
	SbWalFile  *files = palloc(sizeof(SbWalFile) * batch);
	SbWalPushResult *results = palloc0(sizeof(SbWalPushResult) * batch);
	int			nready,
				i;

	ensure_open();
	nready = list_ready(file, ready, batch - 1);
	files[0].name = file;
	files[0].path = path;
	for (i = 0; i < nready; i++)
	{
		files[i + 1].name = ready[i];
		files[i + 1].path = psprintf(XLOGDIR "/%s", ready[i]);
	}
	(void) sb_wal_push_many(archive, files, (uint32_t) nready + 1, results);

	for (i = 0; i <= nready; i++)
		if (!results[i].remembered)
			record(&files[i], &results[i]);
	return results[0].archived;
}

/*
 * The callback: archive_one() under an error handler of our own, as the
 * archiver has none (an ERROR would restart it).  Its memory is one
 * context, reset after every call.
 */
static bool
archive_file(const char *file, const char *path)
{
	sigjmp_buf	local_sigjmp_buf;
	sigjmp_buf *saved_stack = PG_exception_stack;
	MemoryContext caller = CurrentMemoryContext;
	volatile bool archived = false;

	if (call_context == NULL)
		call_context = AllocSetContextCreate(TopMemoryContext, "stripebackup archive",
											 ALLOCSET_DEFAULT_SIZES);
	if (sigsetjmp(local_sigjmp_buf, 1) != 0)
	{
		ErrorData  *edata;

		/* An ERROR: log it, keep its message for the view, say the file is not archived. */
		error_context_stack = NULL;
		HOLD_INTERRUPTS();
		MemoryContextSwitchTo(call_context);
		edata = CopyErrorData();
		EmitErrorReport();
		FlushErrorState();
		sbx_shmem_archive_failed(file, edata->message ? edata->message : "unknown error");
		PG_exception_stack = saved_stack;
		MemoryContextSwitchTo(caller);
		MemoryContextReset(call_context);
		RESUME_INTERRUPTS();
		return false;
	}
	PG_exception_stack = &local_sigjmp_buf;
	MemoryContextSwitchTo(call_context);
	archived = archive_one(file, path);
	PG_exception_stack = saved_stack;
	MemoryContextSwitchTo(caller);
	MemoryContextReset(call_context);
	return archived;
}

static void
archive_shutdown(void)
{
	close_archive();
}

/*
 * The server's entry point.  The module keeps no state of the server's
 * kind (ArchiveModuleState, 16+): one archiver process, one module.
 */
#if PG_VERSION_NUM >= 160000

static bool
archive_configured_cb(ArchiveModuleState *state)
{
	return archive_configured();
}

static bool
archive_file_cb(ArchiveModuleState *state, const char *file, const char *path)
{
	return archive_file(file, path);
}

static void
archive_shutdown_cb(ArchiveModuleState *state)
{
	archive_shutdown();
}

static const ArchiveModuleCallbacks callbacks = {
	.check_configured_cb = archive_configured_cb,
	.archive_file_cb = archive_file_cb,
	.shutdown_cb = archive_shutdown_cb,
};

const ArchiveModuleCallbacks *
_PG_archive_module_init(void)
{
	AssertVariableIsOfType(&_PG_archive_module_init, ArchiveModuleInit);
	return &callbacks;
}

#else

PGDLLEXPORT void _PG_archive_module_init(ArchiveModuleCallbacks *cb);

void
_PG_archive_module_init(ArchiveModuleCallbacks *cb)
{
	AssertVariableIsOfType(&_PG_archive_module_init, ArchiveModuleInit);
	cb->check_configured_cb = archive_configured;
	cb->archive_file_cb = archive_file;
	cb->shutdown_cb = archive_shutdown;
}

#endif
