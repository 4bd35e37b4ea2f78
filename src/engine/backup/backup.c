/*
 * backup.c
 *		Life of a backup: checking the options, creating the backup folders
 *		and stripe files (backup_dest.c), finishing (indexes, syncs,
 *		manifests) or aborting (removing everything it created).
 *
 * Nothing is created until every option has been checked, and a backup
 * folder without a manifest is never a complete backup: the manifest is
 * written, in every destination, only after every stripe is synced.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "backup/backup_internal.h"
#include "format/checksum.h"
#include "format/frames.h"
#include "util/fsutil.h"
#include "backup/source_reader.h"
#include "util/thread.h"

#define MAX_WORKERS 256
#define MAX_BUFFERS 4096
#define MAX_NAME_LEN 128
#define MAX_QUEUE_DEPTH 256

/* A backup name is one plain path component: letters, digits, ".", "_", "-". */
static bool
name_is_valid(const char *name)
{
	size_t		len = strlen(name);
	size_t		i;

	if (len == 0 || len > MAX_NAME_LEN || name[0] == '.')
		return false;
	for (i = 0; i < len; i++)
	{
		char		ch = name[i];

		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			  (ch >= '0' && ch <= '9') || ch == '.' || ch == '_' || ch == '-'))
			return false;
	}
	return true;
}

static uint32_t
chunk_size_of(const SbBackupOptions *o)
{
	return o->chunk_size ? o->chunk_size : SB_DEFAULT_CHUNK_SIZE;
}

bool
sb_backup_check_options(const SbBackupOptions *o, SbError *err)
{
	uint32_t	chunk_size = chunk_size_of(o);
	SbParityLayout layout;
	uint32_t	i;

	if (!sb_backup_check_destinations(o, err))
		return false;
	for (i = 0; o->weights != NULL && i < o->ndestinations; i++)
		if (!isfinite(o->weights[i]) || o->weights[i] <= 0)
			return sb_error_set(err, SB_EINVAL,
								"weight %g of destination \"%s\" is not a positive number",
								o->weights[i], o->destinations[i]);
	if (o->name == NULL || !name_is_valid(o->name))
		return sb_error_set(err, SB_EINVAL,
							"backup name \"%s\" is not valid: use up to %d letters, digits, \".\", \"_\" or \"-\", not starting with \".\"",
							o->name ? o->name : "", MAX_NAME_LEN);
	if (chunk_size < SB_MIN_CHUNK_SIZE || chunk_size > SB_MAX_CHUNK_SIZE || chunk_size % 4096)
		return sb_error_set(err, SB_EINVAL,
							"chunk size %u is not a multiple of 4096 between %d and %d",
							chunk_size, SB_MIN_CHUNK_SIZE, SB_MAX_CHUNK_SIZE);
	if (o->frame_size != 0 &&
		(o->frame_size < SB_FRAME_SIZE_LEAST || o->frame_size > SB_MAX_CHUNK_SIZE || o->frame_size % 4096))
		return sb_error_set(err, SB_EINVAL,
							"frame size %u is not a multiple of 4096 between %d and %d",
							o->frame_size, SB_FRAME_SIZE_LEAST, SB_MAX_CHUNK_SIZE);
	if (o->codec == SB_CODEC_ZSTD &&
		(o->level < sb_codec_min_level() || o->level > sb_codec_max_level() || o->level == 0))
		return sb_error_set(err, SB_EINVAL, "zstd level %d is out of range (%d to %d, not 0)",
							o->level, sb_codec_min_level(), sb_codec_max_level());
	if (o->buffer_count != 0 && (o->buffer_count < 2 || o->buffer_count > MAX_BUFFERS))
		return sb_error_set(err, SB_EINVAL, "buffer count %u is out of range (2 to %d)",
							o->buffer_count, MAX_BUFFERS);
	if (o->workers > MAX_WORKERS)
		return sb_error_set(err, SB_EINVAL, "%u compression workers; at most %d are allowed",
							o->workers, MAX_WORKERS);
	if (o->queue_depth > MAX_QUEUE_DEPTH)
		return sb_error_set(err, SB_EINVAL, "queue depth %u is out of range (1 to %d)",
							o->queue_depth, MAX_QUEUE_DEPTH);
	for (i = 0; o->max_rates != NULL && i < o->ndestinations; i++)
		if (!isfinite(o->max_rates[i]) || o->max_rates[i] < 0)
			return sb_error_set(err, SB_EINVAL,
								"rate limit %g MB/s of destination \"%s\" is not a number of MB/s (0 for none)",
								o->max_rates[i], o->destinations[i]);
	if (o->redundancy > 0 && !sb_parity_layout_init(&layout, o->ndestinations, o->redundancy,
													SB_PARITY_DEFAULT_RUN, err))
		return false;
	if (o->type != SB_BACKUP_FULL &&
		(o->parent == NULL || o->block_size == 0 || o->block_size % 512 != 0 ||
		 chunk_size % o->block_size != 0 ||
		 o->hooks.file_filter == NULL || o->hooks.block_filter == NULL))
		return sb_error_set(err, SB_EINVAL,
							"a %s backup needs its parent, a block size that divides the chunk size (%u), and both filters",
							sb_backup_type_name(o->type), chunk_size);
	return sb_policy_check_backup_memory(o, err);
}

static bool
is_all_zero(const uint8_t *bytes, size_t len)
{
	size_t		i;

	for (i = 0; i < len; i++)
		if (bytes[i] != 0)
			return false;
	return true;
}

/* The caller's backup UUID, or a random (version 4) one. */
static bool
make_uuid(const SbBackupOptions *o, uint8_t *uuid, SbError *err)
{
	if (!is_all_zero(o->uuid, sizeof(o->uuid)))
	{
		memcpy(uuid, o->uuid, 16);
		return true;
	}
	if (getrandom(uuid, 16, 0) != 16)
		return sb_error_set_errno(err, errno, "could not get random bytes");
	uuid[6] = (uint8_t) ((uuid[6] & 0x0F) | 0x40);
	uuid[8] = (uint8_t) ((uuid[8] & 0x3F) | 0x80);
	return true;
}

static char *
copy_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* An encrypted backup's keys, and its data key wrapped under the user's key. */
static bool
make_keys(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	SbManifest *m = b->manifest;

	if (o->encryption_key == NULL)
		return true;
	m->encrypted = true;
	m->cipher = sb_alloc(sizeof(SbCipher), err);
	return m->cipher != NULL && sb_cipher_create(o->encryption_key, m->uuid, m->cipher, b->wrapped_key, err);
}

static bool
init_manifest(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	char		now[32];
	SbManifest *m = sb_manifest_new();

	b->manifest = m;
	if (m == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	sb_now_iso8601(now, sizeof(now));
	m->name = strdup(o->name);
	m->label = copy_or_null(o->label);
	m->tool = copy_or_null(o->tool);
	m->started_at = strdup(o->started_at ? o->started_at : now);
	m->metadata_json = copy_or_null(o->metadata_json);
	m->chunk_size = b->chunk_size;
	m->codec = o->codec;
	m->level = o->codec == SB_CODEC_ZSTD ? o->level : 0;
	m->balance = o->balance;
	if (b->parity != NULL)
	{
		const SbParityLayout *l = sb_parity_writer_layout(b->parity);

		m->version_minor = SB_MANIFEST_MINOR_REDUNDANCY;
		m->redundancy.parity = l->parity;
		m->redundancy.data = l->data;
		m->redundancy.run = l->run;
	}
	if (m->name == NULL || m->started_at == NULL || (o->label && !m->label) ||
		(o->tool && !m->tool) || (o->metadata_json && !m->metadata_json))
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	return make_uuid(o, m->uuid, err) && make_keys(b, o, err) && sb_incremental_begin(b, o, err) &&
		(o->spill_dir == NULL || sb_manifest_spill(m, o->spill_dir, err));
}

/* The largest sealed payload: the largest the codec gives, and the seal. */
static size_t
sealed_bound(const SbBackup *b)
{
	size_t		bound = sb_codec_bound(b->codec, b->chunk_size);

	return (bound > b->chunk_size ? bound : b->chunk_size) + SB_CRYPTO_OVERHEAD;
}

static bool
alloc_chunks(SbBackup *b, uint32_t count, SbError *err)
{
	size_t		bound = sb_codec_bound(b->codec, b->chunk_size);
	uint32_t	i;

	b->chunks = sb_alloc(count * sizeof(SbChunk), err);
	if (b->chunks == NULL)
		return false;
	b->nchunks = count;
	for (i = 0; i < count; i++)
	{
		SbChunk    *c = &b->chunks[i];

		/* Page-aligned, so a later direct-I/O path can use the same buffers. */
		if (posix_memalign((void **) &c->raw, 4096, b->chunk_size) != 0 ||
			(b->codec != SB_CODEC_NONE &&
			 posix_memalign((void **) &c->compressed, 4096, bound) != 0) ||
			(b->manifest->cipher != NULL &&
			 posix_memalign((void **) &c->sealed, 4096, sealed_bound(b)) != 0))
			return sb_error_set(err, SB_ENOMEM, "out of memory allocating %u buffers of %u bytes",
								count, b->chunk_size);
	}
	return true;
}

static bool
init_queues(SbBackup *b, SbError *err)
{
	uint32_t	i;
	bool		ok;

	ok = sb_queue_init_pool(&b->free_queue, b->nchunks) &&
		sb_queue_init(&b->seal_queue, b->nchunks) &&
		sb_queue_init(&b->ready_queue, b->nchunks);
	/* with redundancy a writer's queue also grows for parity records (parity_writer.c) */
	for (i = 0; ok && i < b->nstripes; i++)
		ok = sb_queue_init(&b->writers[i].queue, b->nchunks);
	for (i = 0; ok && i < b->nchunks; i++)
		sb_queue_push(&b->free_queue, &b->chunks[i]);
	return ok ? true : sb_error_set(err, SB_ENOMEM, "out of memory");
}

/* Everything begin() needs beyond the options check. */
static bool
setup(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	double		equal[SB_MAX_STRIPES];
	uint32_t	i;

	b->nworkers = o->workers ? o->workers : sb_cpu_count();
	b->workers = sb_alloc(b->nworkers * sizeof(pthread_t), err);
	if (b->workers == NULL)
		return false;
	if (o->redundancy > 0 && (b->parity = sb_parity_writer_new(b, o->redundancy, err)) == NULL)
		return false;
	if (!init_manifest(b, o, err))
		return false;
	for (i = 0; i < b->nstripes; i++)
		equal[i] = 1.0;
	sb_schedule_init(&b->schedule, o->weights ? o->weights : equal, b->nstripes);
	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeWriter *w = &b->writers[i];

		w->backup = b;
		w->index = i;
		w->fd = -1;
		sb_timeline_init(&w->timeline);
		sb_rate_init(&w->rate, o->max_rates ? o->max_rates[i] : 0);
		w->in_flight = sb_alloc(b->queue_depth * sizeof(SbChunk *), err);
		if (w->in_flight == NULL)
			return false;
	}
	if (!sb_backup_create_destinations(b, o, err))
		return false;
	b->caller_filler.reader = sb_source_reader_new(b->io_method, b->queue_depth, b->chunk_size,
												   b->direct_io, err);
	b->caller_filler.hook_arg = o->hooks.read_arg;
	b->caller_filler.caller = true;
	return b->caller_filler.reader != NULL &&
		alloc_chunks(b, o->buffer_count ? o->buffer_count : SB_DEFAULT_BUFFER_COUNT, err) &&
		sb_stream_init(b, err) && sb_lanes_init(b, o, err) &&
		init_queues(b, err) && sb_backup_start_threads(b, err);
}

static bool
record_stripe_info(SbBackup *b, const SbBackupOptions *o)
{
	uint32_t	i;

	b->manifest->stripes = calloc(b->nstripes, sizeof(SbStripeInfo));
	if (b->manifest->stripes == NULL)
		return false;
	b->manifest->nstripes = b->nstripes;
	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeInfo *s = &b->manifest->stripes[i];
		char		file_name[32];

		sb_stripe_file_name(i + 1, file_name, sizeof(file_name));
		s->number = i + 1;
		s->weight = o->weights ? o->weights[i] : 1.0;
		s->destination = strdup(o->destinations[i]);
		s->file_name = strdup(file_name);
		if (s->destination == NULL || s->file_name == NULL)
			return false;
	}
	return true;
}

SbBackup *
sb_backup_begin(const SbBackupOptions *o, SbError *err)
{
	SbBackup   *b;

	sb_error_clear(err);
	if (!sb_backup_check_options(o, err))
		return NULL;
	b = sb_alloc(sizeof(SbBackup), err);
	if (b == NULL)
		return NULL;
	pthread_mutex_init(&b->failure_mutex, NULL);
	pthread_mutex_init(&b->stream_mutex, NULL);
	pthread_cond_init(&b->stream_changed, NULL);
	b->codec = o->codec;
	b->level = o->level;
	b->balance = o->balance;
	b->chunk_size = chunk_size_of(o);
	b->frame_size = o->frame_size ? o->frame_size : SB_FRAME_SIZE;
	b->detect_holes = o->detect_holes;
	b->file_stamps = o->file_stamps || o->type != SB_BACKUP_FULL;
	b->direct_io = o->direct_io;
	b->io_method = o->io_method;
	b->queue_depth = o->queue_depth ? o->queue_depth : SB_DEFAULT_QUEUE_DEPTH;
	b->hooks = o->hooks;
	sb_ticker_init(&b->ticker, o->hooks.tick, o->hooks.tick_arg);
	b->nstripes = o->ndestinations;
	b->started = sb_monotonic_seconds();
	if (!setup(b, o, err) ||
		(!record_stripe_info(b, o) && !sb_error_set(err, SB_ENOMEM, "out of memory")))
	{
		sb_backup_abort(b);
		return NULL;
	}
	return b;
}

/*
 * The ids of the records of KIND a writer stored (data chunks, or parity
 * records), as sorted inclusive ranges, adjacent ones merged (as readers
 * expect them, manifest_redundancy.c).
 */
static bool
build_ranges(const SbStripeWriter *w, int kind, SbChunkRange **ranges, uint32_t *nranges,
			 SbError *err)
{
	uint64_t   *ids = sb_alloc((w->nentries + 1) * sizeof(uint64_t), err);
	SbChunkRange *r = sb_alloc((w->nentries + 1) * sizeof(SbChunkRange), err);
	size_t		nids = 0;
	uint32_t	n = 0;
	size_t		i;

	if (ids == NULL || r == NULL)
	{
		free(ids);
		free(r);
		return false;
	}
	for (i = 0; i < w->nentries; i++)
		if (w->entries[i].kind == kind)
			ids[nids++] = w->entries[i].chunk_id;
	qsort(ids, nids, sizeof(uint64_t), sb_compare_u64);
	for (i = 0; i < nids; i++)
	{
		if (n > 0 && r[n - 1].last + 1 == ids[i])
			r[n - 1].last = ids[i];
		else
		{
			r[n].first = ids[i];
			r[n].last = ids[i];
			n++;
		}
	}
	free(ids);
	*ranges = r;
	*nranges = n;
	return true;
}

/*
 * The coarsest interval any writer's timeline reached: every stripe's
 * timeline is given in it, so the figures of all stripes line up in time.
 */
static double
common_timeline_interval(const SbBackup *b)
{
	double		interval = SB_TIMELINE_FIRST_INTERVAL;
	uint32_t	i;

	for (i = 0; i < b->nstripes; i++)
		if (b->writers[i].timeline.interval > interval)
			interval = b->writers[i].timeline.interval;
	return interval;
}

/* Put the writers' figures and chunk ranges into the manifest. */
static bool
complete_manifest(SbBackup *b, SbError *err)
{
	SbManifest *m = b->manifest;
	double		interval = common_timeline_interval(b);
	char		now[32];
	uint32_t	i;

	sb_now_iso8601(now, sizeof(now));
	m->finished_at = sb_strdup(now, err);
	if (m->finished_at == NULL)
		return false;
	m->total_chunks = b->total_chunks;
	m->stream_bytes = 0;
	m->stored_bytes = 0;
	m->parity_bytes = 0;
	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeWriter *w = &b->writers[i];
		SbStripeInfo *s = &m->stripes[i];

		s->chunks = atomic_load(&w->chunks);
		s->raw_bytes = atomic_load(&w->raw_bytes);
		s->stored_bytes = atomic_load(&w->stored_bytes);
		s->file_bytes = w->offset + SB_TRAILER_SIZE;	/* the trailer comes next */
		s->seconds = (double) atomic_load(&w->busy_usec) / 1e6;
		s->finished_after = w->finished_at > 0 ? w->finished_at - b->started : 0;
		sb_timeline_coarsen_to(&w->timeline, interval);
		if (!sb_timeline_export(&w->timeline, s->finished_after, s->stored_bytes, s, err))
			return false;
		s->parity_chunks = atomic_load(&w->parity_chunks);
		s->parity_bytes = atomic_load(&w->parity_bytes);
		m->stream_bytes += s->raw_bytes;
		m->stored_bytes += s->stored_bytes;
		m->parity_bytes += s->parity_bytes;
		if (!build_ranges(w, SB_CHUNK_KIND_DATA, &s->ranges, &s->nranges, err) ||
			(b->parity != NULL &&
			 !build_ranges(w, SB_CHUNK_KIND_PARITY, &s->parity_ranges, &s->nparity_ranges, err)))
			return false;
	}
	/*
	 * Check what we are about to publish as any reader would; a table spilled
	 * to a file, as a planning reader would (each entry was, as it came).
	 */
	if (m->spill != NULL)
		return sb_manifest_index_layout(m, err) && sb_manifest_spill_check(m, err);
	return sb_manifest_index(m, err);
}

/* The last 128 bytes of stripe W, binding it to this backup's manifest; then fsync. */
static bool
write_trailer(SbBackup *b, SbStripeWriter *w, SbError *err)
{
	const SbManifest *m = b->manifest;
	uint8_t		trailer[SB_TRAILER_SIZE];
	SbTrailer	t;

	memset(&t, 0, sizeof(t));
	t.index_offset = w->index_offset;
	t.chunk_count = w->nentries;
	/* parity records count as records of length L (FORMAT.md 10.2) */
	t.raw_bytes = atomic_load(&w->raw_bytes) + atomic_load(&w->parity_bytes);
	t.stored_bytes = atomic_load(&w->stored_bytes) + atomic_load(&w->parity_bytes);
	t.index_hash = w->index_hash;
	t.number = w->index + 1;
	t.count = b->nstripes;
	memcpy(t.uuid, m->uuid, 16);
	memcpy(t.manifest_sha256, m->json_sha256, SB_SHA256_LEN);
	t.manifest_length = m->json_length;
	sb_format_encode_trailer(&t, trailer);
	return sb_stripe_sink_write(w, trailer, sizeof(trailer), err) && sb_stripe_sink_seal(w, err);
}

/*
 * Once every stripe holds its chunks and index, synced: the manifest's
 * digest, every stripe sealed with a trailer recording it (each synced),
 * and only then the same bytes as every manifest copy (backup_manifest.c).
 */
static bool
seal_and_publish(SbBackup *b, SbError *err)
{
	uint32_t	i;
	bool		ok = sb_backup_digest_manifest(b, err);

	for (i = 0; ok && i < b->nstripes; i++)
		ok = write_trailer(b, &b->writers[i], err);
	return ok && sb_backup_publish_manifest(b, err);
}

static void
free_backup(SbBackup *b, bool keep_manifest)
{
	uint32_t	i;

	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeWriter *w = &b->writers[i];

		sb_stripe_sink_close(w);
		free(w->folder);
		free(w->path);
		free(w->entries);
		free(w->in_flight);
		sb_queue_destroy(&w->queue);
	}
	for (i = 0; b->chunks != NULL && i < b->nchunks; i++)
	{
		free(b->chunks[i].raw);
		free(b->chunks[i].compressed);
		free(b->chunks[i].sealed);
	}
	free(b->chunks);
	free(b->workers);
	sb_parity_writer_free(b->parity);
	sb_prefetch_free(b->prefetch);
	sb_lanes_free(b);
	sb_source_reader_free(b->caller_filler.reader);
	sb_stream_free(b);
	sb_incremental_free(b);
	sb_queue_destroy(&b->free_queue);
	sb_queue_destroy(&b->seal_queue);
	sb_queue_destroy(&b->ready_queue);
	if (!keep_manifest)
		sb_manifest_free(b->manifest);
	pthread_mutex_destroy(&b->failure_mutex);
	pthread_mutex_destroy(&b->stream_mutex);
	pthread_cond_destroy(&b->stream_changed);
	free(b);
}

bool
sb_backup_finish(SbBackup *b, SbManifest **manifest, SbError *err)
{
	bool		ok;

	ok = sb_backup_files_read(b, err) && sb_stream_finish(b, err);
	if (!ok)
		sb_backup_fail(b, err); /* stop the lanes before the pipeline's threads are joined */
	sb_backup_join_threads(b);
	if (atomic_load(&b->failed))
	{
		*err = b->failure;
		ok = false;
	}
	ok = ok && complete_manifest(b, err) && seal_and_publish(b, err);
	if (!ok)
	{
		sb_backup_abort(b);
		return false;
	}
	if (manifest != NULL)
		*manifest = b->manifest;
	free_backup(b, manifest != NULL);
	return true;
}

void
sb_backup_abort(SbBackup *b)
{
	uint32_t	i;

	if (b == NULL)
		return;
	sb_backup_stop_threads(b);
	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeWriter *w = &b->writers[i];

		sb_backup_remove_created(b, w);
	}
	free_backup(b, false);
}

/*
 * Writer W's busy seconds so far, the period under way included: a writer
 * whose queue never drains adds its busy time only at the end, and rates
 * per second of writing would otherwise be divided by almost nothing.
 */
static double
busy_seconds_now(SbStripeWriter *w)
{
	uint64_t	busy = atomic_load(&w->busy_usec);
	uint64_t	since = atomic_load(&w->busy_since_usec);
	uint64_t	now = (uint64_t) (sb_monotonic_seconds() * 1e6);

	return (double) (busy + (since != 0 && now > since ? now - since : 0)) / 1e6;
}

void
sb_backup_progress(SbBackup *b, SbProgress *p)
{
	uint32_t	i;

	memset(p, 0, sizeof(*p));
	p->raw_bytes_done = atomic_load(&b->raw_bytes_done);
	p->files_done = atomic_load(&b->files_done);
	p->elapsed_seconds = sb_monotonic_seconds() - b->started;
	p->nstripes = b->nstripes;
	for (i = 0; i < b->nstripes; i++)
	{
		SbStripeWriter *w = &b->writers[i];

		p->stripes[i].chunks = atomic_load(&w->chunks);
		p->stripes[i].raw_bytes = atomic_load(&w->raw_bytes);
		p->stripes[i].stored_bytes = atomic_load(&w->stored_bytes);
		p->stripes[i].busy_seconds = busy_seconds_now(w);
		p->stripes[i].in_flight = atomic_load(&w->in_flight_count);
	}
}

bool
sb_backup_set_metadata(SbBackup *b, const char *metadata_json, SbError *err)
{
	char	   *copy = sb_strdup(metadata_json, err);

	if (copy == NULL)
		return false;
	free(b->manifest->metadata_json);
	b->manifest->metadata_json = copy;
	return true;
}

const SbManifest *
sb_backup_manifest(const SbBackup *b)
{
	return b->manifest;
}
