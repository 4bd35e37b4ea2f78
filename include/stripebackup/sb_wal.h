/*
 * sb_wal.h
 *		The WAL archive: PostgreSQL's WAL files kept in the destinations of
 *		a weighted-stripe archive, for point-in-time recovery.
 *
 * Every destination holds DEST/wal/<system identifier>/<name>.sbw, one file
 * per archived WAL file (docs/FORMAT.md, "The WAL archive").  A segment is
 * written to one destination, chosen by weight (to M + 1 distinct ones, each
 * chosen so, with redundancy M); a timeline history file and
 * a backup history file to every destination, since recovery asks for them
 * first and a lost one would hide whole timelines.
 *
 *		archive = sb_wal_archive_open(&options, &err);		-- once (the archiver's life)
 *		sb_wal_push_many(archive, files, n, results);		-- each batch of .ready files
 *		sb_wal_archive_close(archive);
 *
 *		sb_wal_get(&get_options, name, target_path, &result, &err);	-- restore_command
 *
 * A file is archived only once it is durable (written to a temporary file,
 * fsynced, renamed, its folder fsynced).  Pushing a file the archive already
 * holds with the same contents succeeds without writing; different contents
 * are refused.  An archive remembers the segments it made durable, so that
 * after a push ahead (segment N with the .ready segments after it) the
 * pushes of those that follow only check their files are untouched.
 * Readers check everything: the header's seal, version, system identifier
 * and name, both hashes and the CRC-32C, the exact length.
 *
 * With a key (the same key file as encrypted backups), every file is
 * sealed: its payload encrypted and authenticated with AES-256-GCM, its
 * header tagged, under keys derived for that file, its system identifier
 * and its name; a reader given the key refuses a file renamed, moved from
 * another cluster's archive, forged without the key, or in the clear.
 *
 * No PostgreSQL header is used: names are checked against PostgreSQL's
 * file-name forms here.  Threads run only inside the engine and block every
 * signal; results are values (SbError).
 */
#ifndef SB_WAL_H
#define SB_WAL_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_error.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_s3.h"

/* A file in the clear is format 1.0; a file sealed under a key, 2.0 (docs/FORMAT.md section 8). */
#define SB_WAL_FORMAT_MAJOR 1
#define SB_WAL_FORMAT_MINOR 0
#define SB_WAL_SEALED_MAJOR 2
#define SB_WAL_SEALED_MINOR 0
#define SB_WAL_FOLDER "wal"
#define SB_WAL_SUFFIX ".sbw"

/* The longest WAL file name: a backup history file, "<segment>.<8 hex>.backup". */
#define SB_WAL_NAME_MAX 40

/* PostgreSQL's WAL segment sizes: a power of two from 1 MB to 1 GB (16 MB unless initdb said otherwise). */
#define SB_WAL_MIN_SEGMENT_SIZE ((uint32_t) 1 << 20)
#define SB_WAL_MAX_SEGMENT_SIZE ((uint32_t) 1 << 30)
#define SB_WAL_DEFAULT_SEGMENT_SIZE ((uint32_t) 16 << 20)

/* Files are read, compressed and written in pieces of at most this: memory does not grow with the segment size. */
#define SB_WAL_PIECE_SIZE ((uint32_t) 4 << 20)

/* ---------- names ---------- */

typedef enum SbWalKind
{
	SB_WAL_SEGMENT,				/* 000000010000000A000000FF: timeline, log, segment */
	SB_WAL_PARTIAL,				/* a segment + ".partial": the last segment of a
								 * timeline that a promotion ended */
	SB_WAL_HISTORY,				/* 00000002.history: how timeline 2 branched */
	SB_WAL_BACKUP				/* <segment>.<8 hex>.backup: a backup's start and stop */
} SbWalKind;

typedef struct SbWalName
{
	SbWalKind	kind;
	uint32_t	timeline;
	uint32_t	log;			/* the segment's "log" field (segments, partials, backups) */
	uint32_t	seg;			/* its "seg" field */
} SbWalName;

/*
 * Is NAME one of PostgreSQL's WAL file names, exactly (upper-case hex, no
 * path, nothing more)?  SB_EINVAL naming it otherwise.
 */
extern bool sb_wal_name_parse(const char *name, SbWalName *parsed, SbError *err);

/* Is SIZE a WAL segment size PostgreSQL allows? */
extern bool sb_wal_segment_size_valid(uint64_t size);

/* The segment number of a parsed name (log and seg fields) for SEGMENT_SIZE. */
extern uint64_t sb_wal_segment_number(const SbWalName *name, uint32_t segment_size);

/* The name of segment SEGNO of TIMELINE, as PostgreSQL's XLogFileName writes it. */
extern void sb_wal_segment_name(uint32_t timeline, uint64_t segno, uint32_t segment_size,
								char out[SB_WAL_NAME_MAX + 1]);

/* ---------- pushing ---------- */

typedef struct SbWalArchiveOptions
{
	const char *const *destinations;	/* absolute, existing folders */
	uint32_t	ndestinations;	/* 1 to SB_MAX_STRIPES */
	const SbS3Settings *s3;		/* how s3:// destinations are reached (the stores
								 * opened keep them); NULL: the environment */
	uint64_t	system_identifier;	/* the cluster's: DEST/wal/<this in decimal> */
	const double *weights;		/* one per destination, > 0; NULL = equal */
	SbBalance	balance;		/* weighted: each segment to the destination furthest
								 * below its share of bytes; adaptive: to one with the
								 * fewest writes in progress, then by share */
	SbCodec		codec;
	int			level;			/* zstd level, negative levels allowed */
	uint32_t	workers;		/* files compressed and written at once; 0 = CPUs */
	uint32_t	segment_size;	/* the cluster's WAL segment size; 0 = 16 MB */
	uint64_t	max_memory;		/* bytes the settings may allocate; 0 = 1 GB (sb_policy.h) */
	const SbKey *encryption_key;	/* seal every file with it (copied); NULL: in the clear */
	uint32_t	redundancy;		/* M: each segment in M + 1 distinct destinations, and a
								 * destination that fails is done without while M + 1
								 * others take the file; below ndestinations.  0: one
								 * destination, and any failure fails the file */
} SbWalArchiveOptions;

typedef struct SbWalArchive SbWalArchive;

/* A file to archive: PostgreSQL's name for it (%f) and where it is (%p). */
typedef struct SbWalFile
{
	const char *name;
	const char *path;
} SbWalFile;

/* What became of one file pushed. */
typedef struct SbWalPushResult
{
	bool		archived;		/* durable in the archive: written now or already there */
	bool		already_archived;	/* identical copies were there: nothing written */
	bool		remembered;		/* this archive made it durable moments ago (a push
								 * ahead) and its file is untouched: not read again */
	uint32_t	written;		/* destinations written now (a damaged copy is rewritten) */
	int32_t		destination;	/* 0-based destination of a segment (the first, with
								 * redundancy); -1 for a file in every one */
	uint64_t	holders;		/* bit i: destination i holds a good copy now (not set
								 * when remembered) */
	uint64_t	skipped;		/* bit i: destination i failed and was done without
								 * (redundancy only) */
	SbError		skip_error;		/* when skipped: each such destination and why */
	uint64_t	raw_bytes;		/* the file's length */
	uint64_t	stored_bytes;	/* its payload as stored (per copy) */
	SbCodec		codec;			/* as stored: none when compression did not help */
	SbError		error;			/* when not archived */
} SbWalPushResult;

/* Check options as sb_wal_archive_open does, touching no file (for settings). */
extern bool sb_wal_archive_check_options(const SbWalArchiveOptions *options, SbError *err);

/*
 * Check the options (the memory they need against max_memory too), check
 * that every destination exists and that no two are one folder, and
 * allocate the workers' buffers.  Creates nothing: wal/<sysid>/ is created
 * in a destination by the first push to it.
 */
extern SbWalArchive *sb_wal_archive_open(const SbWalArchiveOptions *options, SbError *err);
extern void sb_wal_archive_close(SbWalArchive *archive);

/*
 * Archive FILES[0..N-1], up to the archive's workers at once, and say in
 * RESULTS[i] what became of each.  True when every file is archived.
 * Each call opens the destinations afresh: a destination missing (an
 * unmounted device) fails every file of the call, naming it (SB_ENOTFOUND),
 * since the file might be there; a full one fails the files it was to take
 * (SB_ENOSPC), leaving no partial file.  With redundancy M, a destination
 * that is missing or fails is done without (RESULTS[i].skipped, skip_error)
 * while M + 1 others hold the file; fewer fails it, naming both numbers.  A file that is already archived
 * with other contents fails with SB_EEXIST, saying what differs.  One
 * caller at a time per archive (the archiver process is one).
 */
extern bool sb_wal_push_many(SbWalArchive *archive, const SbWalFile *files, uint32_t n,
							 SbWalPushResult *results);

/* One file: sb_wal_push_many of one. */
extern bool sb_wal_push(SbWalArchive *archive, const char *name, const char *path,
						SbWalPushResult *result);

/* Bytes of segments each destination holds, as the weighted choice counts them (for tests and views). */
extern void sb_wal_archive_held_bytes(SbWalArchive *archive, uint64_t *bytes);

/* ---------- reading ---------- */

/*
 * Where an archive is: its destinations and the cluster, and the key its
 * files are sealed with.  With a key, only files sealed with it are read
 * (one in the clear is refused as damaged); without, only files in the
 * clear (a sealed one is SB_EKEY: its key is needed).
 */
typedef struct SbWalDests
{
	const char *const *paths;
	uint32_t	count;			/* 1 to SB_MAX_STRIPES */
	const SbS3Settings *s3;		/* how s3:// destinations are reached (the stores
								 * opened keep them); NULL: the environment */
	uint64_t	system_identifier;
	const SbKey *key;			/* NULL: an archive in the clear */
	uint32_t	redundancy;		/* M the archive was written with: a verify reports a
								 * segment in fewer than M + 1 destinations; 0: not checked */
} SbWalDests;

/* What the header of an archived file says. */
typedef struct SbWalInfo
{
	char		name[SB_WAL_NAME_MAX + 1];
	SbWalName	parsed;
	uint64_t	raw_bytes;
	uint64_t	stored_bytes;
	SbCodec		codec;
	int			level;
	uint64_t	raw_hash;		/* XXH3-64 of the file's bytes */
	uint32_t	crc32c;			/* CRC-32C of the file's bytes */
	int64_t		archived_at;	/* seconds since the epoch */
	bool		sealed;			/* encrypted and authenticated under the archive's key */
} SbWalInfo;

typedef struct SbWalFound
{
	SbWalInfo	info;
	uint32_t	destination;	/* 0-based: the first destination holding it */
	uint64_t	holders;		/* bit i: destination i holds a copy with a good header */
	uint64_t	damaged;		/* bit i: destination i holds a copy whose header is bad */
	uint64_t	unreachable;	/* bit i: destination i could not be looked at */
} SbWalFound;

/*
 * Which destinations hold NAME: every destination is looked at.  False with
 * SB_ENOTFOUND when none does (and none is missing, or at most
 * DESTS->redundancy are); SB_ECORRUPT when two copies differ, or when every
 * copy's header is damaged; SB_EIO when more destinations are missing and
 * no other holds it (it might be there).
 */
extern bool sb_wal_find(const SbWalDests *dests, const char *name, SbWalFound *found,
						SbError *err);

/* The most segments a get fetches ahead. */
#define SB_WAL_MAX_PREFETCH 64

typedef struct SbWalGetOptions
{
	SbWalDests	dests;
	uint32_t	prefetch;		/* after a segment, copy this many next segments of
								 * its timeline into SPOOL, in parallel; 0 = none */
	const char *spool;			/* folder for them (created, 0700); NULL = no spool */
	uint32_t	workers;		/* fetches at once; 0 = prefetch + 1, at most 8 */
} SbWalGetOptions;

typedef struct SbWalGetResult
{
	SbWalInfo	info;
	bool		from_spool;		/* served from a prefetched copy */
	uint32_t	destination;	/* 0-based, when read from the archive */
	uint32_t	prefetched;		/* segments newly copied into the spool */
	uint32_t	spool_removed;	/* stale or damaged spool files removed */
	uint64_t	unreachable;	/* bit i: destination i could not be looked at */
} SbWalGetResult;

/*
 * Restore NAME to TARGET_PATH (restore_command's %f and %p): read it from
 * the spool or the archive, check everything, decompress, write it under a
 * temporary name beside TARGET_PATH, fsync, rename.  False with
 * SB_ENOTFOUND when the archive does not hold it; SB_ECORRUPT or
 * SB_EVERSION when every copy is damaged (naming them).  With prefetch and
 * a segment: the next segments go to the spool and spool files of earlier
 * segments are removed.
 */
extern bool sb_wal_get(const SbWalGetOptions *options, const char *name, const char *target_path,
					   SbWalGetResult *result, SbError *err);

/* ---------- listing, checking, retention ---------- */

typedef struct SbWalEntry
{
	SbWalInfo	info;
	uint32_t	destination;	/* 0-based */
} SbWalEntry;

/*
 * What a listing could not take: a damaged header, a file sealed without
 * the key or in the clear under one, a missing destination, a link where
 * a folder should be.
 */
typedef struct SbWalProblem
{
	char		name[SB_WAL_NAME_MAX + 1];	/* the WAL file's; "" for a destination's */
	SbErrorCode code;
	char	   *message;		/* naming the file or the destination */
} SbWalProblem;

typedef struct SbWalListing
{
	SbWalEntry *entries;		/* sorted by name, then destination */
	size_t		count;
	SbWalProblem *problems;
	size_t		nproblems;
} SbWalListing;

/*
 * List every archived file of every destination from its header alone (no
 * payload read): under a key, a sealed file's header is authenticated.
 */
extern bool sb_wal_list(const SbWalDests *dests, SbWalListing *listing, SbError *err);
extern void sb_wal_listing_free(SbWalListing *listing);

typedef void (*SbWalProblemFn) (void *arg, const char *message);

/*
 * Read every archived file whole and check it (as a get does, writing
 * nothing), and that copies of one file agree; each problem goes to FN.
 * *FILES counts the files read, *PROBLEMS the problems.  False only when
 * the check itself could not run.
 */
extern bool sb_wal_verify(const SbWalDests *dests, SbWalProblemFn fn, void *arg,
						  uint64_t *files, uint64_t *problems, SbError *err);

/*
 * The same for the segments (and partial segments and backup history files)
 * from segment FROM to segment TO, whatever their timeline, and every
 * timeline history file: what recovery over that stretch reads.
 */
extern bool sb_wal_verify_range(const SbWalDests *dests, const char *from, const char *to,
								SbWalProblemFn fn, void *arg, uint64_t *files,
								uint64_t *problems, SbError *err);

typedef struct SbWalContinuity
{
	bool		complete;		/* every segment from FROM to TO is there */
	uint64_t	segments;		/* segments checked */
	uint32_t	segment_size;	/* as the archive's segments say */
	char		first_missing[SB_WAL_NAME_MAX + 1]; /* when not complete */
	char		message[512];	/* when not complete: what is missing and why it was expected */
} SbWalContinuity;

/*
 * Is every segment from segment FROM to segment TO in the archive?  When
 * TO is on a later timeline than FROM, the timeline history file of TO's
 * timeline says where each timeline branched: the segments before a
 * switch point are expected on the old timeline, the rest on the new.
 * SEGMENT_SIZE 0 takes it from the archive's segments.  A missing history
 * file is reported as the first gap.
 */
extern bool sb_wal_check_continuity(const SbWalDests *dests, const char *from, const char *to,
									uint32_t segment_size, SbWalContinuity *result,
									SbError *err);

/*
 * Can recovery follow TIMELINE from position LSN on FROM_TIMELINE (a
 * backup's end on its timeline)?  Yes when TIMELINE is FROM_TIMELINE, or
 * its history (TTTTTTTT.history in the archive DESTS) leads through
 * FROM_TIMELINE and FROM_TIMELINE ended there at LSN or after it: *SWITCH_POINT
 * where it ended (0 when the history does not pass through it).  PostgreSQL
 * refuses a timeline that does not ("requested timeline is not a child of
 * this server's history").  A history that is not archived says nothing:
 * *HOLDS true then, the continuity check names it missing.
 */
extern bool sb_wal_timeline_holds(const SbWalDests *dests, uint32_t timeline, uint32_t from_timeline,
								  uint64_t lsn, bool *holds, uint64_t *switch_point, SbError *err);

typedef struct SbWalRemoval
{
	uint64_t	files;			/* removed (a dry run: that would be) */
	uint64_t	bytes;			/* their size */
	uint64_t	kept;			/* files before the cutoff left alone: not proven ours */
	char		detail[1024];	/* why the first file was kept, each destination skipped; "; " between */
} SbWalRemoval;

/*
 * Remove the archived segments (and partial segments, backup history
 * files, and temporary files a crash left) that come before segment
 * BEFORE, whatever their timeline, as pg_archivecleanup does; never a
 * timeline history file.  Only files whose header proves them this
 * archive's (valid, this system identifier, its own name), through folder
 * descriptors that never follow a link.  A missing destination is skipped
 * and said in DETAIL.  With DRY_RUN nothing is removed.
 */
extern bool sb_wal_remove_before(const SbWalDests *dests, const char *before, bool dry_run,
								 SbWalRemoval *result, SbError *err);

#endif							/* SB_WAL_H */
