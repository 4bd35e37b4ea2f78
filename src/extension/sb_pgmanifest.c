/*
 * sb_pgmanifest.c
 *		Writing a backup_manifest in PostgreSQL's format (version 1): one
 *		object per file with its size, time and CRC-32C, the WAL range, and a
 *		SHA-256 of everything before the checksum line.
 *
 * It goes to a temporary file in pieces, as PostgreSQL's own base backup
 * spills its manifest, so a cluster of a million files needs no gigabyte
 * of memory.  The CRC-32C of each file was computed by the engine as it read
 * the file.  PostgreSQL prints a checksum as the hex of its bytes in memory
 * order, so a CRC-32C appears least significant byte first.
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "mb/pg_wchar.h"
#include "pgstat.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "sb_control.h"
#include "sb_pgmanifest.h"

#define FLUSH_AT (64 * 1024)

struct SbPgManifest
{
	File		file;			/* -1 once closed */
	MemoryContextCallback close_on_reset;
	off_t		offset;
	StringInfoData buf;
	pg_cryptohash_ctx *sha;		/* NULL once the checksum line is reached */
	bool		first;			/* no file listed yet */
	bool		finished;		/* entries added now are not listed */
};

/* Write out what is buffered, hashing it first; false with ERR set if that fails. */
static bool
flush(SbPgManifest *pm, SbError *err)
{
	if (pm->buf.len == 0)
		return true;
	if (pm->sha != NULL && pg_cryptohash_update(pm->sha, (uint8 *) pm->buf.data, pm->buf.len) < 0)
		return sb_error_set(err, SB_EIO, "could not compute the checksum of the backup manifest: %s",
							pg_cryptohash_error(pm->sha));
	errno = 0;
	if (FileWrite(pm->file, pm->buf.data, pm->buf.len, pm->offset, WAIT_EVENT_BASEBACKUP_WRITE) != pm->buf.len)
		return sb_error_set_errno(err, errno ? errno : ENOSPC, "could not write the backup manifest to \"%s\"",
								  FilePathName(pm->file));
	pm->offset += pm->buf.len;
	resetStringInfo(&pm->buf);
	return true;
}

/* flush, raising its error */
static void
flush_or_raise(SbPgManifest *pm)
{
	SbError		err;

	if (!flush(pm, &err))
		sbx_control_raise(&err);
}

/* pg_verifybackup ignores WAL files: they are checked with pg_waldump. */
static bool
is_listed(const SbEntry *e)
{
	return e->type == SB_ENTRY_FILE && strncmp(e->path, "pg_wal/", 7) != 0;
}

static void
append_path(StringInfo buf, const char *path)
{
	size_t		len = strlen(path);
	char	   *hex;

	if (pg_verify_mbstr(PG_UTF8, path, len, true))
	{
		appendStringInfoString(buf, "{ \"Path\": ");
		escape_json(buf, path);
		appendStringInfoString(buf, ", ");
		return;
	}
	hex = palloc(2 * len + 1);
	hex[hex_encode(path, len, hex)] = '\0';
	appendStringInfo(buf, "{ \"Encoded-Path\": \"%s\", ", hex);
	pfree(hex);
}

static void
append_file(StringInfo buf, const SbEntry *e, bool first)
{
	pg_time_t	mtime = (pg_time_t) e->mtime;
	char		when[64];
	uint8		crc[4];

	memcpy(crc, &e->crc32c, sizeof(crc));
	pg_strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S GMT", pg_gmtime(&mtime));
	appendStringInfoString(buf, first ? "\n" : ",\n");
	append_path(buf, e->path);
	/*
	 * A file of changed blocks is completed from older backups, whose
	 * unchanged pages may differ in hint bits from the file read here: its
	 * restored content has no checksum known now.  Its size is.
	 */
	if (e->incremental)
	{
		appendStringInfo(buf, "\"Size\": %llu, \"Last-Modified\": \"%s\" }",
						 (unsigned long long) e->size, when);
		return;
	}
	appendStringInfo(buf, "\"Size\": %llu, \"Last-Modified\": \"%s\", "
					 "\"Checksum-Algorithm\": \"CRC32C\", \"Checksum\": \"%02x%02x%02x%02x\" }",
					 (unsigned long long) e->size, when, crc[0], crc[1], crc[2], crc[3]);
}

/* The checksum line: the SHA-256 of every byte before it, as hex. */
static void
append_checksum(SbPgManifest *pm)
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char		hex[2 * PG_SHA256_DIGEST_LENGTH + 1];

	flush_or_raise(pm);
	if (pg_cryptohash_final(pm->sha, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute the checksum of the backup manifest: %s",
			 pg_cryptohash_error(pm->sha));
	pg_cryptohash_free(pm->sha);
	pm->sha = NULL;
	hex[hex_encode((char *) digest, sizeof(digest), hex)] = '\0';
	appendStringInfo(&pm->buf, "\"Manifest-Checksum\": \"%s\"}\n", hex);
	flush_or_raise(pm);
}

/* The memory context's reset callback: the file goes with it, whatever ended the backup. */
static void
close_on_reset(void *arg)
{
	sbx_pgmanifest_close(arg);
}

SbPgManifest *
sbx_pgmanifest_begin(void)
{
	SbPgManifest *pm = palloc0(sizeof(SbPgManifest));

	/*
	 * Across transactions (the job runs its SQL in transactions of its own,
	 * whose ends would close a transaction's file under it), closed with
	 * the memory context the manifest lives in: on an error too.
	 */
	pm->file = OpenTemporaryFile(true);
	pm->close_on_reset.func = close_on_reset;
	pm->close_on_reset.arg = pm;
	MemoryContextRegisterResetCallback(CurrentMemoryContext, &pm->close_on_reset);
	pm->sha = pg_cryptohash_create(PG_SHA256);
	if (pm->sha == NULL || pg_cryptohash_init(pm->sha) < 0)
		elog(ERROR, "could not start the checksum of the backup manifest");
	pm->first = true;
	initStringInfo(&pm->buf);
	appendStringInfoString(&pm->buf, "{ \"PostgreSQL-Backup-Manifest-Version\": 1,\n\"Files\": [");
	return pm;
}

/*
 * Called by the engine as it records each entry (an SbEntryHook): its
 * errors return, they do not jump through the engine's frames.
 */
bool
sbx_pgmanifest_add(void *arg, const SbEntry *e, SbError *err)
{
	SbPgManifest *pm = arg;

	if (pm->finished || !is_listed(e))
		return true;
	append_file(&pm->buf, e, pm->first);
	pm->first = false;
	return pm->buf.len < FLUSH_AT || flush(pm, err);
}

File
sbx_pgmanifest_finish(SbPgManifest *pm, TimeLineID tli, XLogRecPtr start, XLogRecPtr stop)
{
	File		file = pm->file;

	appendStringInfo(&pm->buf, " ],\n\"WAL-Ranges\": [\n"
					 "{ \"Timeline\": %u, \"Start-LSN\": \"%X/%X\", \"End-LSN\": \"%X/%X\" }\n],\n",
					 tli, LSN_FORMAT_ARGS(start), LSN_FORMAT_ARGS(stop));
	append_checksum(pm);
	pm->finished = true;
	pfree(pm->buf.data);
	pm->buf.data = NULL;
	return file;
}

void
sbx_pgmanifest_close(SbPgManifest *pm)
{
	if (pm->file < 0)
		return;
	FileClose(pm->file);
	pm->file = -1;
}
