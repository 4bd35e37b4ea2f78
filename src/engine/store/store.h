/*
 * store.h
 *		Where backups and the WAL archive are kept, whatever keeps them: a
 *		store is a folder of a file system (store_posix.c) or a key prefix
 *		of a bucket (store_s3.c), opened once from a destination string, and
 *		the callers ask what it can do (its features), never which it is.
 *
 * Reading what a backup stored goes through here too: a path names a local
 * file, or an object when it begins with s3:// (s3://bucket/key), reached
 * with the caller's S3 settings (NULL: the environment).  The readers of
 * archives (manifests, stripes' trailers and indexes, chunk records) need
 * not know which.
 */
#ifndef SB_STORE_H
#define SB_STORE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_store.h"
#include "util/io.h"

struct SbS3Client;
struct SbStoreDriver;


/* One file or object, open for reading. */
typedef struct SbStoreFile
{
	const struct SbStoreDriver *driver;	/* what reads it; NULL: not open */
	const char *path;			/* the caller's, for messages */
	int			fd;				/* a local file, or -1 */
	struct SbS3Client *client;	/* an object: its client, */
	SbS3Location object;		/* its bucket, and its key as prefix */
	const SbS3Settings *s3;		/* the caller's, for an object */
	uint64_t	size;
} SbStoreFile;

/* Open PATH (an object reached with S3); SB_ENOTFOUND when there is nothing there. */
extern bool sb_store_open(SbStoreFile *f, const char *path, const SbS3Settings *s3, SbError *err);

/* Up to LEN bytes at OFFSET (fewer at the end); -1 (ERR) on failure. */
extern ssize_t sb_store_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err);

/* An I/O context reading F (several reads at once), for the read pipeline. */
extern SbIo *sb_store_reader_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err);

extern void sb_store_close(SbStoreFile *f);

/* The whole of PATH (at most MAX bytes), malloc'd and NUL-terminated; SB_ENOTFOUND when absent. */
extern char *sb_store_read_small(const char *path, const SbS3Settings *s3, size_t max, size_t *len,
								 SbError *err);

/*
 * Whether PATH is a regular file (an object), and its size; when not, ERR
 * (NULL: not wanted) says why, SB_ENOTFOUND when nothing is there (an
 * object store that refuses to say is another error: not "absent").
 */
extern bool sb_store_file_size(const char *path, const SbS3Settings *s3, uint64_t *size, SbError *err);

/* Whether PATH could hold a backup: a folder, or an object-storage location. */
extern bool sb_store_is_folder(const char *path);

/* ---------- stores: a destination's folder, or a prefix of a bucket ---------- */

typedef struct SbStore SbStore;

/* How a store is opened; zeroes are the defaults. */
typedef struct SbStoreOptions
{
	/*
	 * The object-storage connection settings (endpoint, region, credentials
	 * file...) the store settles when it is opened and keeps for all its
	 * requests; NULL: none, the environment and the credentials file only.
	 */
	const SbS3Settings *s3;
	/* What the destination is, for messages ("WAL archive destination"); NULL: "destination". */
	const char *what;
	/* Who never follows a link below it, for messages ("the WAL archive"); NULL: "the store". */
	const char *owner;
} SbStoreOptions;

/*
 * Are destinations A and B one place by what their text says (the same
 * bucket and prefix, however written)?  False for local folders, which are
 * told apart by their inodes (SB_STORE_INODE_IDENTITY).
 */
extern bool sb_store_same_place(const char *a, const char *b);

/*
 * Open the store DEST names, as given (a local destination may be a link
 * to a device).  A local one must exist: SB_ENOTFOUND, saying its device
 * may not be mounted.  A lazy one (SB_STORE_LAZY) is checked only as text.
 */
extern SbStore *sb_store_new(const char *dest, const SbStoreOptions *o, SbError *err);

/*
 * A store of the local folder FD at PATH (the caller's descriptor, not
 * closed by the store): a folder the engine made itself, such as a spool.
 */
extern SbStore *sb_store_new_fd(int fd, const char *path, SbError *err);

extern void sb_store_free(SbStore *s);

extern unsigned sb_store_features(const SbStore *s);

/* The store's place, for messages: a path, or s3://bucket/prefix. */
extern const char *sb_store_path(const SbStore *s);

/* A folder's descriptor (SB_STORE_DESCRIPTORS), else -1. */
extern int	sb_store_fd(const SbStore *s);

/*
 * The folder NAME of S as a store of its own, made first with CREATE (and
 * its name made durable).  No link is followed.  Without CREATE, a missing
 * folder gives true with *SUB NULL.
 */
extern bool sb_store_enter(SbStore *s, const char *name, bool create, SbStore **sub, SbError *err);

/* An entry of a store: its name, and its size (-1: not a regular file). */
typedef bool (*SbStoreEntryFn) (void *arg, const char *name, int64_t size, SbError *err);

/* Each entry directly in S to FN; false when S cannot be listed or FN says so. */
extern bool sb_store_list(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err);

/*
 * Every file below S to FN, by its name relative to S ("a/b" for b in
 * folder a), in no set order; a missing container (a bucket that does not
 * exist) is an error sb_store_container_missing() tells.
 */
extern bool sb_store_list_all(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err);

/*
 * ERR says the place that holds a store does not exist (a bucket), which
 * holds nothing then: never "no such file", never an empty folder.
 */
extern bool sb_store_container_missing(const SbError *err);

/*
 * Open NAME of S for reading into F (F->path is PATH, the caller's, which
 * must hold "S/NAME"): SB_ENOTFOUND when there is none (a missing bucket is
 * never that); SB_ECORRUPT, saying so, when it is a link (never followed) or
 * not a regular file.
 */
extern bool sb_store_open_in(SbStore *s, const char *name, SbStoreFile *f, char *path, size_t path_size,
							 SbError *err);

/*
 * Put DATA as NAME of S, whole, visible all at once; unless REPLACE,
 * SB_EEXIST when NAME is there.  For stores without SB_STORE_DURABLE_RENAME
 * (a store with it takes its files through sb_store_fd).
 */
extern bool sb_store_put(SbStore *s, const char *name, const void *data, size_t len, bool replace,
						 SbError *err);

/* What tells that a file is still the one seen: a local file's stat, an object's size and ETag. */
typedef struct SbStoreStamp
{
	struct stat st;
	char		etag[128];
} SbStoreStamp;

/* NAME of S as it is now; false when it is not there (or not a regular file). */
extern bool sb_store_stamp(SbStore *s, const char *name, SbStoreStamp *stamp);

/* The stamp of F, open (sb_store_open_in): the file checked is the one then removed. */
extern bool sb_store_stamp_open(SbStore *s, const SbStoreFile *f, SbStoreStamp *stamp);

/* The same file, unmodified: an edit, a copy over it or a rename changes one of these. */
extern bool sb_store_stamps_equal(const SbStoreStamp *a, const SbStoreStamp *b);

/*
 * Remove NAME of S, only if it is still the file EXPECTED describes where
 * the store can tell (SB_STORE_INODE_IDENTITY: the same inode); NULL: as it is.
 */
extern bool sb_store_remove(SbStore *s, const char *name, const SbStoreStamp *expected, SbError *err);

/* Make the names S holds durable: fsync the folder; nothing to do where puts are durable at once. */
extern bool sb_store_sync(SbStore *s, SbError *err);

/*
 * Make the folder NAME of S, which must not be there (SB_EEXIST when it is:
 * a folder, or in a bucket any object below the name), and enter it.  The
 * new name is made durable by the caller (sb_store_sync of S).
 */
extern bool sb_store_make(SbStore *s, const char *name, SbStore **sub, SbError *err);

/* Remove the empty folder NAME of S, where the store has folders; quiet. */
extern void sb_store_remove_folder(SbStore *s, const char *name);

/*
 * From now on, S's operations run even when the process's current operation
 * must stop: clean-up after a cancel.
 */
extern void sb_store_set_cleanup(SbStore *s);

/* The identity of S's place itself (SB_STORE_INODE_IDENTITY: its folder's device and inode). */
extern bool sb_store_identity(SbStore *s, SbStoreStamp *stamp, SbError *err);

/*
 * DEST as one spelling of its place, compared like a path (two stores are
 * one, or one inside the other, when their spellings are): a local folder
 * resolved (realpath: it must exist), s3://bucket/prefix as parsed.
 */
extern bool sb_store_canonical(const char *dest, char resolved[PATH_MAX], SbError *err);

/* ---------- files made front to back (stripes, manifests) ---------- */

typedef struct SbStoreWriter SbStoreWriter;

/* How a file is made; zeroes are the defaults. */
typedef struct SbStoreCreate
{
	/*
	 * Written under this name, and renamed to the file's own when finished,
	 * replacing it (where the store has durable renames: a manifest); a
	 * store without shows the file only when finished anyway.  NULL: made
	 * under its own name, which must not exist (a stripe).
	 */
	const char *temp_name;
	/* What the file is, for messages ("stripe file"); NULL: nothing said. */
	const char *what;
	/* Parts sent at once by a store that buffers appends (SB_STORE_BUFFERED_APPEND); 0: its most. */
	unsigned	parts_in_flight;
	/* When finished, its pages dropped from the page cache (SB_STORE_PAGE_CACHE). */
	bool		drop_cache;
} SbStoreCreate;

/* Create NAME in S, for appending front to back. */
extern SbStoreWriter *sb_store_create(SbStore *s, const char *name, const SbStoreCreate *how, SbError *err);

/* Append LEN bytes of BUF at the file's end (the end of what was appended). */
extern bool sb_store_append(SbStoreWriter *w, const void *buf, size_t len, SbError *err);

/*
 * Write LEN bytes of BUF at OFFSET, which must be where the file ends so
 * far: what I/O contexts wrote through it (sb_store_writer_io) counts, and
 * a store with descriptors does not know it (a stripe: its header, index
 * and trailer between the chunk records).
 */
extern bool sb_store_write_at(SbStoreWriter *w, const void *buf, size_t len, uint64_t offset, SbError *err);

/* The bytes appended so far. */
extern uint64_t sb_store_appended(const SbStoreWriter *w);

/* The file's path, for messages: the store's and its name ("S/NAME"). */
extern const char *sb_store_writer_path(const SbStoreWriter *w);

/*
 * The file's descriptor (SB_STORE_DESCRIPTORS), which I/O contexts write
 * through at offsets of their own; -1 for a store without.
 */
extern int	sb_store_writer_fd(const SbStoreWriter *w);

/*
 * An I/O context that writes W: for a store with descriptors a context of
 * METHOD and DEPTH (its operations name sb_store_writer_fd), else one that
 * appends, each operation where the file ends so far.
 */
extern SbIo *sb_store_writer_io(SbStoreWriter *w, SbIoMethod method, unsigned depth, SbError *err);

/* What was appended is durable: an fsync, or every full part stored. */
extern bool sb_store_writer_sync(SbStoreWriter *w, SbError *err);

/*
 * The file durable and visible under its name: an fsync (and the rename
 * of its temporary name, and an fsync of the folder), or the object made.
 */
extern bool sb_store_writer_finish(SbStoreWriter *w, SbError *err);

/* Undo W: a file not finished goes, and so does one finished (quiet, whatever fails). */
extern void sb_store_writer_abort(SbStoreWriter *w);

/* Free W; one neither finished nor aborted is left as far as it got (a temporary name removed). */
extern void sb_store_writer_free(SbStoreWriter *w);

#endif							/* SB_STORE_H */
