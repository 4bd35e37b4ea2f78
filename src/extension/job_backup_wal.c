/*
 * job_backup_wal.c
 *		Where a backup taken on a standby finds a WAL segment its pg_wal
 *		does not hold whole (pg_wal_holds() says how that is told): it is
 *		read from the stripebackup
 *		WAL archive of this server's settings (stripebackup.archive_
 *		destinations), checked as restore_command's wal-get checks it, into
 *		a private file that the backup copies.
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "miscadmin.h"
#include "storage/fd.h"

#include "job_backup.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_key.h"
#include "sb_s3_settings.h"
#include "stripebackup/sb_wal.h"

static void
refuse(const char *fname, const char *why)
{
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("this standby does not hold WAL segment %s whole in pg_wal for the backup", fname),
			 errdetail("Its pg_wal lacks it, holds an older segment recycled under its name, or holds it in part; %s.",
					   why),
			 errhint("Set stripebackup.archive_destinations to the WAL archive of its primary, or take the backup "
					 "on the primary.")));
}

/* Segment FNAME from the archive into a private file; its path. */
static char *
fetch_from_archive(const char *fname)
{
	char		folders[SB_MAX_STRIPES][MAXPGPATH];
	const char *paths[SB_MAX_STRIPES];
	const char *why = "";
	/* a temporary file by PostgreSQL's rule: a server start removes one left behind */
	char	   *path = psprintf("%s/%s.stripebackup-wal-%d-%s", sbx_temp_folder(), PG_TEMP_FILE_PREFIX,
								MyProcPid, fname);
	SbWalGetOptions o;
	SbWalGetResult r;
	SbError		err;
	int			n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, folders, &why);

	if (n <= 0)
		refuse(fname, "stripebackup.archive_destinations names no WAL archive to read it from");
	memset(&o, 0, sizeof(o));
	for (int i = 0; i < n; i++)
		paths[i] = folders[i];
	o.dests.paths = paths;
	o.dests.count = (uint32_t) n;
	o.dests.s3 = sbx_s3_settings();
	o.dests.system_identifier = GetSystemIdentifier();
	o.dests.key = sbx_key_current();
	o.dests.redundancy = (uint32_t) sb_guc_archive_redundancy;
	if (!sb_wal_get(&o, fname, path, &r, &err))
	{
		if (err.code == SB_ENOTFOUND)
			refuse(fname, "the WAL archive does not hold it either");
		sbx_raise(&err);
	}
	ereport(LOG, (errmsg("stripebackup: WAL segment %s for the backup read from the WAL archive", fname)));
	return path;
}

/* Is the page of PATH at OFFSET the page of segment SEGNO it should be? */
static bool
page_is_of(int fd, XLogSegNo segno, uint32 offset)
{
	XLogPageHeaderData page;
	XLogRecPtr	expected;

	XLogSegNoOffsetToRecPtr(segno, offset - offset % XLOG_BLCKSZ, wal_segment_size, expected);
	return pg_pread(fd, &page, sizeof(page), offset - offset % XLOG_BLCKSZ) == sizeof(page) &&
		page.xlp_magic == XLOG_PAGE_MAGIC && page.xlp_pageaddr == expected;
}

/*
 * Does pg_wal hold segment SEGNO as far as a backup ending at STOP needs?
 * The standby replayed it, from a file its walreceiver wrote from the
 * segment's start or one its restore_command brought (which replay keeps,
 * marked .done, for cascading standbys), so it does, unless something else
 * took its name: a restartpoint recycles old segments under future names,
 * and their first page then carries an old address.  The segment of STOP
 * may still be written, up to STOP and beyond: its page of STOP must be
 * there too (unless STOP ends the segment, as after a WAL switch, whose zero
 * padding has no page headers).
 */
static bool
pg_wal_holds(const char *fname, XLogSegNo segno, XLogRecPtr stop)
{
	char		path[MAXPGPATH];
	XLogSegNo	last;
	int			fd;
	bool		holds;

	XLByteToPrevSeg(stop, last, wal_segment_size);
	snprintf(path, sizeof(path), XLOGDIR "/%s", fname);
	fd = OpenTransientFile(path, O_RDONLY | PG_BINARY);
	if (fd < 0 && errno == ENOENT)
		return false;
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open file \"%s\": %m", path)));
	holds = page_is_of(fd, segno, 0);
	if (holds && segno == last && XLogSegmentOffset(stop, wal_segment_size) != 0)
		holds = page_is_of(fd, segno, XLogSegmentOffset(stop - 1, wal_segment_size));
	CloseTransientFile(fd);
	return holds;
}

char *
sbx_backup_standby_wal(const char *fname, XLogSegNo segno, XLogRecPtr stop)
{
	if (pg_wal_holds(fname, segno, stop))
		return NULL;
	return fetch_from_archive(fname);
}
