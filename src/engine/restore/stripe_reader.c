/*
 * stripe_reader.c
 *		Reading a stripe file: header, trailer, index, chunk records.
 *
 * Messages say what is wrong; the caller puts the stripe (and chunk) in
 * front.  A stripe whose trailer is missing was truncated or never finished.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/checksum.h"
#include "format/codec.h"
#include "format/parity.h"
#include "crypto/crypto.h"
#include "util/fsutil.h"
#include "restore/stripe_reader.h"

static bool
read_exact(SbStripeReader *r, void *buf, size_t len, uint64_t offset, SbError *err)
{
	ssize_t		n = sb_store_pread(&r->file, buf, len, offset, err);

	if (n < 0)
		return false;
	if ((size_t) n != len)
		return sb_error_set(err, SB_ECORRUPT,
							"file ends at %" PRIu64 " bytes, inside a structure at offset %" PRIu64,
							r->file_size, offset);
	return true;
}

/* The header must belong to this backup and this stripe. */
static bool
check_header(SbStripeReader *r, SbError *err)
{
	uint8_t		buf[SB_STRIPE_HEADER_SIZE];
	const SbManifest *m = r->manifest;
	SbStripeHeader *h = &r->header;

	if (!read_exact(r, buf, sizeof(buf), 0, err) ||
		!sb_format_decode_header(buf, h, err))
		return false;
	if (memcmp(h->uuid, m->uuid, 16) != 0)
		return sb_error_set(err, SB_ECORRUPT,
							"belongs to another backup (its backup id differs from the manifest's)");
	if (h->number != r->index + 1 || h->count != m->nstripes)
		return sb_error_set(err, SB_ECORRUPT,
							"is stripe %u of %u, expected stripe %u of %u",
							h->number, h->count, r->index + 1, m->nstripes);
	if (h->chunk_size != m->chunk_size)
		return sb_error_set(err, SB_ECORRUPT, "chunk size %u differs from the manifest's %u",
							h->chunk_size, m->chunk_size);
	return true;
}

static bool
check_trailer(SbStripeReader *r, SbError *err)
{
	uint8_t		buf[SB_TRAILER_SIZE];
	const SbTrailer *t = &r->trailer;
	const SbStripeInfo *info = &r->manifest->stripes[r->index];

	if (!read_exact(r, buf, sizeof(buf), r->file_size - SB_TRAILER_SIZE, err) ||
		!sb_format_decode_trailer(buf, &r->trailer, err))
		return false;
	if (t->number != r->index + 1 || t->count != r->manifest->nstripes ||
		memcmp(t->uuid, r->manifest->uuid, 16) != 0)
		return sb_error_set(err, SB_ECORRUPT, "trailer belongs to another stripe or backup");
	if (memcmp(t->manifest_sha256, r->manifest->json_sha256, SB_SHA256_LEN) != 0 ||
		t->manifest_length != r->manifest->json_length)
		return sb_error_set(err, SB_ECORRUPT,
							"was sealed with another manifest (its trailer records another SHA-256 of manifest.json)");
	/* parity records count in the trailer as records of L bytes (FORMAT.md 10.2) */
	if (t->chunk_count != info->chunks + info->parity_chunks ||
		t->raw_bytes != info->raw_bytes + info->parity_bytes ||
		t->stored_bytes != info->stored_bytes + info->parity_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"index lists %" PRIu64 " chunks of %" PRIu64 " bytes stored as %" PRIu64 ", the manifest %" PRIu64 " of %" PRIu64 " stored as %" PRIu64,
							t->chunk_count, t->raw_bytes, t->stored_bytes,
							info->chunks + info->parity_chunks, info->raw_bytes + info->parity_bytes,
							info->stored_bytes + info->parity_bytes);
	if (t->index_offset < SB_STRIPE_HEADER_SIZE ||
		t->index_offset + t->chunk_count * SB_INDEX_ENTRY_SIZE + SB_TRAILER_SIZE != r->file_size)
		return sb_error_set(err, SB_ECORRUPT,
							"size %" PRIu64 " does not match its index (truncated or appended to)",
							r->file_size);
	return true;
}

/* Is ID in one of RANGES? */
static bool
in_ranges(const SbChunkRange *ranges, uint32_t n, uint64_t id)
{
	uint32_t	lo = 0,
				hi = n;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (ranges[mid].last < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ranges[lo].first <= id;
}

/*
 * A parity record's entry (FORMAT.md 10.2): of a backup with redundancy, one
 * the manifest's parity_ranges put in this stripe (where the layout puts its
 * group's member), never compressed nor sealed, raw length its stored one,
 * at least a chunk header long and at most the longest record, in bounds.
 */
static bool
check_parity_entry(SbStripeReader *r, const SbIndexEntry *e, SbError *err)
{
	const SbManifest *m = r->manifest;
	const SbStripeInfo *info = &m->stripes[r->index];
	SbParityLayout l;
	SbParityPlace place;
	size_t		bound = sb_codec_bound(m->codec, m->chunk_size);

	if (m->redundancy.parity == 0)
		return sb_error_set(err, SB_ECORRUPT,
							"index lists parity record %" PRIu64 ", but the backup has no redundancy",
							e->chunk_id);
	if (!sb_parity_layout_init(&l, m->nstripes, m->redundancy.parity, m->redundancy.run, err))
		return false;
	place = sb_parity_place_of_parity(&l, e->chunk_id);
	if (!in_ranges(info->parity_ranges, info->nparity_ranges, e->chunk_id) ||
		sb_parity_stripe(&l, place.group, place.member) != r->index)
		return sb_error_set(err, SB_ECORRUPT,
							"index lists parity record %" PRIu64 ", which the manifest does not put in this stripe",
							e->chunk_id);
	if (e->codec != SB_CODEC_NONE || e->cipher != SB_CIPHER_NONE || e->raw_len != e->stored_len ||
		e->stored_len < SB_CHUNK_HEADER_SIZE ||
		e->stored_len > SB_CHUNK_HEADER_SIZE + (bound > m->chunk_size ? bound : m->chunk_size) + SB_CRYPTO_OVERHEAD ||
		e->offset < SB_STRIPE_HEADER_SIZE ||
		e->offset + SB_CHUNK_HEADER_SIZE + e->stored_len > r->trailer.index_offset)
		return sb_error_set(err, SB_ECORRUPT, "index entry of parity record %" PRIu64 " is out of bounds",
							e->chunk_id);
	return true;
}

/* Each index entry must be a chunk of this stripe, in bounds. */
static bool
check_entry(SbStripeReader *r, const SbIndexEntry *e, SbError *err)
{
	const SbManifest *m = r->manifest;

	if (e->kind == SB_CHUNK_KIND_PARITY)
		return check_parity_entry(r, e, err);
	if (e->kind != SB_CHUNK_KIND_DATA)
		return sb_error_set(err, SB_ECORRUPT, "index entry of chunk %" PRIu64 " is of kind %u, not a data chunk",
							e->chunk_id, e->kind);
	if (sb_manifest_chunk_stripe(m, e->chunk_id) != r->index)
		return sb_error_set(err, SB_ECORRUPT,
							"index lists chunk %" PRIu64 ", which the manifest does not put in this stripe",
							e->chunk_id);
	/* Readers size their buffers by the manifest: no compressed chunk without it. */
	if (e->codec != SB_CODEC_NONE && m->codec == SB_CODEC_NONE)
		return sb_error_set(err, SB_ECORRUPT,
							"index says chunk %" PRIu64 " is compressed, but the backup is not",
							e->chunk_id);
	/* An encrypted backup's chunks are all sealed, and no other's: none swapped in the clear. */
	if (e->cipher != (m->encrypted ? SB_CIPHER_AES_256_GCM : SB_CIPHER_NONE))
		return sb_error_set(err, SB_ECORRUPT, "index says chunk %" PRIu64 " is %s, but the backup is %s",
							e->chunk_id, e->cipher ? "encrypted" : "not encrypted",
							m->encrypted ? "encrypted" : "not");
	if (e->cipher != SB_CIPHER_NONE && e->stored_len < SB_CRYPTO_OVERHEAD)
		return sb_error_set(err, SB_ECORRUPT, "index entry of chunk %" PRIu64 " is too short to be sealed",
							e->chunk_id);
	/* A chunk is stored compressed only when that makes it smaller. */
	if (e->raw_len != sb_manifest_chunk_length(m, e->chunk_id) ||
		sb_entry_payload_len(e) > e->raw_len || e->codec > SB_CODEC_ZSTD ||
		(e->codec == SB_CODEC_NONE && sb_entry_payload_len(e) != e->raw_len) ||
		e->offset < SB_STRIPE_HEADER_SIZE ||
		e->offset + SB_CHUNK_HEADER_SIZE + e->stored_len > r->trailer.index_offset)
		return sb_error_set(err, SB_ECORRUPT, "index entry of chunk %" PRIu64 " is out of bounds",
							e->chunk_id);
	return true;
}

/* No chunk (WHAT) twice: the N ENTRIES, sorted by id, must all differ. */
static bool
check_unique(const SbIndexEntry *entries, uint64_t n, const char *what, SbError *err)
{
	uint64_t   *ids = sb_alloc((size_t) (n + 1) * sizeof(uint64_t), err);
	uint64_t	i;
	bool		ok = ids != NULL;

	for (i = 0; ok && i < n; i++)
		ids[i] = entries[i].chunk_id;
	if (ok)
		qsort(ids, n, sizeof(uint64_t), sb_compare_u64);
	for (i = 1; ok && i < n; i++)
		if (ids[i] == ids[i - 1])
			ok = sb_error_set(err, SB_ECORRUPT, "index lists %s %" PRIu64 " twice", what, ids[i]);
	free(ids);
	return ok;
}

/*
 * Parity records out of the entries, into their own array (data chunks
 * keep their order); as many of each kind as the manifest says.
 */
static bool
split_parity(SbStripeReader *r, SbError *err)
{
	const SbStripeInfo *info = &r->manifest->stripes[r->index];
	uint64_t	parity = 0;
	uint64_t	data = 0;
	uint64_t	i;

	for (i = 0; i < r->nentries; i++)
		parity += r->entries[i].kind == SB_CHUNK_KIND_PARITY;
	if (parity != info->parity_chunks || r->nentries - parity != info->chunks)
		return sb_error_set(err, SB_ECORRUPT,
							"index lists %" PRIu64 " chunks and %" PRIu64 " parity records, the manifest %" PRIu64 " and %" PRIu64,
							r->nentries - parity, parity, info->chunks, info->parity_chunks);
	r->parity_entries = sb_alloc((size_t) (parity + 1) * sizeof(SbIndexEntry), err);
	if (r->parity_entries == NULL)
		return false;
	for (i = 0; i < r->nentries; i++)
	{
		if (r->entries[i].kind == SB_CHUNK_KIND_PARITY)
			r->parity_entries[r->nparity++] = r->entries[i];
		else
			r->entries[data++] = r->entries[i];
	}
	r->nentries = data;
	return true;
}

/* The index is as long as the file says (trailer checked), so this is real data. */
static bool
load_index(SbStripeReader *r, SbError *err)
{
	uint64_t	n = r->trailer.chunk_count;
	size_t		len = (size_t) n * SB_INDEX_ENTRY_SIZE;
	uint8_t    *raw = sb_alloc(len, err);
	uint64_t	i;
	bool		ok;

	r->entries = sb_alloc((size_t) (n ? n : 1) * sizeof(SbIndexEntry), err);
	ok = raw && r->entries && read_exact(r, raw, len, r->trailer.index_offset, err);
	if (ok && sb_hash64(raw, len) != r->trailer.index_hash)
		ok = sb_error_set(err, SB_ECORRUPT, "index checksum mismatch");
	for (i = 0; ok && i < n; i++)
	{
		sb_format_decode_index_entry(raw + i * SB_INDEX_ENTRY_SIZE, &r->entries[i]);
		ok = check_entry(r, &r->entries[i], err);
	}
	r->nentries = ok ? n : 0;
	free(raw);
	return ok && split_parity(r, err) && check_unique(r->entries, r->nentries, "chunk", err) &&
		check_unique(r->parity_entries, r->nparity, "parity record", err);
}

bool
sb_stripe_open(SbStripeReader *r, const SbManifest *m, uint32_t index,
			   const char *path, const SbS3Settings *s3, SbError *err)
{
	memset(r, 0, sizeof(*r));
	r->manifest = m;
	r->index = index;
	r->path = path;
	r->file.fd = -1;
	if (!sb_store_open(&r->file, path, s3, err))
		return false;
	r->file_size = r->file.size;
	if (r->file_size < SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE)
		return sb_error_set(err, SB_ECORRUPT,
							"is only %" PRIu64 " bytes long (truncated or incomplete stripe)",
							r->file_size);
	return check_header(r, err) && check_trailer(r, err) && load_index(r, err);
}

size_t
sb_stripe_record_length(const SbStripeReader *r, uint64_t i)
{
	return SB_CHUNK_HEADER_SIZE + (size_t) r->entries[i].stored_len;
}

bool
sb_stripe_check_record(const SbStripeReader *r, uint64_t i, const uint8_t *record, size_t got,
					   SbError *err)
{
	const SbIndexEntry *e = &r->entries[i];
	SbChunkHeader h;
	uint64_t	hash;

	if (got < sb_stripe_record_length(r, i))
		return sb_error_set(err, SB_ECORRUPT,
							"file ends at %llu bytes, inside the chunk record at offset %llu",
							(unsigned long long) r->file_size, (unsigned long long) e->offset);
	if (!sb_format_decode_chunk(record, &h, err))
		return false;
	if (h.chunk_id != e->chunk_id || h.raw_len != e->raw_len ||
		h.stored_len != e->stored_len || h.codec != e->codec || h.cipher != e->cipher ||
		h.raw_hash != e->raw_hash || h.stored_hash != e->stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "chunk header disagrees with the stripe index");
	hash = sb_hash64(record + SB_CHUNK_HEADER_SIZE, e->stored_len);
	if (hash != e->stored_hash)
		return sb_error_set(err, SB_ECORRUPT,
							"checksum mismatch (stored %016" PRIx64 ", computed %016" PRIx64 ")",
							e->stored_hash, hash);
	return true;
}

bool
sb_stripe_check_parity_record(const SbIndexEntry *e, const uint8_t *record, size_t got, SbError *err)
{
	SbChunkHeader h;

	if (got < SB_CHUNK_HEADER_SIZE + (size_t) e->stored_len)
		return sb_error_set(err, SB_ECORRUPT, "the stripe ends inside it");
	if (!sb_format_decode_chunk(record, &h, err))
		return false;
	if (h.kind != SB_CHUNK_KIND_PARITY || h.chunk_id != e->chunk_id ||
		h.stored_len != e->stored_len || h.raw_len != h.stored_len || h.codec != 0 ||
		h.cipher != 0 || h.stored_hash != e->stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "its header disagrees with the stripe index");
	if (sb_hash64(record + SB_CHUNK_HEADER_SIZE, h.stored_len) != h.stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "checksum mismatch");
	return true;
}

uint32_t
sb_entry_payload_len(const SbIndexEntry *e)
{
	return e->cipher != SB_CIPHER_NONE ? e->stored_len - SB_CRYPTO_OVERHEAD : e->stored_len;
}

uint64_t
sb_entry_raw_hash(const SbManifest *m, const SbIndexEntry *e)
{
	return m->cipher != NULL ? sb_cipher_mask_hash(m->cipher, e->chunk_id, e->raw_hash) : e->raw_hash;
}

void
sb_stripe_close(SbStripeReader *r)
{
	sb_store_close(&r->file);
	free(r->entries);
	r->entries = NULL;
	free(r->parity_entries);
	r->parity_entries = NULL;
}
