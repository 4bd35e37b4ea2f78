/*
 * stripe_writer.c
 *		One writer thread per destination: appends chunk records to its
 *		stripe, several writes in flight (io_uring, or one at a time with the
 *		synchronous method), at most the destination's rate, and at the end
 *		writes the index and syncs.  The trailer comes later, from the
 *		caller's thread (backup.c): it records the SHA-256 of the manifest,
 *		which exists only once every stripe is done.
 *
 * In adaptive mode every writer takes from one shared queue, so a device
 * takes the next chunk as soon as it has room for it: fast devices take more
 * and all stripes finish together.  In weighted mode each writer has its own
 * queue, filled in exact proportion to its weight; with redundancy too, each
 * chunk to the stripe its group's layout gives, and the parity records of
 * each group (parity_writer.c) to theirs.
 *
 * With direct I/O asked for, what is written is pushed to the device and
 * dropped from the page cache as the stripe grows, so a backup does not evict
 * the application's working set.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backup/backup_internal.h"
#include "store/store.h"
#include "format/checksum.h"
#include "util/fsutil.h"
#include "util/rate.h"

/*
 * Write back and drop the cache per 4 MB.  The last step's wait is the
 * slowest device's tail: 16 MB at 30 MB/s left that stripe 0.5 s behind
 * the other (make bench-devices, 30 + 120 MB/s: 82-85 % of the devices'
 * rate from SQL, 88-89 % with 4 MB; a fast device's backup no slower).
 */
#define DROP_STEP (4 * 1024 * 1024)

static bool
remember_entry(SbStripeWriter *w, const SbChunk *c, uint64_t offset, SbError *err)
{
	SbIndexEntry *e;

	if (!sb_grow((void **) &w->entries, &w->entries_cap, w->nentries, sizeof(SbIndexEntry), err))
		return false;
	e = &w->entries[w->nentries++];
	e->chunk_id = c->id;
	e->offset = offset;
	e->raw_len = c->raw_len;
	e->stored_len = c->stored_len;
	e->codec = (uint8_t) c->codec;
	e->cipher = c->cipher;
	e->kind = c->kind;
	e->raw_hash = c->raw_hash;
	e->stored_hash = c->stored_hash;
	return true;
}

static bool
backup_failed(void *arg)
{
	return atomic_load(&((SbBackup *) arg)->failed);
}

/*
 * An encrypted backup's chunk C, sealed where it now belongs (this stripe,
 * which adaptive balance decides only here), its raw hash masked.
 */
static bool
seal_payload(SbStripeWriter *w, SbChunk *c, SbError *err)
{
	const SbCipher *cipher = w->backup->manifest->cipher;
	SbChunkPlace place = {w->index + 1, c->id, c->raw_len, (uint8_t) c->codec};

	c->cipher = SB_CIPHER_NONE;
	if (cipher == NULL)
		return true;
	if (!sb_cipher_seal_chunk(cipher, &place, c->payload, c->stored_len, c->sealed, err))
		return false;
	c->cipher = SB_CIPHER_AES_256_GCM;
	c->payload = c->sealed;
	c->stored_len += SB_CRYPTO_OVERHEAD;
	c->stored_hash = sb_hash64(c->sealed, c->stored_len);
	c->raw_hash = sb_cipher_mask_hash(cipher, c->id, c->raw_hash);
	return true;
}

/* Queue chunk C's record (header and payload) at the end of the stripe. */
static bool
start_write(SbStripeWriter *w, SbIo *io, SbChunk *c, SbError *err)
{
	SbChunkHeader h;
	uint32_t	slot;

	memset(&h, 0, sizeof(h));
	if (c->kind == SB_CHUNK_KIND_DATA && !seal_payload(w, c, err))
		return false;
	h.kind = c->kind;
	h.codec = (uint8_t) c->codec;
	h.cipher = c->cipher;
	h.chunk_id = c->id;
	h.raw_len = c->raw_len;
	h.stored_len = c->stored_len;
	h.raw_hash = c->raw_hash;
	h.stored_hash = c->stored_hash;
	sb_format_encode_chunk(&h, c->header);
	/* parity is of the record as written: the header and the payload as stored */
	if (c->kind == SB_CHUNK_KIND_DATA && w->backup->parity != NULL &&
		!sb_parity_writer_add(w->backup->parity, c, c->header, err))
		return false;
	if (!remember_entry(w, c, w->offset, err))
		return false;
	sb_rate_wait(&w->rate, SB_CHUNK_HEADER_SIZE + c->stored_len, backup_failed, w->backup);
	memset(&c->op, 0, sizeof(c->op));
	c->op.kind = SB_IO_WRITE;
	c->op.fd = w->fd;
	c->op.offset = w->offset;
	c->op.iov[0].iov_base = c->header;
	c->op.iov[0].iov_len = SB_CHUNK_HEADER_SIZE;
	c->op.iov[1].iov_base = (void *) c->payload;
	c->op.iov[1].iov_len = c->stored_len;
	c->op.iovcnt = 2;
	c->op.tag = c;
	c->written = false;
	w->offset += SB_CHUNK_HEADER_SIZE + c->stored_len;
	slot = (w->in_flight_head + w->in_flight_count) % w->backup->queue_depth;
	w->in_flight[slot] = c;
	if (w->in_flight_count++ == 0)
		atomic_store(&w->busy_since_usec, (uint64_t) (sb_monotonic_seconds() * 1e6) | 1);
	return sb_io_start(io, &c->op, err);
}

/* Push what is complete to the device and drop it from the page cache. */
static void
drop_written(SbStripeWriter *w, uint64_t complete_upto)
{
	if (!w->backup->direct_io || !(w->features & SB_STORE_PAGE_CACHE) || complete_upto < w->durable_offset + DROP_STEP)
		return;
	(void) sync_file_range(w->fd, (off_t) w->durable_offset,
						   (off_t) (complete_upto - w->durable_offset),
						   SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
						   SYNC_FILE_RANGE_WAIT_AFTER);
	(void) posix_fadvise(w->fd, (off_t) w->durable_offset,
						 (off_t) (complete_upto - w->durable_offset), POSIX_FADV_DONTNEED);
	w->durable_offset = complete_upto;
}

/* Oldest writes that are done leave the queue; their buffers go back. */
static void
retire_written(SbStripeWriter *w)
{
	SbBackup   *b = w->backup;
	uint64_t	complete_upto = 0;

	while (w->in_flight_count > 0 && w->in_flight[w->in_flight_head]->written)
	{
		SbChunk    *c = w->in_flight[w->in_flight_head];

		complete_upto = c->op.offset;	/* advanced past the record */
		w->in_flight_head = (w->in_flight_head + 1) % b->queue_depth;
		w->in_flight_count--;
		if (c->kind == SB_CHUNK_KIND_PARITY)
			sb_parity_writer_written(b->parity, c);
		else
			sb_queue_push(&b->free_queue, c);
	}
	if (w->in_flight_count == 0)
	{
		/* the period leaves busy_since first: progress may miss it for an instant, never count it twice */
		uint64_t	since = atomic_exchange(&w->busy_since_usec, 0);
		uint64_t	now = (uint64_t) (sb_monotonic_seconds() * 1e6);

		atomic_fetch_add(&w->busy_usec, now > since ? now - since : 0);
	}
	if (complete_upto > 0)
		drop_written(w, complete_upto);
}

/*
 * The stripe's timeline up to NOW (the chart of a backup shows whether the
 * devices were balanced).  An interval that ended while the writer waited
 * for a chunk or a completion keeps the figure it had.
 */
static void
note_timeline(SbStripeWriter *w, double now)
{
	sb_timeline_note(&w->timeline, now - w->backup->started, atomic_load(&w->stored_bytes));
}

/* Take completed writes; false (ERR set) if one failed. */
static bool
reap_writes(SbStripeWriter *w, SbIo *io, int min, SbError *err)
{
	SbIoOp	   *done[64];
	int			n = sb_io_reap(io, done, 64, min, err);
	int			i;

	if (n < 0)
		return false;
	/* Intervals that ended before these completions were seen do not get their bytes. */
	note_timeline(w, sb_monotonic_seconds());
	for (i = 0; i < n; i++)
	{
		SbChunk    *c = done[i]->tag;

		if (done[i]->error != 0 && sb_io_error_detail(io) != NULL)
			return sb_error_set(err, SB_EIO, "could not write \"%s\": %s", w->path, sb_io_error_detail(io));
		if (done[i]->error != 0)
			return sb_error_set_errno(err, done[i]->error, "could not write \"%s\"", w->path);
		c->written = true;
		if (c->kind == SB_CHUNK_KIND_PARITY)
		{
			atomic_fetch_add(&w->parity_chunks, 1);
			atomic_fetch_add(&w->parity_bytes, c->stored_len);
			continue;
		}
		atomic_fetch_add(&w->chunks, 1);
		atomic_fetch_add(&w->raw_bytes, c->raw_len);
		atomic_fetch_add(&w->stored_bytes, c->stored_len);
	}
	if (n > 0)
		retire_written(w);
	return true;
}

/*
 * Index entries, then fsync, all stripes in parallel: what remains (the
 * trailer) is 128 bytes.  Without its trailer the stripe is not complete.
 */
static bool
write_index_and_sync(SbStripeWriter *w, SbError *err)
{
	size_t		index_len = w->nentries * SB_INDEX_ENTRY_SIZE;
	uint8_t    *index = malloc(index_len ? index_len : 1);
	size_t		i;
	bool		ok;

	if (index == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory writing the index");
	for (i = 0; i < w->nentries; i++)
		sb_format_encode_index_entry(&w->entries[i], index + i * SB_INDEX_ENTRY_SIZE);
	w->index_offset = w->offset;
	w->index_hash = sb_hash64(index, index_len);
	ok = sb_stripe_sink_write(w, index, index_len, err) && sb_stripe_sink_sync(w, err);
	free(index);
	return ok;
}

/*
 * The next chunk to write: wait for one only when nothing is in flight
 * (otherwise completions need reaping); NULL when there is none now.
 */
static SbChunk *
next_chunk(SbStripeWriter *w, SbQueue *source)
{
	if (w->in_flight_count >= w->backup->queue_depth)
		return NULL;
	return w->in_flight_count == 0 ? sb_queue_pop(source) : sb_queue_try_pop(source);
}

/* Write chunks until the source is closed and drained, or the backup stops. */
static bool
write_all(SbStripeWriter *w, SbIo *io, SbQueue *source, SbError *err)
{
	for (;;)
	{
		SbChunk    *c = next_chunk(w, source);

		if (c != NULL)
		{
			if (!start_write(w, io, c, err))
				return false;
			continue;
		}
		if (w->in_flight_count == 0)
			return true;		/* closed and drained, or stopped */
		if (!reap_writes(w, io, 1, err))
			return false;
	}
}

/* Never leave a buffer in the kernel's hands when the thread ends. */
static void
drain(SbStripeWriter *w, SbIo *io)
{
	SbError		ignored;
	SbIoOp	   *done[64];

	while (sb_io_in_flight(io) > 0 && sb_io_reap(io, done, 64, 1, &ignored) > 0)
		;
	w->in_flight_count = 0;
}

void *
sb_stripe_writer_main(void *arg)
{
	SbStripeWriter *w = arg;
	SbBackup   *b = w->backup;
	SbQueue    *source = sb_backup_stripe_queues(b) ? &w->queue : &b->ready_queue;
	SbIo	   *io;
	SbError		err;
	bool		ok;

	sb_error_clear(&err);
	io = sb_stripe_sink_io(w, &err);
	ok = io != NULL && write_all(w, io, source, &err);
	/* A store buffering appends (a bucket) took the records when its parts are stored, not when copied. */
	if (ok && (w->features & SB_STORE_BUFFERED_APPEND))
		ok = sb_stripe_sink_sync(w, &err);
	w->finished_at = sb_monotonic_seconds();
	note_timeline(w, w->finished_at);
	if (io != NULL)
		drain(w, io);
	sb_io_free(io);
	if (ok && !atomic_load(&b->failed))
		ok = write_index_and_sync(w, &err);
	if (!ok)
	{
		sb_error_prefix(&err, "stripe %u", w->index + 1);
		sb_backup_fail(b, &err);
	}
	return NULL;
}
