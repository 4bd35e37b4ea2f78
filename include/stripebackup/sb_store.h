/*
 * sb_store.h
 *		What a destination's storage can do, asked of the destination string
 *		(a local folder, or s3://bucket/prefix): the engine, the command and
 *		the extension ask these features instead of the kind of destination,
 *		so that another kind needs no change at the callers.  The stores
 *		themselves are the engine's (src/engine/store/store.h).
 */
#ifndef SB_STORE_PUBLIC_H
#define SB_STORE_PUBLIC_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"
#include "stripebackup/sb_s3.h"

/*
 * What a store can do.  A caller asks these (sb_store_features) instead of
 * the kind of destination, so that a third kind needs no change at the
 * callers.
 */
typedef enum SbStoreFeature
{
	/*
	 * A new name lasts only once its file is fsynced and renamed into place
	 * and the folder fsynced (sb_store_sync); without it a put shows the
	 * whole object at once, or nothing, and is durable when it returns.
	 */
	SB_STORE_DURABLE_RENAME = 1u << 0,
	/* A file's identity is its device and inode: two names may be one file, or one folder. */
	SB_STORE_INODE_IDENTITY = 1u << 1,
	/* Ranges never written take no space (holes). */
	SB_STORE_SPARSE = 1u << 2,
	/* Writes go through the kernel's page cache: direct I/O, dropping what was written. */
	SB_STORE_PAGE_CACHE = 1u << 3,
	/*
	 * Folders of this machine, held as descriptors: a caller may open files
	 * through them (openat), and the destination is a path of this machine.
	 */
	SB_STORE_DESCRIPTORS = 1u << 4,
	/*
	 * Reached only at the first operation: opening says nothing of the place,
	 * and a place that cannot be listed is unreachable, not missing.
	 */
	SB_STORE_LAZY = 1u << 5,
	/* Appends are held in memory until a part is full (the writer's buffers count in its memory). */
	SB_STORE_BUFFERED_APPEND = 1u << 6,
	/*
	 * Reached over a connection whose settings (endpoint, region,
	 * credentials) another process reaching it needs too.
	 */
	SB_STORE_CONNECTION = 1u << 7
} SbStoreFeature;

/*
 * The features of the store DEST would open (0 for NULL), without opening
 * it: what the options' checks and memory estimates need.  Whether DEST is
 * a destination at all is sb_store_check_destination's.
 */
extern unsigned sb_store_features_of(const char *dest);

/*
 * Whether DEST names a place whatever the working directory: an absolute
 * path, or an object-storage location (as written, not yet checked).
 */
extern bool sb_store_is_absolute(const char *dest);

/*
 * Whether DEST could name a store: an absolute path, or an object-storage
 * location that parses (else ERR says why, SB_EINVAL, WHAT naming it).
 */
extern bool sb_store_check_destination(const char *dest, const char *what, SbError *err);

/* What sb_store_probe found of a destination. */
typedef struct SbStoreProbe
{
	bool		listed;			/* opened and listed: reachable, with these credentials */
	bool		writable;		/* a small file made durable there, and removed */
	bool		local;			/* a folder of this machine: the figures below are known */
	uint64_t	entries;		/* what the listing held */
	uint64_t	free_bytes;		/* for an unprivileged writer */
	uint64_t	device;			/* the file system's device number */
} SbStoreProbe;

/*
 * A pre-flight check of DEST: open it with S3 (NULL: the environment), list
 * it, make a one-block file there and remove it; for a local folder, its
 * free space and device.  False with ERR at the first step that failed
 * (P says which passed).
 */
extern bool sb_store_probe(const char *dest, const SbS3Settings *s3, SbStoreProbe *p, SbError *err);

#endif							/* SB_STORE_PUBLIC_H */
