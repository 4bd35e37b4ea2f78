/*
 * sb_summary.c
 *		Which blocks of a relation's main fork changed since the parent
 *		backup began, from PostgreSQL 17's WAL summaries (pg_wal/summaries):
 *		the engine then reads only those instead of judging every page by
 *		its LSN (sb_changed.c, still the judge of every file not named here).
 *
 * The summaries are used only when they cover every change from the
 * parent's start LSN to this backup's start LSN (its checkpoint's redo
 * point, where the summarizer ends a summary) on one timeline, the parent's
 * and this backup's, as pg_basebackup's incremental backup asks
 * (basebackup_incremental.c); otherwise the page-LSN method, said in a LOG.
 * Changes after this backup's start are made good by replaying its WAL.
 *
 * A file's blocks to read, as PostgreSQL's incremental backup judges them:
 *  - a database (tablespace and database OIDs) created in the range, as
 *    CREATE DATABASE ... STRATEGY FILE_COPY does without naming its
 *    relations' blocks: every block;
 *  - a relation truncated in the range (or dropped and made again): its
 *    lowest "limit block" is recorded, and every block from there is read
 *    (what lies there may be of its new life, which no summary names);
 *  - below it, the blocks the summaries name; none when no summary names
 *    the relation.
 * The file must also be the parent's (the engine asks only of files whose
 * path and identity are the parent's: a file made again is stored whole)
 * and a main fork (the file filter's rule: the free space map is not WAL
 * logged, the visibility map and init forks are copied whole).
 *
 * The hook runs on the worker's main thread inside the engine: it never
 * raises an ERROR and allocates nothing.
 */
#include "postgres.h"

#include "catalog/pg_tablespace_d.h"
#include "miscadmin.h"
#include "storage/latch.h"
#include "utils/timestamp.h"
#include "utils/wait_event.h"

#include "sb_compat.h"
#include "sb_summary.h"

#if PG_VERSION_NUM >= 170000

#include "common/blkreftable.h"
#include "nodes/pg_list.h"
#include "postmaster/walsummarizer.h"
#include "storage/fd.h"

/*
 * PostgreSQL does not install backup/walsummary.h (src/include/backup is
 * left out of the server headers), but the server exports its functions:
 * what is used of it, as PostgreSQL 17 and 18 declare it.
 */
typedef struct WalSummaryIO
{
	File		file;
	off_t		filepos;
} WalSummaryIO;

typedef struct WalSummaryFile
{
	XLogRecPtr	start_lsn;
	XLogRecPtr	end_lsn;
	TimeLineID	tli;
} WalSummaryFile;

extern List *GetWalSummaries(TimeLineID tli, XLogRecPtr start_lsn, XLogRecPtr end_lsn);
extern bool WalSummariesAreComplete(List *wslist, XLogRecPtr start_lsn, XLogRecPtr end_lsn,
									XLogRecPtr *missing_lsn);
extern File OpenWalSummaryFile(WalSummaryFile *ws, bool missing_ok);
extern int	ReadWalSummary(void *wal_summary_io, void *data, int length);
extern void ReportWalSummaryError(void *callback_arg, char *fmt,...) pg_attribute_printf(2, 3);

/* How long to wait for the summarizer to reach the backup's start. */
#define SUMMARY_WAIT_MS 20000
#define BLOCKS_PER_READ 512

struct SbSummary
{
	BlockRefTable *table;
	BlockNumber *blocks;		/* the answer for one segment: RELSEG_SIZE */
	int64		files;
	int64		named;
};

/*
 * Wait until the summaries of TLI cover [SINCE, UNTIL), while the summarizer
 * runs and has not reached UNTIL yet: *LIST, or false with *WHY.
 */
static bool
covered(TimeLineID tli, XLogRecPtr since, XLogRecPtr until, List **list, const char **why)
{
	TimestampTz deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), SUMMARY_WAIT_MS);

	for (;;)
	{
		XLogRecPtr	missing;
		TimeLineID	summarized_tli;
		XLogRecPtr	summarized_lsn;
		XLogRecPtr	pending_lsn;
		int			pid;

		*list = GetWalSummaries(tli, since, until);
		if (WalSummariesAreComplete(*list, since, until, &missing))
			return true;
		*why = psprintf("no WAL summary of timeline %u covers %X/%X", tli, LSN_FORMAT_ARGS(missing));
		GetWalSummarizerState(&summarized_tli, &summarized_lsn, &pending_lsn, &pid);
		if (!summarize_wal || pid <= 0 ||
			(summarized_tli == tli && summarized_lsn >= until) ||
			GetCurrentTimestamp() >= deadline)
			return false;
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH, 100,
						 PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();
	}
}

/* Every block and limit block a summary file names, into TABLE. */
static bool
read_summary(BlockRefTable *table, WalSummaryFile *ws)
{
	WalSummaryIO io;
	BlockRefTableReader *reader;
	RelFileLocator locator;
	ForkNumber	fork;
	BlockNumber limit;
	BlockNumber blocks[BLOCKS_PER_READ];

	io.file = OpenWalSummaryFile(ws, true);
	io.filepos = 0;
	if (io.file < 0)
		return false;			/* removed meanwhile */
	reader = CreateBlockRefTableReader(ReadWalSummary, &io, FilePathName(io.file),
									   ReportWalSummaryError, NULL);
	while (BlockRefTableReaderNextRelation(reader, &locator, &fork, &limit))
	{
		unsigned	n;

		BlockRefTableSetLimitBlock(table, &locator, fork, limit);
		while ((n = BlockRefTableReaderGetBlocks(reader, blocks, BLOCKS_PER_READ)) > 0)
			for (unsigned i = 0; i < n; i++)
				BlockRefTableMarkBlockModified(table, &locator, fork, blocks[i]);
	}
	DestroyBlockRefTableReader(reader);
	FileClose(io.file);
	return true;
}

SbSummary *
sbx_summary_load(TimeLineID tli, TimeLineID parent_tli, XLogRecPtr since, XLogRecPtr until)
{
	SbSummary  *s;
	List	   *list;
	const char *why = NULL;
	ListCell   *lc;

	if (!summarize_wal)
		why = "summarize_wal is off";
	else if (parent_tli != tli)
		why = psprintf("the parent is of timeline %u, this backup of %u", parent_tli, tli);
	else if (since >= until)
		why = "the parent did not start before this backup";
	if (why == NULL && covered(tli, since, until, &list, &why))
	{
		s = palloc0(sizeof(SbSummary));
		s->table = CreateEmptyBlockRefTable();
		s->blocks = palloc(sizeof(BlockNumber) * RELSEG_SIZE);
		foreach(lc, list)
		{
			if (!read_summary(s->table, lfirst(lc)))
			{
				why = "a WAL summary was removed while it was read";
				break;
			}
		}
		if (lc == NULL)
			return s;
	}
	ereport(LOG,
			(errmsg("the blocks changed since %X/%X are found by reading every page of the relations: %s",
					LSN_FORMAT_ARGS(since), why)));
	return NULL;
}

/* Parse a decimal OID ending at END's character: its end, or NULL. */
static const char *
parse_oid(const char *p, char end, Oid *oid)
{
	char	   *stop;
	unsigned long v;

	if (*p < '0' || *p > '9')
		return NULL;
	v = strtoul(p, &stop, 10);
	if (*stop != end || v == 0 || v > PG_UINT32_MAX)
		return NULL;
	*oid = (Oid) v;
	return stop + 1;
}

/*
 * The relation file PATH names: global/<rel>, base/<db>/<rel> or
 * pg_tblspc/<spc>/<version dir>/<db>/<rel> (with a fork and segment).
 */
static bool
file_locator(const char *path, RelFileLocator *loc, ForkNumber *fork, unsigned *segno)
{
	const char *p = path;
	const char *name = strrchr(path, '/');
	Oid			relation;

	if (name == NULL || !sbx_compat_parse_relation_file(name + 1, &relation, fork, segno))
		return false;
	loc->relNumber = relation;
	if (strncmp(p, "global/", 7) == 0)
	{
		loc->spcOid = GLOBALTABLESPACE_OID;
		loc->dbOid = InvalidOid;
		return p + 7 == name + 1;
	}
	if (strncmp(p, "base/", 5) == 0)
	{
		loc->spcOid = DEFAULTTABLESPACE_OID;
		p = parse_oid(p + 5, '/', &loc->dbOid);
		return p == name + 1;
	}
	if (strncmp(p, "pg_tblspc/", 10) != 0 || (p = parse_oid(p + 10, '/', &loc->spcOid)) == NULL ||
		strncmp(p, TABLESPACE_VERSION_DIRECTORY "/", strlen(TABLESPACE_VERSION_DIRECTORY) + 1) != 0)
		return false;
	p = parse_oid(p + strlen(TABLESPACE_VERSION_DIRECTORY) + 1, '/', &loc->dbOid);
	return p == name + 1;
}

static int
compare_blocks(const void *a, const void *b)
{
	BlockNumber x = *(const BlockNumber *) a;
	BlockNumber y = *(const BlockNumber *) b;

	return x < y ? -1 : x > y ? 1 : 0;
}

bool
sbx_summary_blocks(void *arg, const char *path, uint64_t size, const uint32_t **blocks,
				   uint32_t *nblocks)
{
	SbSummary  *s = arg;
	RelFileLocator loc;
	RelFileLocator database;
	ForkNumber	fork;
	unsigned	segno;
	BlockNumber limit;
	BlockNumber start;
	BlockNumber stop;
	BlockRefTableEntry *entry = NULL;
	int			n = 0;

	if (!file_locator(path, &loc, &fork, &segno) || fork != MAIN_FORKNUM ||
		size > (uint64_t) RELSEG_SIZE * BLCKSZ)
		return false;
	start = (BlockNumber) segno * RELSEG_SIZE;
	stop = start + (BlockNumber) (size / BLCKSZ);
	database = loc;
	database.relNumber = InvalidRelFileNumber;
	limit = InvalidBlockNumber;
	if (BlockRefTableGetEntry(s->table, &database, MAIN_FORKNUM, &limit) != NULL)
		limit = 0;				/* the database was made in the range */
	else
		entry = BlockRefTableGetEntry(s->table, &loc, fork, &limit);
	if (entry != NULL && limit > start)
	{
		n = BlockRefTableEntryGetBlocks(entry, start, Min(stop, limit), s->blocks, RELSEG_SIZE);
		qsort(s->blocks, n, sizeof(BlockNumber), compare_blocks);
	}
	/* from the limit block on, every block: truncated away, or of the relation's new life */
	for (BlockNumber b = Max(start, limit == InvalidBlockNumber ? stop : limit); b < stop; b++)
		s->blocks[n++] = b;
	for (int i = 0; i < n; i++)
		s->blocks[i] -= start;
	*blocks = s->blocks;
	*nblocks = (uint32_t) n;
	s->files++;
	s->named += n;
	return true;
}

void
sbx_summary_counts(const SbSummary *s, int64 *files, int64 *blocks)
{
	*files = s ? s->files : 0;
	*blocks = s ? s->named : 0;
}

#else							/* PG_VERSION_NUM < 170000 */

SbSummary *
sbx_summary_load(TimeLineID tli, TimeLineID parent_tli, XLogRecPtr since, XLogRecPtr until)
{
	(void) tli;
	(void) parent_tli;
	(void) since;
	(void) until;
	return NULL;				/* no WAL summaries before PostgreSQL 17 */
}

bool
sbx_summary_blocks(void *arg, const char *path, uint64_t size, const uint32_t **blocks,
				   uint32_t *nblocks)
{
	(void) arg;
	(void) path;
	(void) size;
	(void) blocks;
	(void) nblocks;
	return false;
}

void
sbx_summary_counts(const SbSummary *s, int64 *files, int64 *blocks)
{
	(void) s;
	*files = *blocks = 0;
}

#endif
