/*
 * delta_frames.c
 *		Reading only the frames of a chunk that differ from the copy
 *		(delta_frames.h).
 *
 * The frames' table is read first (the record's header and the table: a
 * few hundred bytes), each frame's hash compared with the copy's bytes
 * where it lies, and the frames that differ read (neighbours together, in
 * one read) and decompressed over the copy's bytes.  Nothing the table
 * says is trusted: the chunk so made must have the raw hash the stripe's
 * index records, or it is read whole as any other chunk (which checks its
 * stored hash, and its parity group if it has one).  A chunk of an
 * encrypted backup is sealed whole and is always read whole.
 */
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "format/format.h"
#include "restore/delta_frames.h"
#include "util/fsutil.h"

bool
sb_frame_reader_init(SbFrameReader *r, const SbArchive *a, SbError *err)
{
	const SbManifest *m = a->manifest;
	uint32_t	frames = sb_frame_count(m->chunk_size, SB_FRAME_MIN);

	memset(r, 0, sizeof(*r));
	r->archive = a;
	/* a record's header and the largest table a writer makes for a whole chunk */
	r->head_cap = SB_CHUNK_HEADER_SIZE +
		sb_frame_table_len(sb_frame_count(m->chunk_size, SB_FRAME_SIZE_LEAST));
	r->stripes = sb_alloc(m->nstripes * sizeof(SbStoreFile), err);
	r->unreadable = r->stripes ? sb_alloc(m->nstripes * sizeof(bool), err) : NULL;
	r->head = r->unreadable ? sb_alloc(r->head_cap, err) : NULL;
	r->stored = r->head ? sb_alloc(m->chunk_size, err) : NULL;
	r->old = r->stored ? sb_alloc(m->chunk_size, err) : NULL;
	r->differs = r->old ? sb_alloc(frames, err) : NULL;
	r->codec = r->differs ? sb_codec_context_new(SB_CODEC_ZSTD, 0, err) : NULL;
	return r->codec != NULL;
}

void
sb_frame_reader_free(SbFrameReader *r)
{
	uint32_t	s;

	for (s = 0; r->stripes != NULL && s < r->archive->manifest->nstripes; s++)
		if (r->stripes[s].driver != NULL)
			sb_store_close(&r->stripes[s]);
	free(r->stripes);
	free(r->unreadable);
	free(r->head);
	free(r->stored);
	free(r->old);
	free(r->differs);
	sb_codec_context_free(r->codec);
	memset(r, 0, sizeof(*r));
}

/* Stripe S, open; NULL if it cannot be (it is then never tried again). */
static SbStoreFile *
stripe(SbFrameReader *r, uint32_t s)
{
	SbError		err;

	if (r->stripes[s].driver != NULL)
		return &r->stripes[s];
	if (r->unreadable[s] || r->archive->lost_why[s] != NULL ||
		!sb_store_open(&r->stripes[s], r->archive->stripe_paths[s], r->archive->s3, &err))
	{
		r->unreadable[s] = true;
		return NULL;
	}
	return &r->stripes[s];
}

/* LEN bytes at OFFSET of stripe S, all of them. */
static bool
read_at(SbFrameReader *r, uint32_t s, void *buf, size_t len, uint64_t offset)
{
	SbStoreFile *f = stripe(r, s);
	SbError		err;

	return f != NULL && sb_store_pread(f, buf, len, offset, &err) == (ssize_t) len;
}

/* C's record header (it is C's, in the clear, compressed) and its frame table, into r->table. */
static bool
read_table(SbFrameReader *r, const SbFrameChunk *c)
{
	size_t		len = SB_CHUNK_HEADER_SIZE + c->stored_len;
	SbChunkHeader h;
	SbError		err;

	if (len > r->head_cap)
		len = r->head_cap;
	if (!read_at(r, c->stripe, r->head, len, c->record_at) ||
		!sb_format_decode_chunk(r->head, &h, &err) ||
		h.codec != SB_CODEC_ZSTD || h.cipher != SB_CIPHER_NONE || h.raw_len != c->raw_len ||
		h.stored_len != c->stored_len)
		return false;
	return sb_frame_table_read(r->head + SB_CHUNK_HEADER_SIZE, len - SB_CHUNK_HEADER_SIZE,
							   c->stored_len, c->raw_len, &r->table);
}

/* Mark the frames whose bytes in BUF are not the ones they hold; how many. */
static uint32_t
mark_differing(SbFrameReader *r, const uint8_t *buf)
{
	const SbFrameTable *t = &r->table;
	uint32_t	n = 0;
	uint32_t	i;

	for (i = 0; i < t->count; i++)
	{
		size_t		at = (size_t) i * t->frame_size;

		r->differs[i] = sb_hash64(buf + at, sb_frame_raw_len(t, i)) != sb_frame_raw_hash(t, i);
		n += r->differs[i];
	}
	return n;
}

/* The frames that differ, read into r->stored at their payload offsets: each run of them at once. */
static bool
read_differing(SbFrameReader *r, const SbFrameChunk *c)
{
	const SbFrameTable *t = &r->table;
	uint64_t	payload_at = c->record_at + SB_CHUNK_HEADER_SIZE;
	uint32_t	i = 0;

	r->read = 0;
	while (i < t->count)
	{
		size_t		from;
		size_t		len = 0;

		if (!r->differs[i])
		{
			i++;
			continue;
		}
		from = sb_frame_offset(t, i);
		for (; i < t->count && r->differs[i]; i++)
			len += sb_frame_stored_len(t, i);
		if (!read_at(r, c->stripe, r->stored + from, len, payload_at + from))
			return false;
		r->read += len;
	}
	return true;
}

/* The frames read, decompressed over the copy's bytes in BUF (those kept in r->old). */
static bool
decompress_differing(SbFrameReader *r, uint8_t *buf)
{
	const SbFrameTable *t = &r->table;
	size_t		from = t->data_offset;
	uint32_t	i;
	SbError		err;

	for (i = 0; i < t->count; i++)
	{
		size_t		at = (size_t) i * t->frame_size;
		uint32_t	raw = sb_frame_raw_len(t, i);
		uint32_t	stored = sb_frame_stored_len(t, i);

		if (r->differs[i])
		{
			memcpy(r->old + at, buf + at, raw);
			if (!sb_codec_decompress(r->codec, SB_CODEC_ZSTD, r->stored + from, stored, buf + at, raw,
									 &err))
				return false;
		}
		from += stored;
	}
	return true;
}

SbFramePatch
sb_frame_reader_patch(SbFrameReader *r, const SbFrameChunk *c, uint8_t *buf)
{
	uint32_t	differing;

	r->read = 0;
	if (c->stored_len > r->archive->manifest->chunk_size || !read_table(r, c))
		return SB_FRAMES_READ_WHOLE;
	differing = mark_differing(r, buf);
	if (differing > 0 && (!read_differing(r, c) || !decompress_differing(r, buf)))
		return SB_FRAMES_READ_WHOLE;
	/* the index's hash, not the table's: the table is trusted for nothing */
	if (sb_hash64(buf, c->raw_len) != c->raw_hash)
		return SB_FRAMES_READ_WHOLE;
	return differing > 0 ? SB_FRAMES_PATCHED : SB_FRAMES_HELD;
}

bool
sb_frame_reader_changed(const SbFrameReader *r, const uint8_t *buf, uint64_t from, uint64_t to)
{
	uint64_t	size = r->table.frame_size;
	uint64_t	i;

	/* a block may straddle two frames: only the part in a frame read can differ */
	for (i = from / size; i < r->table.count && i * size < to; i++)
	{
		uint64_t	lo = i * size > from ? i * size : from;
		uint64_t	hi = (i + 1) * size < to ? (i + 1) * size : to;

		if (r->differs[i] && memcmp(r->old + lo, buf + lo, hi - lo) != 0)
			return true;
	}
	return false;
}
