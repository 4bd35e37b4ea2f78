/*
 * backup_stream.c
 *		The stream's bytes into chunk buffers, each file at the place it
 *		claimed, and the entries into the manifest in the stream's order.
 *
 * A file claims its run of the stream (its place) before any of its bytes
 * are put there.  On the caller's thread alone the places follow one
 * another as today; with source lanes (backup_lanes.c) several readers claim
 * places one after the other and fill them at once, so a chunk may take
 * bytes from two files read by two threads, and chunks fill out of order.
 * A chunk is open (it holds a buffer) from its first byte put to its last,
 * then goes to the compression workers; its id is its place in the stream,
 * so stripes hold chunks in any order (readers sort a stripe's chunks).
 *
 * A buffer is held open only by a place being filled: the chunk a reader is
 * in and the one where its place ends (if the next place's reader was there
 * first), so with F readers at most 2F buffers are open; begin() keeps the
 * lanes few enough that the buffers never run out that way.
 *
 * Entries go into the manifest in the order of their places.  A file read
 * by a lane may finish after files placed behind it; those wait, in the
 * order they claimed, until the caller's thread finds them next in line
 * (sb_stream_flush): the manifest, its spill file and the entry hook are
 * only ever touched there.
 */
#include <stdlib.h>
#include <string.h>

#include "backup/backup_internal.h"
#include "util/fsutil.h"
#include "util/thread.h"

/* The caller's tick, when due; false (and SB_ECANCELED) when it says stop. */
bool
sb_stream_tick(SbBackup *b, SbError *err)
{
	SbProgress	progress;

	if (!sb_ticker_due(&b->ticker))
		return true;
	sb_backup_progress(b, &progress);
	return sb_ticker_fire(&b->ticker, &progress, "backup", err);
}

bool
sb_stream_failure(SbBackup *b, SbError *err)
{
	pthread_mutex_lock(&b->failure_mutex);
	*err = b->failure;
	pthread_mutex_unlock(&b->failure_mutex);
	return false;
}

bool
sb_stream_init(SbBackup *b, SbError *err)
{
	b->open = sb_alloc(b->nchunks * sizeof(SbOpenChunk), err);
	b->pending_cap = 64;
	b->pending = b->open ? sb_alloc(b->pending_cap * sizeof(SbPendingEntry *), err) : NULL;
	return b->pending != NULL;
}

static void
free_pending(SbPendingEntry *p)
{
	if (p == NULL)
		return;
	free(p->entry.path);
	free(p->entry.link_target);
	free(p->entry.file_id);
	free(p->entry.file_times);
	free(p->entry.extents);
	free(p);
}

void
sb_stream_free(SbBackup *b)
{
	size_t		i;

	for (i = 0; b->pending != NULL && i < b->npending; i++)
		free_pending(b->pending[(b->pending_head + i) % b->pending_cap]);
	free(b->pending);
	free(b->open);
}

/* Wake whoever waits on the stream: a chunk or an entry moved on, or the backup stopped. */
void
sb_stream_wake(SbBackup *b)
{
	pthread_mutex_lock(&b->stream_mutex);
	pthread_cond_broadcast(&b->stream_changed);
	pthread_mutex_unlock(&b->stream_mutex);
}

/* ---- places and chunks ---- */

static uint64_t
claim_locked(SbBackup *b, uint64_t len)
{
	uint64_t	place = b->cursor;

	b->cursor += len;
	return place;
}

uint64_t
sb_stream_claim(SbBackup *b, uint64_t len)
{
	uint64_t	place;

	pthread_mutex_lock(&b->stream_mutex);
	place = claim_locked(b, len);
	pthread_mutex_unlock(&b->stream_mutex);
	return place;
}

static SbOpenChunk *
find_open(SbBackup *b, uint64_t id)
{
	uint32_t	i;

	for (i = 0; i < b->nopen; i++)
		if (b->open[i].chunk->id == id)
			return &b->open[i];
	return NULL;
}

/* Hand CHUNK, LEN bytes full, to the compression workers (stream mutex held). */
static bool
submit_locked(SbBackup *b, SbChunk *c, uint32_t len)
{
	c->raw_len = len;
	c->kind = SB_CHUNK_KIND_DATA;
	if (b->parity != NULL)
		c->stripe = sb_parity_chunk_stripe(sb_parity_writer_layout(b->parity), c->id);
	else
		c->stripe = b->balance == SB_BALANCE_WEIGHTED ? sb_schedule_next(&b->schedule) : 0;
	return sb_queue_push(&b->seal_queue, c);	/* never waits: it holds every buffer */
}

/*
 * A free buffer, waiting for one: on the caller's thread ticking and
 * letting entries through meanwhile (a lane may wait on those), elsewhere
 * simply.  NULL once the backup failed (ERR says why) or was stopped.
 */
static SbChunk *
free_buffer(SbBackup *b, bool caller, SbError *err)
{
	for (;;)
	{
		bool		timed_out;
		SbChunk    *c;

		if (!caller)
			c = sb_queue_pop(&b->free_queue);
		else
			c = sb_queue_pop_timed(&b->free_queue, 100, &timed_out);
		if (c != NULL)
			return c;
		if (atomic_load(&b->failed) || !caller)
		{
			sb_stream_failure(b, err);
			return NULL;
		}
		if (!sb_stream_tick(b, err) || !sb_stream_flush(b, err))
			return NULL;
	}
}

/*
 * The buffer of open chunk ID, opened with a free buffer if no one has yet.
 * The buffer, not its place in the open table: that moves as chunks leave.
 */
static SbChunk *
open_chunk(SbBackup *b, uint64_t id, bool caller, SbError *err)
{
	SbOpenChunk *o;
	SbChunk    *c;

	pthread_mutex_lock(&b->stream_mutex);
	o = find_open(b, id);
	c = o ? o->chunk : NULL;
	pthread_mutex_unlock(&b->stream_mutex);
	if (c != NULL)
		return c;
	if ((c = free_buffer(b, caller, err)) == NULL)
		return NULL;
	pthread_mutex_lock(&b->stream_mutex);
	if ((o = find_open(b, id)) != NULL)
	{
		sb_queue_push(&b->free_queue, c);	/* another reader opened it meanwhile */
		c = o->chunk;
	}
	else
	{
		o = &b->open[b->nopen++];
		o->chunk = c;
		o->filled = 0;
		c->id = id;
	}
	pthread_mutex_unlock(&b->stream_mutex);
	return c;
}

/* N more bytes of open chunk ID are in: once all are, it goes on. */
static bool
filled(SbBackup *b, uint64_t id, uint32_t n, SbError *err)
{
	SbOpenChunk *o;
	bool		ok = true;

	pthread_mutex_lock(&b->stream_mutex);
	o = find_open(b, id);
	o->filled += n;
	if (o->filled == b->chunk_size)
	{
		SbChunk    *c = o->chunk;

		*o = b->open[--b->nopen];
		ok = submit_locked(b, c, b->chunk_size);
	}
	pthread_mutex_unlock(&b->stream_mutex);
	return ok || sb_stream_failure(b, err);
}

bool
sb_stream_put(SbBackup *b, uint64_t place, const uint8_t *data, size_t len, bool caller,
			  SbError *err)
{
	while (len > 0)
	{
		uint64_t	id = place / b->chunk_size;
		uint32_t	at = (uint32_t) (place % b->chunk_size);
		uint32_t	n = len < b->chunk_size - at ? (uint32_t) len : b->chunk_size - at;
		SbChunk    *c = open_chunk(b, id, caller, err);

		if (c == NULL)
			return false;
		/* Only this reader puts these bytes, and the chunk stays open until it has. */
		memcpy(c->raw + at, data, n);
		if (!filled(b, id, n, err))
			return false;
		atomic_fetch_add(&b->raw_bytes_done, n);
		place += n;
		data += n;
		len -= n;
	}
	return !caller || sb_stream_tick(b, err);
}

bool
sb_stream_finish(SbBackup *b, SbError *err)
{
	uint32_t	last = (uint32_t) (b->cursor % b->chunk_size);
	SbOpenChunk *o;
	bool		ok = true;

	pthread_mutex_lock(&b->stream_mutex);
	b->total_chunks = (b->cursor + b->chunk_size - 1) / b->chunk_size;
	o = find_open(b, b->cursor / b->chunk_size);
	if (last > 0 && o != NULL && o->filled == last && b->nopen == 1)
	{
		b->nopen = 0;
		ok = submit_locked(b, o->chunk, last);
	}
	else if (b->nopen > 0)
		ok = false;
	pthread_mutex_unlock(&b->stream_mutex);
	if (ok)
		return true;
	if (atomic_load(&b->failed))
		return sb_stream_failure(b, err);
	return sb_error_set(err, SB_EINVAL, "internal error: %u chunks not filled at the stream's end",
						b->nopen);
}

/* ---- entries, in the order of their places ---- */

static char *
copy_string(const char *s, bool *ok)
{
	char	   *copy;

	if (s == NULL)
		return NULL;
	if ((copy = strdup(s)) == NULL)
		*ok = false;
	return copy;
}

SbPendingEntry *
sb_pending_new(const SbEntry *e, SbError *err)
{
	SbPendingEntry *p = calloc(1, sizeof(SbPendingEntry));
	bool		ok = p != NULL;

	if (ok)
	{
		p->entry = *e;
		p->entry.path = copy_string(e->path, &ok);
		p->entry.link_target = copy_string(e->link_target, &ok);
		p->entry.file_id = copy_string(e->file_id, &ok);
		p->entry.file_times = copy_string(e->file_times, &ok);
		p->entry.extents = NULL;
	}
	if (ok && e->nextents > 0)
	{
		p->entry.extents = malloc(e->nextents * sizeof(SbExtent));
		ok = p->entry.extents != NULL;
		if (ok)
			memcpy(p->entry.extents, e->extents, e->nextents * sizeof(SbExtent));
	}
	if (ok)
		return p;
	free_pending(p);
	sb_error_set(err, SB_ENOMEM, "out of memory keeping the entry of \"%s\"", e->path);
	return NULL;
}

/* Room for one more waiting entry (stream mutex held); false if out of memory. */
static bool
pending_room_locked(SbBackup *b)
{
	SbPendingEntry **grown;
	size_t		i;

	if (b->npending < b->pending_cap)
		return true;
	grown = malloc(2 * b->pending_cap * sizeof(SbPendingEntry *));
	if (grown == NULL)
		return false;
	for (i = 0; i < b->npending; i++)
		grown[i] = b->pending[(b->pending_head + i) % b->pending_cap];
	free(b->pending);
	b->pending = grown;
	b->pending_cap *= 2;
	b->pending_head = 0;
	return true;
}

/* Is the line full? (stream mutex held) */
static bool
line_full_locked(const SbBackup *b)
{
	return b->npending >= SB_PENDING_ENTRIES_MAX;
}

void
sb_stream_done(SbBackup *b, SbPendingEntry *p)
{
	pthread_mutex_lock(&b->stream_mutex);
	p->done = true;
	pthread_cond_broadcast(&b->stream_changed);
	pthread_mutex_unlock(&b->stream_mutex);
}

/* The first entry waiting, if it is done: out of the line, to be added. */
static SbPendingEntry *
take_done(SbBackup *b)
{
	SbPendingEntry *p = NULL;

	pthread_mutex_lock(&b->stream_mutex);
	if (b->npending > 0 && b->pending[b->pending_head]->done)
	{
		p = b->pending[b->pending_head];
		b->pending_head = (b->pending_head + 1) % b->pending_cap;
		b->npending--;
		pthread_cond_broadcast(&b->stream_changed);
	}
	pthread_mutex_unlock(&b->stream_mutex);
	return p;
}

bool
sb_stream_flush(SbBackup *b, SbError *err)
{
	SbPendingEntry *p;

	while ((p = take_done(b)) != NULL)
	{
		bool		ok = sb_backup_record_entry(b, &p->entry, err);

		free_pending(p);
		if (!ok)
			return false;
	}
	return true;
}

bool
sb_stream_wait(SbBackup *b, SbStreamUntil until, void *arg, SbError *err)
{
	for (;;)
	{
		struct timespec deadline;
		bool		reached;

		if (!sb_stream_flush(b, err))
			return false;
		if (atomic_load(&b->failed))
			return sb_stream_failure(b, err);
		if (!sb_stream_tick(b, err))
			return false;
		pthread_mutex_lock(&b->stream_mutex);
		reached = until(b, arg);
		if (!reached)
		{
			deadline = sb_deadline_in(100);
			pthread_cond_timedwait(&b->stream_changed, &b->stream_mutex, &deadline);
		}
		pthread_mutex_unlock(&b->stream_mutex);
		if (reached)
			return true;
	}
}

static bool
room_in_line(SbBackup *b, void *arg)
{
	(void) arg;
	return !line_full_locked(b);
}

bool
sb_stream_place(SbBackup *b, SbEntry *e, bool caller, SbPendingEntry **p, SbError *err)
{
	uint64_t	length = e->type == SB_ENTRY_FILE ? e->stream_length : 0;
	bool		ok = true;

	*p = NULL;
	if (caller && b->nlanes == 0)
	{
		/* no lane reads: the entry goes in as soon as it is complete */
		uint64_t	place = sb_stream_claim(b, length);

		if (e->type == SB_ENTRY_FILE)
			e->stream_offset = place;
		return true;
	}
	if (caller && !sb_stream_wait(b, room_in_line, NULL, err))
		return false;
	if ((*p = sb_pending_new(e, err)) == NULL)
		return false;
	pthread_mutex_lock(&b->stream_mutex);
	while (!caller && line_full_locked(b) && !atomic_load(&b->failed))
		pthread_cond_wait(&b->stream_changed, &b->stream_mutex);
	if (atomic_load(&b->failed))
		ok = false;
	else if (!pending_room_locked(b))
		ok = sb_error_set(err, SB_ENOMEM, "out of memory keeping the entry of \"%s\"", e->path);
	else
	{
		/* the place and the place in line together: the line is in the stream's order */
		uint64_t	place = claim_locked(b, length);

		if (e->type == SB_ENTRY_FILE)
			e->stream_offset = (*p)->entry.stream_offset = place;
		b->pending[(b->pending_head + b->npending++) % b->pending_cap] = *p;
	}
	pthread_mutex_unlock(&b->stream_mutex);
	if (ok)
		return true;
	free_pending(*p);
	*p = NULL;
	return atomic_load(&b->failed) ? sb_stream_failure(b, err) : false;
}
