/*
 * sb_guc.c
 *		stripebackup.* settings: the tuning knobs a DBA reaches for (buffer
 *		count and transfer size, as SQL Server's BUFFERCOUNT and
 *		MAXTRANSFERSIZE; compression workers; the start checkpoint).
 *
 * A backup reads them when it starts, in the session that calls
 * stripe_backup(), so SET works as well as postgresql.conf.
 */
#include "postgres.h"

#include <limits.h>

#include "utils/guc.h"

#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_s3.h"
#include "sb_guc.h"
#include "sb_s3_settings.h"

int			sb_guc_buffer_count = 16;
int			sb_guc_redundancy = 0;
int			sb_guc_transfer_size_kb = 1024;
int			sb_guc_frame_size_kb = 64;
int			sb_guc_compression_workers = 0;
bool		sb_guc_fast_checkpoint = true;
int			sb_guc_io_method = SB_IO_AUTO;
int			sb_guc_queue_depth = 4;
bool		sb_guc_skip_unchanged = true;
bool		sb_guc_use_wal_summaries = true;
bool		sb_guc_direct_io = true;
char	   *sb_guc_max_rate = NULL;
int			sb_guc_max_memory_kb = 1024 * 1024;
char	   *sb_guc_archive_destinations = NULL;
char	   *sb_guc_encryption_key_file = NULL;
int			sb_guc_archive_compression = SB_CODEC_ZSTD;
int			sb_guc_archive_level = 1;
int			sb_guc_archive_workers = 0;
int			sb_guc_archive_batch = 16;
int			sb_guc_archive_redundancy = 0;
int			sb_guc_check_max_backup_age = 0;
int			sb_guc_retention_full_count = 0;
int			sb_guc_retention_window = 0;

static const struct config_enum_entry codecs[] = {
	{"zstd", SB_CODEC_ZSTD, false},
	{"none", SB_CODEC_NONE, false},
	{NULL, 0, false}
};

static const struct config_enum_entry io_methods[] = {
	{"auto", SB_IO_AUTO, false},
	{"io_uring", SB_IO_URING, false},
	{"sync", SB_IO_SYNC, false},
	{NULL, 0, false}
};

/* "0", "100" or "50,200,200": MB/s, one for all destinations or one each. */
static bool
check_max_rate(char **newval, void **extra, GucSource source)
{
	SbNumberList rates;
	SbError		err;

	if (sb_policy_parse_rates(*newval, &rates, &err))
		return true;
	GUC_check_errdetail("%s: stripebackup.max_rate is a rate in MB/s for every destination, "
						"or a comma-separated list of one rate per destination; 0 means no limit.",
						err.message);
	return false;
}

void
sbx_guc_max_rates(int n, double *out)
{
	SbNumberList rates;
	SbError		err;
	int			i;

	if (sb_guc_max_rate == NULL || !sb_policy_parse_rates(sb_guc_max_rate, &rates, &err))
		rates.count = 0;
	for (i = 0; i < n; i++)
		out[i] = sb_policy_rate_of(&rates, (uint32_t) i);
}

void
sbx_guc_read_options(SbReadOptions *o, double *rates)
{
	memset(o, 0, sizeof(*o));
	o->workers = (uint32_t) sb_guc_compression_workers;
	o->buffer_count = (uint32_t) sb_guc_buffer_count;
	o->io_method = (SbIoMethod) sbx_guc_io_method_checked();
	o->queue_depth = (uint32_t) sb_guc_queue_depth;
	sbx_guc_max_rates(SB_MAX_STRIPES, rates);
	o->max_rates = rates;
	o->max_memory = sbx_guc_max_memory_bytes();
}

/* Is TEXT an object-storage location the engine takes? */
static bool
valid_location(const char *text)
{
	SbS3Location loc;
	SbError		ignored;

	return sb_s3_parse_location(text, &loc, &ignored);
}

int
sbx_guc_archive_destination_list(const char *text, char (*out)[MAXPGPATH], const char **why)
{
	const char *p = text ? text : "";
	int			n = 0;

	for (;;)
	{
		size_t		len = strcspn(p, ",");
		const char *item = p;
		int			i;

		while (len > 0 && (*item == ' ' || *item == '\t'))
			item++, len--;
		while (len > 0 && (item[len - 1] == ' ' || item[len - 1] == '\t'))
			len--;
		if (len == 0 && p[strcspn(p, ",")] == '\0' && n == 0)
			return 0;			/* none at all: archiving is not configured */
		if (len == 0)
			return (*why = "a destination is empty"), -1;
		if (n == SB_MAX_STRIPES)
			return (*why = "more than 64 destinations are given"), -1;
		if (len >= MAXPGPATH || (item[0] != '/' && strncmp(item, "s3://", 5) != 0))
			return (*why = "every destination must be an absolute path or an s3:// location"), -1;
		memcpy(out[n], item, len);
		out[n][len] = '\0';
		if (item[0] != '/' && !valid_location(out[n]))
			return (*why = "an s3:// location is not s3://bucket/prefix"), -1;
		for (i = 0; i < n; i++)
			if (strcmp(out[i], out[n]) == 0)
				return (*why = "a destination is given twice"), -1;
		n++;
		p += strcspn(p, ",");
		if (*p == '\0')
			return n;
		p++;
	}
}

static bool
check_archive_destinations(char **newval, void **extra, GucSource source)
{
	static char dests[SB_MAX_STRIPES][MAXPGPATH];
	const char *why = NULL;
	int			n = sbx_guc_archive_destination_list(*newval, dests, &why);

	if (n >= 0)
		return true;
	GUC_check_errdetail("%s: stripebackup.archive_destinations is a comma-separated list of "
						"absolute folders, one per device, or s3://bucket/prefix locations.", why);
	return false;
}

uint64
sbx_guc_max_memory_bytes(void)
{
	return (uint64) sb_guc_max_memory_kb * 1024;
}

int
sbx_guc_io_method_checked(void)
{
	static bool told = false;
	const char *why;

	if (sb_guc_io_method == SB_IO_AUTO && !sb_io_uring_available(&why) && !told)
	{
		ereport(NOTICE,
				(errmsg("stripebackup uses synchronous I/O: %s", why),
				 errhint("Set stripebackup.io_method = 'sync' to make this the choice and hide this notice.")));
		told = true;
	}
	return sb_guc_io_method;
}

/* The engine reads and writes whole 4kB pages: transfers and frames are multiples of them. */
static bool
multiple_of_4kb(int kb, const char *name)
{
	if (kb % 4 != 0)
	{
		GUC_check_errdetail("%s must be a multiple of 4kB.", name);
		return false;
	}
	return true;
}

static bool
check_transfer_size(int *newval, void **extra, GucSource source)
{
	return multiple_of_4kb(*newval, "stripebackup.transfer_size");
}

static bool
check_frame_size(int *newval, void **extra, GucSource source)
{
	return multiple_of_4kb(*newval, "stripebackup.frame_size");
}

void
sbx_guc_define(void)
{
	DefineCustomIntVariable("stripebackup.redundancy",
							"Destinations a backup may lose and still restore, when stripe_backup() does not say.",
							"Each backup then stores parity (about redundancy / (destinations - redundancy) of its data) and needs more destinations than this; 0: none.",
							&sb_guc_redundancy, 0, 0, SB_MAX_REDUNDANCY,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.buffer_count",
							"Number of transfer buffers a backup or restore keeps in flight.",
							"Memory used is buffer_count times transfer_size (twice that with compression).",
							&sb_guc_buffer_count, 16, 2, 4096,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.transfer_size",
							"Size of one transfer: the unit of reading, compression and checksums.",
							"A multiple of 4kB, from 4kB to 64MB.",
							&sb_guc_transfer_size_kb, 1024, 4, 64 * 1024,
							PGC_USERSET, GUC_UNIT_KB, check_transfer_size, NULL, NULL);
	DefineCustomIntVariable("stripebackup.frame_size",
							"Size of the zstd frames a compressed transfer is cut into.",
							"A delta restore reads only the frames that differ: smaller frames, less read; larger ones, less stored. A multiple of 4kB, from 16kB; at the transfer size or more, one frame a transfer.",
							&sb_guc_frame_size_kb, 64, 16, 64 * 1024,
							PGC_USERSET, GUC_UNIT_KB, check_frame_size, NULL, NULL);
	DefineCustomIntVariable("stripebackup.compression_workers",
							"Threads compressing a backup; 0 means one per CPU.",
							NULL,
							&sb_guc_compression_workers, 0, 0, 256,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("stripebackup.fast_checkpoint",
							 "Start a backup with an immediate checkpoint instead of a spread one.",
							 "A spread checkpoint is gentler on a busy server but can delay the start by up to checkpoint_timeout.",
							 &sb_guc_fast_checkpoint, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomEnumVariable("stripebackup.io_method",
							 "How backups and restores read and write files.",
							 "auto uses io_uring when the kernel allows it, else pread/pwrite (sync).",
							 &sb_guc_io_method, SB_IO_AUTO, io_methods,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.queue_depth",
							"Reads or writes in flight per file or destination.",
							NULL,
							&sb_guc_queue_depth, 4, 1, 256,
							PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("stripebackup.skip_unchanged_files",
							 "In a diff or incr backup, take from the parent unread a relation file whose size and times did not change.",
							 "Off reads every relation file and compares its pages' LSNs; times are not trusted across a timeline switch either way.",
							 &sb_guc_skip_unchanged, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("stripebackup.use_wal_summaries",
							 "In a diff or incr backup on PostgreSQL 17 or later, read only the blocks the WAL summaries name when they cover the time since the parent began.",
							 "Off reads every page of a relation file that changed and compares its LSN, as on PostgreSQL 15 and 16.",
							 &sb_guc_use_wal_summaries, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomBoolVariable("stripebackup.direct_io",
							 "Keep backups out of the page cache: read what it does not hold with O_DIRECT.",
							 "So a backup does not evict the application's working set; what the cache holds is read through it.",
							 &sb_guc_direct_io, true,
							 PGC_USERSET, 0, NULL, NULL, NULL);
	DefineCustomStringVariable("stripebackup.max_rate",
							   "Rate limit in MB/s per destination: one for all, or one each (\"50,200\"); 0 = none.",
							   "Backups write each stripe, restores and verifies read each stripe, at most this fast.",
							   &sb_guc_max_rate, "0",
							   PGC_USERSET, 0, check_max_rate, NULL, NULL);
	DefineCustomIntVariable("stripebackup.check_max_backup_age",
							"Oldest the newest completed backup may be before stripe_check() fails.",
							"0 checks no age.",
							&sb_guc_check_max_backup_age, 0, 0, INT_MAX,
							PGC_USERSET, GUC_UNIT_S, NULL, NULL, NULL);
	/* Read by the backup worker, from the server's configuration: the administrator's, not a session's. */
	DefineCustomIntVariable("stripebackup.retention_full_count",
							"Completed full backups (with their diffs and incrs) kept after each backup.",
							"0: no count applies; stripe_expire(keep_full => N) does the same by hand.",
							&sb_guc_retention_full_count, 0, 0, INT_MAX,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.retention_window",
							"Recovery window kept after each backup: recovery to any moment of it stays possible.",
							"0: no window applies; stripe_expire(recovery_window => ...) does the same by hand.",
							&sb_guc_retention_window, 0, 0, INT_MAX,
							PGC_SIGHUP, GUC_UNIT_S, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.max_memory",
							"Most memory the buffers of one backup or restore may add up to.",
							"buffer_count, transfer_size, queue_depth and compression_workers are checked against it before anything starts.",
							&sb_guc_max_memory_kb, 1024 * 1024, 64 * 1024, INT_MAX,
							PGC_USERSET, GUC_UNIT_KB, NULL, NULL, NULL);
	/*
	 * Where the server keeps its key and its WAL archive are no secrets, but
	 * no business of every role either: GUC_SUPERUSER_ONLY hides them from
	 * SHOW and pg_settings but for superusers and pg_read_all_settings.
	 */
	DefineCustomStringVariable("stripebackup.encryption_key_file",
							   "The key file of encrypted backups: set, new backups are encrypted with it.",
							   "A file of 32 or more bytes of secret that only the server's user may read "
							   "(openssl rand -base64 48); restores, verifies and plans of encrypted backups read it too.",
							   &sb_guc_encryption_key_file, "",
							   PGC_SUSET, GUC_SUPERUSER_ONLY, NULL, NULL, NULL);
	DefineCustomStringVariable("stripebackup.archive_destinations",
							   "Folders the WAL archive is striped over (archive_library = 'stripebackup').",
							   "A comma-separated list of absolute folders, one per device; empty: archiving is not configured.",
							   &sb_guc_archive_destinations, "",
							   PGC_SIGHUP, GUC_SUPERUSER_ONLY, check_archive_destinations, NULL, NULL);
	DefineCustomEnumVariable("stripebackup.archive_compression",
							 "How archived WAL is compressed.",
							 NULL,
							 &sb_guc_archive_compression, SB_CODEC_ZSTD, codecs,
							 PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.archive_compression_level",
							"The zstd level of archived WAL (negative: the fast modes).",
							NULL,
							&sb_guc_archive_level, 1, -131072, 22,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.archive_workers",
							"WAL files compressed and written at once by the archive module; 0 means one per CPU.",
							NULL,
							&sb_guc_archive_workers, 0, 0, 64,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	DefineCustomIntVariable("stripebackup.archive_batch",
							"How many WAL files marked ready the archive module takes at once.",
							"Beside the file PostgreSQL asks for, the ones ready after it are archived ahead, in parallel.",
							&sb_guc_archive_batch, 16, 1, 256,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	/*
	 * No check hook against the number of destinations: a hook sees the
	 * other setting's old value when both change in one reload.  The
	 * archive refuses a redundancy too high at its next call, naming both
	 * numbers, and stripe_check() says so.
	 */
	DefineCustomIntVariable("stripebackup.archive_redundancy",
							"How many WAL archive destinations may be lost: each segment is written to this many plus one.",
							"0 writes each segment to one destination.  A destination that fails is done without, with a WARNING, while enough others take the segment.",
							&sb_guc_archive_redundancy, 0, 0, SB_MAX_STRIPES - 1,
							PGC_SIGHUP, 0, NULL, NULL, NULL);
	/* Before reserving the prefix, which drops the placeholders of settings not defined yet. */
	sbx_s3_settings_define();
	MarkGUCPrefixReserved("stripebackup");
}
