/*
 * sb_policy.h
 *		The rules the command and the extension share, written once: where a
 *		restore may write, what a backup folder holds, how a list of rates,
 *		an integer or a size is written, and how much memory a backup or a
 *		restore may take.
 *
 * Every check reports through SbError with a message that names the
 * offending value; the caller adds only how it names the setting (an SQL
 * argument, a command-line option).
 */
#ifndef SB_POLICY_H
#define SB_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"
#include "stripebackup/sb_error.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_wal.h"

/* ---------- paths ---------- */

/*
 * PATH made canonical into RESOLVED (PATH_MAX bytes): its longest part that
 * exists resolved as realpath() does (links, ".", ".."), the rest appended
 * with "." and ".." applied to the text.  A relative PATH starts from the
 * working directory.
 */
extern bool sb_policy_canonical_path(const char *path, char *resolved, SbError *err);

/* Is canonical path A the same as canonical path B, or inside it? */
extern bool sb_policy_canonical_within(const char *a, const char *b);

/* Is PATH the same as DIR or inside it, both made canonical? */
extern bool sb_policy_path_within(const char *path, const char *dir, bool *within,
								  SbError *err);

/* ---------- places a restore writes ---------- */

typedef enum SbDirState
{
	SB_DIR_ABSENT,				/* it will be created in its parent */
	SB_DIR_EMPTY
} SbDirState;

/*
 * Can PATH take a restore?  An empty directory this process may write, or
 * absent in a parent directory it may write.  WHAT names it in errors
 * ("restore target").  SB_EEXIST when not empty, SB_EINVAL when not a
 * directory, an errno code when it cannot be written or created.
 */
extern bool sb_policy_check_empty_or_absent(const char *path, const char *what,
											SbDirState *state, SbError *err);

typedef enum SbPostmasterState
{
	SB_POSTMASTER_NONE,			/* no postmaster.pid */
	SB_POSTMASTER_STALE,		/* postmaster.pid names no live process */
	SB_POSTMASTER_RUNNING
} SbPostmasterState;

/* Does DATA_DIR's postmaster.pid name a live process?  *PID: the pid it names, or 0. */
extern SbPostmasterState sb_policy_postmaster_state(const char *data_dir, long *pid);

typedef struct SbRunningCluster
{
	bool		found;
	char		data_dir[4096];	/* canonical */
	long		pid;			/* its postmaster */
} SbRunningCluster;

/*
 * Is PATH (made canonical) the data directory of a running PostgreSQL
 * cluster or inside one: an ancestor-or-self holding PG_VERSION and a
 * postmaster.pid whose process is alive?
 */
extern bool sb_policy_find_running_cluster(const char *path, SbRunningCluster *cluster,
										   SbError *err);

/* The longest path a tablespace mapping's OLD or NEW may be. */
#define SB_MAPPING_PATH_MAX 4096

/* A tablespace mapping "OLD=NEW", read. */
typedef struct SbMapping
{
	char		old_path[SB_MAPPING_PATH_MAX];
	char		new_path[SB_MAPPING_PATH_MAX];
} SbMapping;

/*
 * Read tablespace mapping MAPPING, "OLD=NEW", into *M: split at the one "="
 * not written "\=", which stands for a literal "=" in OLD or NEW (as
 * pg_basebackup's -T reads it); both absolute paths.  SB_EINVAL else,
 * naming MAPPING as the caller's SPELLING ("tablespace_mapping" in SQL,
 * "--tablespace-mapping" in the command).
 */
extern bool sb_policy_parse_mapping(const char *mapping, const char *spelling, SbMapping *m,
									SbError *err);

/*
 * Tablespace mappings "OLD=NEW" as given for a restore into TARGET: each
 * read (sb_policy_parse_mapping); the same OLD mapped twice, or a NEW that
 * is TARGET or inside it, is refused naming the mapping, as SPELLING.
 */
extern bool sb_policy_check_mappings(const char *const *mappings, uint32_t nmappings,
									 const char *target, const char *spelling, SbError *err);

/*
 * Can a restore write TARGET and the directories of its RELOCATIONS
 * (tablespaces)?  Each must be absolute; none the same as or inside another
 * (the target included); none inside the data directory of a running
 * cluster; each absent (its parent writable) or empty (and writable).
 * Nothing is created.
 */
extern bool sb_policy_check_restore_places(const char *target, const SbRelocation *relocations,
										   uint32_t nrelocations, SbError *err);

/*
 * The same for a delta restore (SbRestoreOptions.delta) of a backup of
 * SYSTEM_IDENTIFIER: the target absent, empty, or a stopped copy of that
 * system (sb_policy_check_delta_target); each relocation's directory
 * absent or a directory.
 */
extern bool sb_policy_check_delta_places(const char *target, const SbRelocation *relocations,
										 uint32_t nrelocations, const char *system_identifier,
										 SbError *err);

/*
 * Can a delta restore refresh TARGET with a backup of SYSTEM_IDENTIFIER?
 * Absent or empty; or a directory where no server runs (postmaster.pid)
 * whose global/pg_control is of that system, or that has none but a
 * PG_VERSION (a copy a delta restore cut short left without its
 * pg_control).  Anything else is refused, naming what it is.
 */
extern bool sb_policy_check_delta_target(const char *target, const char *system_identifier,
										 SbError *err);

/* A relocation's directory for a delta restore: absent (its parent writable) or a directory. */
extern bool sb_policy_check_delta_dir(const char *path, const char *what, SbError *err);

/* ---------- what a backup folder holds ---------- */

/*
 * DEST/NAME holds SB_MANIFEST_FILE (sb_manifest.h), written first under
 * SB_MANIFEST_TEMP_FILE, and one stripe file per stripe stored there, named
 * by sb_stripe_file_name() (sb_manifest.h): "stripe-3.sbs".
 */
#define SB_MANIFEST_TEMP_FILE SB_MANIFEST_FILE ".tmp"

/* Is NAME a stripe file's name, "stripe-K.sbs" with K in 1..SB_MAX_STRIPES?  *NUMBER gets K. */
extern bool sb_policy_parse_stripe_file_name(const char *name, uint32_t *number);

/* ---------- numbers as users write them ---------- */

/* A list of numbers written "N" or "N1,N2,...": rates in MB/s, weights. */
typedef struct SbNumberList
{
	uint32_t	count;
	double		values[SB_MAX_STRIPES];
} SbNumberList;

/*
 * "R" or "R1,R2,...": MB/s, each digits with an optional decimal part
 * ("12", "0.5"), 0 for no limit, blanks around it allowed ("50, 200");
 * nothing else (no sign, empty item, exponent, NaN or infinity).  At most
 * SB_MAX_STRIPES rates.
 */
extern bool sb_policy_parse_rates(const char *text, SbNumberList *rates, SbError *err);

/* The same grammar for weights, each above 0. */
extern bool sb_policy_parse_weights(const char *text, SbNumberList *weights, SbError *err);

/* The rate of stripe INDEX (0-based): a single rate applies to all; past the list, none (0). */
extern double sb_policy_rate_of(const SbNumberList *rates, uint32_t index);

/* A whole decimal number in [MIN, MAX]: an optional "-" then digits, nothing else. */
extern bool sb_policy_parse_int(const char *text, long min, long max, long *value,
								SbError *err);

/* A whole number from 0 to 2^64 - 1 in plain digits (a system identifier): nothing else. */
extern bool sb_policy_parse_uint64(const char *text, uint64_t *value, SbError *err);

/*
 * A size in bytes: digits, then optionally a binary unit k, M, G or T (either
 * case) alone or followed by "B" or "iB": "1048576", "256k", "1MB", "2GiB".
 */
extern bool sb_policy_parse_size(const char *text, uint64_t *bytes, SbError *err);

/* ---------- memory ---------- */

/* The limit when a caller gives none (max_memory 0). */
#define SB_DEFAULT_MAX_MEMORY ((uint64_t) 1024 * 1024 * 1024)

/* What a backup's or a restore's settings will allocate, and how it adds up. */
typedef struct SbMemoryEstimate
{
	uint64_t	buffers;		/* chunk buffers (twice with compression) */
	uint64_t	read_ahead;		/* source blocks and small files read ahead (backup) */
	uint64_t	codec_contexts; /* a zstd context per worker */
	uint64_t	index;			/* chunk index entries held in memory */
	uint64_t	uploads;		/* part buffers of the stripes written to buckets */
	uint64_t	total;
	char		breakdown[512]; /* "buffer_count 16 x transfer_size 1 MB (x2 ...) + ..." */
} SbMemoryEstimate;

/*
 * What a backup with options O allocates: buffer_count x chunk size (twice
 * with compression), queue_depth read-ahead blocks and 32 small files of
 * 64 kB read ahead (sb_backup_add_files_at), a zstd compression
 * context per worker at the level and chunk size, 48 bytes of index per
 * chunk of o->expected_bytes, and the part buffers of each destination that
 * is a bucket.
 */
extern void sb_policy_backup_memory(const SbBackupOptions *o, SbMemoryEstimate *estimate);

/*
 * What a restore or verify of M with options O allocates: buffer_count
 * records (and a decompression buffer each when compressed), a zstd
 * decompression context per worker, and every stripe's index.
 */
extern void sb_policy_read_memory(const SbManifest *m, const SbReadOptions *o,
								  SbMemoryEstimate *estimate);

/* Refuse an estimate above MAX_MEMORY bytes (0: SB_DEFAULT_MAX_MEMORY), saying how it adds up. */
extern bool sb_policy_check_memory(const SbMemoryEstimate *estimate, uint64_t max_memory,
								   SbError *err);

/* The two above together, for a backup's options (o->max_memory). */
extern bool sb_policy_check_backup_memory(const SbBackupOptions *o, SbError *err);

/* The same for a restore or verify of M (o->max_memory). */
extern bool sb_policy_check_read_memory(const SbManifest *m, const SbReadOptions *o,
										SbError *err);

/*
 * What a WAL archive with options O allocates: per worker, two buffers of
 * a piece (SB_WAL_PIECE_SIZE, or the segment size if smaller) and a zstd
 * stream context at the level, fitted to the segment size.
 */
extern void sb_policy_wal_memory(const SbWalArchiveOptions *o, SbMemoryEstimate *estimate);

/* That, refused above o->max_memory. */
extern bool sb_policy_check_wal_memory(const SbWalArchiveOptions *o, SbError *err);

#endif							/* SB_POLICY_H */
