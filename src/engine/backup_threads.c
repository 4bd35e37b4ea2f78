/*
 * backup_threads.c
 *		The threads of the backup pipeline: compression workers, which seal
 *		chunks (compress and hash), and one writer per destination, which
 *		appends chunk records to its stripe and at the end writes the index,
 *		the trailer, and syncs.
 *
 * In adaptive mode every writer takes from one shared queue, so a device
 * takes the next chunk as soon as it has written the last one: fast devices
 * take more and all stripes finish together.  In weighted mode each writer
 * has its own queue, filled in exact proportion to its weight.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "backup_internal.h"
#include "checksum.h"
#include "fsutil.h"
#include "thread.h"

void
sb_backup_fail(SbBackup *b, const SbError *err)
{
	uint32_t	i;

	pthread_mutex_lock(&b->failure_mutex);
	if (!atomic_load(&b->failed))
	{
		b->failure = *err;
		atomic_store(&b->failed, true);
	}
	pthread_mutex_unlock(&b->failure_mutex);
	sb_queue_abort(&b->free_queue);
	sb_queue_abort(&b->seal_queue);
	sb_queue_abort(&b->ready_queue);
	for (i = 0; i < b->nstripes; i++)
		sb_queue_abort(&b->writers[i].queue);
}

/* Compress (if asked) and hash one chunk. */
static bool
seal_chunk(SbBackup *b, SbCodecContext *ctx, SbChunk *c, SbError *err)
{
	size_t		stored_len;

	c->raw_hash = sb_hash64(c->raw, c->raw_len);
	if (b->codec == SB_CODEC_NONE)
	{
		c->codec = SB_CODEC_NONE;
		c->payload = c->raw;
		c->stored_len = c->raw_len;
		c->stored_hash = c->raw_hash;
		return true;
	}
	if (!sb_codec_compress(ctx, c->raw, c->raw_len, c->compressed,
						   sb_codec_bound(b->codec, b->chunk_size),
						   &stored_len, &c->codec, err))
		return false;
	c->payload = c->compressed;
	c->stored_len = (uint32_t) stored_len;
	c->stored_hash = sb_hash64(c->payload, stored_len);
	return true;
}

static void *
worker_main(void *arg)
{
	SbBackup   *b = arg;
	SbError		err;
	SbCodecContext *ctx = sb_codec_context_new(b->codec, b->level, &err);
	SbChunk    *c;

	if (ctx == NULL)
	{
		sb_backup_fail(b, &err);
		return NULL;
	}
	while ((c = sb_queue_pop(&b->seal_queue)) != NULL)
	{
		SbQueue    *next = b->balance == SB_BALANCE_ADAPTIVE ?
		&b->ready_queue : &b->writers[c->stripe].queue;

		if (!seal_chunk(b, ctx, c, &err))
		{
			sb_error_prefix(&err, "chunk %llu", (unsigned long long) c->id);
			sb_backup_fail(b, &err);
			break;
		}
		if (!sb_queue_push(next, c))
			break;
	}
	sb_codec_context_free(ctx);
	return NULL;
}

static bool
remember_entry(SbStripeWriter *w, const SbIndexEntry *e, SbError *err)
{
	if (w->nentries == w->entries_cap)
	{
		size_t		cap = w->entries_cap ? w->entries_cap * 2 : 1024;
		SbIndexEntry *grown = realloc(w->entries, cap * sizeof(SbIndexEntry));

		if (grown == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory growing the index of stripe %u",
								w->index + 1);
		w->entries = grown;
		w->entries_cap = cap;
	}
	w->entries[w->nentries++] = *e;
	return true;
}

/* Write header and payload with one writev (retrying short writes). */
static bool
write_chunk_record(SbStripeWriter *w, const SbChunk *c, SbError *err)
{
	SbChunkHeader h;
	uint8_t		header[SB_CHUNK_HEADER_SIZE];
	struct iovec iov[2];
	ssize_t		n;

	h.codec = (uint8_t) c->codec;
	h.chunk_id = c->id;
	h.raw_len = c->raw_len;
	h.stored_len = c->stored_len;
	h.raw_hash = c->raw_hash;
	h.stored_hash = c->stored_hash;
	sb_format_encode_chunk(&h, header);
	iov[0].iov_base = header;
	iov[0].iov_len = sizeof(header);
	iov[1].iov_base = (void *) c->payload;
	iov[1].iov_len = c->stored_len;
	do
		n = writev(w->fd, iov, 2);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return sb_error_set_errno(err, errno, "could not write \"%s\"", w->path);
	if ((size_t) n < sizeof(header) + c->stored_len)
	{
		/* Short write: finish the rest the slow way. */
		size_t		done = (size_t) n;

		if (done < sizeof(header) &&
			!sb_write_all(w->fd, header + done, sizeof(header) - done, w->path, err))
			return false;
		done = done > sizeof(header) ? done - sizeof(header) : 0;
		if (!sb_write_all(w->fd, c->payload + done, c->stored_len - done, w->path, err))
			return false;
	}
	return true;
}

/* Append one chunk to the stripe and note it in the index. */
static bool
write_chunk(SbStripeWriter *w, const SbChunk *c, SbError *err)
{
	SbIndexEntry e;
	double		t0 = sb_monotonic_seconds();

	if (!write_chunk_record(w, c, err))
		return false;
	e.chunk_id = c->id;
	e.offset = w->offset;
	e.raw_len = c->raw_len;
	e.stored_len = c->stored_len;
	e.codec = (uint8_t) c->codec;
	e.raw_hash = c->raw_hash;
	e.stored_hash = c->stored_hash;
	if (!remember_entry(w, &e, err))
		return false;
	w->offset += SB_CHUNK_HEADER_SIZE + c->stored_len;
	atomic_fetch_add(&w->chunks, 1);
	atomic_fetch_add(&w->raw_bytes, c->raw_len);
	atomic_fetch_add(&w->stored_bytes, c->stored_len);
	atomic_fetch_add(&w->busy_usec, (uint64_t) ((sb_monotonic_seconds() - t0) * 1e6));
	return true;
}

/* Index entries, then the trailer, then fsync: the stripe is complete. */
static bool
write_index_and_sync(SbStripeWriter *w, SbError *err)
{
	size_t		index_len = w->nentries * SB_INDEX_ENTRY_SIZE;
	uint8_t    *index = malloc(index_len ? index_len : 1);
	uint8_t		trailer[SB_TRAILER_SIZE];
	SbTrailer	t;
	size_t		i;
	bool		ok;

	if (index == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory writing the index");
	for (i = 0; i < w->nentries; i++)
		sb_format_encode_index_entry(&w->entries[i], index + i * SB_INDEX_ENTRY_SIZE);
	memset(&t, 0, sizeof(t));
	t.index_offset = w->offset;
	t.chunk_count = w->nentries;
	t.raw_bytes = atomic_load(&w->raw_bytes);
	t.stored_bytes = atomic_load(&w->stored_bytes);
	t.index_hash = sb_hash64(index, index_len);
	t.number = w->index + 1;
	memcpy(t.uuid_prefix, w->backup->manifest->uuid, 4);
	sb_format_encode_trailer(&t, trailer);
	ok = sb_write_all(w->fd, index, index_len, w->path, err) &&
		sb_write_all(w->fd, trailer, sizeof(trailer), w->path, err);
	free(index);
	if (!ok)
		return false;
	w->offset += index_len + SB_TRAILER_SIZE;
	if (fsync(w->fd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", w->path);
	return true;
}

static void *
writer_main(void *arg)
{
	SbStripeWriter *w = arg;
	SbBackup   *b = w->backup;
	SbQueue    *source = b->balance == SB_BALANCE_ADAPTIVE ? &b->ready_queue : &w->queue;
	SbChunk    *c;
	SbError		err;

	sb_error_clear(&err);
	while ((c = sb_queue_pop(source)) != NULL)
	{
		if (!write_chunk(w, c, &err))
		{
			sb_error_prefix(&err, "stripe %u, chunk %llu", w->index + 1,
							(unsigned long long) c->id);
			sb_backup_fail(b, &err);
			return NULL;
		}
		sb_queue_push(&b->free_queue, c);
	}
	if (!atomic_load(&b->failed) && !write_index_and_sync(w, &err))
	{
		sb_error_prefix(&err, "stripe %u", w->index + 1);
		sb_backup_fail(b, &err);
	}
	return NULL;
}

bool
sb_backup_start_threads(SbBackup *b, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < b->nworkers; i++)
	{
		if (!sb_thread_start(&b->workers[i], worker_main, b, "compression", err))
			return false;
		b->workers_started++;
	}
	for (i = 0; i < b->nstripes; i++)
	{
		if (!sb_thread_start(&b->writers[i].thread, writer_main, &b->writers[i],
							 "stripe writer", err))
			return false;
		b->writers[i].started = true;
	}
	return true;
}

static void
join_all(SbBackup *b)
{
	uint32_t	i;

	for (i = 0; i < b->workers_started; i++)
		pthread_join(b->workers[i], NULL);
	b->workers_started = 0;
	for (i = 0; i < b->nstripes; i++)
	{
		if (b->writers[i].started)
			pthread_join(b->writers[i].thread, NULL);
		b->writers[i].started = false;
	}
}

void
sb_backup_join_threads(SbBackup *b)
{
	uint32_t	i;

	sb_queue_close(&b->seal_queue);
	for (i = 0; i < b->workers_started; i++)
		pthread_join(b->workers[i], NULL);
	b->workers_started = 0;
	sb_queue_close(&b->ready_queue);
	for (i = 0; i < b->nstripes; i++)
		sb_queue_close(&b->writers[i].queue);
	join_all(b);
}

void
sb_backup_stop_threads(SbBackup *b)
{
	SbError		err;

	sb_error_set(&err, SB_ECANCELED, "backup stopped");
	sb_backup_fail(b, &err);
	join_all(b);
}
