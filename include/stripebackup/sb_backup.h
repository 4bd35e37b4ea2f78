/*
 * sb_backup.h
 *		Writing a weighted-stripe archive.
 *
 *		b = sb_backup_begin(&options, &err);
 *		sb_backup_add_dir / add_file / add_data / add_symlink ... (in archive order)
 *		sb_backup_finish(b, &manifest, &err);	-- or sb_backup_abort(b)
 *
 * The calling thread reads the source files; compression workers and one
 * writer thread per destination run inside the engine.  The caller's tick
 * function runs on the calling thread at least every 100 ms while the engine
 * works, so a caller can report progress and ask to stop.
 */
#ifndef SB_BACKUP_H
#define SB_BACKUP_H

#include <stdint.h>
#include <sys/stat.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_progress.h"
#include "stripebackup/sb_s3.h"

#define SB_DEFAULT_CHUNK_SIZE (1024 * 1024)
#define SB_DEFAULT_BUFFER_COUNT 16
/* Destinations a backup's redundancy may let be lost, at most (docs/FORMAT.md section 10). */
#define SB_MAX_REDUNDANCY 8
#define SB_DEFAULT_QUEUE_DEPTH 4
#define SB_MAX_SOURCE_LANES 4

/*
 * Sees every block of file data as it is read, in file order, on the
 * caller's thread (with source lanes: on each lane's thread too, with that
 * lane's argument, each file's blocks on one thread, files of two lanes at
 * once): FILE_OFFSET and LEN locate DATA in the file being read from FD
 * (which the hook may read again, as a page checksum check does to tell a
 * torn read from corruption).  PATH is the file's archive path.  Return
 * false with ERR set to fail the backup.
 */
typedef bool (*SbReadHook) (void *arg, const char *path, int fd, uint64_t file_offset,
							const uint8_t *data, size_t len, SbError *err);

/*
 * Sees every entry as the backup records it, on the caller's thread, after
 * it was checked and added to the manifest: for a caller that keeps its own
 * list of the files (PostgreSQL's backup_manifest) without the engine
 * keeping a table of them.  Return false with ERR set to fail the backup.
 */
typedef bool (*SbEntryHook) (void *arg, const SbEntry *e, SbError *err);

/*
 * A backup with a parent stores, of the files the parent has (the same
 * path and identity), only the blocks that changed.  The caller says which
 * files are made of such blocks (for PostgreSQL: the main fork of a
 * relation) and whether a block changed since the parent (its page LSN);
 * blocks past the end of the parent's file are new and always stored.
 * Called on the backup's thread, in file order.
 */
typedef bool (*SbFileFilter) (void *arg, const char *path);
typedef bool (*SbBlockFilter) (void *arg, const char *path, int fd, uint64_t file_offset,
							   const uint8_t *block);

/*
 * For a file the file filter accepted, of SIZE bytes now, the blocks that
 * may have changed since the parent when the caller knows them without
 * reading the file (PostgreSQL 17's WAL summaries): true with *BLOCKS, the
 * NBLOCKS numbers of those blocks of the file (ascending, no repeats; valid
 * until the next call), which are read and stored whole, and no other block
 * before the parent's end is read (it is the parent's); blocks past the
 * parent's end, and a partial last block, are read and stored as always.
 * False when the caller cannot tell: every block goes to the block filter.
 * Called on the backup's thread, in file order.
 */
typedef bool (*SbChangedBlocks) (void *arg, const char *path, uint64_t size,
								 const uint32_t **blocks, uint32_t *nblocks);

/*
 * The caller's functions a backup calls, each NULL or called with its own
 * argument: what it is told (progress, data read, entries recorded) and,
 * for a backup with a parent, what it decides (which files and blocks to
 * store).
 */
typedef struct SbBackupHooks
{
	SbTickFn	tick;
	void	   *tick_arg;
	SbReadHook	read;
	void	   *read_arg;
	void	   *read_lane_args[SB_MAX_SOURCE_LANES];	/* the read hook's
														 * argument on each
														 * source lane */
	SbEntryHook entry;
	void	   *entry_arg;

	/* A backup with a parent (type not full): */
	SbFileFilter file_filter;
	SbBlockFilter block_filter;

	/*
	 * Files SKIP_FILTER accepts are taken from the parent unread when their
	 * identity, size and times are the parent's, and their modification is
	 * older than the parent's start by two seconds (so that no write after
	 * the parent looked at them can have left the same time).  The caller
	 * must be sure every change made before this backup is on disk, as a
	 * checkpoint makes it, and says NULL when it cannot trust the times (a
	 * timeline switch since the parent).
	 */
	SbFileFilter skip_filter;
	void	   *filter_arg;		/* the three filters' argument */

	/* NULL, or which blocks changed, without reading them */
	SbChangedBlocks changed_blocks;
	void	   *changed_blocks_arg;
} SbBackupHooks;

typedef struct SbBackupOptions
{
	const char *const *destinations;	/* absolute, existing folders */
	uint32_t	ndestinations;
	const SbS3Settings *s3;		/* how s3:// destinations are reached (the stores
								 * opened keep them); NULL: the environment */
	const double *weights;		/* one per destination, > 0; NULL = equal */
	const char *name;			/* backup folder name in every destination */
	const char *label;			/* free text, may be NULL */
	const char *tool;			/* "stripebackup 0.1.0"; recorded in the manifest */
	SbCodec		codec;
	int			level;			/* zstd level, negative levels allowed */
	SbBalance	balance;
	uint32_t	chunk_size;		/* 0 = SB_DEFAULT_CHUNK_SIZE */
	uint32_t	frame_size;		/* raw bytes of each zstd frame of a chunk
								 * (docs/FORMAT.md 3.2): a multiple of 4096,
								 * 16384 or more; 0 = 64 kB.  Smaller: a delta
								 * restore reads less; larger: less stored */
	uint32_t	buffer_count;	/* 0 = SB_DEFAULT_BUFFER_COUNT */
	uint32_t	workers;		/* compression workers; 0 = number of CPUs */
	bool		detect_holes;	/* store sparse files' holes as holes */
	const char *metadata_json;	/* a JSON object kept in the manifest, or NULL */
	SbBackupHooks hooks;		/* what the caller is told, and decides */

	/*
	 * Source lanes: read the large files (over 64 kB) of up to this many
	 * source devices at once, a reader thread a device, each device's files
	 * in the order given (at least 2, at most SB_MAX_SOURCE_LANES; else
	 * every file is read on the caller's thread).  A lane opens the file
	 * again by its SOURCE_PATH, from the working directory, so that the
	 * caller may go on: a file gone by then is left out, counted by
	 * sb_backup_files_vanished.  Not with a parent (an incremental file's
	 * length is known only once read).  With a read hook, lane i calls it
	 * with hooks.read_lane_args[i]; lanes without one are not used.
	 */
	uint32_t	source_lanes;

	SbIoMethod	io_method;		/* SB_IO_AUTO: io_uring when the kernel allows */
	uint32_t	queue_depth;	/* reads or writes in flight per file; 0 = default */
	bool		direct_io;		/* read uncached source blocks with O_DIRECT
								 * and keep the stripes out of the page cache */
	const double *max_rates;	/* MB/s per destination, 0 = no limit; or NULL */
	uint64_t	max_memory;		/* bytes the settings may allocate; 0 = 1 GB (sb_policy.h) */
	const char *spill_dir;		/* keep the manifest's entries in an unlinked file
								 * there, not in memory (sb_manifest_spill); NULL:
								 * in memory, the manifest sb_backup_finish gives
								 * then lists them */
	uint64_t	expected_bytes; /* source bytes expected, for the memory check's
								 * index estimate; 0 = unknown */
	uint8_t		uuid[16];		/* the backup's id; all zero: a random one is made */
	const char *started_at;		/* ISO 8601 UTC; NULL = now.  A merge keeps its
								 * source's: a child's unchanged-file check
								 * judges file times against it */
	bool		file_stamps;	/* record each file's identity and times, so
								 * that this backup can be a parent (always
								 * with a parent) */
	const SbKey *encryption_key;	/* the user's key (sb_crypto.h): chunks and
									 * manifest sealed under keys it wraps;
									 * NULL: in the clear */
	uint32_t	redundancy;		/* any this many destinations may be lost
								 * (docs/FORMAT.md section 10): 1 to 8, fewer
								 * than the destinations; 0: none.  Chunks then
								 * go to the stripes by count, whatever the
								 * balance and weights */

	/* A differential or incremental backup (type not full): */
	SbBackupType type;
	SbManifest *parent;			/* its parent, opened by sb_archive_open or,
								 * its entries left in a file,
								 * SB_KEEP_LOOKUP (the backup reads
								 * that file) */
	uint32_t	block_size;		/* what the block filter judges; divides chunk_size */
} SbBackupOptions;

typedef struct SbBackup SbBackup;

/* Check the options as sb_backup_begin does, creating nothing. */
extern bool sb_backup_check_options(const SbBackupOptions *options, SbError *err);

/*
 * Check the options, open each destination (once: everything the backup
 * writes or removes later goes through that descriptor, whatever its path
 * points to by then), create the backup folders and stripe files, start
 * the threads.
 */
extern SbBackup *sb_backup_begin(const SbBackupOptions *options, SbError *err);

/* Add a directory entry; MODE is kept within SB_ALLOWED_MODE_BITS. */
extern bool sb_backup_add_dir(SbBackup *b, const char *path, uint32_t mode,
							  int64_t mtime, SbError *err);

/*
 * Add a symbolic link entry: only a tablespace link, "pg_tblspc/<oid>" to an
 * absolute TARGET (sb_link_is_allowed); anything else is SB_EINVAL.
 */
extern bool sb_backup_add_symlink(SbBackup *b, const char *path, const char *target,
								  int64_t mtime, SbError *err);

/*
 * Add a regular file read from SOURCE_PATH, up to the size it has when opened
 * (zero-padded if it shrinks meanwhile).  If the file no longer exists the
 * error code is SB_ENOTFOUND and nothing was added.
 */
extern bool sb_backup_add_file(SbBackup *b, const char *path, const char *source_path,
							   SbError *err);

/*
 * The same, the source file opened as NAME in the directory open at DIRFD
 * (AT_FDCWD: NAME from the working directory); SOURCE_PATH names it in
 * messages.  A walk that holds each directory open saves a lookup of every
 * folder on the way for each file, which a tree of many small files feels.
 */
extern bool sb_backup_add_file_at(SbBackup *b, const char *path, int dirfd, const char *name,
								  const char *source_path, SbError *err);

/* One file of a directory, for sb_backup_add_files_at. */
typedef struct SbFileAt
{
	const char *path;			/* its path in the archive */
	const char *name;			/* its name in the directory */
	const char *source_path;	/* its name in messages */
	bool		gone;			/* set when it was gone when opened: not added */
} SbFileAt;

/*
 * Add the N files of the directory open at DIRFD, in the order given, each
 * as sb_backup_add_file_at would, but several opened, examined and (small
 * ones) read at once by helper threads: a tree of many small files is
 * otherwise a few system calls a file, one after the other.  DIRFD need
 * stay open only while this runs.  A file gone when opened is marked GONE
 * and skipped (the caller decides whether that is an error); any other
 * failure stops the run there (the files before it are added, the rest not),
 * as a failed sb_backup_add_file_at would.
 */
extern bool sb_backup_add_files_at(SbBackup *b, int dirfd, SbFileAt *files, uint32_t n,
								   SbError *err);

/*
 * Add a regular file read from SOURCE_PATH, recorded as LIKE (an entry of
 * another backup: a merge's copy of it) says: its mode, time, identity and
 * times.  Its size must be LIKE's, else SB_ECORRUPT.
 */
extern bool sb_backup_add_file_as(SbBackup *b, const SbEntry *like, const char *source_path,
								  SbError *err);

/*
 * Add a regular file whose content the caller has in memory.  Files' modes
 * (here MODE, in add_file the source's) are kept within SB_ALLOWED_MODE_BITS.
 */
extern bool sb_backup_add_data(SbBackup *b, const char *path, const void *data,
							   size_t len, uint32_t mode, int64_t mtime, SbError *err);

/*
 * Flush everything; write each stripe's index and sync it (in parallel);
 * serialize the manifest once; write each stripe's trailer, which records
 * the SHA-256 of those bytes, and sync it; then write those same bytes as
 * the manifest in every destination and sync it.  Consumes B whatever
 * happens: on failure the partial backup is removed.  On success *MANIFEST
 * (if not NULL) receives the manifest, which the caller frees.
 */
extern bool sb_backup_finish(SbBackup *b, SbManifest **manifest, SbError *err);

/* Stop, remove every file the backup created, and free it. */
extern void sb_backup_abort(SbBackup *b);

/* Replace the manifest's metadata (a JSON object), e.g. with what is known only at the end. */
extern bool sb_backup_set_metadata(SbBackup *b, const char *metadata_json, SbError *err);

/* A snapshot of the backup's progress; safe to call from any thread. */
extern void sb_backup_progress(SbBackup *b, SbProgress *progress);

/* The manifest being built (entries so far, the backup's uuid from the start); owned by B. */
extern const SbManifest *sb_backup_manifest(const SbBackup *b);

/*
 * Wait until every file added so far is read and in the manifest: with
 * source lanes a file may still be read after the call that added it
 * returned.  Call it before whatever must come after the files were read
 * (an online backup's end: pg_backup_stop); sb_backup_finish does.
 */
extern bool sb_backup_files_read(SbBackup *b, SbError *err);

/*
 * The source lanes for files under FOLDERS (N of them: a data directory,
 * its tablespaces, pg_wal): one a device they are on, at most
 * SB_MAX_SOURCE_LANES; 0 when they are all on one (or cannot be looked at).
 */
extern uint32_t sb_source_lanes_for(const char *const *folders, size_t n);

/* Files handed to a source lane that were gone when it opened them (left out), so far. */
extern uint64_t sb_backup_files_vanished(const SbBackup *b);

/*
 * The source lanes the backup reads with: the options' source_lanes, or
 * fewer (as the buffers allow: none below 8), or 0 (every file read on the
 * caller's thread).
 */
extern uint32_t sb_backup_source_lanes(const SbBackup *b);

#endif							/* SB_BACKUP_H */
