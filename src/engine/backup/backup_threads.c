/*
 * backup_threads.c
 *		The threads of the backup pipeline: compression workers, which seal
 *		chunks (compress and hash), and the stripe writers (stripe_writer.c);
 *		starting, joining and stopping them all.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backup/backup_internal.h"
#include "format/checksum.h"
#include "util/fsutil.h"
#include "util/thread.h"

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
	if (b->parity != NULL)
		sb_parity_writer_wake(b->parity);
	sb_stream_wake(b);			/* the source lanes, and the caller waiting on them */
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
	sb_codec_set_frame_size(ctx, b->frame_size);
	while ((c = sb_queue_pop(&b->seal_queue)) != NULL)
	{
		SbQueue    *next = sb_backup_stripe_queues(b) ?
		&b->writers[c->stripe].queue : &b->ready_queue;

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
		if (!sb_thread_start(&b->writers[i].thread, sb_stripe_writer_main, &b->writers[i],
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
	/* every data chunk is with the writers: the last groups' parity records follow them */
	if (b->parity != NULL && !atomic_load(&b->failed))
		sb_parity_writer_finish(b->parity);
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
