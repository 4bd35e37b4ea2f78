/*
 * store_driver.h
 *		What a driver of stores (store_posix.c, store_s3.c) gives store.c:
 *		its operations and features.  Only the store's own files see this;
 *		everyone else goes through store.h.
 */
#ifndef SB_STORE_DRIVER_H
#define SB_STORE_DRIVER_H

#include <limits.h>

#include "store/store.h"

struct StoreS3;

struct SbStoreDriver
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
	bool		(*make) (SbStore *s, const char *name, SbStore **sub, SbError *err);
	void		(*remove_folder) (SbStore *s, const char *name);
	bool		(*identity) (SbStore *s, SbStoreStamp *stamp, SbError *err);
	bool		(*canonical) (const char *dest, char resolved[PATH_MAX], SbError *err);
	/* files made front to back: W's store, names and path set, the rest zero (fd -1) */
	bool		(*create) (SbStoreWriter *w, const SbStoreCreate *how, SbError *err);
	bool		(*append) (SbStoreWriter *w, const void *buf, size_t len, SbError *err);
	bool		(*write_at) (SbStoreWriter *w, const void *buf, size_t len, uint64_t offset, SbError *err);
	SbIo	   *(*writer_io) (SbStoreWriter *w, SbIoMethod method, unsigned depth, SbError *err);
	bool		(*writer_sync) (SbStoreWriter *w, SbError *err);
	bool		(*finish) (SbStoreWriter *w, SbError *err);
	void		(*abort) (SbStoreWriter *w);
	void		(*writer_release) (SbStoreWriter *w);
	void		(*release) (SbStore *s);	/* the driver's part of S (not S itself) */
	/* files read by path (store_file.c): F zeroed, its path set (fd -1) */
	bool		(*file_open) (SbStoreFile *f, SbError *err);
	ssize_t		(*file_pread) (SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err);
	SbIo	   *(*file_io) (SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err);
	void		(*file_close) (SbStoreFile *f);
	char	   *(*read_small) (const char *path, const SbS3Settings *s3, size_t max, size_t *len, SbError *err);
	bool		(*file_size) (const char *path, const SbS3Settings *s3, uint64_t *size, SbError *err);
	bool		(*is_folder) (const char *path);
};

typedef struct SbStoreDriver SbStoreDriver;

struct SbStore
{
	const SbStoreDriver *driver;
	char		path[PATH_MAX];	/* for messages: a path, or s3://bucket/prefix */
	char		what[64];		/* SbStoreOptions.what */
	char		owner[64];		/* SbStoreOptions.owner */
	int			fd;				/* posix: the folder; -1 */
	bool		own_fd;			/* posix: closed with the store */
	struct StoreS3 *s3;			/* s3: the bucket, prefix and connection settings */
	bool		cleanup;		/* sb_store_set_cleanup */
};

struct SbStoreWriter
{
	SbStore    *store;			/* the caller's */
	char		name[NAME_MAX + 1];
	char		temp[NAME_MAX + 1];	/* "" : made under NAME */
	char		path[PATH_MAX + NAME_MAX + 2];	/* store/name */
	char		what[32];		/* SbStoreCreate.what, or "" */
	bool		drop_cache;
	bool		finished;
	uint64_t	size;			/* appended so far */
	int			fd;				/* posix */
	struct SbS3Upload *upload;	/* s3 */
};

extern const SbStoreDriver sb_store_posix_driver;
extern const SbStoreDriver sb_store_s3_driver;

/* The driver that keeps what PATH (a destination, or a file in one) names (store.c). */
extern const SbStoreDriver *sb_store_driver_of(const char *path);

/* A zeroed store of DRIVER at PATH, with O's names for messages. */
extern SbStore *sb_store_alloc(const SbStoreDriver *driver, const char *path, const SbStoreOptions *o,
							   SbError *err);

/* A store below PARENT (same driver and names) at PATH. */
extern SbStore *sb_store_alloc_sub(const SbStore *parent, const char *path, SbError *err);

/* The drivers' openings of a destination (store.c chose the driver). */
extern SbStore *sb_store_posix_new(const char *dest, const SbStoreOptions *o, SbError *err);
extern SbStore *sb_store_s3_new(const char *dest, const SbStoreOptions *o, SbError *err);

#endif							/* SB_STORE_DRIVER_H */
