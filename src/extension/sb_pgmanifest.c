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

#include "sb_pgmanifest.h"

#define FLUSH_AT (64 * 1024)

typedef struct Writer
{
	File		file;
	off_t		offset;
	StringInfoData buf;
	pg_cryptohash_ctx *sha;		/* NULL once the checksum line is reached */
} Writer;

/* Write out what is buffered, hashing it first. */
static void
flush(Writer *w)
{
	if (w->buf.len == 0)
		return;
	if (w->sha != NULL && pg_cryptohash_update(w->sha, (uint8 *) w->buf.data, w->buf.len) < 0)
		elog(ERROR, "could not compute the checksum of the backup manifest: %s",
			 pg_cryptohash_error(w->sha));
	if (FileWrite(w->file, w->buf.data, w->buf.len, w->offset, WAIT_EVENT_BASEBACKUP_WRITE) != w->buf.len)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not write the backup manifest to \"%s\": %m", FilePathName(w->file))));
	w->offset += w->buf.len;
	resetStringInfo(&w->buf);
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
append_checksum(Writer *w)
{
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char		hex[2 * PG_SHA256_DIGEST_LENGTH + 1];

	flush(w);
	if (pg_cryptohash_final(w->sha, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute the checksum of the backup manifest: %s",
			 pg_cryptohash_error(w->sha));
	pg_cryptohash_free(w->sha);
	w->sha = NULL;
	hex[hex_encode((char *) digest, sizeof(digest), hex)] = '\0';
	appendStringInfo(&w->buf, "\"Manifest-Checksum\": \"%s\"}\n", hex);
	flush(w);
}

File
sb_pgmanifest_write(const SbManifest *m, TimeLineID tli, XLogRecPtr start, XLogRecPtr stop)
{
	Writer		w;
	bool		first = true;
	size_t		i;

	memset(&w, 0, sizeof(w));
	w.file = OpenTemporaryFile(false);
	w.sha = pg_cryptohash_create(PG_SHA256);
	if (w.sha == NULL || pg_cryptohash_init(w.sha) < 0)
		elog(ERROR, "could not start the checksum of the backup manifest");
	initStringInfo(&w.buf);
	appendStringInfoString(&w.buf, "{ \"PostgreSQL-Backup-Manifest-Version\": 1,\n\"Files\": [");
	for (i = 0; i < m->nentries; i++)
	{
		if (!is_listed(&m->entries[i]))
			continue;
		append_file(&w.buf, &m->entries[i], first);
		first = false;
		if (w.buf.len >= FLUSH_AT)
			flush(&w);
	}
	appendStringInfo(&w.buf, " ],\n\"WAL-Ranges\": [\n"
					 "{ \"Timeline\": %u, \"Start-LSN\": \"%X/%X\", \"End-LSN\": \"%X/%X\" }\n],\n",
					 tli, LSN_FORMAT_ARGS(start), LSN_FORMAT_ARGS(stop));
	append_checksum(&w);
	pfree(w.buf.data);
	return w.file;
}
