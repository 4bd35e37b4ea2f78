/*
 * store_driver.h
 *		What a driver of stores (store_posix.c, store_s3.c) gives store.c:
 *		its operations and features.  Only the store's own files see this;
 *		everyone else goes through store.h.
 */
#ifndef SB_STORE_DRIVER_H
#define SB_STORE_DRIVER_H

#include <limits.h>

#include "store.h"

struct StoreS3;

typedef struct SbStoreDriver
{
	const char *name;			/* "posix", "s3": for tests and messages only */
	unsigned	features;		/* SbStoreFeature bits */
	bool		(*enter) (SbStore *s, const char *name, bool create, SbStore **sub, SbError *err);
	bool		(*list) (SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err);
	bool		(*list_all) (SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err);
	bool		(*open_in) (SbStore *s, const char *name, SbStoreFile *f, SbError *err);
	bool		(*put) (SbStore *s, const char *name, const void *data, size_t len, bool replace,
						SbError *err);
	bool		(*stamp) (SbStore *s, const char *name, SbStoreStamp *stamp);
	bool		(*stamp_open) (SbStore *s, const SbStoreFile *f, SbStoreStamp *stamp);
	bool		(*remove) (SbStore *s, const char *name, const SbStoreStamp *expected, SbError *err);
	bool		(*sync) (SbStore *s, SbError *err);
	void		(*release) (SbStore *s);	/* the driver's part of S (not S itself) */
} SbStoreDriver;

struct SbStore
{
	const SbStoreDriver *driver;
	char		path[PATH_MAX];	/* for messages: a path, or s3://bucket/prefix */
	char		what[64];		/* SbStoreOptions.what */
	char		owner[64];		/* SbStoreOptions.owner */
	int			fd;				/* posix: the folder; -1 */
	bool		own_fd;			/* posix: closed with the store */
	struct StoreS3 *s3;			/* s3: the bucket, prefix and connection settings */
};

extern const SbStoreDriver sb_store_posix_driver;
extern const SbStoreDriver sb_store_s3_driver;

/* A zeroed store of DRIVER at PATH, with O's names for messages. */
extern SbStore *sb_store_alloc(const SbStoreDriver *driver, const char *path, const SbStoreOptions *o,
							   SbError *err);

/* A store below PARENT (same driver and names) at PATH. */
extern SbStore *sb_store_alloc_sub(const SbStore *parent, const char *path, SbError *err);

/* The drivers' openings of a destination (store.c chose the driver). */
extern SbStore *sb_store_posix_new(const char *dest, const SbStoreOptions *o, SbError *err);
extern SbStore *sb_store_s3_new(const char *dest, const SbStoreOptions *o, SbError *err);

#endif							/* SB_STORE_DRIVER_H */
