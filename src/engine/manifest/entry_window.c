/*
 * entry_window.c
 *		A window of files over a manifest's spooled entries (entry_window.h).
 *
 * One mutex guards the window: readers admit under it, workers look up the
 * pieces of a chunk under it, then account for them without it (the files
 * of a chunk not yet done cannot leave), and mark the chunk done under it.
 * Files are allocated one by one, so the ring of pointers to them may grow
 * (a chunk of tiny files) while the files stay where they are.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "manifest/entry_spool.h"
#include "manifest/entry_window.h"
#include "util/fsutil.h"

struct SbEntryWindow
{
	const SbManifest *manifest;
	SbEntrySpool *spool;
	size_t		max_files;
	SbWindowSeed seed;			/* what each file starts from, if any */
	size_t		next_ordinal;	/* of the next entry the spool gives */
	SbWindowAdmitFn on_admit;
	SbWindowLeaveFn on_leave;
	void	   *arg;
	pthread_mutex_t mutex;
	pthread_cond_t changed;
	SbWindowFile **ring;		/* the files in stream order, from ring[head] */
	size_t		cap;			/* a power of two */
	size_t		head;
	size_t		count;
	size_t		peak;
	uint64_t	admitted_end;	/* stream bytes the files in or past the window cover */
	bool		spool_ended;
	uint8_t    *done;			/* per chunk */
	uint64_t	low;			/* every chunk before it is done */
	uint64_t	force_end;		/* chunks below it are admitted even when full */
	bool		stopped;
	SbError		error;			/* why, if reading the entries failed */
};

static SbWindowFile *
file_at(const SbEntryWindow *w, size_t i)
{
	return w->ring[(w->head + i) & (w->cap - 1)];
}

static uint64_t
chunk_end(const SbEntryWindow *w, uint64_t chunk)
{
	uint64_t	end = (chunk + 1) * w->manifest->chunk_size;

	return end < w->manifest->stream_bytes ? end : w->manifest->stream_bytes;
}

static uint64_t
file_end(const SbWindowFile *f)
{
	return f->entry.stream_offset + f->entry.stream_length;
}

SbEntryWindow *
sb_entry_window_new(const SbManifest *m, size_t max_files, const SbWindowSeed *seed,
					SbWindowAdmitFn on_admit, SbWindowLeaveFn on_leave, void *arg, SbError *err)
{
	SbEntryWindow *w;

	if (m->streamed == NULL)
	{
		sb_error_set(err, SB_EINVAL, "internal error: a window over a manifest read whole");
		return NULL;
	}
	if ((w = sb_alloc(sizeof(SbEntryWindow), err)) == NULL)
		return NULL;
	w->manifest = m;
	w->spool = m->streamed;
	w->max_files = max_files > 0 ? max_files : 1;
	if (seed != NULL)
		w->seed = *seed;
	w->on_admit = on_admit;
	w->on_leave = on_leave;
	w->arg = arg;
	w->cap = 1024;
	pthread_mutex_init(&w->mutex, NULL);
	pthread_cond_init(&w->changed, NULL);
	w->ring = sb_alloc(w->cap * sizeof(SbWindowFile *), err);
	w->done = w->ring ? sb_alloc(m->total_chunks + 1, err) : NULL;
	if (w->done == NULL || !sb_entry_spool_rewind(w->spool, err))
	{
		sb_entry_window_free(w);
		return NULL;
	}
	return w;
}

/* What entry ORDINAL starts from: its seed, if any, into F. */
static void
seed_file(const SbEntryWindow *w, SbWindowFile *f, size_t ordinal)
{
	f->ordinal = ordinal;
	if (w->seed.sums == NULL)
		return;
	atomic_store(&f->sum, atomic_load(&w->seed.sums[ordinal]));
	atomic_store(&f->bytes, atomic_load(&w->seed.bytes[ordinal]));
}

/* A copy of E (entry ORDINAL) that owns its path and extents (one allocation), seeded. */
static SbWindowFile *
new_file(const SbEntryWindow *w, const SbEntry *e, size_t ordinal, SbError *err)
{
	size_t		extents = (size_t) e->nextents * sizeof(SbExtent);
	size_t		path = strlen(e->path) + 1;
	SbWindowFile *f = sb_alloc(sizeof(SbWindowFile) + extents + path, err);

	if (f == NULL)
		return NULL;
	f->entry = *e;
	f->entry.link_target = NULL;
	f->entry.extents = e->nextents > 0 ? (SbExtent *) (f + 1) : NULL;
	if (extents > 0)
		memcpy(f + 1, e->extents, extents);
	f->entry.path = (char *) (f + 1) + extents;
	memcpy(f->entry.path, e->path, path);
	f->given.into = SIZE_MAX;
	seed_file(w, f, ordinal);
	return f;
}

static bool
push(SbEntryWindow *w, SbWindowFile *f, SbError *err)
{
	if (w->count == w->cap)
	{
		SbWindowFile **grown = sb_alloc(2 * w->cap * sizeof(SbWindowFile *), err);
		size_t		i;

		if (grown == NULL)
			return false;
		for (i = 0; i < w->count; i++)
			grown[i] = file_at(w, i);
		free(w->ring);
		w->ring = grown;
		w->cap *= 2;
		w->head = 0;
	}
	w->ring[(w->head + w->count) & (w->cap - 1)] = f;
	w->count++;
	if (w->count > w->peak)
		w->peak = w->count;
	return true;
}

/*
 * The next file with data from the spool into *E (its ordinal *ORDINAL);
 * false at its end or on failure.  A file without data (empty, or all
 * holes) is whole as it is: it leaves at once.
 */
static bool
next_entry(SbEntryWindow *w, SbEntry *e, size_t *ordinal)
{
	for (;;)
	{
		if (!sb_entry_spool_next(w->spool, e, &w->spool_ended, &w->error))
		{
			if (!w->spool_ended)
				w->stopped = true;
			return false;
		}
		*ordinal = w->next_ordinal++;
		if (e->type == SB_ENTRY_FILE && e->stream_length == 0)
		{
			SbWindowFile f;

			memset(&f, 0, sizeof(f));
			f.entry = *e;
			f.ordinal = *ordinal;
			if (!w->on_leave(w->arg, &f, true))
			{
				w->stopped = true;
				return false;
			}
		}
		if (e->type == SB_ENTRY_FILE && e->stream_length > 0)
			return true;
	}
}

/* The next file with data from the spool into the window; false at its end or on failure. */
static bool
admit_one(SbEntryWindow *w)
{
	SbEntry		e;
	SbWindowFile *f;
	size_t		ordinal;

	if (!next_entry(w, &e, &ordinal))
		return false;
	if ((f = new_file(w, &e, ordinal, &w->error)) == NULL ||
		(w->on_admit != NULL && !w->on_admit(w->arg, f, &w->error)) || !push(w, f, &w->error))
	{
		free(f);
		w->stopped = true;
		return false;
	}
	w->admitted_end = file_end(f);
	return true;
}

static void leave(SbEntryWindow *w);

/* Admit files until CHUNK is covered or the window is full (the lowest chunk: never full). */
static bool
covered(SbEntryWindow *w, uint64_t chunk)
{
	while (!w->stopped && w->admitted_end < chunk_end(w, chunk) &&
		   (w->count < w->max_files || chunk == w->low || chunk < w->force_end))
	{
		if (!admit_one(w))
			break;
		leave(w);				/* a file wholly in chunks done already (skipped) goes at once */
	}
	return w->admitted_end >= chunk_end(w, chunk);
}

SbAdmit
sb_entry_window_admit(SbEntryWindow *w, uint64_t chunk, bool wait)
{
	SbAdmit		result;

	pthread_mutex_lock(&w->mutex);
	for (;;)
	{
		if (w->stopped)
		{
			result = SB_STOPPED;
			break;
		}
		if (covered(w, chunk))
		{
			result = SB_ADMITTED;
			break;
		}
		if (w->stopped || w->spool_ended)
		{
			/* the spool ended short of the stream: checked when it was read, so never */
			if (!w->stopped)
				sb_error_set(&w->error, SB_ECORRUPT, "the manifest's files end before chunk %llu",
							 (unsigned long long) chunk);
			w->stopped = true;
			result = SB_STOPPED;
			break;
		}
		if (!wait)
		{
			result = SB_NOT_YET;
			break;
		}
		pthread_cond_wait(&w->changed, &w->mutex);
	}
	pthread_mutex_unlock(&w->mutex);
	return result;
}

/* The first file in the window whose data ends after POS. */
static size_t
first_after(const SbEntryWindow *w, uint64_t pos)
{
	size_t		lo = 0,
				hi = w->count;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (file_end(file_at(w, mid)) <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The pieces of F within the stream's [POS, END), appended. */
static bool
add_pieces(SbWindowFile *f, uint64_t pos, uint64_t end, uint64_t chunk_start,
		   SbWindowPiece **pieces, size_t *cap, size_t *n, SbError *err)
{
	const SbEntry *e = &f->entry;
	uint32_t	extent = 0;
	uint64_t	extent_base = 0;

	if (pos < e->stream_offset)
		pos = e->stream_offset;
	if (end > file_end(f))
		end = file_end(f);
	while (pos < end)
	{
		uint64_t	file_offset,
					left;
		SbWindowPiece *p;

		sb_entry_locate(e, pos - e->stream_offset, &extent, &extent_base, &file_offset, &left);
		if (!sb_grow((void **) pieces, cap, *n, sizeof(SbWindowPiece), err))
			return false;
		p = &(*pieces)[(*n)++];
		p->file = f;
		p->file_offset = file_offset;
		p->length = left < end - pos ? left : end - pos;
		p->chunk_offset = pos - chunk_start;
		pos += p->length;
	}
	return true;
}

bool
sb_entry_window_pieces(SbEntryWindow *w, uint64_t chunk, SbWindowPiece **pieces, size_t *cap,
					   size_t *n, SbError *err)
{
	uint64_t	start = chunk * w->manifest->chunk_size;
	uint64_t	end = chunk_end(w, chunk);
	bool		ok = true;
	size_t		i;

	*n = 0;
	pthread_mutex_lock(&w->mutex);
	for (i = first_after(w, start); ok && i < w->count; i++)
	{
		SbWindowFile *f = file_at(w, i);

		if (f->entry.stream_offset >= end)
			break;
		ok = add_pieces(f, start, end, start, pieces, cap, n, err);
	}
	pthread_mutex_unlock(&w->mutex);
	return ok;
}

/* Let go of the files whose data lies wholly before the window's low end. */
static void
leave(SbEntryWindow *w)
{
	uint64_t	boundary = w->low * w->manifest->chunk_size;

	while (!w->stopped && w->count > 0 && file_end(file_at(w, 0)) <= boundary)
	{
		SbWindowFile *f = file_at(w, 0);

		if (!w->on_leave(w->arg, f, atomic_load(&f->bytes) == f->entry.stream_length))
			w->stopped = true;
		free(f);
		w->head = (w->head + 1) & (w->cap - 1);
		w->count--;
	}
}

void
sb_entry_window_done(SbEntryWindow *w, uint64_t chunk)
{
	pthread_mutex_lock(&w->mutex);
	if (chunk < w->manifest->total_chunks)
		w->done[chunk] = 1;
	while (w->low < w->manifest->total_chunks && w->done[w->low])
		w->low++;
	leave(w);
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->mutex);
}

void
sb_entry_window_force(SbEntryWindow *w, uint64_t end)
{
	pthread_mutex_lock(&w->mutex);
	if (end > w->force_end)
	{
		w->force_end = end;
		pthread_cond_broadcast(&w->changed);
	}
	pthread_mutex_unlock(&w->mutex);
}

void
sb_entry_window_abort(SbEntryWindow *w)
{
	pthread_mutex_lock(&w->mutex);
	w->stopped = true;
	pthread_cond_broadcast(&w->changed);
	pthread_mutex_unlock(&w->mutex);
}

bool
sb_entry_window_drain(SbEntryWindow *w, SbError *err)
{
	SbEntry		e;
	size_t		ordinal;

	pthread_mutex_lock(&w->mutex);
	while (!w->stopped && !w->spool_ended && next_entry(w, &e, &ordinal))
	{
		SbWindowFile f;

		memset(&f, 0, sizeof(f));
		f.entry = e;
		seed_file(w, &f, ordinal);
		if (!w->on_leave(w->arg, &f, atomic_load(&f.bytes) == e.stream_length))
			w->stopped = true;
	}
	pthread_mutex_unlock(&w->mutex);
	return sb_entry_window_check(w, err);
}

bool
sb_entry_window_check(SbEntryWindow *w, SbError *err)
{
	if (w->error.code == SB_OK)
		return true;
	*err = w->error;
	return false;
}

size_t
sb_entry_window_peak(const SbEntryWindow *w)
{
	return w->peak;
}

void
sb_entry_window_free(SbEntryWindow *w)
{
	if (w == NULL)
		return;
	while (w->ring != NULL && w->count > 0)
	{
		free(file_at(w, 0));
		w->head = (w->head + 1) & (w->cap - 1);
		w->count--;
	}
	free(w->ring);
	free(w->done);
	pthread_mutex_destroy(&w->mutex);
	pthread_cond_destroy(&w->changed);
	free(w);
}
