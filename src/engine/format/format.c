/*
 * format.c
 *		Encoding and decoding of the stripe file's fixed structures.
 *
 * Decoders check magic, version and the structure's own hash, and say what
 * is wrong; callers add which stripe and chunk they were reading.
 */
#include <string.h>

#include "stripebackup/sb_manifest.h"
#include "format/checksum.h"
#include "format/format.h"
#include "format/parity.h"

void
sb_format_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t) v;
	p[1] = (uint8_t) (v >> 8);
}

void
sb_format_put32(uint8_t *p, uint32_t v)
{
	int			i;

	for (i = 0; i < 4; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

void
sb_format_put64(uint8_t *p, uint64_t v)
{
	int			i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

uint16_t
sb_format_get16(const uint8_t *p)
{
	return (uint16_t) (p[0] | (p[1] << 8));
}

uint32_t
sb_format_get32(const uint8_t *p)
{
	uint32_t	v = 0;
	int			i;

	for (i = 3; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

uint64_t
sb_format_get64(const uint8_t *p)
{
	uint64_t	v = 0;
	int			i;

	for (i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

/* Seal a structure of SIZE bytes: its last 8 bytes hash the ones before. */
void
sb_format_seal(uint8_t *p, size_t size)
{
	sb_format_put64(p + size - 8, sb_hash64(p, size - 8));
}

bool
sb_format_seal_ok(const uint8_t *p, size_t size)
{
	return sb_format_get64(p + size - 8) == sb_hash64(p, size - 8);
}

void
sb_format_encode_header(const SbStripeHeader *h, uint8_t *out)
{
	memset(out, 0, SB_STRIPE_HEADER_SIZE);
	memcpy(out, SB_STRIPE_MAGIC, 8);
	sb_format_put16(out + 8, h->major);
	sb_format_put16(out + 10, h->minor);
	sb_format_put32(out + 12, SB_STRIPE_HEADER_SIZE);
	memcpy(out + 16, h->uuid, 16);
	sb_format_put32(out + 32, h->number);
	sb_format_put32(out + 36, h->count);
	sb_format_put32(out + 40, h->chunk_size);
	sb_format_seal(out, SB_STRIPE_HEADER_SIZE);
}

bool
sb_format_decode_header(const uint8_t *in, SbStripeHeader *h, SbError *err)
{
	if (memcmp(in, SB_STRIPE_MAGIC, 8) != 0)
		return sb_error_set(err, SB_ECORRUPT,
							"not a stripebackup stripe file (bad magic)");
	h->major = sb_format_get16(in + 8);
	h->minor = sb_format_get16(in + 10);
	if (h->major != SB_FORMAT_MAJOR)
		return sb_error_set(err, SB_EVERSION,
							"unsupported stripe format version %u.%u (this program reads %d.x)",
							h->major, h->minor, SB_FORMAT_MAJOR);
	if (sb_format_get32(in + 12) != SB_STRIPE_HEADER_SIZE || !sb_format_seal_ok(in, SB_STRIPE_HEADER_SIZE))
		return sb_error_set(err, SB_ECORRUPT, "stripe header checksum mismatch");
	memcpy(h->uuid, in + 16, 16);
	h->number = sb_format_get32(in + 32);
	h->count = sb_format_get32(in + 36);
	h->chunk_size = sb_format_get32(in + 40);
	return true;
}

void
sb_format_encode_chunk(const SbChunkHeader *h, uint8_t *out)
{
	memset(out, 0, SB_CHUNK_HEADER_SIZE);
	memcpy(out, SB_CHUNK_MAGIC, 4);
	out[4] = h->codec;
	out[5] = h->cipher;
	out[6] = h->kind;
	sb_format_put64(out + 8, h->chunk_id);
	sb_format_put32(out + 16, h->raw_len);
	sb_format_put32(out + 20, h->stored_len);
	sb_format_put64(out + 24, h->raw_hash);
	sb_format_put64(out + 32, h->stored_hash);
	sb_format_seal(out, SB_CHUNK_HEADER_SIZE);
}

bool
sb_format_decode_chunk(const uint8_t *in, SbChunkHeader *h, SbError *err)
{
	if (memcmp(in, SB_CHUNK_MAGIC, 4) != 0)
		return sb_error_set(err, SB_ECORRUPT, "bad chunk header magic");
	if (!sb_format_seal_ok(in, SB_CHUNK_HEADER_SIZE))
		return sb_error_set(err, SB_ECORRUPT, "chunk header checksum mismatch");
	h->codec = in[4];
	h->cipher = in[5];
	h->kind = in[6];
	if (h->kind > SB_CHUNK_KIND_PARITY)
		return sb_error_set(err, SB_ECORRUPT, "chunk record of unknown kind %u", h->kind);
	h->chunk_id = sb_format_get64(in + 8);
	h->raw_len = sb_format_get32(in + 16);
	h->stored_len = sb_format_get32(in + 20);
	h->raw_hash = sb_format_get64(in + 24);
	h->stored_hash = sb_format_get64(in + 32);
	return true;
}

void
sb_format_encode_index_entry(const SbIndexEntry *e, uint8_t *out)
{
	memset(out, 0, SB_INDEX_ENTRY_SIZE);
	sb_format_put64(out, e->chunk_id);
	sb_format_put64(out + 8, e->offset);
	sb_format_put32(out + 16, e->raw_len);
	sb_format_put32(out + 20, e->stored_len);
	out[24] = e->codec;
	out[25] = e->cipher;
	out[26] = e->kind;
	sb_format_put64(out + 32, e->raw_hash);
	sb_format_put64(out + 40, e->stored_hash);
}

void
sb_format_decode_index_entry(const uint8_t *in, SbIndexEntry *e)
{
	e->chunk_id = sb_format_get64(in);
	e->offset = sb_format_get64(in + 8);
	e->raw_len = sb_format_get32(in + 16);
	e->stored_len = sb_format_get32(in + 20);
	e->codec = in[24];
	e->cipher = in[25];
	e->kind = in[26];
	e->raw_hash = sb_format_get64(in + 32);
	e->stored_hash = sb_format_get64(in + 40);
}

void
sb_format_encode_trailer(const SbTrailer *t, uint8_t *out)
{
	memset(out, 0, SB_TRAILER_SIZE);
	memcpy(out, SB_TRAILER_MAGIC, 8);
	sb_format_put64(out + 8, t->index_offset);
	sb_format_put64(out + 16, t->chunk_count);
	sb_format_put64(out + 24, t->raw_bytes);
	sb_format_put64(out + 32, t->stored_bytes);
	sb_format_put64(out + 40, t->index_hash);
	sb_format_put32(out + 48, t->number);
	sb_format_put32(out + 52, t->count);
	memcpy(out + 56, t->uuid, 16);
	memcpy(out + 72, t->manifest_sha256, 32);
	sb_format_put64(out + 104, t->manifest_length);
	/* 112..119 zero */
	sb_format_seal(out, SB_TRAILER_SIZE);
}

bool
sb_format_decode_trailer(const uint8_t *in, SbTrailer *t, SbError *err)
{
	if (memcmp(in, SB_TRAILER_MAGIC, 8) != 0)
		return sb_error_set(err, SB_ECORRUPT,
							"no index trailer at the end of the file (truncated or incomplete stripe)");
	if (!sb_format_seal_ok(in, SB_TRAILER_SIZE))
		return sb_error_set(err, SB_ECORRUPT, "index trailer checksum mismatch");
	t->index_offset = sb_format_get64(in + 8);
	t->chunk_count = sb_format_get64(in + 16);
	t->raw_bytes = sb_format_get64(in + 24);
	t->stored_bytes = sb_format_get64(in + 32);
	t->index_hash = sb_format_get64(in + 40);
	t->number = sb_format_get32(in + 48);
	t->count = sb_format_get32(in + 52);
	memcpy(t->uuid, in + 56, 16);
	memcpy(t->manifest_sha256, in + 72, 32);
	t->manifest_length = sb_format_get64(in + 104);
	return true;
}
