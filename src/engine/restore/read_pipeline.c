/*
 * read_pipeline.c
 *		Reader threads (one per stripe) and check/decompress workers.
 *
 * Every problem is described with the stripe (number and file), the chunk
 * (number and offset in the stripe) and the files whose bytes it holds.
 *
 * A stripe is read once: a chunk record not in the page cache is read with
 * O_DIRECT (the 4 kB pages around it, from a second descriptor opened
 * through /proc on the same file), so that a restore or a verify neither
 * fills the cache with a backup nor evicts a running server's working set,
 * and costs no copy out of the cache.  A record that is cached is read
 * through it (a copy from memory); a file system that refuses O_DIRECT
 * (tmpfs) and a bucket's stripe are read as they were.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "format/checksum.h"
#include "format/codec.h"
#include "crypto/crypto.h"
#include "manifest/entry_window.h"
#include "util/fsutil.h"
#include "util/io.h"
#include "util/page_cache.h"
#include "util/queue.h"
#include "util/rate.h"
#include "restore/group_assembler.h"
#include "restore/read_pipeline.h"
#include "restore/recover.h"
#include "restore/stripe_reader.h"
#include "util/thread.h"
#include "util/ticker.h"

#define SB_DEFAULT_READ_DEPTH 4
#define DIRECT_ALIGN 4096

typedef struct ReadSlot
{
	uint32_t	stripe;			/* 0-based */
	uint64_t	position;		/* in its stripe's index (of parity records, if PARITY) */
	bool		parity;			/* a parity record read for the group assembler */
	SbIndexEntry entry;
	uint8_t    *buffer;			/* where a read lands: a record and, read
								 * O_DIRECT, the rest of the pages around it */
	uint32_t	lead;			/* bytes of BUFFER before the record */
	uint8_t    *record;			/* header and payload as read: chunk_size + 48 bytes */
	uint8_t    *stored;			/* the payload, inside record */
	uint8_t    *raw;			/* chunk_size bytes, when compressed chunks exist */
	uint8_t    *opened;			/* chunk_size bytes, when sealed chunks exist: the
								 * payload unsealed */
	bool		used;			/* has held a chunk: its memory is mapped */
	SbIoOp		op;
} ReadSlot;

typedef struct StripeState
{
	struct Pipeline *pipeline;
	uint32_t	index;
	SbStripeReader reader;
	uint64_t   *order;			/* windowed or assembling: what the reader reads
								 * (item_entry), in chunk order, else NULL */
	uint64_t	nitems;			/* in ORDER */
	uint64_t	next;			/* the reader's next position in that order */
	int			direct_fd;		/* the stripe file opened O_DIRECT, or -1 */
	pthread_t	thread;
	bool		started;
	double		seconds;		/* from the start of the run to its last chunk */
	SbRate		rate;
	_Atomic uint32_t in_flight;	/* reads queued now, for progress */
	_Atomic uint64_t chunks;
	_Atomic uint64_t raw_bytes;
	_Atomic uint64_t stored_bytes;
	_Atomic uint64_t busy_usec;
	SbRecovery *recovery;		/* with redundancy, once a chunk needed it: the
								 * reader's own handles on the other stripes */
} StripeState;

typedef struct Pipeline
{
	const SbReadPipelineConfig *config;
	const SbManifest *manifest;
	SbEntryWindow *window;		/* windowed runs: the files being read, else NULL */
	ReadSlot   *slots;
	uint32_t	nslots;
	SbQueue		free_queue;
	SbQueue		work_queue;
	StripeState stripes[SB_MAX_STRIPES];
	pthread_t  *workers;
	uint32_t	nworkers;
	uint32_t	workers_started;
	uint32_t	queue_depth;	/* reads in flight per stripe */
	pthread_mutex_t mutex;		/* guards what follows, and problem reports */
	pthread_cond_t finished;
	uint32_t	threads_running;
	uint32_t	readers_running;
	bool		failed;
	SbError		failure;
	uint64_t	problems;
	_Atomic uint64_t raw_bytes_done;
	double		started;
	SbWorkerCpu worker_cpu;		/* the workers' sum (under MUTEX) */
	_Atomic uint64_t recovered;	/* chunks recovered from their parity groups */
	SbParityLayout layout;		/* with redundancy */
	SbAssembler *assembler;		/* with stripes lost, but for a delta restore:
								 * group_assembler.h */
} Pipeline;

/* Stop the run with ERR (the first failure wins), but for the window. */
static void
stop_run(Pipeline *p, const SbError *err)
{
	pthread_mutex_lock(&p->mutex);
	if (!p->failed)
	{
		p->failed = true;
		p->failure = *err;
	}
	pthread_mutex_unlock(&p->mutex);
	sb_queue_abort(&p->free_queue);
	sb_queue_abort(&p->work_queue);
	if (p->assembler != NULL)
		sb_assembler_abort(p->assembler);
}

/* Stop the run with ERR (the first failure wins). */
static void
fail(Pipeline *p, const SbError *err)
{
	stop_run(p, err);
	if (p->window != NULL)
		sb_entry_window_abort(p->window);
}

/* Report a problem; when not collecting problems, it also stops the run. */
static void
report_as(Pipeline *p, uint32_t stripe, int64_t chunk, const char *file, const SbError *err,
		  bool recovered)
{
	SbProblem	problem;

	problem.recovered = recovered;
	problem.stripe = stripe + 1;
	problem.chunk = chunk;
	problem.file = file;
	problem.code = err->code;
	problem.message = err->message;
	pthread_mutex_lock(&p->mutex);
	p->problems++;
	if (p->config->on_problem != NULL)
		p->config->on_problem(p->config->problem_arg, &problem);
	pthread_mutex_unlock(&p->mutex);
	if (!p->config->collect_problems)
		fail(p, err);
}

static void
report(Pipeline *p, uint32_t stripe, int64_t chunk, const char *file, const SbError *err)
{
	report_as(p, stripe, chunk, file, err, false);
}

/* A problem with a whole stripe (missing, truncated, foreign). */
static void
report_stripe(Pipeline *p, uint32_t stripe, SbError *err)
{
	const SbStripeInfo *info = &p->manifest->stripes[stripe];

	sb_error_prefix(err, "stripe %u of %u (\"%s\")", stripe + 1, p->manifest->nstripes,
					p->config->archive->stripe_paths[stripe]);
	if (info->chunks > 0)
	{
		size_t		len = strlen(err->message);

		snprintf(err->message + len, sizeof(err->message) - len,
				 "; its %" PRIu64 " chunks (%" PRIu64 " bytes of file data) cannot be read",
				 info->chunks, info->raw_bytes);
	}
	report(p, stripe, -1, NULL, err);
}

/* Up to three of the files chunk CHUNK_ID holds, from the window; the first into *FIRST. */
static void
describe_from_window(Pipeline *p, uint64_t chunk_id, char *buf, size_t buflen, char *first,
					 size_t first_len)
{
	SbWindowPiece *pieces = NULL;
	size_t		cap = 0,
				n = 0,
				used = 0,
				i;
	SbError		ignored;

	buf[0] = first[0] = '\0';
	if (!sb_entry_window_pieces(p->window, chunk_id, &pieces, &cap, &n, &ignored))
		n = 0;
	for (i = 0; i < n && i < 3; i++)
		used += (size_t) snprintf(buf + used, buflen > used ? buflen - used : 0,
								  "%s\"%s\" bytes %" PRIu64 "-%" PRIu64, i ? ", " : "",
								  pieces[i].file->entry.path, pieces[i].file_offset,
								  pieces[i].file_offset + pieces[i].length - 1);
	if (n > 3 && used < buflen)
		snprintf(buf + used, buflen - used, " and %zu more file(s)", n - 3);
	if (n > 0)
		snprintf(first, first_len, "%s", pieces[0].file->entry.path);
	free(pieces);
}

/* A problem with one chunk: name the stripe, the chunk and its files (the window left as it is). */
static void
report_chunk_only(Pipeline *p, uint32_t stripe, const SbIndexEntry *e, SbError *err,
				  bool recovered)
{
	char		files[1024] = "";
	char		first_file[4096];
	SbPieceIter it;
	SbPiece		first;
	const char *file = NULL;
	size_t		len;

	sb_error_prefix(err, "stripe %u of %u (\"%s\"), chunk %" PRIu64 " at offset %" PRIu64,
					stripe + 1, p->manifest->nstripes,
					p->config->archive->stripe_paths[stripe], e->chunk_id, e->offset);
	if (p->window != NULL)
	{
		describe_from_window(p, e->chunk_id, files, sizeof(files), first_file, sizeof(first_file));
		file = first_file[0] != '\0' ? first_file : NULL;
	}
	else if (p->manifest->data_entries != NULL)	/* a manifest opened to plan has no files */
	{
		sb_manifest_describe_chunk(p->manifest, e->chunk_id, files, sizeof(files));
		sb_piece_iter_init(&it, p->manifest, e->chunk_id);
		if (sb_piece_iter_next(&it, &first))
			file = p->manifest->entries[first.entry].path;
	}
	len = strlen(err->message);
	if (files[0] != '\0')
		snprintf(err->message + len, sizeof(err->message) - len, "; it holds %s", files);
	report_as(p, stripe, (int64_t) e->chunk_id, file, err, recovered);
}

/* A problem with one chunk, which will not be read: the window is done with it. */
static void
report_chunk(Pipeline *p, uint32_t stripe, const SbIndexEntry *e, SbError *err)
{
	report_chunk_only(p, stripe, e, err, false);
	if (p->window != NULL)
		sb_entry_window_done(p->window, e->chunk_id);
}

/* Stop the run with ERR from inside the window (locked): the window stops itself (false). */
static bool
fail_in_window(Pipeline *p, const SbError *err)
{
	stop_run(p, err);
	return false;
}

/*
 * A file left the window: every byte of it read, it must have the
 * manifest's CRC-32C, and pass the caller's check (a restore's: its size).
 * Verify reports a file that does not and goes on (one with a piece in a
 * chunk that could not be read was reported with that chunk); a restore
 * stops.  Called with the window locked.
 */
static bool
file_left(void *arg, const SbWindowFile *f, bool complete)
{
	Pipeline   *p = arg;
	const SbEntry *e = &f->entry;
	SbProblem	problem;
	SbError		err;

	if (!complete && p->config->collect_problems)
		return true;
	if (!complete)
	{
		sb_error_set(&err, SB_ECORRUPT, "not every byte of \"%s\" was restored", e->path);
		return fail_in_window(p, &err);
	}
	if (!sb_file_check_matches(e, sb_file_check_whole(e, atomic_load(&f->sum)), &err) ||
		(p->config->file_left != NULL &&
		 !p->config->file_left(p->config->sink_arg, e, f->ordinal, &err)))
	{
		if (!p->config->collect_problems)
			return fail_in_window(p, &err);
		memset(&problem, 0, sizeof(problem));
		problem.chunk = -1;
		problem.file = e->path;
		problem.code = err.code;
		problem.message = err.message;
		pthread_mutex_lock(&p->mutex);
		p->problems++;
		if (p->config->on_problem != NULL)
			p->config->on_problem(p->config->problem_arg, &problem);
		pthread_mutex_unlock(&p->mutex);
	}
	return true;
}

static void
thread_finished(Pipeline *p, bool is_reader)
{
	pthread_mutex_lock(&p->mutex);
	p->threads_running--;
	if (is_reader && --p->readers_running == 0)
		sb_queue_close(&p->work_queue);
	pthread_cond_broadcast(&p->finished);
	pthread_mutex_unlock(&p->mutex);
}

static bool
run_failed(void *arg)
{
	Pipeline   *p = arg;
	bool		failed;

	pthread_mutex_lock(&p->mutex);
	failed = p->failed;
	pthread_mutex_unlock(&p->mutex);
	return failed;
}

/* A local stripe opened O_DIRECT through /proc: the very file opened; -1 if refused. */
static int
open_direct(const SbStripeReader *r)
{
	char		path[64];

	if (r->file.fd < 0)
		return -1;				/* a bucket's */
	snprintf(path, sizeof(path), "/proc/self/fd/%d", r->file.fd);
	return open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
}

/*
 * The index entry of item ITEM of what the reader reads: a data chunk's
 * position in its index, or past them (assembling) a parity record's.
 */
static const SbIndexEntry *
item_entry(const StripeState *s, uint64_t item)
{
	return item < s->reader.nentries ? &s->reader.entries[item] :
		&s->reader.parity_entries[item - s->reader.nentries];
}

/* Start reading item ITEM of the stripe into SLOT (see the top of the file). */
static bool
start_read(SbIo *io, StripeState *s, ReadSlot *slot, uint64_t item, SbError *err)
{
	const SbIndexEntry *e = item_entry(s, item);
	bool		parity = item >= s->reader.nentries;
	uint64_t	offset = e->offset;
	uint64_t	len = parity ? SB_CHUNK_HEADER_SIZE + (uint64_t) e->stored_len :
		sb_stripe_record_length(&s->reader, item);
	bool		direct = s->direct_fd >= 0 && !sb_range_cached(s->reader.file.fd, offset, len);

	sb_rate_wait(&s->rate, len, run_failed, s->pipeline);
	slot->stripe = s->index;
	slot->parity = parity;
	slot->position = parity ? item - s->reader.nentries : item;
	slot->entry = *e;
	slot->lead = direct ? (uint32_t) (offset % DIRECT_ALIGN) : 0;
	slot->record = slot->buffer + slot->lead;
	slot->stored = slot->record + SB_CHUNK_HEADER_SIZE;
	memset(&slot->op, 0, sizeof(slot->op));
	slot->op.kind = SB_IO_READ;
	slot->op.fd = direct ? s->direct_fd : s->reader.file.fd;
	slot->op.offset = offset - slot->lead;
	slot->op.iov[0].iov_base = slot->buffer;
	slot->op.iov[0].iov_len = direct ?
		(slot->lead + len + DIRECT_ALIGN - 1) / DIRECT_ALIGN * DIRECT_ALIGN : len;
	slot->op.iovcnt = 1;
	slot->op.tag = slot;
	return sb_io_start(io, &slot->op, err);
}

/*
 * The stripe's own recovery, opened the first time it is needed: every
 * stripe the archive found lost, and this one when it is (its reader
 * could not open it), left out.
 */
static SbRecovery *
recovery_of(Pipeline *p, StripeState *s, bool self_lost, SbError *err)
{
	const SbArchive *a = p->config->archive;
	bool		lost[SB_MAX_STRIPES];
	uint32_t	i;

	if (s->recovery != NULL)
		return s->recovery;
	if (p->manifest->redundancy.parity == 0)
	{
		sb_error_set(err, SB_ECORRUPT, "the backup has no redundancy to recover it from");
		return NULL;
	}
	for (i = 0; i < p->manifest->nstripes; i++)
		lost[i] = a->lost_why[i] != NULL || (self_lost && i == s->index);
	s->recovery = sb_alloc(sizeof(SbRecovery), err);
	if (s->recovery != NULL && !sb_recovery_open(s->recovery, p->manifest, a->stripe_paths, a->s3, lost, err))
	{
		sb_recovery_close(s->recovery);
		free(s->recovery);
		s->recovery = NULL;
	}
	return s->recovery;
}

/* Chunk CHUNK_ID recovered into SLOT as if read from stripe S (ENTRY its recovered index entry). */
static bool
recover_into(Pipeline *p, StripeState *s, ReadSlot *slot, uint64_t chunk_id, bool self_lost,
			 SbError *err)
{
	SbRecovery *r = recovery_of(p, s, self_lost, err);
	SbChunkHeader h;
	size_t		len;
	uint64_t	offset = slot->entry.offset;

	slot->stripe = s->index;
	slot->lead = 0;
	slot->record = slot->buffer;
	slot->stored = slot->record + SB_CHUNK_HEADER_SIZE;
	if (r == NULL || !sb_recovery_chunk(r, chunk_id, slot->record, &len, &h, err))
		return false;
	sb_recover_entry(&h, &slot->entry);
	slot->entry.offset = offset;
	atomic_fetch_add(&p->recovered, 1);
	return true;
}

/*
 * A record of a present stripe failed its check (ERR says how): with
 * redundancy it is recovered from its group instead.  Verify reports it
 * all the same (the stripe is damaged); a restore goes on.
 */
static bool
recover_damaged(Pipeline *p, StripeState *s, ReadSlot *slot, SbError *err)
{
	SbError		why;

	if (p->manifest->redundancy.parity == 0)
		return false;
	if (!recover_into(p, s, slot, slot->entry.chunk_id, false, &why))
	{
		size_t		len = strlen(err->message);

		snprintf(err->message + len, sizeof(err->message) - len,
				 "; it could not be recovered from its parity group: %.300s", why.message);
		return false;
	}
	if (p->config->collect_problems)
	{
		SbIndexEntry e = slot->entry;
		size_t		len = strlen(err->message);

		snprintf(err->message + len, sizeof(err->message) - len,
				 "; recovered from its parity group");
		report_chunk_only(p, s->index, &e, err, true);
	}
	return true;
}

/* The group and member of what SLOT holds. */
static SbParityPlace
slot_place(const Pipeline *p, const ReadSlot *slot)
{
	return slot->parity ? sb_parity_place_of_parity(&p->layout, slot->entry.chunk_id) :
		sb_parity_place_of_chunk(&p->layout, slot->entry.chunk_id);
}

/*
 * A record read (GOOD: it checked) to the group assembler, if its group
 * lost a member; one that did not check leaves its group to the fallback.
 */
static void
hand_over(Pipeline *p, const ReadSlot *slot, bool good)
{
	SbParityPlace place;

	if (p->assembler == NULL)
		return;
	place = slot_place(p, slot);
	if (!sb_assembler_wants(p->assembler, place.group, place.member))
		return;
	if (!good)
		sb_assembler_fail(p->assembler, place.group, place.member);
	else if (slot->parity)
		sb_assembler_add(p->assembler, place.group, place.member, slot->stored,
						 slot->entry.stored_len);
	else
		sb_assembler_add(p->assembler, place.group, place.member, slot->record,
						 SB_CHUNK_HEADER_SIZE + (size_t) slot->entry.stored_len);
}

/* A parity record has been read for the assembler: checked, handed over, its buffer back. */
static bool
finish_parity(Pipeline *p, ReadSlot *slot)
{
	SbError		err;

	hand_over(p, slot, slot->op.error == 0 &&
			  sb_stripe_check_parity_record(&slot->entry, slot->record,
											slot->op.done > slot->lead ? slot->op.done - slot->lead : 0,
											&err));
	return sb_queue_push(&p->free_queue, slot);
}

/* A record has been read: check it, then on to the workers (or report it). */
static bool
finish_read(Pipeline *p, StripeState *s, SbIo *io, ReadSlot *slot)
{
	SbError		err;
	bool		good;

	if (slot->parity)
		return finish_parity(p, slot);
	if (slot->op.error != 0 && sb_io_error_detail(io) != NULL)
		sb_error_set(&err, SB_EIO, "could not read \"%s\": %s", s->reader.path, sb_io_error_detail(io));
	else if (slot->op.error != 0)
		sb_error_set_errno(&err, slot->op.error, "could not read \"%s\"", s->reader.path);
	good = slot->op.error == 0 &&
		sb_stripe_check_record(&s->reader, slot->position, slot->record,
							   slot->op.done > slot->lead ? slot->op.done - slot->lead : 0, &err);
	/* before the workers have it: the record is read from the buffer */
	hand_over(p, slot, good);
	if (!good && !recover_damaged(p, s, slot, &err))
	{
		/* Report before the buffer goes back: another reader may take it at once. */
		report_chunk(p, s->index, &slot->entry, &err);
		sb_queue_push(&p->free_queue, slot);
		return true;
	}
	atomic_fetch_add(&s->chunks, 1);
	atomic_fetch_add(&s->stored_bytes, slot->entry.stored_len);
	return sb_queue_push(&p->work_queue, slot);
}

/* The next free buffer: wait for one only when no read is in flight. */
static ReadSlot *
next_slot(Pipeline *p, SbIo *io)
{
	if (sb_io_in_flight(io) >= p->queue_depth)
		return NULL;
	return sb_io_in_flight(io) == 0 ? sb_queue_pop(&p->free_queue) :
		sb_queue_try_pop(&p->free_queue);
}

/* The index position of the reader's K-th chunk: in file order, or (windowed) in chunk order. */
static uint64_t
position(const StripeState *s, uint64_t k)
{
	return s->order != NULL ? s->order[k] : k;
}

/* The first chunk record from K on that is to be read (all of them, unless skipped). */
static uint64_t
next_wanted(const Pipeline *p, const StripeState *s, uint64_t k)
{
	const uint8_t *skip = p->config->skip;

	while (skip != NULL && k < s->nitems &&
		   skip[s->reader.entries[position(s, k)].chunk_id])
		k++;
	return k;
}

/*
 * Assembling: may the reader hand over its K-th item's record, or is it
 * too far ahead of the slowest (group_assembler.h)?  Waiting only with no
 * read in flight, as for the window.
 */
static bool
room_for(Pipeline *p, StripeState *s, SbIo *io, uint64_t k, bool *stop)
{
	SbParityPlace place;
	uint64_t	item = position(s, k);
	SbRoom		room;

	if (p->assembler == NULL)
		return true;
	place = item < s->reader.nentries ?
		sb_parity_place_of_chunk(&p->layout, item_entry(s, item)->chunk_id) :
		sb_parity_place_of_parity(&p->layout, item_entry(s, item)->chunk_id);
	if (!sb_assembler_wants(p->assembler, place.group, place.member))
		return true;
	room = sb_assembler_room(p->assembler, place.group, sb_io_in_flight(io) == 0);
	*stop = room == SB_ROOM_STOPPED;
	return room == SB_ROOM;
}

/*
 * May the reader start on its K-th chunk?  Always, unless windowed: then
 * once the window holds its files, waiting for that only with no read in
 * flight (those must be reaped for the window to move on).  *STOP when the
 * run stopped.
 */
static bool
may_start(Pipeline *p, StripeState *s, SbIo *io, uint64_t k, bool *stop)
{
	SbAdmit		admit;
	SbError		err;

	*stop = false;
	if (p->window == NULL || position(s, k) >= s->reader.nentries)
		return room_for(p, s, io, k, stop);
	admit = sb_entry_window_admit(p->window, s->reader.entries[position(s, k)].chunk_id,
								  sb_io_in_flight(io) == 0);
	if (admit == SB_STOPPED)
	{
		*stop = true;
		if (!sb_entry_window_check(p->window, &err))
			fail(p, &err);
	}
	return admit == SB_ADMITTED && room_for(p, s, io, k, stop);
}

/*
 * Read the stripe's chunks in file order (sequential on its device), or in
 * chunk order when windowed (nearly the same: chunks are written about in
 * order), with up to queue_depth reads in flight.
 */
static void
read_records(Pipeline *p, StripeState *s, SbIo *io)
{
	uint64_t	k = next_wanted(p, s, 0);
	SbError		err;

	while (k < s->nitems || sb_io_in_flight(io) > 0)
	{
		bool		stop = false;
		ReadSlot   *slot = k < s->nitems && may_start(p, s, io, k, &stop) ?
			next_slot(p, io) : NULL;
		SbIoOp	   *done[64];
		double		t0 = sb_monotonic_seconds();
		int			n,
					i;

		s->next = k;
		if (stop || (slot == NULL && sb_io_in_flight(io) == 0))
			return;				/* the run was stopped */
		if (slot != NULL)
		{
			if (!start_read(io, s, slot, position(s, k), &err))
			{
				sb_queue_push(&p->free_queue, slot);
				report_stripe(p, s->index, &err);
				return;
			}
			k = next_wanted(p, s, k + 1);
			s->next = k;
			continue;
		}
		atomic_store(&s->in_flight, sb_io_in_flight(io));
		n = sb_io_reap(io, done, 64, 1, &err);
		atomic_fetch_add(&s->busy_usec, (uint64_t) ((sb_monotonic_seconds() - t0) * 1e6));
		if (n < 0)
		{
			report_stripe(p, s->index, &err);
			return;
		}
		for (i = 0; i < n; i++)
			if (!finish_read(p, s, io, done[i]->tag))
				return;
	}
	s->next = k;
}

/* Where an item comes in chunk order: its block (FORMAT.md 10.1), then its id. */
static void
item_key(const StripeState *s, uint64_t item, uint64_t *block, uint64_t *id)
{
	const Pipeline *p = s->pipeline;
	const SbIndexEntry *e = item_entry(s, item);

	*id = e->chunk_id;
	if (p->manifest->redundancy.parity == 0)
		*block = 0;
	else if (item < s->reader.nentries)
		*block = e->chunk_id / ((uint64_t) p->layout.data * p->layout.run);
	else
		*block = sb_parity_place_of_parity(&p->layout, e->chunk_id).group / p->layout.run;
}

static int
compare_items(const void *a, const void *b, void *arg)
{
	uint64_t	xb,
				xi,
				yb,
				yi;

	item_key(arg, *(const uint64_t *) a, &xb, &xi);
	item_key(arg, *(const uint64_t *) b, &yb, &yi);
	if (xb != yb)
		return xb < yb ? -1 : 1;
	return xi < yi ? -1 : xi > yi;
}

/* Assembling: does the assembler want parity record I of the stripe? */
static bool
parity_wanted(const Pipeline *p, const StripeState *s, uint64_t i)
{
	SbParityPlace place = sb_parity_place_of_parity(&p->layout, s->reader.parity_entries[i].chunk_id);

	return sb_parity_stripe(&p->layout, place.group, place.member) == s->index &&
		sb_assembler_wants(p->assembler, place.group, place.member);
}

/*
 * What the reader reads, and in which order.  Its data chunks in file
 * order, unless windowed (then in chunk order, or the window could wait on
 * itself) or assembling: then with the parity records the assembler wants,
 * block by block, so that every reader hands over a group's members about
 * when the others do (group_assembler.h).
 */
static bool
plan_reads(Pipeline *p, StripeState *s, SbError *err)
{
	uint64_t	k,
				n = 0;

	s->nitems = s->reader.nentries;
	if (p->window == NULL && p->assembler == NULL)
		return true;
	s->order = sb_alloc((size_t) (s->reader.nentries + s->reader.nparity + 1) * sizeof(uint64_t), err);
	if (s->order == NULL)
		return false;
	for (k = 0; k < s->reader.nentries; k++)
		s->order[n++] = k;
	for (k = 0; p->assembler != NULL && k < s->reader.nparity; k++)
		if (parity_wanted(p, s, k))
			s->order[n++] = s->reader.nentries + k;
	s->nitems = n;
	qsort_r(s->order, n, sizeof(uint64_t), compare_items, s);
	return true;
}

/*
 * Windowed, as the reader ends: every chunk of its stripe it never started
 * reading is done with, so that the window moves past them.
 */
static void
give_up_rest(Pipeline *p, StripeState *s)
{
	const SbStripeInfo *info = &p->manifest->stripes[s->index];
	uint64_t	k;
	uint32_t	i;

	if (p->window == NULL)
		return;
	if (s->order != NULL)
	{
		for (k = s->next; k < s->nitems; k++)
			if (s->order[k] < s->reader.nentries)
				sb_entry_window_done(p->window, s->reader.entries[s->order[k]].chunk_id);
		return;
	}
	/* the stripe could not be opened: its chunks as the manifest lists them */
	for (i = 0; i < info->nranges; i++)
		for (k = info->ranges[i].first; k <= info->ranges[i].last; k++)
			sb_entry_window_done(p->window, k);
}

/*
 * Windowed and assembling: the chunks of the lowest group's block are
 * admitted however full the window is.  A lost chunk there holds the
 * window's low end until its group is complete, and its group waits for
 * the members the readers must be let read.
 */
static void
force_window(Pipeline *p)
{
	uint64_t	low,
				per_block,
				end;

	if (p->window == NULL || p->assembler == NULL)
		return;
	low = sb_assembler_low(p->assembler);
	per_block = (uint64_t) p->layout.data * p->layout.run;
	end = (low / p->layout.run + 1) * per_block;
	sb_entry_window_force(p->window, end < p->manifest->total_chunks ? end : p->manifest->total_chunks);
}

/*
 * Chunk C of lost stripe S into SLOT from the group assembler, checked as
 * if read.  False with *STOPPED when the run stopped, and without when the
 * group could not give it (the caller recovers it the old way).
 */
static bool
assemble_into(Pipeline *p, StripeState *s, ReadSlot *slot, uint64_t c, bool *stopped)
{
	SbParityPlace place = sb_parity_place_of_chunk(&p->layout, c);
	SbChunkHeader h;
	SbError		ignored;
	SbTake		take;
	size_t		L = 0,
				len;

	*stopped = false;
	if (p->assembler == NULL || p->config->archive->lost_why[s->index] == NULL)
		return false;
	slot->stripe = s->index;
	slot->lead = 0;
	slot->record = slot->buffer;
	slot->stored = slot->record + SB_CHUNK_HEADER_SIZE;
	take = sb_assembler_take(p->assembler, place.group, place.member, slot->record, &L);
	force_window(p);
	*stopped = take == SB_TAKE_STOPPED;
	/* what a group gives is checked as SbRecovery checks it; one that fails goes the old way */
	if (take != SB_TAKE_GOOD || !sb_recover_check_record(slot->record, L, c, &len, &h, &ignored) ||
		!sb_recover_check_manifest(p->manifest, &h, c, &ignored))
		return false;
	sb_recover_entry(&h, &slot->entry);
	atomic_fetch_add(&p->recovered, 1);
	return true;
}

/*
 * Chunk C of a lost stripe, recovered and handed on as if read; false when
 * the run stopped.  One that cannot be recovered is reported.
 */
static bool
recover_one(Pipeline *p, StripeState *s, uint64_t c)
{
	ReadSlot   *slot;
	SbError		err;
	bool		stopped;

	if (p->window != NULL && sb_entry_window_admit(p->window, c, true) != SB_ADMITTED)
	{
		if (!sb_entry_window_check(p->window, &err))
			fail(p, &err);
		return false;
	}
	if ((slot = sb_queue_pop(&p->free_queue)) == NULL)
		return false;
	memset(&slot->entry, 0, sizeof(slot->entry));
	slot->entry.chunk_id = c;
	slot->parity = false;
	if (!assemble_into(p, s, slot, c, &stopped))
	{
		if (stopped)
		{
			sb_queue_push(&p->free_queue, slot);
			return false;
		}
		if (!recover_into(p, s, slot, c, true, &err))
		{
			report_chunk(p, s->index, &slot->entry, &err);
			return sb_queue_push(&p->free_queue, slot);
		}
	}
	atomic_fetch_add(&s->chunks, 1);
	atomic_fetch_add(&s->stored_bytes, slot->entry.stored_len);
	return sb_queue_push(&p->work_queue, slot);
}

/*
 * A lost stripe (docs/FORMAT.md 10.4): each of its data chunks, as the
 * manifest lists them (in chunk order: what the window wants), recovered
 * from the other members of its group.  Windowed, the chunks it never
 * reached are done with as it stops.
 */
static void
recover_stripe(Pipeline *p, StripeState *s)
{
	const SbStripeInfo *info = &p->manifest->stripes[s->index];
	const uint8_t *skip = p->config->skip;
	bool		going = true;
	uint32_t	i;
	uint64_t	c;

	for (i = 0; i < info->nranges; i++)
		for (c = info->ranges[i].first; c <= info->ranges[i].last; c++)
		{
			if (going && (skip == NULL || !skip[c]))
				going = recover_one(p, s, c);
			else if (!going && p->window != NULL && (skip == NULL || !skip[c]))
				sb_entry_window_done(p->window, c);
		}
}

/*
 * With redundancy: is the stripe lost?  As the archive found it when it
 * opened (verify reported it then), or now, failing to open: reported
 * when collecting problems (a restore goes on without it; had it been
 * lost before, the restore would have been refused when too many are).
 */
static bool
lost_at_open(Pipeline *p, StripeState *s)
{
	const SbArchive *a = p->config->archive;
	SbError		err;

	if (a->lost_why[s->index] != NULL)
		return true;
	if (sb_stripe_open(&s->reader, p->manifest, s->index, a->stripe_paths[s->index], a->s3, &err))
		return false;
	sb_error_prefix(&err, "stripe %u of %u (\"%s\") is lost", s->index + 1, p->manifest->nstripes,
					a->stripe_paths[s->index]);
	if (p->config->collect_problems)
		report_as(p, s->index, -1, NULL, &err, true);
	return true;
}

/* Open and check the stripe, then read it; in-flight reads end before we do. */
static void
read_stripe(Pipeline *p, StripeState *s)
{
	const SbReadOptions *o = p->config->options;
	SbError		err;
	SbIo	   *io;
	SbIoOp	   *done[64];
	int			n,
				i;

	if (p->manifest->redundancy.parity > 0 && lost_at_open(p, s))
	{
		/* what the assembler waits for from this stripe, if it was to be read, never comes */
		if (p->assembler != NULL)
			sb_assembler_stripe_done(p->assembler, s->index);
		recover_stripe(p, s);
		return;
	}
	if ((p->manifest->redundancy.parity == 0 &&
		 !sb_stripe_open(&s->reader, p->manifest, s->index,
						 p->config->archive->stripe_paths[s->index], p->config->archive->s3, &err)) ||
		!plan_reads(p, s, &err))
	{
		report_stripe(p, s->index, &err);
		give_up_rest(p, s);
		return;
	}
	io = sb_store_reader_io(&s->reader.file, o->io_method, p->queue_depth, &err);
	if (io == NULL)
	{
		report_stripe(p, s->index, &err);
		give_up_rest(p, s);
		return;
	}
	s->direct_fd = open_direct(&s->reader);
	read_records(p, s, io);
	/* reads still in flight when the reader stopped: dropped */
	while (sb_io_in_flight(io) > 0 && (n = sb_io_reap(io, done, 64, 1, &err)) > 0)
		for (i = 0; p->window != NULL && i < n; i++)
			if (!((ReadSlot *) done[i]->tag)->parity)
				sb_entry_window_done(p->window, ((ReadSlot *) done[i]->tag)->entry.chunk_id);
	give_up_rest(p, s);
	sb_io_free(io);
	if (s->direct_fd >= 0)
		close(s->direct_fd);
	s->direct_fd = -1;
}

static void *
reader_main(void *arg)
{
	StripeState *s = arg;

	read_stripe(s->pipeline, s);
	if (s->pipeline->assembler != NULL)
		sb_assembler_stripe_done(s->pipeline->assembler, s->index);
	free(s->order);
	s->order = NULL;
	s->seconds = sb_monotonic_seconds() - s->pipeline->started;
	sb_stripe_close(&s->reader);
	if (s->recovery != NULL)
		sb_recovery_close(s->recovery);
	free(s->recovery);
	s->recovery = NULL;
	thread_finished(s->pipeline, true);
	return NULL;
}

/* Unseal (if sealed: it must open where it is), decompress (if needed), check the raw checksum. */
static bool
open_chunk(Pipeline *p, SbCodecContext *ctx, ReadSlot *slot, const uint8_t **raw,
		   SbError *err)
{
	const SbIndexEntry *e = &slot->entry;
	const uint8_t *payload = slot->stored;
	uint64_t	hash;
	uint64_t	want;

	*raw = NULL;
	if (e->cipher != SB_CIPHER_NONE)
	{
		SbChunkPlace place = {slot->stripe + 1, e->chunk_id, e->raw_len, e->codec};

		if (p->manifest->cipher == NULL)
			return sb_error_set(err, SB_EKEY, "the chunk is encrypted and its backup's key was not given");
		if (!sb_cipher_open_chunk(p->manifest->cipher, &place, slot->stored, e->stored_len, slot->opened,
								  err))
			return false;
		payload = slot->opened;
	}
	*raw = payload;
	if (e->codec != SB_CODEC_NONE)
	{
		if (!sb_codec_decompress(ctx, (SbCodec) e->codec, payload, sb_entry_payload_len(e),
								 slot->raw, e->raw_len, err))
			return false;
		*raw = slot->raw;
	}
	hash = sb_hash64(*raw, e->raw_len);
	want = sb_entry_raw_hash(p->manifest, e);
	if (hash != want)
		return sb_error_set(err, SB_ECORRUPT,
							"checksum of the restored bytes mismatch (stored %016" PRIx64 ", computed %016" PRIx64 ")",
							want, hash);
	return true;
}

/* Windowed: the pieces of the chunk written (a restore), each into its file's sum, the chunk done. */
static bool
account_in_window(Pipeline *p, uint64_t chunk_id, const uint8_t *raw, SbWindowPiece **pieces,
				  size_t *cap, SbError *err)
{
	size_t		n,
				i;

	if (!sb_entry_window_pieces(p->window, chunk_id, pieces, cap, &n, err) ||
		(p->config->window_sink != NULL &&
		 !p->config->window_sink(p->config->sink_arg, chunk_id, *pieces, n, raw, err)))
		return false;
	for (i = 0; i < n; i++)
	{
		const SbWindowPiece *piece = &(*pieces)[i];
		SbWindowFile *f = piece->file;

		atomic_fetch_xor(&f->sum, sb_file_check_piece(&f->entry, piece->file_offset,
													  raw + piece->chunk_offset, piece->length));
		atomic_fetch_add(&f->bytes, piece->length);
	}
	sb_entry_window_done(p->window, chunk_id);
	return true;
}

/*
 * Take chunks from the work queue until it ends; with CPU, the time spent on
 * each one counted into it, but for a buffer's first chunk (which pays for
 * mapping the buffer's memory, once a run).
 */
static void
work(Pipeline *p, SbCodecContext *ctx, SbWorkerCpu *cpu)
{
	ReadSlot   *slot;
	SbWindowPiece *pieces = NULL;
	size_t		cap = 0;
	SbError		err;

	while ((slot = sb_queue_pop(&p->work_queue)) != NULL)
	{
		const uint8_t *raw;
		StripeState *s = &p->stripes[slot->stripe];
		uint64_t	chunk_id = slot->entry.chunk_id;
		double		started = cpu != NULL && slot->used ? sb_thread_cpu_seconds() : -1;

		slot->used = true;
		if (!open_chunk(p, ctx, slot, &raw, &err))
			report_chunk(p, slot->stripe, &slot->entry, &err);
		else if ((p->config->sink != NULL &&
				  !p->config->sink(p->config->sink_arg, chunk_id, raw, slot->entry.raw_len, &err)) ||
				 (p->window != NULL && !account_in_window(p, chunk_id, raw, &pieces, &cap, &err)))
		{
			fail(p, &err);
			break;
		}
		else
		{
			if (p->config->file_check != NULL)
				sb_file_check_add_chunk(p->config->file_check, chunk_id, raw);
			atomic_fetch_add(&s->raw_bytes, slot->entry.raw_len);
			atomic_fetch_add(&p->raw_bytes_done, slot->entry.raw_len);
			if (started >= 0)
			{
				cpu->seconds += sb_thread_cpu_seconds() - started;
				cpu->bytes += slot->entry.raw_len;
			}
		}
		if (!sb_queue_push(&p->free_queue, slot))
			break;
	}
	free(pieces);
}

static void *
worker_main(void *arg)
{
	Pipeline   *p = arg;
	SbError		err;
	SbCodecContext *ctx = sb_codec_context_new(p->manifest->codec, 0, &err);
	SbWorkerCpu cpu = {0, 0};

	if (ctx == NULL)
		fail(p, &err);
	else
		work(p, ctx, p->config->worker_cpu != NULL ? &cpu : NULL);
	pthread_mutex_lock(&p->mutex);
	p->worker_cpu.seconds += cpu.seconds;
	p->worker_cpu.bytes += cpu.bytes;
	pthread_mutex_unlock(&p->mutex);
	sb_codec_context_free(ctx);
	thread_finished(p, false);
	return NULL;
}

static bool
alloc_slots(Pipeline *p, uint32_t count, SbError *err)
{
	uint32_t	cs = p->manifest->chunk_size;
	uint32_t	sealing = p->manifest->encrypted ? SB_CRYPTO_OVERHEAD : 0;
	uint32_t	i;

	/* a parity record (assembling) is a header over the longest record: as check_parity_entry bounds it */
	if (p->manifest->redundancy.parity > 0)
	{
		size_t		bound = sb_codec_bound(p->manifest->codec, cs);

		sealing = SB_CHUNK_HEADER_SIZE + SB_CRYPTO_OVERHEAD + (bound > cs ? (uint32_t) (bound - cs) : 0);
	}

	p->slots = sb_alloc(count * sizeof(ReadSlot), err);
	if (p->slots == NULL || !sb_queue_init_pool(&p->free_queue, count) ||
		!sb_queue_init(&p->work_queue, count))
		return p->slots == NULL ? false : sb_error_set(err, SB_ENOMEM, "out of memory");
	p->nslots = count;
	for (i = 0; i < count; i++)
	{
		ReadSlot   *slot = &p->slots[i];

		if (posix_memalign((void **) &slot->buffer, DIRECT_ALIGN,
						   cs + SB_CHUNK_HEADER_SIZE + sealing + 2 * DIRECT_ALIGN) != 0 ||
			(p->manifest->codec != SB_CODEC_NONE &&
			 posix_memalign((void **) &slot->raw, 4096, cs) != 0) ||
			(sealing && posix_memalign((void **) &slot->opened, 4096, cs) != 0))
			return sb_error_set(err, SB_ENOMEM, "out of memory allocating read buffers");
		sb_queue_push(&p->free_queue, slot);
	}
	return true;
}

static bool
start_threads(Pipeline *p, SbError *err)
{
	uint32_t	i;

	p->workers = sb_alloc(p->nworkers * sizeof(pthread_t), err);
	if (p->workers == NULL)
		return false;
	pthread_mutex_lock(&p->mutex);
	for (i = 0; i < p->manifest->nstripes; i++)
	{
		StripeState *s = &p->stripes[i];

		s->pipeline = p;
		s->index = i;
		s->reader.file.fd = -1;
		sb_rate_init(&s->rate, p->config->options->max_rates ?
					 p->config->options->max_rates[i] : 0);
		if (!sb_thread_start(&s->thread, reader_main, s, "stripe reader", err))
			break;
		s->started = true;
		p->threads_running++;
		p->readers_running++;
	}
	for (; err->code == SB_OK && p->workers_started < p->nworkers; p->workers_started++)
	{
		if (!sb_thread_start(&p->workers[p->workers_started], worker_main, p, "restore worker", err))
			break;
		p->threads_running++;
	}
	pthread_mutex_unlock(&p->mutex);
	return err->code == SB_OK;
}

static void
fill_progress(Pipeline *p, SbProgress *progress)
{
	uint32_t	i;

	memset(progress, 0, sizeof(*progress));
	progress->raw_bytes_done = atomic_load(&p->raw_bytes_done);
	progress->raw_bytes_total = p->manifest->stream_bytes;
	progress->elapsed_seconds = sb_monotonic_seconds() - p->started;
	progress->nstripes = p->manifest->nstripes;
	for (i = 0; i < p->manifest->nstripes; i++)
	{
		StripeState *s = &p->stripes[i];

		progress->stripes[i].chunks = atomic_load(&s->chunks);
		progress->stripes[i].raw_bytes = atomic_load(&s->raw_bytes);
		progress->stripes[i].stored_bytes = atomic_load(&s->stored_bytes);
		progress->stripes[i].busy_seconds = (double) atomic_load(&s->busy_usec) / 1e6;
		progress->stripes[i].in_flight = atomic_load(&s->in_flight);
	}
}

/* Wait for every thread, ticking the caller about every 100 ms. */
static void
wait_for_threads(Pipeline *p)
{
	SbTicker	ticker;
	SbProgress	progress;
	SbError		err;

	sb_ticker_init(&ticker, p->config->options->tick, p->config->options->tick_arg);
	pthread_mutex_lock(&p->mutex);
	while (p->threads_running > 0)
	{
		struct timespec deadline = sb_deadline_in(100);

		pthread_cond_timedwait(&p->finished, &p->mutex, &deadline);
		if (p->threads_running == 0 || !sb_ticker_due(&ticker))
			continue;
		pthread_mutex_unlock(&p->mutex);
		fill_progress(p, &progress);
		if (!sb_ticker_fire(&ticker, &progress, p->config->what, &err))
			fail(p, &err);
		pthread_mutex_lock(&p->mutex);
	}
	pthread_mutex_unlock(&p->mutex);
}

static void
join_and_free(Pipeline *p)
{
	uint32_t	i;

	for (i = 0; i < p->manifest->nstripes; i++)
		if (p->stripes[i].started)
			pthread_join(p->stripes[i].thread, NULL);
	for (i = 0; i < p->workers_started; i++)
		pthread_join(p->workers[i], NULL);
	for (i = 0; p->slots != NULL && i < p->nslots; i++)
	{
		free(p->slots[i].buffer);
		free(p->slots[i].raw);
		free(p->slots[i].opened);
	}
	free(p->slots);
	free(p->workers);
	sb_queue_destroy(&p->free_queue);
	sb_queue_destroy(&p->work_queue);
}

/* A file entered the window: the caller's hook, if any (called with the window locked). */
static bool
file_admitted(void *arg, SbWindowFile *f, SbError *err)
{
	Pipeline   *p = arg;

	return p->config->file_admitted == NULL ||
		p->config->file_admitted(p->config->sink_arg, f, err);
}

/*
 * With stripes lost, the group assembler (group_assembler.h): each present
 * stripe is then read once.  Not for a delta restore, which skips chunks
 * the target holds, members the assembler would wait for: there each lost
 * chunk is recovered through its reader's own handles.
 */
static bool
open_assembler(Pipeline *p, SbError *err)
{
	const SbArchive *a = p->config->archive;
	bool		lost[SB_MAX_STRIPES];
	bool		any = false;
	uint32_t	i;

	if (p->manifest->redundancy.parity == 0 ||
		!sb_parity_layout_init(&p->layout, p->manifest->nstripes, p->manifest->redundancy.parity,
							   p->manifest->redundancy.run, err))
		return p->manifest->redundancy.parity == 0;
	for (i = 0; i < p->manifest->nstripes; i++)
		any |= (lost[i] = a->lost_why[i] != NULL);
	if (!any || p->config->skip != NULL)
		return true;
	p->assembler = sb_assembler_new(&p->layout, p->manifest->total_chunks, lost,
									sb_recover_record_cap(p->manifest), SB_ASSEMBLER_BLOCKS, err);
	force_window(p);
	return p->assembler != NULL;
}

/* Windowed: the window over the files, past the chunks never to be read. */
static bool
open_window(Pipeline *p, SbError *err)
{
	const SbReadOptions *o = p->config->options;
	uint64_t	c;

	p->window = sb_entry_window_new(p->manifest, o->window_files ? o->window_files : SB_WINDOW_FILES,
									p->config->window_seed, file_admitted, file_left, p, err);
	for (c = 0; p->window != NULL && p->config->skip != NULL && c < p->manifest->total_chunks; c++)
		if (p->config->skip[c])
			sb_entry_window_done(p->window, c);
	return p->window != NULL;
}

bool
sb_read_pipeline_run(const SbReadPipelineConfig *config, uint64_t *problems, SbError *err)
{
	const SbReadOptions *o = config->options;
	Pipeline   *p;
	bool		ok;

	*problems = 0;
	if (!sb_policy_check_read_memory(config->archive->manifest, o, err))
		return false;
	p = sb_alloc(sizeof(Pipeline), err);
	if (p == NULL)
		return false;
	p->config = config;
	p->manifest = config->archive->manifest;
	p->nworkers = o->workers ? o->workers : sb_cpu_count();
	p->queue_depth = o->queue_depth ? o->queue_depth : SB_DEFAULT_READ_DEPTH;
	p->started = sb_monotonic_seconds();
	pthread_mutex_init(&p->mutex, NULL);
	pthread_cond_init(&p->finished, NULL);
	sb_error_clear(err);
	ok = (!config->windowed || open_window(p, err)) && open_assembler(p, err) &&
		alloc_slots(p, o->buffer_count ? o->buffer_count : SB_DEFAULT_READ_BUFFERS, err) &&
		start_threads(p, err);
	if (!ok)
		fail(p, err);
	wait_for_threads(p);
	join_and_free(p);
	if (!p->failed && p->window != NULL && !sb_entry_window_drain(p->window, err))
	{
		p->failed = true;
		p->failure = *err;
	}
	if (config->stripe_seconds != NULL)
	{
		uint32_t	i;

		for (i = 0; i < p->manifest->nstripes; i++)
			config->stripe_seconds[i] = p->stripes[i].seconds;
	}
	if (config->worker_cpu != NULL)
		*config->worker_cpu = p->worker_cpu;
	*problems = p->problems;
	if (p->failed)
		*err = p->failure;
	ok = !p->failed;
	sb_assembler_free(p->assembler);
	sb_entry_window_free(p->window);
	pthread_mutex_destroy(&p->mutex);
	pthread_cond_destroy(&p->finished);
	free(p);
	/*
	 * What the run's threads freed stays in their malloc arenas; a chain's
	 * restore runs once a backup, and each run would add its own.
	 */
	malloc_trim(0);
	return ok;
}
