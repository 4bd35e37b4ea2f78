/*
 * backup_internal.h
 *		State shared by the parts of the backup pipeline:
 *
 *		caller's thread (backup_source.c), and with source lanes one reader
 *		thread per source device (backup_lanes.c): read files into chunk
 *		buffers, each file at the place it claimed in the stream
 *		(backup_stream.c)
 *		  -> seal queue -> compression workers (backup_threads.c)
 *		  -> ready queue (adaptive: shared; weighted: one per stripe)
 *		  -> one writer thread per destination (backup_threads.c)
 *		  -> free queue -> caller's thread again.
 *
 * The buffers (SbChunk) are allocated once: memory is buffer_count chunks
 * whatever the size of the source.
 */
#ifndef SB_BACKUP_INTERNAL_H
#define SB_BACKUP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "stripebackup/sb_backup.h"
#include "stripebackup/sb_s3.h"
#include "format/codec.h"
#include "crypto/crypto.h"
#include "format/format.h"
#include "util/io.h"
#include "backup/backup_lanes.h"
#include "backup/backup_prefetch.h"
#include "manifest/entry_lookup.h"
#include "util/queue.h"
#include "util/rate.h"
#include "backup/parity_writer.h"
#include "backup/scheduler.h"
#include "util/ticker.h"
#include "backup/timeline.h"

/* One buffer travelling through the pipeline. */
typedef struct SbChunk
{
	uint64_t	id;
	uint32_t	stripe;			/* 0-based; chosen at creation in weighted mode */
	uint32_t	raw_len;
	uint32_t	stored_len;
	SbCodec		codec;			/* as stored: NONE when compression did not help */
	uint64_t	raw_hash;
	uint64_t	stored_hash;
	uint8_t    *raw;			/* chunk_size bytes */
	uint8_t    *compressed;		/* sb_codec_bound bytes, or NULL */
	const uint8_t *payload;		/* what is written: raw, compressed or sealed */
	uint8_t    *sealed;			/* an encrypted backup's: the payload sealed */
	uint8_t		cipher;			/* SB_CIPHER_*, as stored */
	uint8_t		kind;			/* SB_CHUNK_KIND_*: a parity record's buffer is its
								 * group's (parity_writer.c), never in the free queue */
	struct SbParityGroup *parity_group;	/* a parity record's group */
	/* while its stripe writer writes it */
	uint8_t		header[SB_CHUNK_HEADER_SIZE];
	SbIoOp		op;
	bool		written;		/* its write completed */
} SbChunk;

typedef struct SbStripeWriter
{
	struct SbBackup *backup;
	uint32_t	index;			/* 0-based */
	char	   *folder;			/* destination/name, for messages */
	char	   *path;			/* folder/stripe-N.sbs, for messages */
	char		file_name[32];	/* stripe-N.sbs */
	struct SbStore *dest;		/* the destination, opened once at the start */
	struct SbStore *folder_store;	/* the backup folder in it, never through a link */
	unsigned	features;		/* the destination's (store/store.h) */
	bool		created_folder;
	struct SbStoreWriter *stripe;	/* the stripe file being made */
	int			fd;				/* its descriptor (SB_STORE_DESCRIPTORS), else -1 */
	bool		put_manifest;	/* a manifest object was (maybe) put */
	uint64_t	offset;			/* where the next chunk goes */
	SbIndexEntry *entries;		/* the index, in file order */
	size_t		nentries;
	size_t		entries_cap;
	uint64_t	index_offset;	/* where the index was written */
	uint64_t	index_hash;		/* its XXH3-64, for the trailer */
	SbQueue		queue;			/* weighted mode: chunks for this stripe */
	pthread_t	thread;
	bool		started;
	/* writes in flight, oldest first: the file is complete up to the first */
	SbChunk   **in_flight;
	uint32_t	in_flight_head;
	_Atomic uint32_t in_flight_count;	/* read by progress on other threads */
	uint64_t	durable_offset; /* written back and dropped from the cache */
	SbRate		rate;
	_Atomic uint64_t busy_since_usec;	/* when writes went from none to some
										 * (monotonic us); 0 while none are: read
										 * by progress, to count the busy period
										 * under way */
	double		finished_at;	/* when its last write completed */
	SbTimeline	timeline;		/* its stored bytes over time, for the manifest */
	_Atomic uint64_t chunks;
	_Atomic uint64_t raw_bytes;
	_Atomic uint64_t stored_bytes;
	_Atomic uint64_t busy_usec;
	_Atomic uint64_t parity_chunks;	/* parity records written, and their bytes */
	_Atomic uint64_t parity_bytes;
} SbStripeWriter;

/* A chunk being filled (backup_stream.c): its buffer, and how many of its bytes are in. */
typedef struct SbOpenChunk
{
	SbChunk    *chunk;
	uint32_t	filled;
} SbOpenChunk;

/*
 * An entry that took its place while lanes read, waiting until every entry
 * placed before it is in the manifest (it owns its strings and extents).
 */
typedef struct SbPendingEntry
{
	SbEntry		entry;
	bool		done;			/* read whole: its CRC is set */
} SbPendingEntry;

/* Who reads a file into the stream: its read-ahead reader and read hook argument. */
typedef struct SbFiller
{
	struct SbSourceReader *reader;
	void	   *hook_arg;
	bool		caller;			/* the caller's thread: it ticks, and lets
								 * entries through while it waits */
} SbFiller;

struct SbLane;

struct SbBackup
{
	SbManifest *manifest;		/* manifest->cipher: an encrypted backup's keys */
	uint8_t		wrapped_key[SB_CRYPTO_WRAPPED_LEN];	/* its data key, as the envelope keeps it */
	SbCodec		codec;
	int			level;
	SbBalance	balance;
	struct SbParityWriter *parity;	/* with redundancy: chunks placed by its
									 * layout, parity records made; else NULL */
	uint32_t	chunk_size;
	uint32_t	frame_size;		/* of the zstd frames of a compressed chunk */
	bool		detect_holes;
	bool		file_stamps;
	bool		direct_io;
	SbIoMethod	io_method;
	uint32_t	queue_depth;
	SbBackupHooks hooks;		/* the caller's, as given */
	SbTicker	ticker;
	double		started;

	SbStripeWriter writers[SB_MAX_STRIPES];
	uint32_t	nstripes;
	SbWeightedSchedule schedule;

	SbChunk    *chunks;
	uint32_t	nchunks;
	SbQueue		free_queue;
	SbQueue		seal_queue;
	SbQueue		ready_queue;	/* adaptive mode */

	pthread_t  *workers;
	uint32_t	nworkers;
	uint32_t	workers_started;

	SbFiller	caller_filler;	/* its reader reads the files ahead on the caller's thread */
	struct SbPrefetch *prefetch;	/* opens a directory's files ahead; NULL until used */

	/* The stream (backup_stream.c), under stream_mutex: */
	pthread_mutex_t stream_mutex;
	pthread_cond_t stream_changed;	/* a chunk or an entry moved on, a lane has room, or a failure */
	uint64_t	cursor;			/* stream bytes placed */
	uint64_t	total_chunks;	/* at the end */
	SbOpenChunk *open;			/* chunks being filled (at most nchunks) */
	uint32_t	nopen;
	SbPendingEntry **pending;	/* ring, in the stream's order */
	size_t		pending_cap;
	size_t		pending_head;
	size_t		npending;

	/* Source lanes (backup_lanes.c): */
	uint32_t	max_lanes;		/* 0: every file read on the caller's thread */
	struct SbLane *lanes;		/* max_lanes of them, nlanes started */
	uint32_t	nlanes;			/* set on the caller's thread only */
	_Atomic uint64_t files_vanished;	/* gone before their lane opened them */

	pthread_mutex_t failure_mutex;
	atomic_bool failed;
	SbError		failure;		/* the first error of any thread */

	_Atomic uint64_t raw_bytes_done;
	_Atomic uint64_t files_done;

	/* With a parent (backup_incremental.c): */
	const SbManifest *parent;
	SbEntryLookup *parent_files;	/* the parent's entries by path */
	SbEntry		parent_entry;	/* the one found last */
	uint32_t	block_size;
	int64_t		parent_started; /* the parent's start, seconds since the epoch */
	_Atomic uint64_t bytes_skipped;	/* unchanged blocks not stored */
};

/* How a backup with a parent stores a file. */
typedef enum SbFilePlan
{
	SB_FILE_WHOLE,				/* all of it */
	SB_FILE_BLOCKS,				/* the blocks changed since the parent */
	SB_FILE_UNCHANGED			/* nothing: the parent's, unread */
} SbFilePlan;

/* Record the parent in the manifest and index its files by path. */
extern bool sb_incremental_begin(SbBackup *b, const SbBackupOptions *o, SbError *err);
extern void sb_incremental_free(SbBackup *b);

/*
 * How to store the file E describes (path, size, identity, times) into
 * *PLAN, and the parent's entry of it (*BASE, valid until the next call)
 * when not whole.  False if the parent's entries could not be read.
 */
extern bool sb_incremental_plan(SbBackup *b, const SbEntry *e, SbFilePlan *plan,
								const SbEntry **base, SbError *err);

/* ---- source files (backup_source.c) ---- */

/* What a file's entry and its reading need of its status, as statx gave it. */
typedef struct SbSourceStatus
{
	struct statx stx;			/* with the file's stamps when they are kept */
	uint32_t	mode;
	uint64_t	size;
	uint64_t	allocated;		/* bytes of blocks allocated */
	int64_t		mtime;
	uint8_t    *data;			/* all SIZE bytes, when read already; else NULL */
} SbSourceStatus;

/*
 * Open NAME in the directory open at DIRFD (SOURCE_PATH in messages) for
 * reading and take its status with MASK (STATX_*) in one statx: the
 * descriptor, or -1 (ERR: SB_ENOTFOUND if it is gone, SB_EINVAL if it is no
 * regular file).  Safe on any thread.
 */
extern int	sb_source_open(int dirfd, const char *name, const char *source_path, unsigned int mask,
						   SbSourceStatus *st, SbError *err);

/* The statx mask a backup examines its files with. */
extern unsigned int sb_source_statx_mask(const SbBackup *b);

/* Can a file of ALLOCATED bytes of blocks and SIZE bytes have holes? */
extern bool sb_source_may_have_holes(uint64_t allocated, uint64_t size);

/*
 * The byte ranges to read of E when the caller named the BLOCKS that changed
 * since BASE, the parent's file (SbChangedBlocks): malloc'd, in order.
 */
extern bool sb_source_named_ranges(const SbBackup *b, const SbEntry *e, const SbEntry *base,
								   const uint32_t *blocks, uint32_t nblocks, SbExtent **ranges,
								   uint32_t *nranges, SbError *err);

/* Record the file open at FD (of status ST) as PATH, and copy what its plan says. */
extern bool sb_backup_add_open_file(SbBackup *b, const char *path, const char *source_path, int fd,
									const SbSourceStatus *st, SbError *err);

/*
 * PATH's entry (E; ID and TIMES, LEN bytes each, hold its stamps) from its
 * status ST, or with LIKE's mode, time and stamps.
 */
extern void sb_source_entry(SbBackup *b, const char *path, const SbSourceStatus *st,
							const SbEntry *like, SbEntry *e, char *id, char *times, size_t len);

/* Find E's holes in FD (when the backup looks for them): E's extents and stream length. */
extern bool sb_source_examine(SbBackup *b, int fd, const char *what, const SbSourceStatus *st,
							  SbEntry *e, SbError *err);

/* Read E (whole or sparse) from FD through F into its place in the stream; E's CRC. */
extern bool sb_source_stream_placed(SbBackup *b, const SbFiller *f, int fd, const char *what,
									SbEntry *e, SbError *err);

/* Add E to the manifest (and the entry hook); the caller's thread only. */
extern bool sb_backup_record_entry(SbBackup *b, const SbEntry *e, SbError *err);

/* ---- the stream (backup_stream.c) ---- */

extern bool sb_stream_init(SbBackup *b, SbError *err);
extern void sb_stream_free(SbBackup *b);

/* The error that stopped the backup into ERR; false. */
extern bool sb_stream_failure(SbBackup *b, SbError *err);

/* The caller's tick, when due; false (ERR) when it says stop. */
extern bool sb_stream_tick(SbBackup *b, SbError *err);

/* Wake every thread waiting on the stream. */
extern void sb_stream_wake(SbBackup *b);

/* LEN bytes of the stream from the next free place: where they start. */
extern uint64_t sb_stream_claim(SbBackup *b, uint64_t len);

/*
 * E's place: its stream_offset, E->stream_length bytes for a file, and
 * while lanes read (or on a lane: CALLER false) its place in line, *P, which
 * sb_stream_done marks complete; *P NULL: record E when it is complete.
 */
extern bool sb_stream_place(SbBackup *b, SbEntry *e, bool caller, SbPendingEntry **p,
							SbError *err);

/* Put LEN bytes of DATA at PLACE (placed, by this thread alone); CALLER: on the caller's thread. */
extern bool sb_stream_put(SbBackup *b, uint64_t place, const uint8_t *data, size_t len,
						  bool caller, SbError *err);

/* After every file is in: the last chunk, short, goes on; b->total_chunks. */
extern bool sb_stream_finish(SbBackup *b, SbError *err);

/* A copy of E to wait in line; NULL if out of memory (ERR). */
extern SbPendingEntry *sb_pending_new(const SbEntry *e, SbError *err);

/* P is complete. */
extern void sb_stream_done(SbBackup *b, SbPendingEntry *p);

/* Add the entries first in line that are complete (the caller's thread). */
extern bool sb_stream_flush(SbBackup *b, SbError *err);

/* Until UNTIL(b, ARG) (called with the stream mutex held), flushing and ticking: the caller's thread. */
typedef bool (*SbStreamUntil) (SbBackup *b, void *arg);
extern bool sb_stream_wait(SbBackup *b, SbStreamUntil until, void *arg, SbError *err);

/* ---- source lanes (backup_lanes.c) ---- */

/* The lanes the options allow (sb_lanes_allowed), none started yet. */
extern bool sb_lanes_init(SbBackup *b, const SbBackupOptions *o, SbError *err);

/* Is the file of status ST one for a lane (a large file of a backup with lanes, no parent)? */
extern bool sb_lanes_take(const SbBackup *b, const SbSourceStatus *st);

/* Give the file to its device's lane (starting it), waiting for room. */
extern bool sb_lanes_hand_over(SbBackup *b, const char *path, const char *source_path,
							   const SbSourceStatus *st, SbError *err);

/* Stop the lanes (the backup failed) and free them. */
extern void sb_lanes_free(SbBackup *b);

/* ---- destinations (backup_dest.c) ---- */

/* Destinations: 1 to SB_MAX_STRIPES, each usable, distinct, none inside another. */
extern bool sb_backup_check_destinations(const SbBackupOptions *o, SbError *err);

/* Open every destination, and create the backup folder and its stripe (header written) in each. */
extern bool sb_backup_create_destinations(SbBackup *b, const SbBackupOptions *o, SbError *err);

/* Append LEN bytes of BUF to W's stripe, synchronously, at W->offset. */
extern bool sb_stripe_sink_write(SbStripeWriter *w, const void *buf, size_t len, SbError *err);

/* Make what W's stripe holds durable (object storage: every full part stored). */
extern bool sb_stripe_sink_sync(SbStripeWriter *w, SbError *err);

/* The stripe is complete: durable (a file), made (an object). */
extern bool sb_stripe_sink_seal(SbStripeWriter *w, SbError *err);

/* The I/O context W's writer thread writes chunk records with. */
extern SbIo *sb_stripe_sink_io(SbStripeWriter *w, SbError *err);

/*
 * The SHA-256 and length of manifest.json's text as it is emitted (the
 * manifest, or an encrypted backup's envelope), which every trailer
 * records, into b->manifest (backup_manifest.c).
 */
extern bool sb_backup_digest_manifest(SbBackup *b, SbError *err);

/*
 * The same text emitted again, written to every destination's
 * manifest.json at once, and checked to hash as the trailers say.
 */
extern bool sb_backup_publish_manifest(SbBackup *b, SbError *err);

/* Remove what the backup created in W's destination (quiet: cleanup goes on). */
extern void sb_backup_remove_created(SbBackup *b, SbStripeWriter *w);

/* Close W's descriptors, free its upload. */
extern void sb_stripe_sink_close(SbStripeWriter *w);

/*
 * Does each stripe writer take its chunks from a queue of its own (weighted
 * balance, or redundancy: a chunk's stripe is known when it is made)?
 */
static inline bool
sb_backup_stripe_queues(const SbBackup *b)
{
	return b->balance == SB_BALANCE_WEIGHTED || b->parity != NULL;
}

/* Record the first failure of any thread and stop every queue. */
extern void sb_backup_fail(SbBackup *b, const SbError *err);

/* The thread of one stripe writer (ARG: its SbStripeWriter). */
extern void *sb_stripe_writer_main(void *arg);

/* Start the compression workers and the stripe writers. */
extern bool sb_backup_start_threads(SbBackup *b, SbError *err);

/* Close the queues in pipeline order and wait for every thread. */
extern void sb_backup_join_threads(SbBackup *b);

/* Stop every queue so threads exit, and wait for them. */
extern void sb_backup_stop_threads(SbBackup *b);


#endif							/* SB_BACKUP_INTERNAL_H */
