/*
 * sb_check_dest.c
 *		stripe_check()'s rows on destinations: those of the newest completed
 *		backup (the next one most likely goes there too) and those of the
 *		WAL archive.  Each is probed through the store interface
 *		(sb_store_probe: opened and listed with the server's settings, so a
 *		bucket's wrong credentials show here, then a small file made and
 *		removed); where it is a folder of this machine, its free space is
 *		held against what the newest full backup stored there, and a folder
 *		on the data directory's own device is a warning: one disk failure
 *		would take the cluster and its backups.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/pg_lsn.h"

#include "sb_check.h"
#include "sb_guc.h"
#include "sb_s3_settings.h"
#include "sb_spi.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_store.h"

#define MB(b) ((double) (b) / 1e6)

/* Reachable, writable, and (NEEDED > 0) room for NEEDED bytes; P as probed. */
static void
check_reach(SbCheckOut *out, const char *check, const char *dest, int64 needed, SbStoreProbe *p)
{
	SbError		err;

	/* A bucket the administrator no longer allows is not reached, even to look. */
	if ((sb_store_features_of(dest) & SB_STORE_CONNECTION) && !sb_s3_location_allowed(sbx_s3_settings(), dest, &err))
	{
		memset(p, 0, sizeof(*p));
		sbx_check_put(out, check, SB_CHECK_FAILURE, err.message,
					 "The buckets s3:// destinations may be are set by stripebackup.s3_allowed_buckets.");
	}
	else if (!sb_store_probe(dest, sbx_s3_settings(), p, &err))
		sbx_check_put(out, check, SB_CHECK_FAILURE,
					 psprintf("%s: %s", p->listed ? "not writable" : "not reachable", err.message),
					 p->listed ? "Make it writable by the server's operating-system user, with room for a backup."
					 : "Check that it is mounted, or that the bucket exists and stripebackup.s3_* (endpoint, credentials) reach it.");
	else if (p->local && needed > 0 && p->free_bytes < (uint64) needed)
		sbx_check_put(out, check, SB_CHECK_FAILURE,
					 psprintf("%.1f MB free, less than the %.1f MB the newest full backup stored there",
							  MB(p->free_bytes), MB(needed)),
					 "Free space there, or expire old backups (stripe_expire).");
	else if (p->local)
		sbx_check_put(out, check, SB_CHECK_OK,
					 needed > 0 ? psprintf("writable, %.1f MB free for the %.1f MB the newest full backup stored there",
										   MB(p->free_bytes), MB(needed))
					 : psprintf("writable, %.1f MB free", MB(p->free_bytes)),
					 NULL);
	else
		sbx_check_put(out, check, SB_CHECK_OK,
					 psprintf("reachable (listed, %llu entries) and writable", (unsigned long long) p->entries),
					 NULL);
}

/* A warning when DEST (probed as P) shares the data directory's device. */
static void
check_device(SbCheckOut *out, const char *dest, const SbStoreProbe *p)
{
	struct stat st;
	const char *check = psprintf("device of %s", dest);

	if (!p->local || !p->writable)
		return;
	if (stat(DataDir, &st) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not stat directory \"%s\": %m", DataDir)));
	if ((uint64) st.st_dev == p->device)
		sbx_check_put(out, check, SB_CHECK_WARNING,
					 psprintf("on the data directory's device (\"%s\"): a failure of that device takes the cluster and this copy together",
							  DataDir),
					 "Put backups and the WAL archive on other devices, or on object storage.");
	else
		sbx_check_put(out, check, SB_CHECK_OK, "another device than the data directory's", NULL);
}

static void
check_one(SbCheckOut *out, const char *what, const char *dest, int64 needed)
{
	SbStoreProbe p;

	check_reach(out, psprintf("%s %s", what, dest), dest, needed, &p);
	check_device(out, dest, &p);
}

/* The WAL written since the newest completed full backup started; 0 when unknown. */
static int64
wal_since_last_full(void)
{
	SbSql		sql;
	SbRows		rows;
	bool		isnull = true;
	XLogRecPtr	start = InvalidXLogRecPtr;
	XLogRecPtr	now = RecoveryInProgress() ? GetXLogReplayRecPtr(NULL) : GetXLogInsertRecPtr();

	sbx_sql_enter(&sql);
	rows = sbx_sql_run(SB_SQL_CHECK_LAST_FULL_START, NULL, NULL);
	if (rows.count > 0)
		start = DatumGetLSN(sbx_sql_datum(&sql, &rows, 0, 1, &isnull));
	sbx_sql_leave(&sql);
	return isnull || now <= start ? 0 : (int64) (now - start);
}

/* A WAL archive destination: reachable and writable, and room for its share of a cycle's WAL (a warning). */
static void
check_archive_destination(SbCheckOut *out, const char *dest, int64 share)
{
	const char *check = psprintf("WAL archive destination %s", dest);
	SbStoreProbe p;
	int			failures = out->failures;

	check_reach(out, check, dest, 0, &p);
	if (out->failures == failures && p.local && share > 0 && p.free_bytes < (uint64) share)
		sbx_check_put(out, psprintf("room in WAL archive destination %s", dest), SB_CHECK_WARNING,
					 psprintf("%.1f MB free, less than its share (%.1f MB) of the WAL written since the newest full backup started",
							  MB(p.free_bytes), MB(share)),
					 "At this rate it fills before the next cycle: free space there, or expire old backups (their WAL goes with them).");
	check_device(out, dest, &p);
}

/* The newest completed backup's destinations; a row saying so when there is none. */
static void
check_backup_destinations(SbCheckOut *out)
{
	SbSql		sql;
	SbRows		rows;
	uint64		i;
	int			n;
	char	  **dests;
	int64	   *needed;

	sbx_sql_enter(&sql);
	rows = sbx_sql_run(SB_SQL_CHECK_DESTINATIONS, NULL, NULL);
	n = (int) rows.count;
	dests = palloc(sizeof(char *) * (n + 1));
	needed = palloc(sizeof(int64) * (n + 1));
	for (i = 0; i < rows.count; i++)
	{
		bool		isnull;
		Datum		d = sbx_sql_datum(&sql, &rows, i, 2, &isnull);

		dests[i] = sbx_sql_text(&sql, &rows, i, 1);
		needed[i] = isnull ? 0 : DatumGetInt64(d);
	}
	sbx_sql_leave(&sql);
	/* Probed outside the statement's scope: a slow bucket holds no SPI state. */
	for (i = 0; i < (uint64) n; i++)
		check_one(out, "destination", dests[i], needed[i]);
}

void
sbx_check_destinations(SbCheckOut *out)
{
	char		folders[SB_MAX_STRIPES][MAXPGPATH];
	const char *why = "";
	int			n = sbx_guc_archive_destination_list(sb_guc_archive_destinations, folders, &why);
	int			i;
	int64		wal;

	wal = n > 0 ? wal_since_last_full() : 0;
	check_backup_destinations(out);
	/* Segments are spread over the destinations by weight: an even share is the estimate. */
	for (i = 0; i < n; i++)
		check_archive_destination(out, folders[i], wal / n);
}
