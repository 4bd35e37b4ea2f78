/*
 * sb_manifest.h
 *		The manifest: what a backup holds and where every byte of it lives.
 *
 * Every regular file's data (minus its holes) is laid end to end, in entry
 * order, into one logical "stream".  The stream is cut into chunks of
 * chunk_size bytes; chunk k holds stream bytes [k * chunk_size, (k+1) *
 * chunk_size).  Each chunk is stored in exactly one stripe, so a file's pieces
 * follow from its stream offset and the chunk-to-stripe map.  docs/FORMAT.md
 * describes the JSON form.
 */
#ifndef SB_MANIFEST_H
#define SB_MANIFEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_error.h"

/* The stripe files' format version (format.h); 2.1 cuts compressed chunks into frames (format/frames.h). */
#define SB_FORMAT_MAJOR 2
#define SB_FORMAT_MINOR 1

/*
 * The manifest's: 3.0 added backups of changed blocks, which a reader of
 * 2.x would take for sparse files.  Readers read 2.x (always full) too.
 * 3.1 added redundancy (docs/FORMAT.md section 10): written only for a
 * backup with it, so a backup without is 3.0 byte for byte; readers read
 * any 3.x, and refuse the keys of 3.1 in a manifest that says 3.0.
 */
#define SB_MANIFEST_MAJOR 3
#define SB_MANIFEST_MINOR 0
#define SB_MANIFEST_MINOR_REDUNDANCY 1
#define SB_MANIFEST_OLDEST_MAJOR 2

/* Longest file identity a manifest records ("inode:birth seconds.nanoseconds"). */
#define SB_FILE_ID_MAX 64
#define SB_MANIFEST_FILE "manifest.json"
#define SB_MANIFEST_MAX_BYTES ((size_t) 1 << 31)	/* larger is not a manifest */
#define SB_MAX_STRIPES 64
#define SB_MIN_CHUNK_SIZE 4096
#define SB_MAX_CHUNK_SIZE (64 * 1024 * 1024)

/*
 * A stripe's timeline: at most this many figures (the total included), taken
 * at most this many seconds apart (512 such figures span 16 years).
 */
#define SB_TIMELINE_MAX_FIGURES 512
#define SB_TIMELINE_MAX_INTERVAL 1e6

/*
 * The permission bits a file or directory of a data directory may have:
 * PostgreSQL makes 0700/0600, or 0750/0640 with group access.  Writers keep
 * st_mode & SB_ALLOWED_MODE_BITS; readers refuse anything else (no setuid,
 * setgid or sticky bit, no write for group or others).  A symlink's mode is
 * always 0777 and never applied.
 */
#define SB_ALLOWED_MODE_BITS 0755
#define SB_SYMLINK_MODE 0777

typedef enum SbEntryType
{
	SB_ENTRY_FILE,
	SB_ENTRY_DIR,
	SB_ENTRY_SYMLINK
} SbEntryType;

typedef enum SbCodec
{
	SB_CODEC_NONE = 0,
	SB_CODEC_ZSTD = 1
} SbCodec;

/*
 * What a backup holds: everything (full), or the blocks changed since its
 * parent, with the rest of each such file in the parent (differential:
 * the parent is the last full backup; incremental: the last backup).
 */
typedef enum SbBackupType
{
	SB_BACKUP_FULL,
	SB_BACKUP_DIFF,
	SB_BACKUP_INCR
} SbBackupType;

typedef enum SbBalance
{
	SB_BALANCE_ADAPTIVE,
	SB_BALANCE_WEIGHTED
} SbBalance;

/* A region of a file that holds data; what lies between extents is a hole. */
typedef struct SbExtent
{
	uint64_t	offset;
	uint64_t	length;
} SbExtent;

typedef struct SbEntry
{
	/* The strings and extents live in the manifest's arena (sb_manifest_add_entry). */
	char	   *path;			/* relative, '/'-separated; "." is the root */
	SbExtent   *extents;		/* file, when sparse: the data regions */
	char	   *link_target;	/* symlink: what it points to */
	char	   *file_id;		/* file: the source file's identity (inode and
								 * birth time), or NULL if unknown */
	char	   *file_times;		/* file: its modification and change times,
								 * "SEC.NSEC:SEC.NSEC", or NULL */
	int64_t		mtime;			/* seconds since the epoch */
	uint64_t	size;			/* file: logical size */
	uint64_t	stream_offset;	/* file: first byte of its data in the stream */
	uint64_t	stream_length;	/* file: bytes of data (size minus holes) */
	uint32_t	crc32c;			/* file: CRC-32C of the whole content */
	uint32_t	nextents;
	uint16_t	mode;			/* permission bits, within SB_ALLOWED_MODE_BITS */
	uint8_t		type;			/* an SbEntryType (a byte: one entry a file) */
	bool		sparse;			/* file: data only in extents, holes between */
	bool		incremental;	/* file (with sparse): what lies between its
								 * extents is in the parent backup's file of
								 * the same path, not a hole */
} SbEntry;

/* What a reader keeps of a manifest's entries. */
typedef enum SbEntryKeep
{
	SB_KEEP_ALL,				/* every field of every entry */
	SB_KEEP_TO_RESTORE,			/* all but the source files' stamps (file_id,
								 * file_times: checked, then dropped), which
								 * only a child backup or a merge reads */
	SB_KEEP_COUNTS,				/* none: each entry checked and counted
								 * (manifest->tally) */
	SB_KEEP_STREAMED,			/* none in memory: each entry checked,
								 * counted and kept in a private file
								 * (manifest->streamed), read back in order
								 * by a restore or verify a window at a time;
								 * the table as TO_RESTORE if the manifest is
								 * not laid out for it */
	SB_KEEP_HEAD,				/* none, and none parsed: the members alone
								 * (manifest->head_only), the entries' text
								 * only hashed with the rest, for checks made
								 * before a reader that checks every entry;
								 * an encrypted backup's kept whole */
	SB_KEEP_LOOKUP,				/* none in memory: as STREAMED, with the
								 * file stamps kept in the private file, for
								 * a child backup to find its parent's files
								 * by path (entry_lookup.h); the table as ALL
								 * if the manifest is not laid out for it */
} SbEntryKeep;

/*
 * The backup an incremental or differential one completes: which one it is
 * (its uuid and the SHA-256 of its manifest, so no other backup can stand
 * in for it) and where it was written.
 */
typedef struct SbParentRef
{
	uint8_t		uuid[16];
	char	   *name;
	uint8_t		manifest_sha256[32];
	uint64_t	manifest_length;
	char	  **destinations;
	uint32_t	ndestinations;
} SbParentRef;

/* Chunks first..last (inclusive) are stored in one stripe. */
typedef struct SbChunkRange
{
	uint64_t	first;
	uint64_t	last;
} SbChunkRange;

/* A range of chunks and the (0-based) stripe that holds it. */
typedef struct SbChunkOwner
{
	uint64_t	first;
	uint64_t	last;
	uint32_t	stripe;
} SbChunkOwner;

typedef struct SbStripeInfo
{
	uint32_t	number;			/* 1-based */
	char	   *destination;	/* the destination folder given at backup time */
	char	   *file_name;		/* stripe file inside the backup folder */
	double		weight;
	uint64_t	chunks;
	uint64_t	raw_bytes;		/* stream bytes its chunks hold */
	uint64_t	stored_bytes;	/* payload bytes after compression */
	uint64_t	file_bytes;		/* size of the stripe file */
	double		seconds;		/* wall time its writer was busy */
	double		finished_after; /* from the start of the backup to its last write */
	uint64_t   *timeline;		/* stored bytes by the end of each interval; the
								 * last figure is the total, at finished_after */
	uint32_t	ntimeline;
	double		timeline_interval;	/* seconds between figures */
	SbChunkRange *ranges;
	uint32_t	nranges;
	/* With redundancy (manifest 3.1, docs/FORMAT.md section 10): its parity records */
	uint64_t	parity_chunks;
	uint64_t	parity_bytes;	/* their payloads: the group's longest record each */
	SbChunkRange *parity_ranges;	/* parity ids, ascending */
	uint32_t	nparity_ranges;
} SbStripeInfo;

/*
 * A backup's redundancy (docs/FORMAT.md section 10): any PARITY of its
 * stripes may be lost.  PARITY 0: none (every stripe is needed).
 */
#define SB_REDUNDANCY_CODE "rs-cauchy-gf256"

typedef struct SbRedundancy
{
	uint32_t	parity;			/* M */
	uint32_t	data;			/* K = stripes - M */
	uint32_t	run;			/* groups per block */
} SbRedundancy;

/*
 * What a plan needs of the entries, counted as they are read instead of
 * kept, when a manifest is read to plan only (SB_KEEP_COUNTS): a
 * plan of a million files then holds no file table.
 */
typedef struct SbEntryTally
{
	uint64_t	files;
	uint64_t	directories;
	uint64_t	symlinks;
	uint64_t	logical_bytes;	/* sum of file sizes, holes included */
	uint64_t	data_bytes;		/* the files' data so far, end to end: where the
								 * next file's must start */
	uint64_t	stripe_files[SB_MAX_STRIPES];	/* files with a piece in each stripe */
	struct SbManifest *layout;	/* while reading: the members read before the
								 * entries, for the stripe of each chunk */
} SbEntryTally;

typedef struct SbManifest
{
	uint32_t	version_major;
	uint32_t	version_minor;
	uint8_t		uuid[16];		/* identifies the backup; also in every stripe */
	char	   *name;			/* backup folder name under each destination */
	char	   *label;			/* free text, may be NULL */
	char	   *tool;			/* program and version that wrote it */
	char	   *started_at;		/* ISO 8601, UTC */
	char	   *finished_at;
	uint32_t	chunk_size;
	SbCodec		codec;
	int			level;
	SbBalance	balance;
	char	   *metadata_json;	/* the caller's JSON object, kept verbatim; may be NULL */
	SbBackupType type;
	SbParentRef *parent;		/* NULL for a full backup */

	SbEntry    *entries;
	size_t		nentries;
	size_t		entries_cap;
	struct SbArena *arena;		/* the entries' strings and extents */
	SbEntryTally *tally;		/* read to plan only: the entries counted,
								 * none kept (nentries 0); else NULL */
	bool		no_stamps;		/* read to restore (SB_KEEP_TO_RESTORE): no
								 * entry keeps its file_id or file_times */
	bool		head_only;		/* read SB_KEEP_HEAD: no entry read (nentries
								 * 0, no tally) */
	struct SbEntrySpool *streamed;	/* read SB_KEEP_STREAMED or LOOKUP: the entries, in
									 * order, none kept (nentries 0, tally set);
									 * else NULL */
	struct SbPathSet *paths;	/* while streamed entries are read: their paths */
	struct SbEntrySpill *spill; /* written by a backup that keeps no table
								 * (sb_manifest_spill): each entry's text in a
								 * file, none kept (nentries 0); else NULL */

	SbStripeInfo *stripes;
	uint32_t	nstripes;

	uint64_t	stream_bytes;	/* total raw data bytes */
	uint64_t	stored_bytes;	/* total chunk payload bytes in all stripes */
	uint64_t	total_chunks;
	SbRedundancy redundancy;	/* parity 0: none */
	uint64_t	parity_bytes;	/* sum of the stripes' parity_bytes */

	/* Derived by sb_manifest_index() for readers; not serialized. */
	struct SbChunkOwner *chunk_map; /* every range of chunks and its stripe, sorted */
	uint32_t	nchunk_map;
	size_t	   *data_entries;	/* entries with stream_length > 0, stream order */
	size_t		ndata_entries;

	/*
	 * The SHA-256 and length of the exact manifest.json bytes it was read
	 * from (sb_manifest_from_json) or written as (a backup's finish): what
	 * every stripe's trailer must record.  Not serialized.
	 */
	uint8_t		json_sha256[32];
	uint64_t	json_length;

	/* Its chunks are sealed (AES-256-GCM) and this manifest travels in an envelope. */
	bool		encrypted;

	/*
	 * An encrypted backup's keys (src/engine/crypto/crypto.h), opened from its
	 * envelope with the user's key, or made by the backup that writes it;
	 * NULL for a backup in the clear.  Not serialized; wiped when freed.
	 */
	struct SbCipher *cipher;
} SbManifest;

/* One contiguous piece of one file inside a chunk. */
typedef struct SbPiece
{
	size_t		entry;			/* index into manifest->entries */
	uint64_t	file_offset;
	uint64_t	length;
	uint64_t	chunk_offset;	/* where the piece starts inside the chunk */
} SbPiece;

/* Iterates over the pieces of one chunk, in stream order. */
typedef struct SbPieceIter
{
	const SbManifest *manifest;
	uint64_t	pos;			/* next stream position */
	uint64_t	end;			/* end of the chunk in the stream */
	uint64_t	chunk_start;
	size_t		data_index;		/* index into manifest->data_entries */
	uint32_t	extent;			/* current extent of that entry */
	uint64_t	extent_base;	/* data bytes of the entry before that extent */
} SbPieceIter;

/*
 * Map REL, a position within E's data, to a file offset and the bytes left
 * in its extent.  *EXTENT and *EXTENT_BASE (the data bytes of E before that
 * extent) are a cursor, 0 and 0 at first, that only moves forward.
 */
extern void sb_entry_locate(const SbEntry *e, uint64_t rel, uint32_t *extent,
							uint64_t *extent_base, uint64_t *file_offset, uint64_t *extent_left);

/* A new, empty manifest. */
extern SbManifest *sb_manifest_new(void);

/* Free a manifest and everything it owns. NULL is allowed. */
extern void sb_manifest_free(SbManifest *m);

/* Append a copy of an entry; checks that its path is safe. */
extern bool sb_manifest_add_entry(SbManifest *m, const SbEntry *e, SbError *err);

typedef struct SbEntrySpill SbEntrySpill;

/*
 * From now on M keeps no entry table: each entry added is written as the
 * manifest's text of it to an unlinked file in DIR, which the manifest's
 * text is then made from (sb_manifest_emit, sb_manifest_to_json).  For a
 * backup of millions of files: its memory does not grow with them.
 */
extern bool sb_manifest_spill(SbManifest *m, const char *dir, SbError *err);
extern bool sb_manifest_spill_entry(SbManifest *m, const SbEntry *e, SbError *err);

/*
 * What a spilled table can be checked for at the end: the files' data fills
 * the stream.  (Each entry was checked as it was added, as a planning reader
 * checks it: sb_manifest_index_layout checks the rest that needs no entry.)
 */
extern bool sb_manifest_spill_check(const SbManifest *m, SbError *err);
extern void sb_manifest_spill_free(SbEntrySpill *s);

/* The regular files M lists, whether it keeps its table or spilled it. */
extern uint64_t sb_manifest_file_count(const SbManifest *m);

/* Serialize to JSON text (malloc'd, NUL-terminated). */
extern char *sb_manifest_to_json(const SbManifest *m, SbError *err);

/*
 * The exact bytes of manifest.json: the JSON text and a newline (malloc'd,
 * also NUL-terminated; *LEN excludes the NUL).  What every copy holds and
 * what every stripe's trailer records the SHA-256 of.
 */
extern char *sb_manifest_serialize(const SbManifest *m, size_t *len, SbError *err);

/* Takes LEN bytes of text; false (ERR set) to stop. */
typedef bool (*SbTextSink) (void *arg, const char *text, size_t len, SbError *err);

/*
 * The same bytes as sb_manifest_serialize, handed to SINK a block at a
 * time (a megabyte at most, unless one piece is longer): a backup of a
 * million files writes its manifest without holding its text.
 */
extern bool sb_manifest_emit(const SbManifest *m, SbTextSink sink, void *arg, SbError *err);

/*
 * Parse and fully validate JSON text (written as a writer writes it); builds
 * the reader index and records the text's SHA-256 and length too.
 */
extern SbManifest *sb_manifest_from_json(const char *text, size_t len, SbError *err);

/*
 * Reads up to LEN bytes of a manifest's text into BUF: how many, 0 at its
 * end, -1 (ERR set) on failure.
 */
typedef ssize_t (*SbManifestReadFn) (void *arg, char *buf, size_t len, SbError *err);

/*
 * sb_manifest_from_json over text that READ hands over a block at a time:
 * the text is never whole in memory, only the file table built from it
 * (manifest_stream.c).
 */
extern SbManifest *sb_manifest_from_stream(SbManifestReadFn read, void *arg, SbError *err);

/*
 * The manifest in the LEN bytes of a manifest.json: in the clear, or an
 * encrypted backup's envelope opened with KEY (SB_EKEY when KEY is NULL or
 * not the backup's; manifest_envelope.c).  Either way json_sha256 and
 * json_length describe those bytes, which is what the stripes' trailers
 * record.
 */
extern SbManifest *sb_manifest_from_bytes(const char *bytes, size_t len, const SbKey *key, SbError *err);

/* Read DIR/manifest.json, as it is: only sb_archive_open authenticates a copy. */
extern SbManifest *sb_manifest_load(const char *dir, SbError *err);

/*
 * Write DIR/manifest.json atomically and durably (temporary file, fsync,
 * rename, fsync DIR).  For tools and tests: a backup writes its copies
 * through the folder descriptors it opened at its start.
 */
extern bool sb_manifest_write(const SbManifest *m, const char *dir, SbError *err);

/*
 * Check the manifest's internal consistency, and that it says only what a
 * data directory holds (modes, links, byte counts), and build the reader index.
 */
extern bool sb_manifest_index(SbManifest *m, SbError *err);

/*
 * The part of that check that needs no entry: chunk size, stripes, their
 * chunk ranges, bytes and timelines; builds the chunk map.  (A manifest read
 * to plan only, M->tally, is indexed so, and its counts checked.)
 */
extern bool sb_manifest_index_layout(SbManifest *m, SbError *err);

/* True if PATH is a safe relative archive path ("." allowed only if allow_root). */
extern bool sb_path_is_safe(const char *path, bool allow_root);

/*
 * True if a data directory may hold a symlink at PATH to TARGET: a
 * tablespace link, "pg_tblspc/<oid>" to an absolute path.
 */
extern bool sb_link_is_allowed(const char *path, const char *target);

/* Start iterating over the pieces of chunk CHUNK_ID (needs sb_manifest_index). */
extern void sb_piece_iter_init(SbPieceIter *it, const SbManifest *m, uint64_t chunk_id);

/* Next piece; false when the chunk has no more. */
extern bool sb_piece_iter_next(SbPieceIter *it, SbPiece *piece);

/* Takes an entry (its strings valid during the call); false (ERR set) to stop. */
typedef bool (*SbEntryFn) (void *arg, const SbEntry *e, SbError *err);

/*
 * Every entry of M, in order, to FN: from the file table, or read back from
 * the spool of a manifest read SB_KEEP_STREAMED or LOOKUP, one at a time.
 */
extern bool sb_manifest_each_entry(const SbManifest *m, SbEntryFn fn, void *arg, SbError *err);

/* One piece of file data: PATH's LENGTH bytes from FILE_OFFSET, at CHUNK_OFFSET of CHUNK. */
typedef struct SbPieceRow
{
	uint64_t	chunk;
	uint32_t	stripe;			/* 0-based: the stripe that holds CHUNK */
	uint64_t	chunk_offset;
	uint64_t	file_offset;
	uint64_t	length;
	const char *path;			/* valid during the call */
	uint64_t	file_size;		/* the file's size */
	size_t		ordinal;		/* the file's entry's place in the manifest's order */
} SbPieceRow;

typedef bool (*SbPieceRowFn) (void *arg, const SbPieceRow *row, SbError *err);

/*
 * Every piece of file data of M, in chunk order, to FN (which may stop the
 * walk by returning false, its error in ERR): from the file table, or from
 * the spool of a manifest read SB_KEEP_STREAMED, one entry held at a time.
 */
extern bool sb_manifest_each_piece(const SbManifest *m, SbPieceRowFn fn, void *arg, SbError *err);

/* Describe the files a chunk holds, for error messages ("base/1/2 bytes 0-8191, ..."). */
extern void sb_manifest_describe_chunk(const SbManifest *m, uint64_t chunk_id,
									   char *buf, size_t buflen);

/* The 0-based stripe of chunk CHUNK_ID, or UINT32_MAX if there is no such chunk. */
extern uint32_t sb_manifest_chunk_stripe(const SbManifest *m, uint64_t chunk_id);

/* The range of M->chunk_map that holds CHUNK_ID; M->nchunk_map if none. */
extern uint32_t sb_manifest_chunk_owner(const SbManifest *m, uint64_t chunk_id);

/* Index into data_entries of the file holding stream byte POS (ndata_entries if none). */
extern size_t sb_manifest_data_entry_at(const SbManifest *m, uint64_t pos);

/* Raw length of chunk CHUNK_ID (the last one may be short). */
extern uint32_t sb_manifest_chunk_length(const SbManifest *m, uint64_t chunk_id);

/*
 * When figure I of stripe S's timeline was taken, in seconds since the
 * backup began: the end of interval I, and for the last figure
 * finished_after (an interval after the figure before it, if the manifest
 * says no later time).
 */
extern double sb_stripe_timeline_seconds(const SbStripeInfo *s, uint32_t i);

/* Names used in the manifest and on the command line. */
extern const char *sb_codec_name(SbCodec codec);
extern bool sb_codec_parse(const char *name, SbCodec *codec);
extern const char *sb_balance_name(SbBalance balance);
extern bool sb_balance_parse(const char *name, SbBalance *balance);

extern const char *sb_backup_type_name(SbBackupType type);
extern bool sb_backup_type_parse(const char *name, SbBackupType *type);

/* A copy of PARENT's identity and destinations, as a child's manifest records it. */
extern SbParentRef *sb_parent_ref_of(const SbManifest *parent, SbError *err);
extern void sb_parent_ref_free(SbParentRef *ref);

/* "stripe-3.sbs" for stripe 3. */
extern void sb_stripe_file_name(uint32_t number, char *buf, size_t buflen);

#endif							/* SB_MANIFEST_H */
