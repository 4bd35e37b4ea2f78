/*
 * sb_changed.c
 *		Which blocks of a relation's main fork changed since the parent
 *		backup began, from page LSNs (PostgreSQL 15 has no WAL summaries).
 *
 * Every change of a page that WAL logs sets its LSN, and the parent's copy
 * of a page is made good by replaying WAL from the parent's start: so a
 * page whose LSN is before that start has not changed since the parent
 * copied it, and a page at or after it must be copied.  A block is copied
 * too when it cannot be judged: a new or all-zero page, a header that makes
 * no sense or a failed checksum (after a second read, in case the first
 * caught a write half done), and an LSN past the end of WAL, which no real
 * change can have (a warning says so).  The visibility map, free space map
 * and init forks are copied whole by the caller: not every change of theirs
 * raises their LSN (clearing a visibility map bit does not).
 *
 * This runs inside the engine on the worker's main thread: it never raises
 * an ERROR; sb_changed_report() warns afterwards.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "storage/bufpage.h"
#include "storage/checksum.h"

#include "sb_changed.h"
#include "sb_pagecheck.h"

#define MAX_REPORTED 5

struct SbChanged
{
	XLogRecPtr	since;
	XLogRecPtr	wal_end;		/* the insert position seen last */
	bool		checksums;
	/* the file being read */
	char		path[MAXPGPATH];
	BlockNumber first_block;
	/* findings */
	int64		judged;
	int64		copied;
	int64		future;
	char		reported[MAX_REPORTED][MAXPGPATH + 64];
};

SbChanged *
sb_changed_new(XLogRecPtr since)
{
	SbChanged  *c = palloc0(sizeof(SbChanged));

	c->since = since;
	c->checksums = DataChecksumsEnabled();
	c->wal_end = GetXLogInsertRecPtr();
	return c;
}

bool
sb_changed_file(void *arg, const char *path)
{
	ForkNumber	fork;
	Oid			database;
	BlockNumber first_block;

	(void) arg;
	return sb_relation_file(path, &fork, &database, &first_block) && fork == MAIN_FORKNUM;
}

bool
sb_changed_relation(void *arg, const char *path)
{
	ForkNumber	fork;
	Oid			database;
	BlockNumber first_block;

	(void) arg;
	return sb_relation_file(path, &fork, &database, &first_block);
}

/* What PageIsVerifiedExtended() asks of a header, and the checksum when there is one. */
static bool
page_sane(const SbChanged *c, const char *page, BlockNumber blkno)
{
	PageHeader	p = (PageHeader) page;

	if ((p->pd_flags & ~PD_VALID_FLAG_BITS) != 0 || p->pd_lower < SizeOfPageHeaderData ||
		p->pd_lower > p->pd_upper || p->pd_upper > p->pd_special || p->pd_special > BLCKSZ ||
		p->pd_special != MAXALIGN(p->pd_special))
		return false;
	return !c->checksums || pg_checksum_page((char *) page, blkno) == p->pd_checksum;
}

static void
remember_future(SbChanged *c, BlockNumber block, XLogRecPtr lsn)
{
	if (c->future < MAX_REPORTED)
		snprintf(c->reported[c->future], sizeof(c->reported[0]), "\"%s\" block %u (LSN %X/%X)",
				 c->path, block, LSN_FORMAT_ARGS(lsn));
	c->future++;
}

/* Must this page be copied? */
static bool
page_changed(SbChanged *c, const char *page, BlockNumber block)
{
	XLogRecPtr	lsn;

	if (PageIsNew((Page) page))
		return true;
	if (!page_sane(c, page, c->first_block + block))
		return true;
	lsn = PageGetLSN((Page) page);
	if (lsn >= c->since)
	{
		if (lsn > c->wal_end && lsn > (c->wal_end = GetXLogInsertRecPtr()))
			remember_future(c, block, lsn);
		return true;
	}
	return false;
}

bool
sb_changed_block(void *arg, const char *path, int fd, uint64_t file_offset,
				 const uint8_t *block)
{
	SbChanged  *c = arg;
	BlockNumber n = (BlockNumber) (file_offset / BLCKSZ);
	PGAlignedBlock page;
	bool		changed;

	if (strcmp(path, c->path) != 0)
	{
		ForkNumber	fork;
		Oid			database;

		strlcpy(c->path, path, sizeof(c->path));
		if (!sb_relation_file(path, &fork, &database, &c->first_block))
			c->first_block = 0;
	}
	memcpy(page.data, block, BLCKSZ);
	changed = page_changed(c, page.data, n);
	/* an unchanged-looking page that fails its checks was read again before: a torn read */
	if (changed && !PageIsNew((Page) page.data) && !page_sane(c, page.data, c->first_block + n) &&
		pread(fd, page.data, BLCKSZ, (off_t) file_offset) == BLCKSZ)
		changed = page_changed(c, page.data, n);
	c->judged++;
	c->copied += changed ? 1 : 0;
	return changed;
}

void
sb_changed_counts(const SbChanged *c, int64 *judged, int64 *copied)
{
	*judged = c->judged;
	*copied = c->copied;
}

void
sb_changed_report(const SbChanged *c)
{
	StringInfoData list;
	int64		i;

	if (c->future == 0)
		return;
	initStringInfo(&list);
	for (i = 0; i < c->future && i < MAX_REPORTED; i++)
		appendStringInfo(&list, "%s%s", i ? ", " : "", c->reported[i]);
	if (c->future > MAX_REPORTED)
		appendStringInfo(&list, " and %lld more", (long long) (c->future - MAX_REPORTED));
	ereport(WARNING,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("%lld page(s) have an LSN past the end of WAL, and were copied: %s",
					(long long) c->future, list.data),
			 errhint("A page can have such an LSN only if it was damaged or written by another cluster.")));
}
