/*
 * sb_pagecheck.c
 *		Verify data checksums of relation pages as the backup reads them.
 *
 * As in PostgreSQL's own base backup: only pages whose LSN is older than the
 * backup's start are checked (newer ones come back from full-page images in
 * WAL), new (zero) pages are skipped, and a page that fails is read once more
 * before it counts as corrupt, since the first read may have caught a write
 * half done.  The engine hands data over in pieces that need not end on a
 * page boundary, so a partial page is carried over to the next piece.
 *
 * This runs inside the engine, on the worker's main thread or (one checker
 * each) on a source lane's thread: it never raises an ERROR nor calls
 * anything but pure functions, it only counts and remembers; the lanes'
 * findings are merged into the main one, and sbx_pagecheck_report() raises.
 */
#include "postgres.h"

#include <unistd.h>

#include "access/xlog.h"
#include "common/relpath.h"
#include "pgstat.h"
#include "storage/bufpage.h"
#include "storage/checksum.h"
#include "utils/memutils.h"

#include "sb_compat.h"
#include "sb_pagecheck.h"

#define MAX_REPORTED 5

struct SbPageCheck
{
	XLogRecPtr	start_lsn;
	bool		enabled;
	/* the file being read */
	char		path[MAXPGPATH];
	bool		checked;		/* is it a relation file? */
	Oid			database;
	BlockNumber first_block;	/* of its segment */
	PGAlignedBlock carry;		/* a page split between two pieces */
	size_t		carry_len;
	/* findings */
	int64		pages;
	int64		failures;
	Oid			failed_database;
	char		reported[MAX_REPORTED][MAXPGPATH + 32];
};

SbPageCheck *
sbx_pagecheck_new(XLogRecPtr start_lsn)
{
	SbPageCheck *pc = palloc0(sizeof(SbPageCheck));

	pc->start_lsn = start_lsn;
	pc->enabled = DataChecksumsEnabled();
	return pc;
}

/* The database of a relation file: the directory it is in (none for global/). */
static Oid
path_database(const char *path, const char *name)
{
	const char *start = name - 1;

	if (strncmp(path, "global/", 7) == 0 || name == path)
		return InvalidOid;
	while (start > path && start[-1] != '/')
		start--;
	return (Oid) strtoul(start, NULL, 10);
}

/*
 * Relation files live in global/, base/<db>/ and tablespaces; a few files
 * there have no page checksums (as PostgreSQL's noChecksumFiles says), and
 * parse_filename_for_nontemp_relation() accepts none of them.
 */
bool
sbx_relation_file(const char *path, ForkNumber *fork, Oid *database, BlockNumber *first_block)
{
	const char *name = strrchr(path, '/');
	Oid			relation;
	unsigned	segno;

	name = name ? name + 1 : path;
	if (strncmp(path, "global/", 7) != 0 && strncmp(path, "base/", 5) != 0 &&
		strncmp(path, "pg_tblspc/", 10) != 0)
		return false;
	if (!sbx_compat_parse_relation_file(name, &relation, fork, &segno))
		return false;
	*first_block = (BlockNumber) segno * RELSEG_SIZE;
	*database = path_database(path, name);
	return true;
}

static void
remember_failure(SbPageCheck *pc, BlockNumber block)
{
	if (pc->failures < MAX_REPORTED)
		snprintf(pc->reported[pc->failures], sizeof(pc->reported[0]), "\"%s\" block %u",
				 pc->path, block);
	pc->failures++;
	pc->failed_database = pc->database;
}

/* Does the page pass, or is it too new or too empty to check? */
static bool
page_ok(const SbPageCheck *pc, char *page, BlockNumber blkno)
{
	if (PageIsNew((Page) page) || PageGetLSN((Page) page) >= pc->start_lsn)
		return true;
	return pg_checksum_page(page, blkno) == ((PageHeader) page)->pd_checksum;
}

/* Check one page; on failure read it again in case the first read was torn. */
static void
check_page(SbPageCheck *pc, int fd, uint64_t file_offset, const uint8_t *data)
{
	PGAlignedBlock page;
	BlockNumber block = (BlockNumber) (file_offset / BLCKSZ);
	BlockNumber blkno = pc->first_block + block;

	memcpy(page.data, data, BLCKSZ);
	pc->pages++;
	if (page_ok(pc, page.data, blkno))
		return;
	if (pread(fd, page.data, BLCKSZ, (off_t) file_offset) == BLCKSZ &&
		page_ok(pc, page.data, blkno))
		return;
	remember_failure(pc, block);
}

/* A new file starts: is it one to check? */
static void
start_file(SbPageCheck *pc, const char *path)
{
	ForkNumber	fork;

	strlcpy(pc->path, path, sizeof(pc->path));
	pc->carry_len = 0;
	pc->checked = sbx_relation_file(path, &fork, &pc->database, &pc->first_block);
}

bool
sbx_pagecheck_hook(void *arg, const char *path, int fd, uint64_t offset,
				  const uint8_t *data, size_t len, SbError *err)
{
	SbPageCheck *pc = arg;

	if (!pc->enabled)
		return true;
	if (offset == 0 || strcmp(path, pc->path) != 0)
		start_file(pc, path);
	if (!pc->checked)
		return true;
	/* Finish a page begun in the previous piece. */
	if (pc->carry_len > 0)
	{
		size_t		n = Min(len, BLCKSZ - pc->carry_len);

		memcpy(pc->carry.data + pc->carry_len, data, n);
		pc->carry_len += n;
		data += n;
		offset += n;
		len -= n;
		if (pc->carry_len < BLCKSZ)
			return true;
		check_page(pc, fd, offset - BLCKSZ, (const uint8_t *) pc->carry.data);
		pc->carry_len = 0;
	}
	for (; len >= BLCKSZ; data += BLCKSZ, offset += BLCKSZ, len -= BLCKSZ)
		check_page(pc, fd, offset, data);
	memcpy(pc->carry.data, data, len);
	pc->carry_len = len;
	return true;
}

void
sbx_pagecheck_merge(SbPageCheck *into, const SbPageCheck *from)
{
	int64		i;

	for (i = 0; i < from->failures && i < MAX_REPORTED; i++)
		if (into->failures + i < MAX_REPORTED)
			strlcpy(into->reported[into->failures + i], from->reported[i], sizeof(into->reported[0]));
	if (from->failures > 0)
		into->failed_database = from->failed_database;
	into->failures += from->failures;
	into->pages += from->pages;
}

int64
sbx_pagecheck_pages(const SbPageCheck *pc)
{
	return pc->pages;
}

void
sbx_pagecheck_report(SbPageCheck *pc)
{
	StringInfoData list;
	int64		i;

	if (pc->failures == 0)
		return;
	pgstat_report_checksum_failures_in_db(pc->failed_database, (int) pc->failures);
	initStringInfo(&list);
	for (i = 0; i < pc->failures && i < MAX_REPORTED; i++)
		appendStringInfo(&list, "%s%s", i ? ", " : "", pc->reported[i]);
	if (pc->failures > MAX_REPORTED)
		appendStringInfo(&list, " and %lld more", (long long) (pc->failures - MAX_REPORTED));
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("page checksum verification failed for %lld page(s): %s",
					(long long) pc->failures, list.data),
			 errhint("The cluster's files are damaged; a backup of them would not be usable. "
					 "Check the storage and restore the damaged relations.")));
}
