/*
 * sb_archive.h
 *		Reading a weighted-stripe archive: open it from any one destination's
 *		backup folder, then plan, verify or restore it.
 *
 * Restore and verify read every stripe at once, one reader thread per
 * stripe (each stripe is on its own device), with a pool of workers that
 * check and decompress chunks.
 */
#ifndef SB_ARCHIVE_H
#define SB_ARCHIVE_H

#include <stdint.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_progress.h"
#include "stripebackup/sb_s3.h"

typedef struct SbArchive
{
	SbManifest *manifest;
	char	   *location;		/* the backup folder the user named */
	char	   *stripe_paths[SB_MAX_STRIPES];	/* where each stripe file is */
	char	   *manifest_path;	/* the manifest copy in use */
	bool		authenticated;	/* a stripe's trailer records that copy's SHA-256 */
	char	  **notes;			/* what opening found amiss: copies set aside */
	uint32_t	nnotes;
	struct SbArchive *parent;	/* a differential or incremental backup's: the
								 * backup it completes, opened the same way */
	const SbKey *key;			/* the user's key it was opened with (the
								 * caller's, kept while it is open), or NULL */
	const SbS3Settings *s3;		/* how its s3:// places are reached (the caller's,
								 * kept while it is open); NULL: the environment */
	SbEntryKeep keep;			/* what it was opened to keep of the entries:
								 * to plan (SB_KEEP_COUNTS), each
								 * manifest's entries may be counted
								 * (manifest->tally), not kept */
	char	   *spool_dir;		/* SB_KEEP_STREAMED: the folder of the private
								 * file its entries are kept in */
	SbEntryKeep parents_keep;	/* how the backups it completes are opened */
	/*
	 * A backup with redundancy (docs/FORMAT.md section 10.4): why each lost
	 * stripe is lost (missing, unreadable, cut short, failing a check of its
	 * header, trailer or index), NULL for the others; read from the others.
	 */
	char	   *lost_why[SB_MAX_STRIPES];
	uint32_t	nlost;
	/* what sb_archive_verify found: stripes with chunks recovered, problems not made up for */
	bool		damaged[SB_MAX_STRIPES];
	uint64_t	unrecovered;
} SbArchive;

/*
 * What the caller knows of the backup it opens, from a record of its own
 * (the server's history): every manifest copy is checked against it before
 * it is used, and one that differs is set aside (a note says what differs)
 * for a copy in the next folder, as a damaged copy is.  Whoever can write
 * to the storage can put another backup under this one's names: only what
 * the caller recorded tells the two apart.
 */
typedef enum SbExpectEncryption
{
	SB_EXPECT_AS_KEY = 0,		/* with a key: encrypted, a copy in the clear
								 * refused; without: as found (an encrypted
								 * one needs the key) */
	SB_EXPECT_ENCRYPTED,		/* an envelope the key opens */
	SB_EXPECT_PLAIN,			/* a manifest in the clear */
	SB_EXPECT_EITHER			/* either: the caller allows a backup in the
								 * clear under a key */
} SbExpectEncryption;

typedef struct SbArchiveExpect
{
	bool		has_uuid;
	uint8_t		uuid[16];		/* the backup's, as recorded */
	SbExpectEncryption encryption;
	const char *const *folders; /* the backup's folders as recorded: copies
								 * tried after the location's, before those
								 * its manifests name (NULL: none) */
	uint32_t	nfolders;
} SbArchiveExpect;

/*
 * How an archive is opened (sb_archive_open_with), given in place as
 * &(SbArchiveOpenOptions){.key = key, .keep = SB_KEEP_STREAMED, ...}; zero
 * is the whole chain, every field kept, no key.  What callers ask for:
 *	- to restore or verify a window at a time: .keep = SB_KEEP_STREAMED and
 *	  .spool_dir (the chain's backups each so too);
 *	- to plan, show or chart: .keep = SB_KEEP_COUNTS (no file table: verify,
 *	  restore and every reader of entries refuse it), .alone for one backup;
 *	- to be a child's parent: .keep = SB_KEEP_LOOKUP and .spool_dir (the
 *	  backups it completes opened for their members alone);
 *	- to be merged: .keep = SB_KEEP_LOOKUP, .parents_streamed and .spool_dir.
 * Without the right key an encrypted backup is SB_EKEY.
 */
typedef struct SbArchiveOpenOptions
{
	const SbKey *key;			/* opens an encrypted backup (the caller keeps
								 * it while the archive is open); NULL: none */
	SbEntryKeep keep;			/* what is kept of its entries */
	bool		alone;			/* the backup alone, not the chain it completes */
	bool		parents_streamed;	/* the chain's older backups SB_KEEP_STREAMED
									 * (a merge); else as KEEP says */
	const char *spool_dir;		/* where streamed or looked-up entries go */
	SbArchiveExpect expect;		/* checked of the backup itself (its chain's
								 * links are bound by the child's manifest) */
	const SbS3Settings *s3;		/* how s3:// locations are reached (the caller
								 * keeps them while the archive is open); NULL:
								 * the environment */
} SbArchiveOpenOptions;

/*
 * Open the backup at LOCATION as O says (sb_archive_open below is the
 * default options' shorthand).  A copy that is not what O->expect says is
 * SB_ECORRUPT when no other copy is (naming the folder and what differs);
 * a manifest in the clear that claims to be encrypted is refused.
 */
extern SbArchive *sb_archive_open_with(const char *location, const SbArchiveOpenOptions *o,
									   SbError *err);

/*
 * Open the backup at LOCATION and, for a differential or incremental one,
 * the chain of backups it completes (A->parent, ...; chain.c finds each in
 * the folders its child records, beside LOCATION first): a link missing,
 * or not exactly the backup its child names, is SB_ENOTFOUND or
 * SB_ECORRUPT, naming it.  Each backup: load and check its manifest copy, find each
 * stripe (next to the manifest, a backup folder copied whole, or else in the
 * backup folder of the destination it was written to) and authenticate the
 * copy against the stripes' trailers, which record the SHA-256 of the
 * manifest the backup wrote.  A copy that is not that one is set aside (a
 * note says so) for one in another destination that is; if no copy is,
 * SB_ECORRUPT.  If no stripe can be read at all, the location's copy is
 * used with authenticated false: enough to plan, not to restore.
 */
extern SbArchive *sb_archive_open(const char *location, SbError *err);

/*
 * Does LOCATION (a backup's folder, or its s3://bucket/prefix/NAME, reached
 * with S3: NULL, the environment) hold a
 * manifest?  When not, ERR says why: SB_ENOTFOUND when it has none, another
 * code when it could not be told (a bucket that refuses the request).
 */
extern bool sb_archive_has_manifest(const char *location, const SbS3Settings *s3, SbError *err);

/*
 * Read stripe NUMBER (1-based) from folder DIR instead.  If the manifest is
 * not authenticated yet, that stripe's trailer may authenticate it, or show
 * it is not the backup's (SB_ECORRUPT).
 */
extern bool sb_archive_set_stripe_dir(SbArchive *a, uint32_t number, const char *dir,
									  SbError *err);

extern void sb_archive_close(SbArchive *a);

/*
 * Can A and every backup it completes be read whole?  With no stripe lost,
 * or no more than each one's redundancy: true.  Else SB_ECORRUPT naming
 * every lost stripe of every link and why: a restore asks before it
 * writes anything.
 */
extern bool sb_archive_check_lost(const SbArchive *a, SbError *err);

/*
 * "restorable: 1 of 4 destinations lost, 0 more may be lost" into BUF: the
 * stripes lost, and (after a verify) those with damaged chunks, against
 * A's redundancy.  Returns whether A restores (as far as is known).
 */
extern bool sb_archive_describe_redundancy(const SbArchive *a, char *buf, size_t len);

/*
 * Does A (and its chain) hold its files, in a table or a spool (streamed),
 * not only their counts?  Else SB_EINVAL.
 */
extern bool sb_archive_check_entries(const SbArchive *a, SbError *err);

/* ---------- plan ---------- */

/* Where a stripe's read speed in a plan came from. */
typedef enum SbEstimateFrom
{
	SB_ESTIMATE_NONE,			/* no figure: no estimate */
	SB_ESTIMATE_RESTORE,		/* the latest restore that read this destination */
	SB_ESTIMATE_CALIBRATION		/* stripe_calibrate's sequential read of it */
} SbEstimateFrom;

typedef struct SbPlanStripe
{
	uint32_t	number;
	const char *path;			/* where the stripe file is expected */
	bool		present;		/* the file exists with the recorded size */
	uint64_t	file_bytes;		/* recorded size */
	uint64_t	chunks;
	uint64_t	raw_bytes;
	uint64_t	stored_bytes;
	uint64_t	files;			/* files with at least one piece in it */
	double		write_seconds;	/* time its writer spent at backup */
	double		expected_mbps;	/* stored MB it reads per second; <= 0 unknown */
	SbEstimateFrom estimate_from;	/* where EXPECTED_MBPS came from */
	double		estimated_seconds;	/* < 0 unknown */
	/* with redundancy (docs/FORMAT.md 10.4): */
	const char *lost_why;		/* lost, and why; NULL when not */
	bool		recoverable;	/* lost, and its chunks recovered from the others */
	uint64_t	recovery_bytes; /* what it reads besides its own, for lost stripes' chunks */
} SbPlanStripe;

typedef struct SbPlan
{
	uint32_t	nstripes;
	SbPlanStripe stripes[SB_MAX_STRIPES];
	uint64_t	files;
	uint64_t	directories;
	uint64_t	symlinks;
	uint64_t	logical_bytes;	/* sum of file sizes, holes included */
	uint64_t	raw_bytes;
	uint64_t	stored_bytes;
	uint64_t	chunks;
	double		fixed_seconds;	/* creating files and finishing; < 0 unknown */
	double		estimated_seconds;	/* slowest stripe plus fixed; < 0 unknown */
	SbEstimateFrom estimate_from;	/* calibration if any stripe's speed is from it */
} SbPlan;

/* What a restore will read from each stripe, from the manifest alone. */
extern bool sb_archive_plan(const SbArchive *a, SbPlan *plan, SbError *err);

/*
 * What a restore pays besides reading the stripes.  From the latest restore:
 * creating the tree and finishing it, per file and per byte, its stripes'
 * speeds holding the rest.  Before any restore, measured on a sample of the
 * backup (sb_restore_sample), which adds the CPU the readers and workers
 * spend on each byte and the time the device written to takes for it: the
 * stripes' calibrated speeds are of reading alone.
 */
typedef struct SbRestoreCosts
{
	double		setup_per_file;	/* seconds to create, fill and time a file; < 0 unknown */
	double		finish_per_byte;	/* seconds a restored byte costs at the end (the
									 * final sync); < 0 unknown */
	double		cpu_per_byte;	/* CPU seconds, every thread, to read, check,
								 * decompress and write a byte; 0 when the
								 * stripes' speeds include it */
	uint32_t	cpus;			/* the CPUs that work shares */
	double		write_per_byte; /* seconds the device written to takes for
								 * a byte; 0 when the stripes' speeds
								 * include it */
} SbRestoreCosts;

/*
 * Estimate the restore's time: stripe i is read at READ_MBPS[i] (stored MB per
 * second; <= 0 when unknown; a figure from FROM[i], or from a restore when
 * FROM is NULL), all stripes at once, and the whole no faster than COSTS's
 * CPU per byte over its CPUs, or its device's write time per byte, allow
 * (the three go on at once); creating the tree and finishing it cost
 * what COSTS says (fixed_seconds < 0, and left out, when COSTS is NULL or
 * does not know them).  The total is unknown when a stripe that holds data
 * has no speed.
 */
extern void sb_plan_estimate(SbPlan *plan, const double *read_mbps, const SbEstimateFrom *from,
							 const SbRestoreCosts *costs);

/* "restore", "calibration", or NULL for SB_ESTIMATE_NONE. */
extern const char *sb_estimate_from_name(SbEstimateFrom from);

/* ---------- verify ---------- */

typedef struct SbProblem
{
	uint32_t	stripe;			/* 1-based; 0 when not about one stripe */
	int64_t		chunk;			/* -1 when not about one chunk */
	const char *file;			/* first file the chunk holds, or NULL */
	SbErrorCode code;
	const char *message;		/* names stripe, chunk and files */
	bool		recovered;		/* a lost stripe or damaged chunk the backup's
								 * redundancy made up for: it still restores */
} SbProblem;

typedef void (*SbProblemFn) (void *arg, const SbProblem *problem);

typedef struct SbReadOptions
{
	uint32_t	workers;		/* 0 = number of CPUs */
	uint32_t	buffer_count;	/* 0 = default */
	SbIoMethod	io_method;		/* SB_IO_AUTO: io_uring when the kernel allows */
	uint32_t	queue_depth;	/* reads in flight per stripe; 0 = default */
	const double *max_rates;	/* MB/s read per stripe, 0 = no limit; or NULL */
	SbTickFn	tick;
	void	   *tick_arg;
	uint64_t	max_memory;		/* bytes the settings may allocate; 0 = 1 GB (sb_policy.h) */
	uint32_t	window_files;	/* a backup opened SB_KEEP_STREAMED: the files
								 * held at once; 0 = SB_WINDOW_FILES */
} SbReadOptions;

/* What sb_restore_sample did, and the costs it measured. */
typedef struct SbRestoreSample
{
	uint64_t	chunks;			/* chunks read, checked, decompressed and written */
	uint64_t	raw_bytes;		/* their bytes */
	uint32_t	files;			/* small files created */
	bool		synced_files;	/* their file system synced after them, in their cost */
	SbRestoreCosts costs;
} SbRestoreSample;

/*
 * Restore a sample of A to measure what a restore of it costs here (the
 * plan's estimate before any restore was measured): about 32 MB of its
 * chunks, spread over the stream, read, checked and decompressed as a
 * restore does (O's settings) and written into a file each, then written
 * to the device, timed; and 1,024 small files created, filled and timed by
 * as many threads as the restore's workers, then, with SYNC_FS, their
 * whole file system synced (syncfs: what a restore's last step does there,
 * so only where a restore will write).  All of it in a folder made for it
 * under PARENT_DIR (so on that file system), removed before it returns,
 * whatever happens.  A manifest opened to plan is enough.
 */
extern bool sb_restore_sample(SbArchive *a, const SbReadOptions *o, const char *parent_dir,
							  bool sync_fs, SbRestoreSample *out, SbError *err);

/*
 * Read every stripe and check every checksum, reporting each problem to
 * ON_PROBLEM; every manifest copy found in the location and the
 * destinations that is not the one in use, and a manifest no stripe
 * authenticated, are problems too (stripe 0).  Returns false only if
 * verification itself could not run (canceled, out of memory); *PROBLEMS
 * counts what was found.
 */
/* What sb_verify_sealed checked. */
typedef struct SbSealedVerifyResult
{
	uint32_t	nstripes;
	uint8_t		uuid[16];		/* the backup's, as its envelope and stripes say */
	uint64_t	chunks;			/* records read and checked */
	uint64_t	stored_bytes;
	uint64_t	problems;
} SbSealedVerifyResult;

/*
 * Verify the encrypted backup at LOCATION without its key: every stripe
 * belongs to the envelope's backup and was sealed with its exact bytes,
 * every index is whole, every chunk record agrees with its index and its
 * sealed bytes with their checksum, and the stripes hold every chunk once.
 * Each problem goes to ON_PROBLEM; false (ERR) only when the envelope
 * itself cannot be read, or the backup is not encrypted.  The key is still
 * needed to know that each chunk opens and what the files hold.  s3://
 * places are reached with S3 (NULL: the environment).
 */
extern bool sb_verify_sealed(const char *location, const SbS3Settings *s3, SbProblemFn on_problem, void *arg,
							 SbSealedVerifyResult *result, SbError *err);

extern bool sb_archive_verify(SbArchive *a, const SbReadOptions *options,
							  SbProblemFn on_problem, void *problem_arg,
							  uint64_t *problems, SbError *err);

/* ---------- restore ---------- */

/*
 * Restore the archive directory FROM (say "pg_tblspc/16385", a tablespace)
 * into the directory TO instead, and put a symlink to TO in its place.
 */
typedef struct SbRelocation
{
	const char *from;
	const char *to;				/* absolute; absent or empty */
	const char *what;			/* for messages: "tablespace 16385" */
} SbRelocation;

/* How long a restore took, and each stripe's part (a measure for later plans). */
typedef struct SbRestoreStats
{
	double		setup_seconds;	/* checking the target, creating the tree */
	double		read_seconds;	/* reading, checking and writing every chunk */
	double		finish_seconds; /* links, modes, times and the final sync */
	uint32_t	nstripes;
	double		stripe_seconds[SB_MAX_STRIPES];	/* each stripe's reader, start to end */
	/* a delta restore: */
	uint64_t	delta_compared; /* bytes of the backup compared with the target's */
	uint64_t	delta_held;		/* of those, the bytes the target held (not read) */
	uint64_t	delta_held_stored;	/* stored bytes of the chunks compared not read */
	uint64_t	delta_patched;	/* raw bytes of the chunks read in part: only
								 * their frames that differed (FORMAT.md 3.2) */
	uint64_t	delta_patch_read;	/* stored bytes of those frames */
	uint64_t	delta_removed;	/* entries of the target removed */
	uint64_t	delta_written;	/* bytes written: the blocks that differed, new files */
	double		delta_compare_seconds;	/* comparing chunks before reading any */
} SbRestoreStats;

/* A file the restore writes into the target once the backup is in place. */
typedef struct SbRestoreFile
{
	const char *path;			/* relative to the target */
	const char *text;
	bool		append;			/* to a file the backup holds; else a new file */
} SbRestoreFile;

/* The file a restore keeps in each directory it writes into while it runs. */
#define SB_RESTORE_MARKER_FILE ".stripebackup-restore-incomplete"

typedef struct SbRestoreOptions
{
	const char *target;			/* absent or empty directory */
	SbReadOptions read;
	bool		keep_on_error;	/* leave a failed restore's files for inspection */
	const char *marker;			/* if not NULL: one line naming this restore, kept in
								 * SB_RESTORE_MARKER_FILE of every directory it
								 * writes into until it completes */
	const SbRelocation *relocations;
	uint32_t	nrelocations;
	SbRestoreStats *stats;		/* filled in when not NULL */
	bool		no_sync;		/* a scratch copy (a merge's): nothing synced */
	bool		delta;			/* TARGET and the relocations' directories may hold a
								 * copy already: what the backup lacks is removed, and
								 * only the chunks that differ are read and written */
	const char *delta_guard;	/* with delta: the file written last, under another
								 * name until everything else is durable (PostgreSQL's
								 * "global/pg_control": a copy cut short cannot start) */
	const SbRestoreFile *extra_files;	/* written after every file of the backup,
										 * before the final sync (recovery settings) */
	uint32_t	nextra_files;
} SbRestoreOptions;

/*
 * Restore every file, directory and link into TARGET, checking every chunk,
 * then sync once.  A failed restore removes what it wrote unless asked not
 * to.  An archive whose manifest is not authenticated is refused before
 * anything is written.
 */
extern bool sb_archive_restore(SbArchive *a, const SbRestoreOptions *options, SbError *err);

/*
 * What a delta restore of M into TARGET (and the RELOCATIONS' directories)
 * would find, from sizes and modification times alone (nothing is read):
 * files there with the backup's size and time (compared, most likely held),
 * there with another size or time (compared, expected to differ), and
 * not there.  A restore sets every file's time to the backup's, so a file
 * neither side changed since keeps it.  Of the chunks, those whose every
 * piece belongs to a file of the first kind are compared before anything
 * is read; the others are read from their stripes.
 */
typedef struct SbDeltaEstimate
{
	uint64_t	files_same;
	uint64_t	bytes_same;
	uint64_t	files_differ;
	uint64_t	bytes_differ;
	uint64_t	files_new;
	uint64_t	bytes_new;
	uint64_t	compare_first;	/* raw bytes of the chunks compared first */
	uint64_t	stripe_read[SB_MAX_STRIPES];	/* raw bytes of the others, by stripe */
} SbDeltaEstimate;

extern bool sb_delta_estimate(const SbManifest *m, const char *target, const SbRelocation *relocations,
							  uint32_t nrelocations, SbDeltaEstimate *estimate, SbError *err);

/*
 * The delta restore's time, from PLAN (estimated with sb_plan_estimate, so
 * every stripe's read time is known) and ESTIMATE: creating the tree at
 * SETUP_PER_FILE seconds a file, comparing the chunks compared first at
 * COMPARE_MBPS (raw MB per second, as a past delta restore compared), each
 * stripe's share of the rest read at the plan's pace, and finishing the
 * bytes expected to be written at FINISH_PER_BYTE.  A CHAIN is read whole,
 * as a plain restore reads it.  Negative when a figure is unknown (a
 * negative or zero rate where it is needed).
 */
extern double sb_delta_plan_seconds(const SbPlan *plan, const SbDeltaEstimate *estimate, bool chain,
									double compare_mbps, double setup_per_file,
									double finish_per_byte);

/* What sb_restore_remove_incomplete found. */
typedef struct SbIncompleteRestore
{
	bool		exists;			/* the directory is there */
	bool		ours;			/* it holds MARKER's marker */
	bool		removed;		/* what the restore wrote is gone (and the
								 * directory, if the restore had made it) */
	bool		delta;			/* a delta restore's: the copy stays, half
								 * refreshed, its marker gone */
} SbIncompleteRestore;

/*
 * After a crash: if DIR (not a link) holds the marker of the restore named
 * MARKER, remove what that restore wrote there (the directory was absent
 * or empty before it, so that is everything), and DIR itself if the restore
 * made it.  A directory without that marker is left alone.
 */
extern bool sb_restore_remove_incomplete(const char *dir, const char *marker,
										 SbIncompleteRestore *found, SbError *err);

/* ---------- rebuild ---------- */

/* What sb_archive_rebuild_stripe wrote. */
typedef struct SbRebuildResult
{
	char		folder[4096];	/* NEW_DESTINATION/NAME: a location the backup opens from */
	char		path[4096];		/* the stripe file written there */
	uint64_t	data_records;	/* chunk records recovered from their groups */
	uint64_t	parity_records; /* parity records recovered */
	uint64_t	file_bytes;		/* the stripe file's size */
	double		seconds;
} SbRebuildResult;

/*
 * Write stripe STRIPE (1-based) of A again, from the others (docs/FORMAT.md
 * 10.4), into NEW_DESTINATION/NAME/ (a folder or s3://bucket/prefix), with
 * the exact manifest copy A was authenticated by beside it: that folder is
 * then a location the backup opens from, its stripe there and the others
 * at their recorded destinations.  The stripe goes under a temporary name,
 * made durable, renamed; then it is read back and every record checked.
 * Refused (nothing written): a backup without redundancy, a stripe number
 * out of range, a stripe that is not lost (unless FORCE), more stripes lost
 * than the redundancy (naming them), a NEW_DESTINATION that holds that
 * stripe of the backup already.
 */
extern bool sb_archive_rebuild_stripe(SbArchive *a, uint32_t stripe, const char *new_destination,
									  bool force, SbRebuildResult *result, SbError *err);

#endif							/* SB_ARCHIVE_H */
