/*
 * wal_internal.h
 *		What the WAL archive's modules share: the header of an archived file
 *		(wal_format.c), the keys of a sealed one (wal_seal.c), the folders of
 *		an archive (wal_dest.c), a worker's buffers and the reading and
 *		writing of one archived file (wal_file.c), and a few name helpers
 *		(wal_name.c).
 *
 *		DEST/wal/<sysid>/<name>.sbw		header (128 bytes) + payload
 *
 * A file is in the clear (format 1.0) or, when the archive has a key,
 * sealed (format 2.0: AES-256-GCM under keys of its own).  A reader given a
 * key takes sealed files only; one given none, files in the clear only.
 *
 * docs/FORMAT.md, "The WAL archive", is the reference for the bytes.
 */
#ifndef SB_WAL_INTERNAL_H
#define SB_WAL_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include <sys/stat.h>

#include "stripebackup/sb_wal.h"
#include "format/checksum.h"
#include "crypto/crypto.h"
#include "format/codec.h"
#include "store/store.h"

#define SB_WAL_MAGIC "SBWALFIL"
#define SB_WAL_HEADER_SIZE 128

/* A temporary file is "<name>.sbw" followed by this, the writer's pid and a number. */
#define SB_WAL_TEMP_INFIX ".tmp."

/* ---------- the header (wal_format.c) ---------- */

/* A sealed file: its salt, its header's tag and how many header bytes that covers. */
#define SB_WAL_SALT_LEN 8
#define SB_WAL_TAG_LEN 16
#define SB_WAL_TAGGED_LEN (SB_WAL_HEADER_SIZE - SB_WAL_TAG_LEN)
/* What sealing adds to a payload: the nonce before it, the GCM tag after. */
#define SB_WAL_SEAL_OVERHEAD SB_CRYPTO_OVERHEAD

typedef struct SbWalHeader
{
	uint16_t	major;			/* SB_WAL_FORMAT_MAJOR, or SB_WAL_SEALED_MAJOR */
	uint16_t	minor;
	bool		sealed;			/* format 2.0: encrypted and authenticated */
	uint64_t	system_identifier;
	char		name[SB_WAL_NAME_MAX + 1];
	uint64_t	raw_len;
	uint64_t	stored_len;		/* sealed: nonce, what the codec gave, tag */
	uint8_t		codec;
	int32_t		level;			/* not recorded in a sealed file (0) */
	uint64_t	raw_hash;		/* XXH3-64 of the raw bytes (unmasked once decoded) */
	uint64_t	stored_hash;	/* XXH3-64 of the payload as stored; 0 when sealed */
	uint32_t	crc32c;			/* CRC-32C of the raw bytes (unmasked once decoded) */
	int64_t		archived_at;	/* seconds since the epoch */
	uint8_t		salt[SB_WAL_SALT_LEN];	/* sealed: what makes its keys its own */
} SbWalHeader;

/* The keys of one sealed file (wal_seal.c), wiped after use. */
#define SB_WAL_MASK_LEN 12
typedef struct SbWalKeys
{
	uint8_t		payload[SB_CRYPTO_KEY_LEN];	/* AES-256-GCM of the payload */
	uint8_t		header[SB_CRYPTO_KEY_LEN];	/* HMAC-SHA256 of the header */
	uint8_t		mask[SB_WAL_MASK_LEN];	/* XORed over the raw XXH3-64 and CRC-32C */
} SbWalKeys;

/*
 * Encode H into OUT: format 1.0 sealed by XXH3, or (H->sealed) 2.0 with
 * its hashes masked and its tag made with KEYS (H's own, from
 * sb_wal_keys_derive).
 */
extern bool sb_wal_header_encode(const SbWalHeader *h, const SbWalKeys *keys,
								 uint8_t out[SB_WAL_HEADER_SIZE], SbError *err);

/*
 * Decode and check a finished header on its own, as KEY says: without a
 * key, format 1.0 only (a sealed file is SB_EKEY: its key is needed); with
 * one, 2.0 only (a file in the clear is SB_ECORRUPT), its tag checked and
 * its hashes unmasked, its keys into KEYS (NULL: not wanted).  Then
 * magic, version, size, seal, a WAL file name, a known codec and lengths
 * a writer writes (zstd only when smaller, none with stored = raw).  Says
 * what is wrong; the caller names the file.
 */
extern bool sb_wal_header_decode(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key,
								 SbWalHeader *h, SbWalKeys *keys, SbError *err);

/*
 * What retention removes: a header of either format that is the archive's
 * by its magic, version, size and name; its seal checked, or for a sealed
 * file its tag when KEY is given (without it, by those fields alone, as
 * retention recognises an encrypted backup's envelope).  PROVISIONAL:
 * what a writer's provisional header (a temporary file's) also passes;
 * else the lengths too.
 */
extern bool sb_wal_header_recognise(const uint8_t in[SB_WAL_HEADER_SIZE], const SbKey *key,
									bool provisional, SbWalHeader *h, SbError *err);

/* Is H the header of NAME of the cluster SYSID?  SB_ECORRUPT saying what differs otherwise. */
extern bool sb_wal_header_is(const SbWalHeader *h, uint64_t sysid, const char *name,
							 SbError *err);

/* The public view of a header. */
extern void sb_wal_header_info(const SbWalHeader *h, SbWalInfo *info);

/* Do two headers describe the same contents (length, XXH3-64, CRC-32C)? */
extern bool sb_wal_same_contents(const SbWalHeader *a, const SbWalHeader *b);

/*
 * "123 bytes, XXH3 ..., CRC-32C ..." of a header, for messages saying what
 * differs; of a sealed one only its length, since its hashes are secret.
 */
extern void sb_wal_describe_contents(const SbWalHeader *h, char *buf, size_t len);

/* ---------- a sealed file's keys (wal_seal.c) ---------- */

/*
 * The keys of the sealed file H describes (its salt, system identifier
 * and name) under the user's KEY: HKDF-SHA256, FORMAT.md section 8.7.
 */
extern bool sb_wal_keys_derive(const SbKey *key, const SbWalHeader *h, SbWalKeys *k,
							   SbError *err);
extern void sb_wal_keys_clear(SbWalKeys *k);

/* The tag of HEADER's first SB_WAL_TAGGED_LEN bytes under K. */
extern bool sb_wal_tag(const SbWalKeys *k, const uint8_t header[SB_WAL_HEADER_SIZE],
					   uint8_t tag[SB_WAL_TAG_LEN], SbError *err);

/* Does HEADER end in its tag under K?  SB_ECORRUPT otherwise. */
extern bool sb_wal_tag_check(const SbWalKeys *k, const uint8_t header[SB_WAL_HEADER_SIZE],
							 SbError *err);

/* Mask (or unmask: the same XOR) a file's raw XXH3-64 and CRC-32C with K's mask. */
extern void sb_wal_mask(const SbWalKeys *k, uint64_t *raw_hash, uint32_t *crc32c);

/* The payload's associated data for H (sealing or opening it) into OUT; its length. */
#define SB_WAL_AAD_MAX 128
extern size_t sb_wal_payload_aad(const SbWalHeader *h, uint8_t out[SB_WAL_AAD_MAX]);

/* ---------- folders (wal_dest.c) ---------- */

/*
 * The folder of a WAL archive in one destination: DEST/wal/<sysid>/, a
 * store (store/store.h) entered twice below the destination's, whatever
 * keeps it: a local folder, or the objects under "PREFIX/wal/<sysid>/" of
 * a bucket.  What the folder can do is its store's features: a store
 * without SB_STORE_DURABLE_RENAME takes a file whole by one put, visible all
 * at once, with no temporary name, rename or fsync.
 */
typedef struct SbWalFolder
{
	SbStore    *store;			/* NULL when absent */
	int			fd;				/* the store's descriptor (SB_STORE_DESCRIPTORS), else -1 */
	bool		absent;			/* opened to read, and not there */
	char		path[PATH_MAX];	/* "DEST/wal/<sysid>", for messages */
} SbWalFolder;

/*
 * Open DEST's folder of the cluster SYSID, making what is missing of it
 * with CREATE (local: 0700, the folder receiving a new one fsynced).
 * Locally, below DEST no link is followed, and a missing destination is
 * SB_ENOTFOUND, saying its device may not be mounted; without CREATE,
 * F->absent says the destination holds no such folder.  A lazy store
 * (SB_STORE_LAZY) is not reached until the first operation.
 */
extern bool sb_wal_folder_open(const char *dest, const SbS3Settings *s3, uint64_t sysid, bool create, SbWalFolder *f,
							   SbError *err);
extern void sb_wal_folder_close(SbWalFolder *f);

/* F as a folder not opened (absent) at PATH, for messages: closing it is a no-op. */
extern void sb_wal_folder_none(SbWalFolder *f, const char *path);

/* F as the local folder FD (the caller's, not closed by F) at PATH; close F after. */
extern bool sb_wal_folder_local(SbWalFolder *f, int fd, const char *path, SbError *err);

/* The features of F's store (store.h), 0 when absent. */
extern unsigned sb_wal_folder_features(const SbWalFolder *f);

/* Make the names the folder holds durable (local: fsync it; a bucket's are at once). */
extern bool sb_wal_folder_sync(SbWalFolder *f, SbError *err);

/* An entry of a folder: its name, and its size (-1: not a regular file). */
typedef SbStoreEntryFn SbWalEntryFn;

/* Each entry of F to FN (a bucket's in key order); false when F cannot be listed or FN says so. */
extern bool sb_wal_folder_list(SbWalFolder *f, SbWalEntryFn fn, void *arg, SbError *err);

/* A file of a folder open for reading (sb_store_pread), and its path for messages. */
typedef struct SbWalFileIn
{
	SbStoreFile store;
	char		path[PATH_MAX + NAME_MAX + 2];
} SbWalFileIn;

/*
 * Open FILE of F: SB_ENOTFOUND when there is none; SB_ECORRUPT, saying
 * so, when it is a symbolic link (never followed) or not a regular file.
 */
extern bool sb_wal_folder_open_file(SbWalFolder *f, const char *file, SbWalFileIn *in,
									SbError *err);
extern void sb_wal_file_in_close(SbWalFileIn *in);

/* What tells that a file is still the one seen: a local file's stat, an object's size and ETag. */
typedef SbStoreStamp SbWalStamp;

/* FILE of F as it is now; false when it is not there (or not a regular file). */
extern bool sb_wal_folder_stamp(SbWalFolder *f, const char *file, SbWalStamp *stamp);

/* The same file, unmodified: an edit, a copy over it or a rename changes one of these. */
extern bool sb_wal_stamps_equal(const SbWalStamp *a, const SbWalStamp *b);

/*
 * Remove FILE of F; only if it is still the file EXPECTED describes where
 * the store tells files apart (SB_STORE_INODE_IDENTITY: the same inode).
 */
extern bool sb_wal_folder_remove(SbWalFolder *f, const char *file, const SbWalStamp *expected,
								 SbError *err);

/* Put DATA as FILE of F, whole (a store without durable renames); unless REPLACE, SB_EEXIST when there. */
extern bool sb_wal_folder_put(SbWalFolder *f, const char *file, const void *data, size_t len,
							  bool replace, SbError *err);

/* A file's path in a folder of PATH_MAX: room for any name. */
#define SB_WAL_PATH_MAX (PATH_MAX + NAME_MAX + 2)

/* "<name>.sbw" into OUT (SB_WAL_NAME_MAX + 8 bytes). */
extern void sb_wal_file_name(const char *name, char *out);
#define SB_WAL_FILE_NAME_MAX (SB_WAL_NAME_MAX + 8)

/* Are DESTS usable: 1 to SB_MAX_STRIPES paths?  SB_EINVAL otherwise. */
extern bool sb_wal_check_dests(const SbWalDests *dests, SbError *err);

/*
 * Is ENTRY "<walname>.sbw" (*TEMP false) or a temporary file of one
 * (*TEMP true)?  NAME gets the WAL file name, PARSED its parts.
 */
extern bool sb_wal_parse_file_name(const char *entry, char name[SB_WAL_NAME_MAX + 1],
								   SbWalName *parsed, bool *temp);

/* ---------- one archived file (wal_file.c) ---------- */

/*
 * A worker's buffers and contexts, and the key of the archive it reads
 * and writes: memory is these, whatever the size of a file.
 */
typedef struct SbWalWorker
{
	uint8_t    *in;				/* a piece read (a sealed one is opened in place) */
	uint8_t    *out;			/* a piece compressed or decompressed */
	uint8_t    *sealed;			/* a piece sealed: made by the first sealed write */
	size_t		piece;			/* the size of each */
	const SbKey *key;			/* the archive's (not owned); NULL: in the clear */
	SbCodecContext *codec;
	SbHashStream *raw_hash;
	SbHashStream *stored_hash;
} SbWalWorker;

/*
 * Buffers of PIECE bytes, and contexts for compressing at CODEC and LEVEL;
 * KEY (NULL: none) is what the worker seals what it writes with, and
 * opens what it reads with (sb_wal_header_decode says which files).
 */
extern bool sb_wal_worker_init(SbWalWorker *w, SbCodec codec, int level, size_t piece,
							   const SbKey *key, SbError *err);
extern void sb_wal_worker_free(SbWalWorker *w);

/* What the write of one file is to do, and then did. */
typedef struct SbWalWriteJob
{
	SbWalFolder *folder;		/* the wal/<sysid> folder */
	int			src_fd;			/* the WAL file, read from offset 0 */
	const char *src_path;
	bool		replace;		/* rename over a (damaged) copy already there */
	SbWalHeader header;			/* in: sysid, name, raw_len, codec, level, time;
								 * out: what was written */
	bool		source_failed;	/* out: the failure was the WAL file's, not the folder's */
} SbWalWriteJob;

/*
 * Write JOB's file durably, sealed when W has a key.  Locally: a temporary
 * file holding a provisional header, the payload streamed in pieces (zstd,
 * or as it is when that does not shrink it), the final header, fsync,
 * rename (without replacing, unless JOB->replace), fsync of the folder; on
 * failure the temporary file is removed.  In a bucket: the same bytes made in memory
 * (at most the header and the file's length), then one PUT.  SB_EEXIST
 * when a file of that name appeared meanwhile.
 */
extern bool sb_wal_file_write(SbWalWorker *w, SbWalWriteJob *job, SbError *err);

/*
 * Read F's header, check it on its own as KEY says (sb_wal_header_decode,
 * KEYS getting a sealed file's keys when not NULL) and that the file is
 * of the length it gives.  Errors name the file.
 */
extern bool sb_wal_file_read_header(SbStoreFile *f, const SbKey *key, SbWalHeader *h,
									SbWalKeys *keys, SbError *err);

/*
 * Read the archived file F whole and check everything (header as above
 * under W's key, stored hash or a sealed payload's tag, one zstd frame
 * decoding to exactly the raw length, raw hash and CRC-32C), handing the
 * raw bytes to SINK (NULL: check only) as they come: before the tag at the
 * end is checked, so a sink keeps them unused until this returns true.
 * Errors name the file.
 */
extern bool sb_wal_file_read(SbWalWorker *w, SbStoreFile *f, uint64_t sysid, const char *name,
							 SbWalHeader *h, SbCodecSink sink, void *arg, SbError *err);

/* The raw length, XXH3-64 and CRC-32C of the file at SRC_FD (of RAW_LEN bytes) into H. */
extern bool sb_wal_source_identity(SbWalWorker *w, int src_fd, const char *src_path,
								   SbWalHeader *h, SbError *err);

/* ---------- where a read goes (wal_get.c) ---------- */

/* A file written under a temporary name in a folder, renamed into place when complete. */
typedef struct SbWalOut
{
	int			dirfd;
	int			fd;
	bool		durable;		/* fsync the file and the folder */
	char		name[NAME_MAX + 1];
	char		temp[NAME_MAX + 1];
	char		path[PATH_MAX + NAME_MAX + 2];	/* of the temporary file, for messages */
	uint64_t	written;
} SbWalOut;

/* Create TEMP_NAME in DIRFD (never through a link; emptied if there) to become NAME. */
extern bool sb_wal_out_begin(SbWalOut *o, int dirfd, const char *dir_path, const char *name,
							 const char *temp_name, bool durable, SbError *err);
/* An SbCodecSink: append to the file. */
extern bool sb_wal_out_write(void *arg, const void *data, size_t len, SbError *err);
/* Empty it, to write it again from another copy. */
extern bool sb_wal_out_restart(SbWalOut *o, SbError *err);
/* Close and rename into place (fsyncs first and after when durable); removed on failure. */
extern bool sb_wal_out_commit(SbWalOut *o, SbError *err);
/* Close and remove it. */
extern void sb_wal_out_abandon(SbWalOut *o);

/* Read NAME from FOLDER whole, checking everything, its raw bytes to SINK. */
extern bool sb_wal_read_copy(SbWalWorker *w, SbWalFolder *folder, const char *name,
							 uint64_t sysid, SbCodecSink sink, void *arg, SbWalHeader *h,
							 SbError *err);

/*
 * Take archived file NAME from FOLDER, whatever ARG makes of it; it starts
 * its output afresh on each call (another copy may have failed).
 */
typedef bool (*SbWalCopyFn) (void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name,
							 uint64_t sysid, SbWalHeader *h, SbError *err);

/* An SbWalCopyFn: sb_wal_read_copy into the SbWalOut ARG, emptied first. */
extern bool sb_wal_copy_to_out(void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name,
							   uint64_t sysid, SbWalHeader *h, SbError *err);

/*
 * COPY NAME from the first destination of FOUND that holds a good copy
 * (the next one when it fails); *USED says which.  Errors are the first
 * copy's.
 */
extern bool sb_wal_read_found(SbWalWorker *w, const SbWalDests *dests, const SbWalFound *found,
							  const char *name, SbWalCopyFn copy, void *arg, uint32_t *used,
							  SbWalHeader *h, SbError *err);

/* ---------- timeline histories (wal_continuity.c) ---------- */

#define SB_WAL_MAX_TIMELINES 1024

/*
 * A timeline's history, oldest line first: each timeline that led to it
 * and the LSN where it begins (the previous line's switch point); the
 * last line is the timeline itself.
 */
typedef struct SbWalHistory
{
	uint32_t	tli[SB_WAL_MAX_TIMELINES];
	uint64_t	begin[SB_WAL_MAX_TIMELINES];
	uint32_t	n;
} SbWalHistory;

/*
 * TIMELINE's history from its history file in DESTS (timeline 1 has
 * none); *ABSENT, and the timeline alone in H, when the archive does not
 * hold it.  SB_ECORRUPT for a file PostgreSQL would not read.
 */
extern bool sb_wal_history_read(const SbWalDests *dests, uint32_t timeline, SbWalHistory *h,
								bool *absent, SbError *err);

/* The timeline of H that holds LSN (the newest line whose stretch holds it); 0: none. */
extern uint32_t sb_wal_history_at(const SbWalHistory *h, uint64_t lsn);

/* ---------- names (wal_name.c) ---------- */

/* The segment size options give (0: SB_WAL_DEFAULT_SEGMENT_SIZE). */
extern uint32_t sb_wal_segment_size_of(uint32_t option);

/* The piece files are handled in for segments of SEGMENT_SIZE: SB_WAL_PIECE_SIZE or less. */
extern uint32_t sb_wal_piece_size(uint32_t segment_size);

/* The archive's segment size: GIVEN if not 0, else what LISTING's segments say, else the default. */
extern uint32_t sb_wal_listing_segment_size(const SbWalListing *listing, uint32_t given);

/* Does segment-like A (a segment, partial or backup file) come before B, whatever the timelines? */
extern bool sb_wal_position_before(const SbWalName *a, const SbWalName *b);

/* A segment or a partial segment: a file that goes to one destination. */
extern bool sb_wal_kind_is_segment(SbWalKind kind);

/* TEXT for a message: at most 80 characters, bytes other than printable ASCII as \xNN. */
#define SB_WAL_PRINTABLE_MAX (SB_WAL_NAME_MAX * 8 + 8)
extern void sb_wal_printable(const char *text, char *out, size_t size);

/* Put "could not WHAT WAL file \"NAME\": " before ERR's message (NAME shown printable). */
extern void sb_wal_error_about(SbError *err, const char *what, const char *name);

/* The system identifier as its folder name (decimal), 21 bytes. */
extern void sb_wal_sysid_text(uint64_t sysid, char out[21]);

#endif							/* SB_WAL_INTERNAL_H */
