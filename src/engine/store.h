/*
 * store.h
 *		Reading what a backup stored, wherever it is: a path names a local
 *		file, or an object when it begins with s3:// (s3://bucket/key).  The
 *		readers of archives (manifests, stripes' trailers and indexes, chunk
 *		records) go through here and need not know which.
 */
#ifndef SB_STORE_H
#define SB_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stripebackup/sb_io_method.h"
#include "stripebackup/sb_s3.h"
#include "io.h"

struct SbS3Client;

/* One file or object, open for reading. */
typedef struct SbStoreFile
{
	const char *path;			/* the caller's, for messages */
	int			fd;				/* a local file, or -1 */
	struct SbS3Client *client;	/* an object: its client, */
	SbS3Location object;		/* its bucket, and its key as prefix */
	uint64_t	size;
} SbStoreFile;

/* Open PATH; SB_ENOTFOUND when there is nothing there. */
extern bool sb_store_open(SbStoreFile *f, const char *path, SbError *err);

/* Up to LEN bytes at OFFSET (fewer at the end); -1 (ERR) on failure. */
extern ssize_t sb_store_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err);

/* An I/O context reading F (several reads at once), for the read pipeline. */
extern SbIo *sb_store_reader_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err);

extern void sb_store_close(SbStoreFile *f);

/* The whole of PATH (at most MAX bytes), malloc'd and NUL-terminated; SB_ENOTFOUND when absent. */
extern char *sb_store_read_small(const char *path, size_t max, size_t *len, SbError *err);

/*
 * Whether PATH is a regular file (an object), and its size; when not, ERR
 * (NULL: not wanted) says why, SB_ENOTFOUND when nothing is there (an
 * object store that refuses to say is another error: not "absent").
 */
extern bool sb_store_file_size(const char *path, uint64_t *size, SbError *err);

/* Whether PATH could hold a backup: a folder, or an object-storage location. */
extern bool sb_store_is_folder(const char *path);

#endif							/* SB_STORE_H */
