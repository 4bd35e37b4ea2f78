/*
 * wal_format.c
 *		The header of an archived WAL file (.sbw), encoded and decoded as
 *		docs/FORMAT.md ("The WAL archive") lays it out: format 1.0 for a
 *		file in the clear, 2.0 for a file sealed under a key.
 *
 *		0	8	magic "SBWALFIL"
 *		8	2	major version (1 or 2)		10	2	minor version (0)
 *		12	4	header size (128)
 *		16	8	system identifier
 *		24	40	WAL file name, ASCII, NUL-padded
 *		64	8	raw length					72	8	stored length
 *		80	1	codec (0 none, 1 zstd)		81	3	zero
 *
 *		1.0:	84	4	zstd level (signed)
 *				88	8	XXH3-64 of the raw bytes	96	8	XXH3-64 of the payload
 *				104	4	CRC-32C of the raw bytes	108	4	zero
 *				112	8	archived at (seconds since the epoch, signed)
 *				120	8	seal: XXH3-64 of bytes 0-119
 *		2.0:	84	4	CRC-32C of the raw bytes, masked
 *				88	8	XXH3-64 of the raw bytes, masked
 *				96	8	salt of the file's keys
 *				104	8	archived at
 *				112	16	tag: HMAC-SHA256 of bytes 0-111 under the file's header key
 *
 * As in format.c, a decoder checks magic and version before the seal, so
 * that a file of a later major version is named as such, not as damaged.
 * Which format a reader takes is the caller's key's to say, never the
 * file's: a reader under a key that took a file in the clear would take
 * any forgery written without it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "wal/wal_internal.h"

/* What both formats begin with: magic to codec. */
static void
encode_common(const SbWalHeader *h, uint8_t out[SB_WAL_HEADER_SIZE])
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
}

bool
sb_wal_header_encode(const SbWalHeader *h, const SbWalKeys *keys, uint8_t out[SB_WAL_HEADER_SIZE],
					 SbError *err)
{
	uint64_t	raw_hash = h->raw_hash;
	uint32_t	crc = h->crc32c;

	encode_common(h, out);
	if (!h->sealed)
	{
		sb_format_put32(out + 84, (uint32_t) h->level);
		sb_format_put64(out + 88, h->raw_hash);
		sb_format_put64(out + 96, h->stored_hash);
		sb_format_put32(out + 104, h->crc32c);
		sb_format_put64(out + 112, (uint64_t) h->archived_at);
		sb_format_seal(out, SB_WAL_HEADER_SIZE);
		return true;
	}
	sb_wal_mask(keys, &raw_hash, &crc);
	sb_format_put32(out + 84, crc);
	sb_format_put64(out + 88, raw_hash);
	memcpy(out + 96, h->salt, SB_WAL_SALT_LEN);
	sb_format_put64(out + 104, (uint64_t) h->archived_at);
	return sb_wal_tag(keys, out, out + SB_WAL_TAGGED_LEN, err);
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

/*
 * Lengths as a writer writes them: zstd only when it shrank the file, else
 * the bytes as they are; for a sealed file, of what the codec gave (the
 * stored length less the nonce and the tag).
 */
static bool
check_lengths(const SbWalHeader *h, SbError *err)
{
	uint64_t	payload = h->stored_len;

	if (h->raw_len == 0 || h->raw_len > SB_WAL_MAX_SEGMENT_SIZE)
		return sb_error_set(err, SB_ECORRUPT, "the header gives a length of %" PRIu64
							" bytes (1 to %u)", h->raw_len, SB_WAL_MAX_SEGMENT_SIZE);
	if (h->sealed && payload < SB_WAL_SEAL_OVERHEAD)
		return sb_error_set(err, SB_ECORRUPT, "the header gives %" PRIu64 " bytes stored, fewer than "
							"a sealed payload's nonce and tag (%d)", payload, SB_WAL_SEAL_OVERHEAD);
	if (h->sealed)
		payload -= SB_WAL_SEAL_OVERHEAD;
	if (h->codec == SB_CODEC_NONE && payload != h->raw_len)
		return sb_error_set(err, SB_ECORRUPT, "the header says uncompressed, yet %" PRIu64
							" bytes stored for %" PRIu64, payload, h->raw_len);
	if (h->codec == SB_CODEC_ZSTD && (payload == 0 || payload >= h->raw_len))
		return sb_error_set(err, SB_ECORRUPT, "the header says zstd, yet %" PRIu64
							" bytes stored for %" PRIu64 " (a writer keeps zstd only when smaller)",
							payload, h->raw_len);
	if (h->codec != SB_CODEC_NONE && h->codec != SB_CODEC_ZSTD)
		return sb_error_set(err, SB_ECORRUPT, "the header names unknown codec %u", h->codec);
	return true;
}

/* The fields after the codec: format 1.0's, or 2.0's (still masked). */
static void
decode_tail(const uint8_t in[SB_WAL_HEADER_SIZE], SbWalHeader *h)
{
	if (!h->sealed)
	{
		h->level = (int32_t) sb_format_get32(in + 84);
		h->raw_hash = sb_format_get64(in + 88);
		h->stored_hash = sb_format_get64(in + 96);
		h->crc32c = sb_format_get32(in + 104);
		h->archived_at = (int64_t) sb_format_get64(in + 112);
		return;
	}
	h->crc32c = sb_format_get32(in + 84);
	h->raw_hash = sb_format_get64(in + 88);
	memcpy(h->salt, in + 96, SB_WAL_SALT_LEN);
	h->archived_at = (int64_t) sb_format_get64(in + 104);
}

/* Magic, a version this program reads, size, then every field (nothing checked past them yet). */
static bool
decode_fields(const uint8_t in[SB_WAL_HEADER_SIZE], SbWalHeader *h, SbError *err)
{
	memset(h, 0, sizeof(*h));
	if (memcmp(in, SB_WAL_MAGIC, 8) != 0)
		return sb_error_set(err, SB_ECORRUPT, "not a stripebackup WAL file (bad magic)");
	h->major = sb_format_get16(in + 8);
	h->minor = sb_format_get16(in + 10);
	if (h->major != SB_WAL_FORMAT_MAJOR && h->major != SB_WAL_SEALED_MAJOR)
		return sb_error_set(err, SB_EVERSION,
							"unsupported WAL archive format version %u.%u (this program reads %d.x and %d.x)",
							h->major, h->minor, SB_WAL_FORMAT_MAJOR, SB_WAL_SEALED_MAJOR);
	h->sealed = h->major == SB_WAL_SEALED_MAJOR;
	if (sb_format_get32(in + 12) != SB_WAL_HEADER_SIZE)
		return sb_error_set(err, SB_ECORRUPT, "header checksum mismatch (a header of %u bytes, not %d)",
							sb_format_get32(in + 12), SB_WAL_HEADER_SIZE);
	h->system_identifier = sb_format_get64(in + 16);
	/* The name as it is, for the keys: a field that is not one fails the tag, or decode_name. */
	memcpy(h->name, in + 24, SB_WAL_NAME_MAX);
	h->name[SB_WAL_NAME_MAX] = '\0';
	h->raw_len = sb_format_get64(in + 64);
	h->stored_len = sb_format_get64(in + 72);
	h->codec = in[80];
	decode_tail(in, h);
	return true;
}

/* A sealed header opened with KEY: its tag checked, its hashes unmasked, its keys into KEYS if wanted. */
static bool
open_sealed(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key, SbWalHeader *h, SbWalKeys *keys,
			SbError *err)
{
	SbWalKeys	k;
	bool		ok;

	ok = sb_wal_keys_derive(key, h, &k, err) && sb_wal_tag_check(&k, in, err);
	if (ok)
	{
		sb_wal_mask(&k, &h->raw_hash, &h->crc32c);
		if (keys != NULL)
			*keys = k;
	}
	sb_wal_keys_clear(&k);
	return ok;
}

/* The header's own proof: format 1.0's XXH3 seal, or 2.0's tag under KEY. */
static bool
check_proof(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key, SbWalHeader *h, SbWalKeys *keys,
			SbError *err)
{
	if (h->sealed)
		return open_sealed(in, key, h, keys, err);
	return sb_format_seal_ok(in, SB_WAL_HEADER_SIZE) ||
		sb_error_set(err, SB_ECORRUPT, "header checksum mismatch");
}

/* A file of the format KEY does not take. */
static bool
refuse_format(const SbWalHeader *h, SbError *err)
{
	if (h->sealed)
		return sb_error_set(err, SB_EKEY, "it is sealed (WAL archive format %u.%u): the archive's encryption "
							"key is needed to read it", h->major, h->minor);
	return sb_error_set(err, SB_ECORRUPT, "it is in the clear (WAL archive format %u.%u), and this archive is "
						"read under an encryption key: only files sealed with it are taken", h->major, h->minor);
}

bool
sb_wal_header_decode(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key, SbWalHeader *h,
					 SbWalKeys *keys, SbError *err)
{
	if (!decode_fields(in, h, err))
		return false;
	if (h->sealed != (key != NULL))
		return refuse_format(h, err);
	return check_proof(in, key, h, keys, err) && decode_name(in + 24, h->name, err) &&
		check_lengths(h, err);
}

bool
sb_wal_header_recognise(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key, bool provisional,
						SbWalHeader *h, SbError *err)
{
	if (!decode_fields(in, h, err))
		return false;
	if ((!h->sealed || key != NULL) && !check_proof(in, key, h, NULL, err))
		return false;
	return decode_name(in + 24, h->name, err) && (provisional || check_lengths(h, err));
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
	info->sealed = h->sealed;
}

bool
sb_wal_same_contents(const SbWalHeader *a, const SbWalHeader *b)
{
	return a->raw_len == b->raw_len && a->raw_hash == b->raw_hash && a->crc32c == b->crc32c;
}

void
sb_wal_describe_contents(const SbWalHeader *h, char *buf, size_t len)
{
	if (h->sealed)
	{
		snprintf(buf, len, "%" PRIu64 " bytes, sealed", h->raw_len);
		return;
	}
	snprintf(buf, len, "%" PRIu64 " bytes, XXH3-64 %016" PRIx64 ", CRC-32C %08x",
			 h->raw_len, h->raw_hash, h->crc32c);
}
