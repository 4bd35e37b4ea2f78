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
 * no sense (after a second read, in case the first caught a write half
 * done), and an LSN past the end of WAL, which no real change can have (a
 * warning says so).  Checksums are the page check's (sb_pagecheck.c), which
 * sees every page read: a page older than the backup's start whose checksum
 * fails fails the backup, as in a full one.  The visibility map, free space
 * map and init forks are copied whole by the caller: not every change of
 * theirs raises their LSN (clearing a visibility map bit does not).
 *
 * This runs inside the engine on the worker's main thread: it never raises
 * an ERROR; sbx_changed_report() warns afterwards.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "storage/bufpage.h"

#include "sb_changed.h"
#include "sb_pagecheck.h"

#define MAX_REPORTED 5

struct SbChanged
{
	XLogRecPtr	since;
	XLogRecPtr	wal_end;		/* the insert position seen last */
	/* findings */
	int64		judged;
	int64		copied;
	int64		future;
	char		reported[MAX_REPORTED][MAXPGPATH + 64];
};

/* How far WAL goes: on a standby, as far as it has replayed (no page on its disk is newer). */
static XLogRecPtr
wal_end(void)
{
	return RecoveryInProgress() ? GetXLogReplayRecPtr(NULL) : GetXLogInsertRecPtr();
}

SbChanged *
sbx_changed_new(XLogRecPtr since)
{
	SbChanged  *c = palloc0(sizeof(SbChanged));

	c->since = since;
	c->wal_end = wal_end();
	return c;
}

bool
sbx_changed_file(void *arg, const char *path)
{
	ForkNumber	fork;
	Oid			database;
	BlockNumber first_block;

	(void) arg;
	return sbx_relation_file(path, &fork, &database, &first_block) && fork == MAIN_FORKNUM;
}

bool
sbx_changed_relation(void *arg, const char *path)
{
	ForkNumber	fork;
	Oid			database;
	BlockNumber first_block;

	(void) arg;
	return sbx_relation_file(path, &fork, &database, &first_block);
}

/*
 * What PageIsVerifiedExtended() asks of a header.  The checksum is not
 * verified here: a page whose LSN says it is older than the parent is
 * checked by the page check (sb_pagecheck.c), which fails the backup if its
 * checksum is wrong, and a newer one is copied anyway.
 */
static bool
header_sane(const PageHeaderData *p)
{
	return (p->pd_flags & ~PD_VALID_FLAG_BITS) == 0 && p->pd_lower >= SizeOfPageHeaderData &&
		p->pd_lower <= p->pd_upper && p->pd_upper <= p->pd_special && p->pd_special <= BLCKSZ &&
		p->pd_special == MAXALIGN(p->pd_special);
}

static void
remember_future(SbChanged *c, const char *path, BlockNumber block, XLogRecPtr lsn)
{
	if (c->future < MAX_REPORTED)
		snprintf(c->reported[c->future], sizeof(c->reported[0]), "\"%s\" block %u (LSN %X/%X)",
				 path, block, LSN_FORMAT_ARGS(lsn));
	c->future++;
}

/* Must PAGE (block BLOCK of PATH, its header read in place) be copied? */
static bool
page_changed(SbChanged *c, const char *path, const PageHeaderData *page, BlockNumber block)
{
	XLogRecPtr	lsn;

	if (page->pd_upper == 0 || !header_sane(page))
		return true;			/* new (all zero), or not to be judged */
	lsn = PageXLogRecPtrGet(page->pd_lsn);
	if (lsn < c->since)
		return false;
	if (lsn > c->wal_end && lsn > (c->wal_end = wal_end()))
		remember_future(c, path, block, lsn);
	return true;
}

bool
sbx_changed_block(void *arg, const char *path, int fd, uint64_t file_offset,
				 const uint8_t *block)
{
	SbChanged  *c = arg;
	BlockNumber n = (BlockNumber) (file_offset / BLCKSZ);
	const PageHeaderData *header = (const PageHeaderData *) block;	/* the engine's buffers are aligned */
	PGAlignedBlock again;
	bool		changed;

	changed = page_changed(c, path, header, n);
	/* a header that makes no sense may be a write caught half done: read it once more */
	if (changed && header->pd_upper != 0 && !header_sane(header) &&
		pread(fd, again.data, BLCKSZ, (off_t) file_offset) == BLCKSZ)
		changed = page_changed(c, path, (const PageHeaderData *) again.data, n);
	c->judged++;
	c->copied += changed ? 1 : 0;
	return changed;
}

void
sbx_changed_counts(const SbChanged *c, int64 *judged, int64 *copied)
{
	*judged = c->judged;
	*copied = c->copied;
}

void
sbx_changed_report(const SbChanged *c)
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
