/*
 * wal_format.c
 *		The header of an archived WAL file (.sbw), encoded and decoded as
 *		docs/FORMAT.md ("The WAL archive") lays it out.
 *
 *		0	8	magic "SBWALFIL"
 *		8	2	major version (1)			10	2	minor version (0)
 *		12	4	header size (128)
 *		16	8	system identifier
 *		24	40	WAL file name, ASCII, NUL-padded
 *		64	8	raw length					72	8	stored length
 *		80	1	codec (0 none, 1 zstd)		81	3	zero
 *		84	4	zstd level (signed)
 *		88	8	XXH3-64 of the raw bytes	96	8	XXH3-64 of the payload
 *		104	4	CRC-32C of the raw bytes	108	4	zero
 *		112	8	archived at (seconds since the epoch, signed)
 *		120	8	seal: XXH3-64 of bytes 0-119
 *
 * As in format.c, a decoder checks magic and version before the seal, so
 * that a file of a later major version is named as such, not as damaged.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format.h"
#include "wal_internal.h"

void
sb_wal_header_encode(const SbWalHeader *h, uint8_t out[SB_WAL_HEADER_SIZE])
{
	memset(out, 0, SB_WAL_HEADER_SIZE);
	memcpy(out, SB_WAL_MAGIC, 8);
	sb_format_put16(out + 8, h->major);
	sb_format_put16(out + 10, h->minor);
	sb_format_put32(out + 12, SB_WAL_HEADER_SIZE);
	sb_format_put64(out + 16, h->system_identifier);
	memcpy(out + 24, h->name, strnlen(h->name, SB_WAL_NAME_MAX));
	sb_format_put64(out + 64, h->raw_len);
	sb_format_put64(out + 72, h->stored_len);
	out[80] = h->codec;
	sb_format_put32(out + 84, (uint32_t) h->level);
	sb_format_put64(out + 88, h->raw_hash);
	sb_format_put64(out + 96, h->stored_hash);
	sb_format_put32(out + 104, h->crc32c);
	sb_format_put64(out + 112, (uint64_t) h->archived_at);
	sb_format_seal(out, SB_WAL_HEADER_SIZE);
}

/* The name field: a WAL file name, then NULs only. */
static bool
decode_name(const uint8_t *field, char name[SB_WAL_NAME_MAX + 1], SbError *err)
{
	size_t		len = strnlen((const char *) field, SB_WAL_NAME_MAX);
	SbWalName	parsed;
	size_t		i;

	memcpy(name, field, len);
	name[len] = '\0';
	for (i = len; i < SB_WAL_NAME_MAX; i++)
		if (field[i] != 0)
			return sb_error_set(err, SB_ECORRUPT, "the header's name field is not NUL-padded");
	if (!sb_wal_name_parse(name, &parsed, err))
	{
		err->code = SB_ECORRUPT;
		sb_error_prefix(err, "the header names no WAL file");
		return false;
	}
	return true;
}

/* Lengths as a writer writes them: zstd only when it shrank the file, else the bytes as they are. */
static bool
check_lengths(const SbWalHeader *h, SbError *err)
{
	if (h->raw_len == 0 || h->raw_len > SB_WAL_MAX_SEGMENT_SIZE)
		return sb_error_set(err, SB_ECORRUPT, "the header gives a length of %" PRIu64
							" bytes (1 to %u)", h->raw_len, SB_WAL_MAX_SEGMENT_SIZE);
	if (h->codec == SB_CODEC_NONE && h->stored_len != h->raw_len)
		return sb_error_set(err, SB_ECORRUPT, "the header says uncompressed, yet %" PRIu64
							" bytes stored for %" PRIu64, h->stored_len, h->raw_len);
	if (h->codec == SB_CODEC_ZSTD && (h->stored_len == 0 || h->stored_len >= h->raw_len))
		return sb_error_set(err, SB_ECORRUPT, "the header says zstd, yet %" PRIu64
							" bytes stored for %" PRIu64 " (a writer keeps zstd only when smaller)",
							h->stored_len, h->raw_len);
	if (h->codec != SB_CODEC_NONE && h->codec != SB_CODEC_ZSTD)
		return sb_error_set(err, SB_ECORRUPT, "the header names unknown codec %u", h->codec);
	return true;
}

bool
sb_wal_header_decode_sealed(const uint8_t in[SB_WAL_HEADER_SIZE], SbWalHeader *h, SbError *err)
{
	memset(h, 0, sizeof(*h));
	if (memcmp(in, SB_WAL_MAGIC, 8) != 0)
		return sb_error_set(err, SB_ECORRUPT, "not a stripebackup WAL file (bad magic)");
	h->major = sb_format_get16(in + 8);
	h->minor = sb_format_get16(in + 10);
	if (h->major != SB_WAL_FORMAT_MAJOR)
		return sb_error_set(err, SB_EVERSION,
							"unsupported WAL archive format version %u.%u (this program reads %d.x)",
							h->major, h->minor, SB_WAL_FORMAT_MAJOR);
	if (sb_format_get32(in + 12) != SB_WAL_HEADER_SIZE || !sb_format_seal_ok(in, SB_WAL_HEADER_SIZE))
		return sb_error_set(err, SB_ECORRUPT, "header checksum mismatch");
	h->system_identifier = sb_format_get64(in + 16);
	h->raw_len = sb_format_get64(in + 64);
	h->stored_len = sb_format_get64(in + 72);
	h->codec = in[80];
	h->level = (int32_t) sb_format_get32(in + 84);
	h->raw_hash = sb_format_get64(in + 88);
	h->stored_hash = sb_format_get64(in + 96);
	h->crc32c = sb_format_get32(in + 104);
	h->archived_at = (int64_t) sb_format_get64(in + 112);
	return decode_name(in + 24, h->name, err);
}

bool
sb_wal_header_decode(const uint8_t in[SB_WAL_HEADER_SIZE], SbWalHeader *h, SbError *err)
{
	return sb_wal_header_decode_sealed(in, h, err) && check_lengths(h, err);
}

bool
sb_wal_header_is(const SbWalHeader *h, uint64_t sysid, const char *name, SbError *err)
{
	if (h->system_identifier != sysid)
		return sb_error_set(err, SB_ECORRUPT,
							"it belongs to the cluster of system identifier %" PRIu64 ", not %" PRIu64,
							h->system_identifier, sysid);
	if (strcmp(h->name, name) != 0)
		return sb_error_set(err, SB_ECORRUPT, "its header names \"%s\", not \"%s\"", h->name, name);
	return true;
}

void
sb_wal_header_info(const SbWalHeader *h, SbWalInfo *info)
{
	SbError		ignored;

	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", h->name);
	sb_wal_name_parse(h->name, &info->parsed, &ignored);
	info->raw_bytes = h->raw_len;
	info->stored_bytes = h->stored_len;
	info->codec = (SbCodec) h->codec;
	info->level = h->level;
	info->raw_hash = h->raw_hash;
	info->crc32c = h->crc32c;
	info->archived_at = h->archived_at;
}

bool
sb_wal_same_contents(const SbWalHeader *a, const SbWalHeader *b)
{
	return a->raw_len == b->raw_len && a->raw_hash == b->raw_hash && a->crc32c == b->crc32c;
}

void
sb_wal_describe_contents(const SbWalHeader *h, char *buf, size_t len)
{
	snprintf(buf, len, "%" PRIu64 " bytes, XXH3-64 %016" PRIx64 ", CRC-32C %08x",
			 h->raw_len, h->raw_hash, h->crc32c);
}
