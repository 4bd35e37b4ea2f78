/*
 * sb_standby_history.c
 *		The history of the backups a standby takes, in a file of its data
 *		directory: a line of JSON per change of a backup's row (started,
 *		ended), appended and synced before the job goes on, the newest line
 *		of a backup being its row.  Lines carry the columns of
 *		stripe_backup_history (and "stripes", the rows of
 *		stripe_backup_stripe_history), so that SQL reads them with
 *		jsonb_populate_record().  The file is the server's own: WAL does not
 *		carry it to other servers, and backups leave its folder out.
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/resowner.h"
#include "utils/tuplestore.h"

#include "sb_shmem.h"
#include "sb_spi.h"
#include "sb_standby_history.h"

/* The newest line of one backup. */
typedef struct Record
{
	int64		id;
	char	   *line;
	bool		forgotten;		/* the line says only that: the backup was removed */
} Record;

#define ID_PREFIX "{\"id\": "
#define FORGOTTEN ", \"forgotten\": true}"

/* The whole file, NUL-terminated; NULL when there is none. */
static char *
read_file(void)
{
	int			fd = OpenTransientFile(SB_STANDBY_HISTORY_FILE, O_RDONLY | PG_BINARY);
	struct stat st;
	char	   *data;
	ssize_t		n;

	if (fd < 0 && errno == ENOENT)
		return NULL;
	if (fd < 0 || fstat(fd, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"%s\": %m", SB_STANDBY_HISTORY_FILE)));
	data = palloc((Size) st.st_size + 1);
	n = pg_pread(fd, data, (size_t) st.st_size, 0);
	if (n < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not read \"%s\": %m", SB_STANDBY_HISTORY_FILE)));
	CloseTransientFile(fd);
	data[n] = '\0';
	return data;
}

/*
 * The newest line of each backup, in the order the backups began (ids stay
 * taken when forgotten).  A line not ended by a newline (cut short by a
 * crash) is not a row.
 */
static List *
read_records(void)
{
	char	   *data = read_file();
	char	   *line = data;
	char	   *end;
	List	   *records = NIL;

	for (; data != NULL && (end = strchr(line, '\n')) != NULL; line = end + 1)
	{
		Record	   *r = NULL;
		char	   *after;
		int64		id;

		*end = '\0';
		if (strncmp(line, ID_PREFIX, strlen(ID_PREFIX)) != 0)
			continue;			/* the remains of a line cut short */
		id = strtoi64(line + strlen(ID_PREFIX), &after, 10);
		if (*after != ',')
			continue;
		/* from the newest: a backup's lines are mostly near each other */
		for (int i = list_length(records) - 1; r == NULL && i >= 0; i--)
			if (((Record *) list_nth(records, i))->id == id)
				r = list_nth(records, i);
		if (r == NULL)
		{
			r = palloc(sizeof(Record));
			r->id = id;
			records = lappend(records, r);
		}
		r->line = line;
		r->forgotten = strcmp(after, FORGOTTEN) == 0;
	}
	return records;
}

/* The rows of read_records() that are not forgotten. */
static List *
read_rows(void)
{
	List	   *rows = NIL;
	ListCell   *lc;

	foreach(lc, read_records())
		if (!((Record *) lfirst(lc))->forgotten)
			rows = lappend(rows, lfirst(lc));
	return rows;
}

int64
sbx_standby_next_id(void)
{
	int64		floor = SB_STANDBY_FIRST_ID + (int64) time(NULL) * 1000;
	ListCell   *lc;

	foreach(lc, read_records())
		floor = Max(floor, ((Record *) lfirst(lc))->id + 1);
	return sbx_shmem_next_standby_id(floor);
}

/* Does the file end in the middle of a line (a crash cut an append short)? */
static bool
ends_mid_line(int fd)
{
	struct stat st;
	char		last;

	return fstat(fd, &st) == 0 && st.st_size > 0 &&
		pg_pread(fd, &last, 1, st.st_size - 1) == 1 && last != '\n';
}

static void
write_all(int fd, const char *data, size_t len)
{
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write \"%s\": %m", SB_STANDBY_HISTORY_FILE)));
	}
}

void
sbx_standby_history_append(const StringInfo record)
{
	bool		created = access(SB_STANDBY_HISTORY_FILE, F_OK) != 0;
	StringInfoData line;
	int			fd;

	if (MakePGDirectory(SB_STANDBY_DIR) != 0 && errno != EEXIST)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not create directory \"%s\": %m", SB_STANDBY_DIR)));
	fd = OpenTransientFile(SB_STANDBY_HISTORY_FILE, O_RDWR | O_CREAT | O_APPEND | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open \"%s\": %m", SB_STANDBY_HISTORY_FILE)));
	initStringInfo(&line);
	if (ends_mid_line(fd))
		appendStringInfoChar(&line, '\n');	/* the cut line stays apart from this one */
	appendBinaryStringInfo(&line, record->data, record->len);
	appendStringInfoChar(&line, '\n');
	write_all(fd, line.data, (size_t) line.len);
	if (pg_fsync(fd) != 0)
		ereport(data_sync_elevel(ERROR),
				(errcode_for_file_access(),
				 errmsg("could not fsync \"%s\": %m", SB_STANDBY_HISTORY_FILE)));
	CloseTransientFile(fd);
	if (created)
	{
		fsync_fname(SB_STANDBY_DIR, true);
		fsync_fname(".", true);
	}
}

void
sbx_standby_history_forget(int64 id)
{
	StringInfo	line = makeStringInfo();

	appendStringInfo(line, ID_PREFIX INT64_FORMAT FORGOTTEN, id);
	sbx_standby_history_append(line);
}

static void
import_rows(void)
{
	SbSql		sql;
	SbRows		rows;

	sbx_sql_begin(&sql);
	rows = sbx_sql_run(SB_SQL_STANDBY_IMPORT, NULL, NULL);
	(void) sbx_sql_run(SB_SQL_STANDBY_IMPORT_STRIPES, NULL, NULL);
	sbx_sql_leave(&sql);
	/* the rows are in the table now, and the views show a row of the file only when it is not */
	durable_unlink(SB_STANDBY_HISTORY_FILE, ERROR);
	ereport(LOG,
			(errmsg("stripebackup: the history of %llu backups taken while this server was a standby "
					"joined stripe_backup_history", (unsigned long long) rows.count)));
}

/*
 * A file that cannot be imported stops no job: its rows stay shown from
 * the file, and the next job tries again.
 */
void
sbx_standby_history_import(void)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;

	if (RecoveryInProgress() || access(SB_STANDBY_HISTORY_FILE, F_OK) != 0)
		return;
	PG_TRY();
	{
		import_rows();
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
				(errmsg("could not import the history of the backups taken while this server was a standby: %s",
						e->message),
				 errdetail("Their rows stay shown from \"%s\"; the next job tries again.", SB_STANDBY_HISTORY_FILE)));
	}
	PG_END_TRY();
}

/* The views that show the backup history: who may read one may read the file. */
static const char *const history_views[] = {
	"stripe_backups", "stripe_backup_stripes", "stripe_health", "stripe_throughput", NULL
};

static void
check_may_read_history(void)
{
	Oid			schema = sbx_sql_schema();

	for (int i = 0; history_views[i] != NULL; i++)
	{
		Oid			view = get_relname_relid(history_views[i], schema);

		if (OidIsValid(view) && pg_class_aclcheck(view, GetUserId(), ACL_SELECT) == ACLCHECK_OK)
			return;
	}
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("permission denied to read the backup history"),
			 errhint("It is for those who may read stripe_backups.")));
}

/*
 * LINE as jsonb; false (a WARNING said so) when it is not JSON: a line the
 * disk damaged hides that backup's row, not the whole history.  Parsed in a
 * subtransaction, so that its error is taken back cleanly.
 */
static bool
parse_line(const char *line, Datum *value)
{
	MemoryContext context = CurrentMemoryContext;
	ResourceOwner owner = CurrentResourceOwner;
	volatile bool ok = false;

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(context);
	PG_TRY();
	{
		*value = DirectFunctionCall1(jsonb_in, CStringGetDatum(line));
		ReleaseCurrentSubTransaction();
		ok = true;
	}
	PG_CATCH();
	{
		ErrorData  *e;

		MemoryContextSwitchTo(context);
		e = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		ereport(WARNING,
				(errmsg("a line of \"%s\" is not a backup's row: %s", SB_STANDBY_HISTORY_FILE, e->message),
				 errdetail("The line begins: %.60s", line)));
	}
	PG_END_TRY();
	MemoryContextSwitchTo(context);
	CurrentResourceOwner = owner;
	return ok;
}

PG_FUNCTION_INFO_V1(stripe_standby_records);

/* The newest line of each backup in the file, as jsonb; none on a server that has no file. */
PGDLLEXPORT Datum
stripe_standby_records(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	MemoryContext old;
	TupleDesc	desc;
	Tuplestorestate *store;
	ListCell   *lc;

	check_may_read_history();
	if (rsinfo == NULL || !IsA(rsinfo, ReturnSetInfo) || !(rsinfo->allowedModes & SFRM_Materialize))
		ereport(ERROR,
				(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
				 errmsg("stripe_standby_records() must be called where a set is accepted")));
	old = MemoryContextSwitchTo(rsinfo->econtext->ecxt_per_query_memory);
	desc = CreateTemplateTupleDesc(1);
	TupleDescInitEntry(desc, (AttrNumber) 1, "record", JSONBOID, -1, 0);
	store = tuplestore_begin_heap(true, false, work_mem);
	rsinfo->returnMode = SFRM_Materialize;
	rsinfo->setResult = store;
	rsinfo->setDesc = desc;
	MemoryContextSwitchTo(old);
	foreach(lc, read_rows())
	{
		Datum		value;
		bool		isnull = false;

		if (parse_line(((Record *) lfirst(lc))->line, &value))
			tuplestore_putvalues(store, desc, &value, &isnull);
	}
	return (Datum) 0;
}
