/*
 * verify_sealed.c
 *		Verifying an encrypted backup without its key (sb_archive.h):
 *		whoever keeps the storage checks that every byte is still what the
 *		backup wrote, without being able to read any of it.
 *
 * What can be checked in the clear is checked: the envelope names the
 * stripes; each stripe's header and trailer belong to the envelope's backup
 * and record the SHA-256 of the envelope's exact bytes; the index is whole
 * (its hash), in bounds, and lists each chunk once; every chunk record's
 * header agrees with the index and its sealed payload with its XXH3-64;
 * together the stripes hold every chunk number from 0 on exactly once.
 * What needs the key is not: that each sealed chunk opens (its GCM tag),
 * and the files the chunks make up.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_archive.h"
#include "format/checksum.h"
#include "format/parity.h"
#include "crypto/crypto.h"
#include "format/format.h"
#include "util/fsutil.h"
#include "manifest/manifest_envelope.h"
#include "store/store.h"

#define WINDOW (8 * 1024 * 1024)	/* records are read this much at a time */

typedef struct Check
{
	const SbEnvelopeOutline *outline;
	const SbS3Settings *s3;		/* how s3:// places are reached */
	uint8_t		sha[SB_SHA256_LEN];
	size_t		envelope_len;
	SbProblemFn on_problem;
	void	   *arg;
	SbSealedVerifyResult *result;
	uint64_t   *ids;			/* every chunk number seen, all stripes */
	size_t		nids;
	bool		complete;		/* every stripe's index was read */
} Check;

static void
problem(Check *c, uint32_t stripe, int64_t chunk, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

static void
problem(Check *c, uint32_t stripe, int64_t chunk, const char *fmt,...)
{
	char		message[SB_ERROR_MESSAGE_MAX];
	SbProblem	p = {stripe, chunk, NULL, SB_ECORRUPT, message, false};
	size_t		len;
	va_list		ap;

	len = (size_t) snprintf(message, sizeof(message), "stripe %u of %u", stripe, c->outline->nstripes);
	if (chunk >= 0)
		len += (size_t) snprintf(message + len, sizeof(message) - len, ", chunk %" PRId64, chunk);
	len += (size_t) snprintf(message + len, sizeof(message) - len, ": ");
	va_start(ap, fmt);
	vsnprintf(message + len, sizeof(message) - len, fmt, ap);
	va_end(ap);
	c->result->problems++;
	if (c->on_problem != NULL)
		c->on_problem(c->arg, &p);
}

/* The header and trailer of stripe NUMBER in F: this backup's, sealed with this envelope. */
static bool
check_ends(Check *c, SbStoreFile *f, uint32_t number, SbTrailer *t)
{
	uint8_t		head[SB_STRIPE_HEADER_SIZE];
	uint8_t		tail[SB_TRAILER_SIZE];
	SbStripeHeader h;
	SbError		err;

	if (f->size < SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE ||
		sb_store_pread(f, head, sizeof(head), 0, &err) != (ssize_t) sizeof(head) ||
		sb_store_pread(f, tail, sizeof(tail), f->size - sizeof(tail), &err) != (ssize_t) sizeof(tail))
		return problem(c, number, -1, "\"%s\" is too short or cannot be read (%" PRIu64 " bytes)",
					   f->path, f->size), false;
	if (!sb_format_decode_header(head, &h, &err) || !sb_format_decode_trailer(tail, t, &err))
		return problem(c, number, -1, "\"%s\": %s", f->path, err.message), false;
	if (memcmp(h.uuid, c->outline->uuid, 16) != 0 || memcmp(t->uuid, c->outline->uuid, 16) != 0 ||
		h.number != number || t->number != number || h.count != c->outline->nstripes ||
		t->count != c->outline->nstripes)
		return problem(c, number, -1, "\"%s\" is not stripe %u of this backup", f->path, number), false;
	if (memcmp(t->manifest_sha256, c->sha, SB_SHA256_LEN) != 0 || t->manifest_length != c->envelope_len)
		return problem(c, number, -1, "\"%s\" was sealed with another manifest.json (its trailer records another SHA-256)",
					   f->path), false;
	/* Bounded before multiplying: a forged count must not wrap around to the size. */
	if (t->index_offset < SB_STRIPE_HEADER_SIZE || t->index_offset > f->size ||
		t->chunk_count > f->size / SB_INDEX_ENTRY_SIZE ||
		t->index_offset + t->chunk_count * SB_INDEX_ENTRY_SIZE + SB_TRAILER_SIZE != f->size)
		return problem(c, number, -1, "\"%s\": its size does not match its index (truncated or appended to)",
					   f->path), false;
	return true;
}

/* The index of the stripe: whole, every entry sealed and in bounds. */
static SbIndexEntry *
load_index(Check *c, SbStoreFile *f, uint32_t number, const SbTrailer *t)
{
	size_t		len = (size_t) t->chunk_count * SB_INDEX_ENTRY_SIZE;
	uint8_t    *raw = malloc(len ? len : 1);
	SbIndexEntry *e = malloc((t->chunk_count ? t->chunk_count : 1) * sizeof(SbIndexEntry));
	SbError		err;
	bool		ok = raw != NULL && e != NULL &&
		sb_store_pread(f, raw, len, t->index_offset, &err) == (ssize_t) len;

	if (ok && sb_hash64(raw, len) != t->index_hash)
		ok = (problem(c, number, -1, "\"%s\": index checksum mismatch", f->path), false);
	for (uint64_t i = 0; ok && i < t->chunk_count; i++)
	{
		sb_format_decode_index_entry(raw + i * SB_INDEX_ENTRY_SIZE, &e[i]);
		/* a parity record (redundancy) is made of sealed records, and not sealed itself */
		if ((e[i].kind == SB_CHUNK_KIND_PARITY ? e[i].cipher != SB_CIPHER_NONE :
			 e[i].kind != SB_CHUNK_KIND_DATA || e[i].cipher != SB_CIPHER_AES_256_GCM ||
			 e[i].stored_len < SB_CRYPTO_OVERHEAD) ||
			e[i].offset < SB_STRIPE_HEADER_SIZE ||
			e[i].offset + SB_CHUNK_HEADER_SIZE + e[i].stored_len > t->index_offset ||
			(i > 0 && e[i].offset < e[i - 1].offset + SB_CHUNK_HEADER_SIZE + e[i - 1].stored_len))
			ok = (problem(c, number, (int64_t) e[i].chunk_id, "its index entry is out of bounds or not sealed"),
				  false);
	}
	free(raw);
	if (!ok)
	{
		free(e);
		return NULL;
	}
	return e;
}

/* One record read into REC: its header agrees with E, its payload with E's hash. */
static void
check_record(Check *c, uint32_t number, const SbIndexEntry *e, const uint8_t *rec)
{
	SbChunkHeader h;
	SbError		err;

	if (!sb_format_decode_chunk(rec, &h, &err))
		problem(c, number, (int64_t) e->chunk_id, "%s", err.message);
	else if (h.chunk_id != e->chunk_id || h.raw_len != e->raw_len || h.stored_len != e->stored_len ||
			 h.codec != e->codec || h.cipher != e->cipher || h.raw_hash != e->raw_hash ||
			 h.stored_hash != e->stored_hash)
		problem(c, number, (int64_t) e->chunk_id, "its header disagrees with the stripe index");
	else if (sb_hash64(rec + SB_CHUNK_HEADER_SIZE, e->stored_len) != e->stored_hash)
		problem(c, number, (int64_t) e->chunk_id, "checksum mismatch: the sealed bytes changed");
}

/* Every record of the stripe, read a window at a time in file order. */
static void
check_records(Check *c, SbStoreFile *f, uint32_t number, const SbIndexEntry *e, uint64_t n,
			  uint8_t *window)
{
	uint64_t	i = 0;

	while (i < n)
	{
		uint64_t	start = e[i].offset;
		uint64_t	j = i;
		SbError		err;

		while (j < n && e[j].offset + SB_CHUNK_HEADER_SIZE + e[j].stored_len - start <= WINDOW)
			j++;
		if (j == i)				/* one record larger than the window: a damaged index */
			j = i + 1;
		if (e[j - 1].offset + SB_CHUNK_HEADER_SIZE + e[j - 1].stored_len - start > WINDOW ||
			sb_store_pread(f, window, e[j - 1].offset + SB_CHUNK_HEADER_SIZE + e[j - 1].stored_len - start,
						   start, &err) < 0)
		{
			problem(c, number, (int64_t) e[i].chunk_id, "cannot be read");
			i = j;
			continue;
		}
		for (; i < j; i++)
		{
			check_record(c, number, &e[i], window + (e[i].offset - start));
			c->result->chunks++;
			c->result->stored_bytes += e[i].stored_len;
		}
	}
}

/* Where stripe K is: beside the location's envelope, or in the destination it names. */
static char *
stripe_path(const Check *c, const char *location, uint32_t k, SbError *err)
{
	const char *name = strrchr(location, '/');
	char	   *path = sb_path_join(location, c->outline->file_names[k], err);
	uint64_t	size;
	char	   *folder;

	if (path == NULL || sb_store_file_size(path, c->s3, &size, NULL) || c->outline->destinations[k] == NULL ||
		name == NULL)
		return path;
	folder = sb_path_join(c->outline->destinations[k], name + 1, err);
	free(path);
	path = folder ? sb_path_join(folder, c->outline->file_names[k], err) : NULL;
	free(folder);
	return path;
}

static void
check_stripe(Check *c, const char *location, uint32_t k, uint8_t *window)
{
	SbStoreFile f;
	SbTrailer	t;
	SbIndexEntry *e;
	SbError		err;
	char	   *path = stripe_path(c, location, k, &err);

	if (path == NULL || !sb_store_open(&f, path, c->s3, &err))
	{
		problem(c, k + 1, -1, "\"%s\" cannot be read: %s", path ? path : c->outline->file_names[k], err.message);
		c->complete = false;
		free(path);
		return;
	}
	if (!check_ends(c, &f, k + 1, &t) || (e = load_index(c, &f, k + 1, &t)) == NULL)
		c->complete = false;
	else
	{
		uint64_t   *grown = realloc(c->ids, (c->nids + t.chunk_count + 1) * sizeof(uint64_t));

		if (grown == NULL)
			c->complete = false;
		else
		{
			c->ids = grown;
			for (uint64_t i = 0; i < t.chunk_count; i++)
				c->ids[c->nids++] = e[i].chunk_id;
		}
		check_records(c, &f, k + 1, e, t.chunk_count, window);
		free(e);
	}
	sb_store_close(&f);
	free(path);
}

/* Together the stripes hold chunks 0, 1, ... each once. */
static void
check_partition(Check *c)
{
	if (!c->complete)
		return;
	qsort(c->ids, c->nids, sizeof(uint64_t), sb_compare_u64);
	for (size_t i = 0; i < c->nids; i++)
		if (c->ids[i] != i)
		{
			problem(c, 0, (int64_t) i, "%s", i > 0 && c->ids[i] == c->ids[i - 1] ?
					"is held by two stripes" : "is in no stripe");
			return;
		}
}

bool
sb_verify_sealed(const char *location, const SbS3Settings *s3, SbProblemFn on_problem, void *arg,
				 SbSealedVerifyResult *result, SbError *err)
{
	SbEnvelopeOutline outline;
	Check		c = {.s3 = s3};
	char	   *path = sb_path_join(location, SB_MANIFEST_FILE, err);
	uint64_t	len = 0;
	bool		envelope = false;
	uint8_t    *window = malloc(WINDOW);
	bool		ok = path != NULL && window != NULL &&
		sb_envelope_outline_path(path, s3, &outline, c.sha, &len, &envelope, err);

	memset(result, 0, sizeof(*result));
	if (ok && !envelope)
		ok = sb_error_set(err, SB_EINVAL, "the backup at \"%s\" is not encrypted: verify it as any backup", location);
	if (ok)
	{
		c.outline = &outline;
		c.envelope_len = len;
		c.on_problem = on_problem;
		c.arg = arg;
		c.result = result;
		c.complete = true;
		result->nstripes = outline.nstripes;
		memcpy(result->uuid, outline.uuid, sizeof(result->uuid));
		for (uint32_t k = 0; k < outline.nstripes; k++)
			check_stripe(&c, location, k, window);
		check_partition(&c);
		sb_envelope_outline_free(&outline);
	}
	else if (window == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory verifying \"%s\"", location);
	free(c.ids);
	free(window);
	free(path);
	return ok;
}
