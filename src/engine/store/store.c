/*
 * store.c
 *		Stores (store.h): the one place that tells, from a destination
 *		string, which driver keeps it; every operation goes to the driver.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "store/s3/s3_client.h"
#include "store/store_driver.h"

/* The driver of DEST: object storage when it says so, else the file system. */
const SbStoreDriver *
sb_store_driver_of(const char *dest)
{
	return sb_s3_is_location(dest) ? &sb_store_s3_driver : &sb_store_posix_driver;
}

unsigned
sb_store_features_of(const char *dest)
{
	return dest != NULL ? sb_store_driver_of(dest)->features : 0;
}

bool
sb_store_is_absolute(const char *dest)
{
	return dest != NULL && (dest[0] == '/' || sb_s3_is_location(dest));
}

bool
sb_store_check_destination(const char *dest, const char *what, SbError *err)
{
	SbS3Location loc;

	if (dest != NULL && sb_s3_is_location(dest))
		return sb_s3_parse_location(dest, &loc, err);
	if (dest == NULL || dest[0] != '/')
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is neither an absolute path nor an s3:// location",
							what, dest ? dest : "");
	return true;
}

bool
sb_store_same_place(const char *a, const char *b)
{
	SbS3Location x,
				y;
	SbError		ignored;

	if (!sb_s3_is_location(a) || !sb_s3_is_location(b))
		return false;
	return sb_s3_parse_location(a, &x, &ignored) && sb_s3_parse_location(b, &y, &ignored) &&
		strcmp(x.bucket, y.bucket) == 0 && strcmp(x.prefix, y.prefix) == 0;
}

SbStore *
sb_store_new(const char *dest, const SbStoreOptions *o, SbError *err)
{
	SbStoreOptions none = {0};

	if (o == NULL)
		o = &none;
	if (sb_store_driver_of(dest) == &sb_store_s3_driver)
		return sb_store_s3_new(dest, o, err);
	return sb_store_posix_new(dest, o, err);
}

bool
sb_store_canonical(const char *dest, char resolved[PATH_MAX], SbError *err)
{
	return sb_store_driver_of(dest)->canonical(dest, resolved, err);
}

SbStore *
sb_store_alloc(const SbStoreDriver *driver, const char *path, const SbStoreOptions *o, SbError *err)
{
	SbStore    *s;

	if (strlen(path) >= PATH_MAX)
	{
		sb_error_set(err, SB_EINVAL, "destination path too long: \"%s\"", path);
		return NULL;
	}
	if ((s = sb_alloc(sizeof(SbStore), err)) == NULL)
		return NULL;
	s->driver = driver;
	s->fd = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->what, sizeof(s->what), "%s", o && o->what ? o->what : "destination");
	snprintf(s->owner, sizeof(s->owner), "%s", o && o->owner ? o->owner : "the store");
	return s;
}

SbStore *
sb_store_alloc_sub(const SbStore *parent, const char *path, SbError *err)
{
	SbStoreOptions o = {.what = parent->what, .owner = parent->owner};

	return sb_store_alloc(parent->driver, path, &o, err);
}

void
sb_store_free(SbStore *s)
{
	if (s == NULL)
		return;
	s->driver->release(s);
	free(s);
}

unsigned
sb_store_features(const SbStore *s)
{
	return s->driver->features;
}

const char *
sb_store_path(const SbStore *s)
{
	return s->path;
}

int
sb_store_fd(const SbStore *s)
{
	return s->fd;
}

bool
sb_store_enter(SbStore *s, const char *name, bool create, SbStore **sub, SbError *err)
{
	*sub = NULL;
	return s->driver->enter(s, name, create, sub, err);
}

bool
sb_store_list(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	return s->driver->list(s, fn, arg, err);
}

bool
sb_store_list_all(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	return s->driver->list_all(s, fn, arg, err);
}

bool
sb_store_container_missing(const SbError *err)
{
	return sb_s3_bucket_missing(err);
}

bool
sb_store_open_in(SbStore *s, const char *name, SbStoreFile *f, char *path, size_t path_size, SbError *err)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->path = path;
	if (snprintf(path, path_size, "%s/%s", s->path, name) >= (int) path_size)
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", s->path, name);
	return s->driver->open_in(s, name, f, err);
}

bool
sb_store_put(SbStore *s, const char *name, const void *data, size_t len, bool replace, SbError *err)
{
	return s->driver->put(s, name, data, len, replace, err);
}

bool
sb_store_stamp(SbStore *s, const char *name, SbStoreStamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	return s->driver->stamp(s, name, stamp);
}

bool
sb_store_stamp_open(SbStore *s, const SbStoreFile *f, SbStoreStamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	return s->driver->stamp_open(s, f, stamp);
}

bool
sb_store_stamps_equal(const SbStoreStamp *a, const SbStoreStamp *b)
{
	const struct stat *x = &a->st,
			   *y = &b->st;

	return x->st_dev == y->st_dev && x->st_ino == y->st_ino && x->st_size == y->st_size &&
		x->st_ctim.tv_sec == y->st_ctim.tv_sec && x->st_ctim.tv_nsec == y->st_ctim.tv_nsec &&
		x->st_mtim.tv_sec == y->st_mtim.tv_sec && x->st_mtim.tv_nsec == y->st_mtim.tv_nsec &&
		strcmp(a->etag, b->etag) == 0;
}

bool
sb_store_remove(SbStore *s, const char *name, const SbStoreStamp *expected, SbError *err)
{
	return s->driver->remove(s, name, expected, err);
}

bool
sb_store_sync(SbStore *s, SbError *err)
{
	return s->driver->sync(s, err);
}

bool
sb_store_make(SbStore *s, const char *name, SbStore **sub, SbError *err)
{
	*sub = NULL;
	return s->driver->make(s, name, sub, err);
}

void
sb_store_remove_folder(SbStore *s, const char *name)
{
	s->driver->remove_folder(s, name);
}

void
sb_store_set_cleanup(SbStore *s)
{
	s->cleanup = true;
}

bool
sb_store_identity(SbStore *s, SbStoreStamp *stamp, SbError *err)
{
	memset(stamp, 0, sizeof(*stamp));
	return s->driver->identity(s, stamp, err);
}

/* ---------- writers ---------- */

SbStoreWriter *
sb_store_create(SbStore *s, const char *name, const SbStoreCreate *how, SbError *err)
{
	SbStoreCreate none = {0};
	SbStoreWriter *w;

	if (how == NULL)
		how = &none;
	if (strlen(name) > NAME_MAX || (how->temp_name != NULL && strlen(how->temp_name) > NAME_MAX))
	{
		sb_error_set(err, SB_EINVAL, "file name too long: \"%s\"", name);
		return NULL;
	}
	if ((w = sb_alloc(sizeof(SbStoreWriter), err)) == NULL)
		return NULL;
	w->store = s;
	w->fd = -1;
	w->drop_cache = how->drop_cache;
	snprintf(w->name, sizeof(w->name), "%s", name);
	snprintf(w->temp, sizeof(w->temp), "%s", how->temp_name ? how->temp_name : "");
	snprintf(w->what, sizeof(w->what), "%s", how->what ? how->what : "");
	snprintf(w->path, sizeof(w->path), "%s/%s", s->path, name);
	if (!s->driver->create(w, how, err))
	{
		sb_store_writer_free(w);
		return NULL;
	}
	return w;
}

bool
sb_store_append(SbStoreWriter *w, const void *buf, size_t len, SbError *err)
{
	if (!w->store->driver->append(w, buf, len, err))
		return false;
	w->size += len;
	return true;
}

bool
sb_store_write_at(SbStoreWriter *w, const void *buf, size_t len, uint64_t offset, SbError *err)
{
	if (!w->store->driver->write_at(w, buf, len, offset, err))
		return false;
	if (offset + len > w->size)
		w->size = offset + len;
	return true;
}

uint64_t
sb_store_appended(const SbStoreWriter *w)
{
	return w->size;
}

const char *
sb_store_writer_path(const SbStoreWriter *w)
{
	return w->path;
}

int
sb_store_writer_fd(const SbStoreWriter *w)
{
	return w->fd;
}

SbIo *
sb_store_writer_io(SbStoreWriter *w, SbIoMethod method, unsigned depth, SbError *err)
{
	return w->store->driver->writer_io(w, method, depth, err);
}

bool
sb_store_writer_sync(SbStoreWriter *w, SbError *err)
{
	return w->store->driver->writer_sync(w, err);
}

bool
sb_store_writer_finish(SbStoreWriter *w, SbError *err)
{
	if (!w->store->driver->finish(w, err))
		return false;
	w->finished = true;
	return true;
}

void
sb_store_writer_abort(SbStoreWriter *w)
{
	if (w != NULL)
		w->store->driver->abort(w);
}

void
sb_store_writer_free(SbStoreWriter *w)
{
	if (w == NULL)
		return;
	w->store->driver->writer_release(w);
	free(w);
}
