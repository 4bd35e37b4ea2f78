/*
 * policy_memory.c
 *		The memory ceiling: what a backup's or a restore's settings will
 *		allocate, added up from the same figures the pipelines allocate by,
 *		and refused above a limit before anything is allocated or created.
 *
 * Memory is fixed by the settings, whatever the size of the cluster, so a
 * setting typed with one zero too many (buffer_count 4096 of 64 MB chunks:
 * half a terabyte) must fail at once with the sum spelled out, not take
 * the server down when the allocations come.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stripebackup/sb_policy.h"
#include "stripebackup/sb_s3.h"
#include "store/s3/s3_upload.h"
#include "store/store.h"
#include "format/codec.h"
#include "format/format.h"
#include "crypto/crypto.h"
#include "backup/backup_prefetch.h"
#include "backup/backup_lanes.h"
#include "backup/parity_writer.h"
#include "restore/read_pipeline.h"
#include "util/thread.h"
#include "wal/wal_internal.h"

/* Bytes as PostgreSQL writes them (binary units): "64 MB", "1.5 GB". */
static void
format_size(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB"};
	double		v = (double) bytes;
	int			u = 0;

	while (v >= 1024 && u < 5)
	{
		v /= 1024;
		u++;
	}
	if (v == (double) (uint64_t) v)
		snprintf(buf, len, "%.0f %s", v, units[u]);
	else
		snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* What a file in a window costs: its entry, counters, path and allocation (entry_window.c). */
#define WINDOW_FILE_BYTES 160

/* Add one term to the estimate: BYTES, described by the printf-style FMT. */
static void
add_term(SbMemoryEstimate *e, uint64_t bytes, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

static void
add_term(SbMemoryEstimate *e, uint64_t bytes, const char *fmt,...)
{
	size_t		used = strlen(e->breakdown);
	char		subtotal[32];
	va_list		ap;

	if (used > 0 && used < sizeof(e->breakdown))
		used += (size_t) snprintf(e->breakdown + used, sizeof(e->breakdown) - used, " + ");
	va_start(ap, fmt);
	if (used < sizeof(e->breakdown))
		used += (size_t) vsnprintf(e->breakdown + used, sizeof(e->breakdown) - used, fmt, ap);
	va_end(ap);
	format_size(bytes, subtotal, sizeof(subtotal));
	if (used < sizeof(e->breakdown))
		snprintf(e->breakdown + used, sizeof(e->breakdown) - used, " (%s)", subtotal);
	e->total += bytes;
}

/* A zstd context per worker, when compressing or decompressing at all. */
static void
add_contexts(SbMemoryEstimate *e, uint32_t workers, uint64_t per_worker, const char *what)
{
	char		each[32];

	e->codec_contexts = (uint64_t) workers * per_worker;
	format_size(per_worker, each, sizeof(each));
	if (per_worker > 0)
		add_term(e, e->codec_contexts, "%s: %u workers x %s", what, workers, each);
}

/* As s3_upload.c: a bucket's stripe fills one part while up to 4 are sent (S3_PARTS_IN_FLIGHT). */
static void
add_upload_parts(SbMemoryEstimate *e, const SbBackupOptions *o)
{
	uint32_t	buckets = 0;
	char		size[32];

	for (uint32_t i = 0; i < o->ndestinations; i++)
		buckets += (sb_store_features_of(o->destinations[i]) & SB_STORE_BUFFERED_APPEND) != 0;
	if (buckets == 0)
		return;
	format_size(SB_S3_PART_FIRST, size, sizeof(size));
	e->uploads = (uint64_t) buckets * (SB_S3_PARTS_IN_FLIGHT + 1) * SB_S3_PART_FIRST;
	add_term(e, e->uploads, "%u bucket(s) x %d parts of %s", buckets, SB_S3_PARTS_IN_FLIGHT + 1, size);
}

/* Source lanes (backup_lanes.c): a reader each with its read-ahead, the files waiting, the line. */
static void
add_lanes(SbMemoryEstimate *e, const SbBackupOptions *o, uint64_t read_ahead)
{
	uint32_t	lanes = sb_lanes_allowed(o);
	uint64_t	waiting = (uint64_t) SB_LANE_QUEUE * SB_LANE_ITEM_BYTES;
	uint64_t	line = (uint64_t) SB_PENDING_ENTRIES_MAX * SB_LANE_ITEM_BYTES;

	if (lanes == 0)
		return;
	e->read_ahead += lanes * (read_ahead + waiting) + line;
	add_term(e, lanes * (read_ahead + waiting), "%u source lanes x (read-ahead + %d files waiting)",
			 lanes, SB_LANE_QUEUE);
	add_term(e, line, "%d entries in line", SB_PENDING_ENTRIES_MAX);
}

/* With redundancy, the groups' parity buffers (backup/parity_writer.h): M each, of a record's bound. */
static void
add_parity(SbMemoryEstimate *e, const SbBackupOptions *o, uint32_t buffers)
{
	uint64_t	groups = sb_parity_groups_estimate(buffers, o->redundancy);
	uint64_t	record = sb_parity_record_bound(o->codec, o->chunk_size ? o->chunk_size :
												SB_DEFAULT_CHUNK_SIZE);
	uint64_t	bytes = groups * o->redundancy * record;
	char		size[32];

	if (o->redundancy == 0 || o->redundancy > SB_PARITY_MAX)
		return;
	format_size(record, size, sizeof(size));
	e->buffers += bytes;
	add_term(e, bytes, "redundancy %u x %llu parity groups x %s", o->redundancy,
			 (unsigned long long) groups, size);
}

void
sb_policy_backup_memory(const SbBackupOptions *o, SbMemoryEstimate *e)
{
	uint64_t	chunk = o->chunk_size ? o->chunk_size : SB_DEFAULT_CHUNK_SIZE;
	uint32_t	buffers = o->buffer_count ? o->buffer_count : SB_DEFAULT_BUFFER_COUNT;
	uint32_t	depth = o->queue_depth ? o->queue_depth : SB_DEFAULT_QUEUE_DEPTH;
	uint32_t	workers = o->workers ? o->workers : sb_cpu_count();
	bool		compressed = o->codec != SB_CODEC_NONE;
	char		size[32];
	char		level[32];

	memset(e, 0, sizeof(*e));
	format_size(chunk, size, sizeof(size));
	/* As alloc_chunks (backup.c): a raw buffer, and with compression one for the output. */
	e->buffers = buffers * (chunk + (compressed ? sb_codec_bound(o->codec, chunk) : 0) +
							(o->encryption_key ? chunk + SB_CRYPTO_OVERHEAD : 0));
	add_term(e, e->buffers, "buffer_count %u x transfer_size %s%s%s", buffers, size,
			 compressed ? " (x2 with compression)" : "", o->encryption_key ? " (+1 encrypted)" : "");
	/* As sb_source_reader_new: queue_depth blocks of a chunk each; and a folder's small files. */
	e->read_ahead = depth * chunk + SB_PREFETCH_SLOTS * SB_PREFETCH_FILE_BYTES;
	add_term(e, depth * chunk, "read-ahead queue_depth %u x %s", depth, size);
	add_term(e, SB_PREFETCH_SLOTS * SB_PREFETCH_FILE_BYTES, "small files read ahead %d x %d kB",
			 SB_PREFETCH_SLOTS, SB_PREFETCH_FILE_BYTES / 1024);
	add_lanes(e, o, depth * chunk);
	snprintf(level, sizeof(level), "zstd level %d", o->level);
	add_contexts(e, workers, sb_codec_compress_memory(o->codec, o->level, chunk), level);
	add_upload_parts(e, o);
	add_parity(e, o, buffers);
	/* Each writer keeps an index entry per chunk until the stripe is finished. */
	e->index = (o->expected_bytes + chunk - 1) / chunk * SB_INDEX_ENTRY_SIZE;
	if (e->index > 0)
		add_term(e, e->index, "index of %llu chunks x %d bytes",
				 (unsigned long long) ((o->expected_bytes + chunk - 1) / chunk), SB_INDEX_ENTRY_SIZE);
}

void
sb_policy_read_memory(const SbManifest *m, const SbReadOptions *o, SbMemoryEstimate *e)
{
	uint64_t	chunk = m->chunk_size;
	uint32_t	buffers = o->buffer_count ? o->buffer_count : SB_DEFAULT_READ_BUFFERS;
	uint32_t	workers = o->workers ? o->workers : sb_cpu_count();
	bool		compressed = m->codec != SB_CODEC_NONE;
	bool		sealed = m->encrypted;
	uint32_t	window = o->window_files ? o->window_files : SB_WINDOW_FILES;
	char		size[32];

	memset(e, 0, sizeof(*e));
	format_size(chunk, size, sizeof(size));
	/* As alloc_slots (read_pipeline.c): a record as stored, room to unseal and to decompress it. */
	e->buffers = buffers * (chunk + SB_CHUNK_HEADER_SIZE + (compressed ? chunk : 0) +
							(sealed ? chunk + SB_CRYPTO_OVERHEAD : 0));
	add_term(e, e->buffers, "buffer_count %u x the backup's chunk size %s%s%s", buffers, size,
			 compressed ? " (x2 with compression)" : "", sealed ? " (+1 encrypted)" : "");
	add_contexts(e, workers, sb_codec_decompress_memory(m->codec), "zstd decompression");
	/* Every stripe reader loads its index at once: as stored, and decoded. */
	e->index = m->total_chunks * 2 * SB_INDEX_ENTRY_SIZE;
	if (e->index > 0)
		add_term(e, e->index, "index of %llu chunks x %d bytes",
				 (unsigned long long) m->total_chunks, 2 * SB_INDEX_ENTRY_SIZE);
	/*
	 * Read a window of files at a time (entry_window.h), or with the whole
	 * table (counted as read).  A manifest read for its members alone is
	 * checked before a reader that will most often stream it (stripe_restore()
	 * before its worker): counted as streamed, so that what the check passes
	 * the reader never refuses.
	 */
	if (m->streamed != NULL || m->head_only)
		add_term(e, (uint64_t) window * WINDOW_FILE_BYTES, "a window of %u files x %d bytes", window,
				 WINDOW_FILE_BYTES);
}

bool
sb_policy_check_memory(const SbMemoryEstimate *e, uint64_t max_memory, SbError *err)
{
	uint64_t	limit = max_memory ? max_memory : SB_DEFAULT_MAX_MEMORY;
	char		total[32];
	char		allowed[32];

	if (e->total <= limit)
		return true;
	format_size(e->total, total, sizeof(total));
	format_size(limit, allowed, sizeof(allowed));
	return sb_error_set(err, SB_EINVAL,
						"%s = %s of memory, above the %slimit of %s (stripebackup.max_memory, or --max-memory for the command)",
						e->breakdown, total, max_memory ? "" : "default ", allowed);
}

bool
sb_policy_check_backup_memory(const SbBackupOptions *o, SbError *err)
{
	SbMemoryEstimate e;

	sb_policy_backup_memory(o, &e);
	return sb_policy_check_memory(&e, o->max_memory, err);
}

bool
sb_policy_check_read_memory(const SbManifest *m, const SbReadOptions *o, SbError *err)
{
	SbMemoryEstimate e;

	sb_policy_read_memory(m, o, &e);
	return sb_policy_check_memory(&e, o->max_memory, err);
}

/* Does any destination of O take its segments whole (no durable rename: a bucket)? */
static bool
wal_to_bucket(const SbWalArchiveOptions *o)
{
	uint32_t	i;

	for (i = 0; i < o->ndestinations; i++)
		if (o->destinations[i] != NULL &&
			!(sb_store_features_of(o->destinations[i]) & SB_STORE_DURABLE_RENAME))
			return true;
	return false;
}

void
sb_policy_wal_memory(const SbWalArchiveOptions *o, SbMemoryEstimate *e)
{
	uint32_t	segment = sb_wal_segment_size_of(o->segment_size);
	uint32_t	piece = sb_wal_piece_size(segment);
	uint32_t	workers = o->workers ? o->workers : sb_cpu_count();
	char		size[32];
	char		level[80];

	memset(e, 0, sizeof(*e));
	format_size(piece, size, sizeof(size));
	/* As sb_wal_worker_init: a piece read, and a piece compressed; sealing, a piece sealed. */
	e->buffers = (uint64_t) workers * (o->encryption_key ? 3 : 2) * piece;
	add_term(e, e->buffers, "WAL workers %u x %d pieces of %s", workers, o->encryption_key ? 3 : 2, size);
	format_size(segment, size, sizeof(size));
	if (wal_to_bucket(o))
	{
		/* As wal_file.c's write to a bucket: the object is made whole in memory, then put. */
		e->uploads = (uint64_t) workers * (segment + 2 * (uint64_t) piece);
		add_term(e, e->uploads, "WAL workers %u x a segment of %s made for a bucket", workers, size);
	}
	snprintf(level, sizeof(level), "zstd level %d for segments of %s", o->level, size);
	if (o->codec == SB_CODEC_ZSTD)
		add_contexts(e, workers, sb_codec_stream_compress_memory(o->level, segment), level);
}

bool
sb_policy_check_wal_memory(const SbWalArchiveOptions *o, SbError *err)
{
	SbMemoryEstimate e;

	sb_policy_wal_memory(o, &e);
	return sb_policy_check_memory(&e, o->max_memory, err);
}
