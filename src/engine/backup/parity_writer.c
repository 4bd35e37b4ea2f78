/*
 * parity_writer.c
 *		A backup's parity records (docs/FORMAT.md section 10.2): every data
 *		chunk's record, as its stripe writer is about to write it (48-byte
 *		header and payload as stored, sealed or not), is added into the M
 *		parity buffers of its group; when the group's last data member is
 *		in, its M parity records go to the queues of their stripes' writers,
 *		and its buffers come back here once those writers wrote them.
 *
 * Locks: the pool's mutex over which groups are in use and what they count
 * (members in, longest record, records unwritten); a group's own mutex over
 * its buffers while a member is added (writers of different stripes add
 * members of one group at once).  Never the pool's while a group's is held,
 * and neither while a queue is pushed to.
 *
 * No thread ever waits for a group's buffers: the pool grows instead.  A
 * writer that waited for a free group could wait for itself (the records
 * that would free one may be in its own queue, behind the chunk it holds),
 * and for the chunk buffers in flight (the producer stops when they are all
 * queued) while the writers of the parity records it waits for wait for
 * it in turn.  What bounds the pool is the pipeline: a group is in use from
 * its first member written to its last parity record written, so there are
 * no more than the groups of the chunks in flight (buffer_count), those of
 * the block being filled, and those whose records wait behind a slow
 * stripe's queue, which fills with data chunks after at most M blocks (the
 * roles rotate) and then holds the producer back through the buffers.  The
 * memory check counts that (sb_parity_groups_estimate); source lanes, which
 * leave places in the stream unfilled while the files before them are read,
 * can keep a few more blocks open.
 *
 * Handing a group's records over never waits either: the writers' queues
 * grow for them (a writer pushing to a full queue whose writer pushes to
 * its own would wait forever).
 */
#include <stdlib.h>
#include <string.h>

#include "backup/backup_internal.h"
#include "backup/parity_writer.h"
#include "format/checksum.h"
#include "util/fsutil.h"

typedef struct SbParityGroup
{
	uint64_t	group;
	bool		in_use;
	bool		closed;			/* its records are (being) handed over */
	uint32_t	added;			/* data members in */
	uint32_t	longest;		/* L: the longest member record */
	uint32_t	zeroed_from;	/* buffers are zero from here (a reused group's last L) */
	uint32_t	unwritten;		/* records handed over and not yet written */
	pthread_mutex_t mutex;		/* over the buffers while a member is added */
	SbChunk		records[SB_PARITY_MAX];	/* raw: the parity buffer */
} SbParityGroup;

struct SbParityWriter
{
	SbBackup   *backup;
	SbParityLayout layout;
	SbParityCoder coder;
	size_t		record_max;		/* each buffer's length */
	pthread_mutex_t mutex;
	pthread_cond_t emitted_cond;	/* a group's records were handed over, or a failure */
	SbParityGroup **groups;		/* every group allocated, in use or not */
	size_t		ngroups;
	size_t		cap;
	uint64_t	emitted;		/* groups whose records were handed over */
	bool		total_known;
	uint64_t	total_chunks;
};

size_t
sb_parity_record_bound(SbCodec codec, uint32_t chunk_size)
{
	size_t		bound = sb_codec_bound(codec, chunk_size);

	return SB_CHUNK_HEADER_SIZE + (bound > chunk_size ? bound : chunk_size) + SB_CRYPTO_OVERHEAD;
}

SbParityWriter *
sb_parity_writer_new(SbBackup *b, uint32_t redundancy, SbError *err)
{
	SbParityWriter *pw = sb_alloc(sizeof(SbParityWriter), err);

	if (pw == NULL)
		return NULL;
	pw->backup = b;
	pw->record_max = sb_parity_record_bound(b->codec, b->chunk_size);
	pthread_mutex_init(&pw->mutex, NULL);
	pthread_cond_init(&pw->emitted_cond, NULL);
	if (!sb_parity_layout_init(&pw->layout, b->nstripes, redundancy, SB_PARITY_DEFAULT_RUN, err) ||
		!sb_parity_coder_init(&pw->coder, &pw->layout, err))
	{
		sb_parity_writer_free(pw);
		return NULL;
	}
	return pw;
}

static void
free_group(SbParityGroup *g)
{
	uint32_t	p;

	for (p = 0; p < SB_PARITY_MAX; p++)
		free(g->records[p].raw);
	pthread_mutex_destroy(&g->mutex);
	free(g);
}

void
sb_parity_writer_free(SbParityWriter *pw)
{
	size_t		i;

	if (pw == NULL)
		return;
	for (i = 0; i < pw->ngroups; i++)
		free_group(pw->groups[i]);
	free(pw->groups);
	sb_parity_coder_free(&pw->coder);
	pthread_mutex_destroy(&pw->mutex);
	pthread_cond_destroy(&pw->emitted_cond);
	free(pw);
}

const SbParityLayout *
sb_parity_writer_layout(const SbParityWriter *pw)
{
	return &pw->layout;
}

/* A new group's buffers, zeroed (pool mutex held). */
static SbParityGroup *
new_group(SbParityWriter *pw, SbError *err)
{
	SbParityGroup *g;
	uint32_t	p;

	if (!sb_grow((void **) &pw->groups, &pw->cap, pw->ngroups, sizeof(SbParityGroup *), err))
		return NULL;
	g = sb_alloc(sizeof(SbParityGroup), err);
	if (g == NULL)
		return NULL;
	pthread_mutex_init(&g->mutex, NULL);
	for (p = 0; p < pw->layout.parity; p++)
		if (posix_memalign((void **) &g->records[p].raw, 4096, pw->record_max) != 0)
		{
			free_group(g);
			sb_error_set(err, SB_ENOMEM, "out of memory for the parity of a group (%zu bytes)",
						 pw->record_max);
			return NULL;
		}
	for (p = 0; p < pw->layout.parity; p++)
		memset(g->records[p].raw, 0, pw->record_max);
	pw->groups[pw->ngroups++] = g;
	return g;
}

/* GROUP's accumulator: the one in use, or a free one (zeroed), or a new one. */
static SbParityGroup *
acquire(SbParityWriter *pw, uint64_t group, SbError *err)
{
	SbParityGroup *free_one = NULL;
	SbParityGroup *g = NULL;
	size_t		i;
	uint32_t	p;

	pthread_mutex_lock(&pw->mutex);
	for (i = 0; i < pw->ngroups && g == NULL; i++)
	{
		if (pw->groups[i]->in_use && pw->groups[i]->group == group)
			g = pw->groups[i];
		else if (!pw->groups[i]->in_use && free_one == NULL)
			free_one = pw->groups[i];
	}
	if (g == NULL)
	{
		g = free_one != NULL ? free_one : new_group(pw, err);
		if (g != NULL)
		{
			/* only the bytes its last use wrote need zeroing */
			for (p = 0; p < pw->layout.parity; p++)
				memset(g->records[p].raw, 0, g->zeroed_from);
			g->group = group;
			g->in_use = true;
			g->closed = false;
			g->added = 0;
			g->longest = 0;
			g->zeroed_from = 0;
			g->unwritten = 0;
		}
	}
	pthread_mutex_unlock(&pw->mutex);
	return g;
}

/* The data members GROUP has: K, or fewer in the last block once the chunk count is known. */
static uint32_t
members_of(const SbParityWriter *pw, uint64_t group)
{
	uint32_t	n = 0;
	uint32_t	j;
	uint64_t	id;

	if (!pw->total_known)
		return pw->layout.data;
	for (j = 0; j < pw->layout.data; j++)
		if (sb_parity_member_chunk(&pw->layout, group, j, pw->total_chunks, &id))
			n++;
	return n;
}

/* Is G complete and not yet closed?  Then it is now (pool mutex held). */
static bool
close_if_complete(SbParityWriter *pw, SbParityGroup *g)
{
	if (!g->in_use || g->closed || g->added < members_of(pw, g->group))
		return false;
	g->closed = true;
	g->unwritten = pw->layout.parity;
	g->zeroed_from = g->longest;
	return true;
}

/*
 * G's M parity records (FORMAT.md 10.2: kind parity, codec and cipher 0,
 * raw = stored length = L, both hashes of the L bytes) to their stripes.
 */
static void
emit(SbParityWriter *pw, SbParityGroup *g)
{
	SbBackup   *b = pw->backup;
	uint32_t	p;

	for (p = 0; p < pw->layout.parity; p++)
	{
		SbChunk    *c = &g->records[p];

		c->kind = SB_CHUNK_KIND_PARITY;
		c->parity_group = g;
		c->id = sb_parity_id(&pw->layout, g->group, p);
		c->stripe = sb_parity_stripe(&pw->layout, g->group, pw->layout.data + p);
		c->raw_len = c->stored_len = g->longest;
		c->codec = SB_CODEC_NONE;
		c->cipher = SB_CIPHER_NONE;
		c->raw_hash = c->stored_hash = sb_hash64(c->raw, g->longest);
		c->payload = c->raw;
	}
	/* queued before counted: the queues close once every group's records are in them */
	for (p = 0; p < pw->layout.parity; p++)
		if (!sb_queue_push_growing(&b->writers[g->records[p].stripe].queue, &g->records[p]))
		{
			SbError		err;

			sb_error_set(&err, SB_ENOMEM, "out of memory queueing parity record %llu",
						 (unsigned long long) g->records[p].id);
			sb_backup_fail(b, &err);	/* or it was stopped already: the same */
			return;
		}
	pthread_mutex_lock(&pw->mutex);
	pw->emitted++;
	pthread_cond_broadcast(&pw->emitted_cond);
	pthread_mutex_unlock(&pw->mutex);
}

bool
sb_parity_writer_add(SbParityWriter *pw, const SbChunk *c, const uint8_t *header, SbError *err)
{
	SbParityPlace place = sb_parity_place_of_chunk(&pw->layout, c->id);
	SbParityGroup *g = acquire(pw, place.group, err);
	uint8_t    *buffers[SB_PARITY_MAX];
	uint8_t    *payloads[SB_PARITY_MAX];
	uint32_t	len = SB_CHUNK_HEADER_SIZE + c->stored_len;
	uint32_t	p;
	bool		complete;

	if (g == NULL)
		return false;
	for (p = 0; p < pw->layout.parity; p++)
	{
		buffers[p] = g->records[p].raw;
		payloads[p] = g->records[p].raw + SB_CHUNK_HEADER_SIZE;
	}
	/* the code works byte by byte: header and payload can go in apart, at their places */
	pthread_mutex_lock(&g->mutex);
	sb_parity_add(&pw->coder, place.member, header, SB_CHUNK_HEADER_SIZE, buffers);
	sb_parity_add(&pw->coder, place.member, c->payload, c->stored_len, payloads);
	pthread_mutex_unlock(&g->mutex);

	pthread_mutex_lock(&pw->mutex);
	g->added++;
	if (len > g->longest)
		g->longest = len;
	complete = close_if_complete(pw, g);
	pthread_mutex_unlock(&pw->mutex);
	if (complete)
		emit(pw, g);
	return true;
}

void
sb_parity_writer_written(SbParityWriter *pw, SbChunk *c)
{
	SbParityGroup *g = c->parity_group;

	pthread_mutex_lock(&pw->mutex);
	if (--g->unwritten == 0)
		g->in_use = false;
	pthread_mutex_unlock(&pw->mutex);
}

void
sb_parity_writer_finish(SbParityWriter *pw)
{
	SbBackup   *b = pw->backup;
	SbParityGroup **closing;
	uint64_t	groups;
	size_t		nclosing = 0;
	size_t		i;

	pthread_mutex_lock(&pw->mutex);
	pw->total_known = true;
	pw->total_chunks = b->total_chunks;
	closing = malloc((pw->ngroups + 1) * sizeof(SbParityGroup *));
	for (i = 0; closing != NULL && i < pw->ngroups; i++)
		if (close_if_complete(pw, pw->groups[i]))
			closing[nclosing++] = pw->groups[i];
	pthread_mutex_unlock(&pw->mutex);
	if (closing == NULL)
	{
		SbError		err;

		sb_error_set(&err, SB_ENOMEM, "out of memory closing the parity groups");
		sb_backup_fail(b, &err);
		return;
	}
	for (i = 0; i < nclosing; i++)
		emit(pw, closing[i]);
	free(closing);
	/*
	 * The last members are still with the writers, some groups not even
	 * begun: they close as their members are written.  Every group the
	 * chunk count makes, not only those begun, before the queues close.
	 */
	groups = sb_parity_groups(&pw->layout, pw->total_chunks);
	pthread_mutex_lock(&pw->mutex);
	while (pw->emitted < groups && !atomic_load(&b->failed))
		pthread_cond_wait(&pw->emitted_cond, &pw->mutex);
	pthread_mutex_unlock(&pw->mutex);
}

void
sb_parity_writer_wake(SbParityWriter *pw)
{
	pthread_mutex_lock(&pw->mutex);
	pthread_cond_broadcast(&pw->emitted_cond);
	pthread_mutex_unlock(&pw->mutex);
}
