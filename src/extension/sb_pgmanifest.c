/*
 * sb_pgmanifest.c
 *		Writing a backup_manifest in PostgreSQL's format (version 1): one
 *		object per file with its size, time and CRC-32C, the WAL range, and a
 *		SHA-256 of everything before the checksum line.
 *
 * The CRC-32C of each file was computed by the engine as it read the file.
 * PostgreSQL prints a checksum as the hex of its bytes in memory order, so
 * a CRC-32C appears least significant byte first.
 */
#include "postgres.h"

#include "common/cryptohash.h"
#include "common/sha2.h"
#include "mb/pg_wchar.h"
#include "pgtime.h"
#include "utils/builtins.h"
#include "utils/json.h"

#include "sb_pgmanifest.h"

/* pg_verifybackup ignores WAL files: they are checked with pg_waldump. */
static bool
is_listed(const SbEntry *e)
{
	return e->type == SB_ENTRY_FILE && strncmp(e->path, "pg_wal/", 7) != 0;
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
	if (pg_verify_mbstr(PG_UTF8, e->path, strlen(e->path), true))
	{
		appendStringInfoString(buf, "{ \"Path\": ");
		escape_json(buf, e->path);
		appendStringInfoString(buf, ", ");
	}
	else
	{
		size_t		len = strlen(e->path);
		char	   *hex = palloc(2 * len + 1);

		hex[hex_encode(e->path, len, hex)] = '\0';
		appendStringInfo(buf, "{ \"Encoded-Path\": \"%s\", ", hex);
	}
	appendStringInfo(buf, "\"Size\": %llu, \"Last-Modified\": \"%s\", "
					 "\"Checksum-Algorithm\": \"CRC32C\", \"Checksum\": \"%02x%02x%02x%02x\" }",
					 (unsigned long long) e->size, when, crc[0], crc[1], crc[2], crc[3]);
}

/* The SHA-256 of BUF's text, as hex. */
static char *
sha256_hex(const StringInfo buf)
{
	pg_cryptohash_ctx *ctx = pg_cryptohash_create(PG_SHA256);
	uint8		digest[PG_SHA256_DIGEST_LENGTH];
	char	   *hex = palloc(2 * PG_SHA256_DIGEST_LENGTH + 1);

	if (ctx == NULL || pg_cryptohash_init(ctx) < 0 ||
		pg_cryptohash_update(ctx, (uint8 *) buf->data, buf->len) < 0 ||
		pg_cryptohash_final(ctx, digest, sizeof(digest)) < 0)
		elog(ERROR, "could not compute the checksum of the backup manifest: %s",
			 pg_cryptohash_error(ctx));
	pg_cryptohash_free(ctx);
	hex[hex_encode((char *) digest, sizeof(digest), hex)] = '\0';
	return hex;
}

char *
sb_pgmanifest_build(const SbManifest *m, TimeLineID tli, XLogRecPtr start, XLogRecPtr stop)
{
	StringInfoData buf;
	bool		first = true;
	char	   *checksum;
	size_t		i;

	initStringInfo(&buf);
	appendStringInfoString(&buf, "{ \"PostgreSQL-Backup-Manifest-Version\": 1,\n\"Files\": [");
	for (i = 0; i < m->nentries; i++)
	{
		if (!is_listed(&m->entries[i]))
			continue;
		append_file(&buf, &m->entries[i], first);
		first = false;
	}
	appendStringInfo(&buf, " ],\n\"WAL-Ranges\": [\n"
					 "{ \"Timeline\": %u, \"Start-LSN\": \"%X/%X\", \"End-LSN\": \"%X/%X\" }\n],\n",
					 tli, LSN_FORMAT_ARGS(start), LSN_FORMAT_ARGS(stop));
	/* The checksum covers everything up to and including the newline above. */
	checksum = sha256_hex(&buf);
	appendStringInfo(&buf, "\"Manifest-Checksum\": \"%s\"}\n", checksum);
	return buf.data;
}
