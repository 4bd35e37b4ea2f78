/*
 * store_s3.c
 *		The object-storage driver of stores (store_driver.h): a store is the
 *		key prefix "PREFIX/" of a bucket (s3://bucket/PREFIX), and a store
 *		entered below it the prefix "PREFIX/NAME/".  The S3 protocol itself
 *		is the driver's own library under s3/.
 *
 * The store settles its connection settings once, when it is opened (its
 * options', then the environment: the store owns them, no process-wide
 * copy is consulted), and each operation uses a
 * connection of its own, so that workers may run them at once.  Nothing is
 * reached before the first operation: a settings error found at the opening
 * is the answer of every operation, as a bucket that cannot be reached is.
 *
 * An object is made by one PUT of its whole bytes, which S3 shows all at
 * once or not at all: no temporary object, no rename, no fsync.  S3 has no
 * "create unless it exists" every store offers, so a put that must not
 * replace looks first (HEAD): the one writer of a name is the only one, and
 * the check catches a second writer (a second cluster archiving into the
 * same place), as the look before writing does on file systems without
 * RENAME_NOREPLACE.
 *
 * A missing bucket must not pass for a missing object (recovery would end
 * early, believing the WAL all replayed): S3 answers 404 for it as for a
 * missing object (with no body to tell them apart after a HEAD), so a
 * missing object is confirmed by a listing, and NoSuchBucket is turned into
 * an error of the destination, never "not there".
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "store/s3/io_s3.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_upload.h"
#include "store/store_driver.h"

typedef struct StoreS3
{
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		prefix[SB_S3_KEY_MAX];	/* "" or "<prefix>/": every key of the store begins so */
	char		dest[PATH_MAX];	/* the destination opened, for messages */
	SbS3Config	config;			/* valid when config_err.code is SB_OK */
	SbError		config_err;
} StoreS3;

/* The room a name needs after the prefix: what a WAL file or a stripe is called. */
#define NAME_ROOM 64

static StoreS3 *
s3_part(SbStore *s, SbError *err)
{
	if ((s->s3 = sb_alloc(sizeof(StoreS3), err)) == NULL)
		return NULL;
	return s->s3;
}

/* Settle the connection settings for P's bucket: from SETTINGS (NULL: none), then the environment. */
static void
settle_config(StoreS3 *p, const SbS3Settings *settings)
{
	sb_error_clear(&p->config_err);
	(void) sb_s3_config_for_bucket(settings, p->bucket, &p->config, &p->config_err);
}

SbStore *
sb_store_s3_new(const char *dest, const SbStoreOptions *o, SbError *err)
{
	SbS3Location loc;
	SbStore    *s;
	StoreS3    *p;

	if (!sb_s3_parse_location(dest, &loc, err))
		return NULL;
	if ((s = sb_store_alloc(&sb_store_s3_driver, dest, o, err)) == NULL)
		return NULL;
	if ((p = s3_part(s, err)) == NULL)
	{
		sb_store_free(s);
		return NULL;
	}
	snprintf(p->bucket, sizeof(p->bucket), "%s", loc.bucket);
	snprintf(p->prefix, sizeof(p->prefix), "%s%s", loc.prefix, loc.prefix[0] ? "/" : "");
	snprintf(p->dest, sizeof(p->dest), "%s", dest);
	snprintf(s->path, sizeof(s->path), "s3://%s%s%s", loc.bucket, loc.prefix[0] ? "/" : "", loc.prefix);
	settle_config(p, o->s3);
	return s;
}

/* A connection for one operation of S; the settings' error when they could not be settled. */
static SbS3Client *
open_client(SbStore *s, SbError *err)
{
	SbS3Client *c;

	if (s->s3->config_err.code != SB_OK)
	{
		*err = s->s3->config_err;
		return NULL;
	}
	c = sb_s3_client_new(&s->s3->config, 1, err);
	if (c != NULL && s->cleanup)
		sb_s3_client_set_cleanup(c);	/* after a cancel too */
	return c;
}

/* The key of NAME in S. */
static void
key_of(const SbStore *s, const char *name, char key[SB_S3_KEY_MAX])
{
	snprintf(key, SB_S3_KEY_MAX, "%s%s", s->s3->prefix, name);
}

static bool
s3_enter(SbStore *s, const char *name, bool create, SbStore **sub, SbError *err)
{
	StoreS3    *p = s->s3;
	char		path[PATH_MAX];
	SbStore    *t;
	int			n;

	n = snprintf(path, sizeof(path), "%s/%s", s->path, name);
	if (n < 0 || (size_t) n >= sizeof(path) ||
		strlen(p->prefix) + strlen(name) + 1 >= SB_S3_KEY_MAX - NAME_ROOM)
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is too long", s->what, p->dest);
	if ((t = sb_store_alloc_sub(s, path, err)) == NULL)
		return false;
	if (s3_part(t, err) == NULL)
	{
		sb_store_free(t);
		return false;
	}
	*t->s3 = *p;
	/* room checked above */
	strcat(strcat(t->s3->prefix, name), "/");
	*sub = t;
	return true;
}

typedef struct Lister
{
	const SbStore *s;
	SbStoreEntryFn fn;
	void	   *arg;
	bool		below;			/* objects in "folders" below the prefix too */
} Lister;

/* An SbS3ItemFn: an object under the prefix (directly, unless L->below), by its name there. */
static bool
list_item(void *arg, const SbS3Item *item, SbError *err)
{
	Lister	   *l = arg;
	const char *entry = item->key + strlen(l->s->s3->prefix);

	if (entry[0] == '\0' || (!l->below && strchr(entry, '/') != NULL))
		return true;
	return l->fn(l->arg, entry, item->size > INT64_MAX ? INT64_MAX : (int64_t) item->size, err);
}

/* L's objects to L->fn through C (freed); the listing's own error as it is. */
static bool
list_prefix(SbS3Client *c, Lister *l, SbError *err)
{
	bool		ok = sb_s3_list_objects(c, l->s->s3->bucket, l->s->s3->prefix, list_item, l, err);

	sb_s3_client_free(c);
	return ok;
}

static bool
s3_list(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	Lister		l = {.s = s, .fn = fn, .arg = arg};
	SbS3Client *c = open_client(s, err);

	if (c == NULL)
		return false;
	if (list_prefix(c, &l, err))
		return true;
	/* An empty prefix lists as nothing; an error here is the destination's. */
	if (err->code == SB_ENOTFOUND)
		err->code = SB_EIO;
	if (strstr(err->message, s->path) == NULL)
		sb_error_prefix(err, "could not list \"%s\"", s->path);
	return false;
}

static bool
s3_list_all(SbStore *s, SbStoreEntryFn fn, void *arg, SbError *err)
{
	Lister		l = {.s = s, .fn = fn, .arg = arg, .below = true};
	SbS3Client *c = open_client(s, err);

	/* A missing bucket is the client's SB_EIO naming it: sb_store_container_missing() tells it. */
	return c != NULL && list_prefix(c, &l, err);
}

/* An SbS3ItemFn: a listing found something. */
static bool
found_any(void *arg, const SbS3Item *item, SbError *err)
{
	(void) item;
	(void) err;
	*(bool *) arg = true;
	return true;
}

/*
 * HEAD said 404 for NAME, which it says of a missing bucket too (a HEAD has
 * no body to tell): a listing of its key does tell, as NoSuchBucket.
 */
static bool
confirm_absent(SbS3Client *c, const char *bucket, const char *key, const char *path, SbError *err)
{
	bool		listed = false;

	if (!sb_s3_list_objects(c, bucket, key, found_any, &listed, err))
	{
		if (err->code == SB_ENOTFOUND)
			err->code = SB_EIO;
		sb_error_prefix(err, "could not look for \"%s\"", path);
		return false;
	}
	return sb_error_set(err, SB_ENOTFOUND, "\"%s\" does not exist", path);
}

static bool
s3_open_in(SbStore *s, const char *name, SbStoreFile *f, SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	SbS3Client *c;

	key_of(s, name, key);
	if (strlen(key) >= sizeof(f->object.prefix))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is too long a name for object storage", f->path);
	if ((c = open_client(s, err)) == NULL)
		return false;
	if (!sb_s3_head_object(c, s->s3->bucket, key, &f->size, err))
	{
		if (err->code == SB_ENOTFOUND)
			confirm_absent(c, s->s3->bucket, key, f->path, err);
		sb_s3_client_free(c);
		return false;
	}
	f->driver = &sb_store_s3_driver;
	f->client = c;
	snprintf(f->object.bucket, sizeof(f->object.bucket), "%s", s->s3->bucket);
	memcpy(f->object.prefix, key, strlen(key) + 1);	/* its length checked above */
	return true;
}

static bool
s3_put(SbStore *s, const char *name, const void *data, size_t len, bool replace, SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	uint64_t	size;
	SbS3Client *c = open_client(s, err);
	bool		ok = c != NULL;

	key_of(s, name, key);
	if (ok && !replace)
	{
		if (sb_s3_head_object(c, s->s3->bucket, key, &size, err))
			ok = sb_error_set(err, SB_EEXIST, "\"%s/%s\" appeared while it was being written",
							  s->path, name);
		else if (err->code == SB_ENOTFOUND)
			sb_error_clear(err);
		else
			ok = false;
	}
	ok = ok && sb_s3_put_object(c, s->s3->bucket, key, data, len, err);
	sb_s3_client_free(c);
	if (!ok && err->code != SB_EEXIST && strstr(err->message, s->path) == NULL)
		sb_error_prefix(err, "could not write \"%s/%s\"", s->path, name);
	return ok;
}

static bool
s3_stamp(SbStore *s, const char *name, SbStoreStamp *stamp)
{
	char		key[SB_S3_KEY_MAX];
	uint64_t	size = 0;
	SbError		ignored;
	SbS3Client *c = open_client(s, &ignored);
	bool		ok;

	if (c == NULL)
		return false;
	key_of(s, name, key);
	ok = sb_s3_head_object_etag(c, s->s3->bucket, key, &size, stamp->etag, &ignored);
	sb_s3_client_free(c);
	stamp->st.st_size = (off_t) size;
	return ok;
}

static bool
s3_stamp_open(SbStore *s, const SbStoreFile *f, SbStoreStamp *stamp)
{
	/* The size seen when it was opened; an object has no identity to prove beyond it. */
	stamp->st.st_size = (off_t) f->size;
	return true;
}

static bool
s3_remove(SbStore *s, const char *name, const SbStoreStamp *expected, SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	SbS3Client *c = open_client(s, err);
	bool		ok;

	if (c == NULL)
		return false;
	key_of(s, name, key);
	ok = sb_s3_delete_object(c, s->s3->bucket, key, err);
	sb_s3_client_free(c);
	if (!ok)
		sb_error_prefix(err, "could not remove \"%s/%s\"", s->path, name);
	return ok;
}

static bool
s3_sync(SbStore *s, SbError *err)
{
	return true;				/* an object is durable when its PUT returns */
}

static bool
s3_make(SbStore *s, const char *name, SbStore **sub, SbError *err)
{
	bool		exists = false;
	SbS3Client *c;
	bool		ok;

	/* A bucket has no folders: the name is taken when any object is below it. */
	if (s->s3->config_err.code != SB_OK)
	{
		*err = s->s3->config_err;
		return false;
	}
	if (!s3_enter(s, name, true, sub, err))
		return false;
	ok = (c = open_client(s, err)) != NULL &&
		sb_s3_list_objects(c, s->s3->bucket, (*sub)->s3->prefix, found_any, &exists, err);
	sb_s3_client_free(c);
	if (!ok)
		sb_error_prefix(err, "%s \"%s\"", s->what, s->s3->dest);
	else if (ok && exists)
		ok = sb_error_set(err, SB_EEXIST, "\"%s\" already exists", (*sub)->path);
	if (!ok)
	{
		sb_store_free(*sub);
		*sub = NULL;
	}
	return ok;
}

static void
s3_remove_folder(SbStore *s, const char *name)
{
	/* nothing: a bucket's "folder" is gone with its last object */
}

static bool
s3_identity(SbStore *s, SbStoreStamp *stamp, SbError *err)
{
	return true;				/* a bucket's prefix is known by its name (sb_store_canonical) */
}

static bool
s3_canonical(const char *dest, char resolved[PATH_MAX], SbError *err)
{
	SbS3Location loc;

	if (!sb_s3_parse_location(dest, &loc, err))
		return false;
	snprintf(resolved, PATH_MAX, "s3://%s%s%s", loc.bucket, loc.prefix[0] ? "/" : "", loc.prefix);
	return true;
}

/* ---------- files made front to back: a multipart upload, the object made when it completes ---------- */

static bool
s3_create(SbStoreWriter *w, const SbStoreCreate *how, SbError *err)
{
	SbStore    *s = w->store;
	char		key[SB_S3_KEY_MAX];

	if (s->s3->config_err.code != SB_OK)
	{
		*err = s->s3->config_err;
		return false;
	}
	if ((size_t) snprintf(key, sizeof(key), "%s%s", s->s3->prefix, w->name) >= sizeof(key))
		return sb_error_set(err, SB_EINVAL, "the object key of \"%s\" is too long", w->path);
	w->upload = sb_s3_upload_new(&s->s3->config, s->s3->bucket, key,
								 how->parts_in_flight ? how->parts_in_flight : SB_S3_PARTS_IN_FLIGHT, 0, err);
	return w->upload != NULL;
}

static bool
s3_append(SbStoreWriter *w, const void *buf, size_t len, SbError *err)
{
	return sb_s3_upload_append(w->upload, buf, len, err);
}

static bool
s3_write_at(SbStoreWriter *w, const void *buf, size_t len, uint64_t offset, SbError *err)
{
	if (offset != sb_s3_upload_size(w->upload))
		return sb_error_set(err, SB_EINVAL, "%s is written front to back only", sb_s3_upload_name(w->upload));
	return sb_s3_upload_append(w->upload, buf, len, err);
}

static SbIo *
s3_writer_io(SbStoreWriter *w, SbIoMethod method, unsigned depth, SbError *err)
{
	return sb_io_new_s3_appender(w->upload, err);
}

static bool
s3_writer_sync(SbStoreWriter *w, SbError *err)
{
	return sb_s3_upload_flush(w->upload, err);
}

static bool
s3_finish(SbStoreWriter *w, SbError *err)
{
	return sb_s3_upload_finish(w->upload, err);
}

static void
s3_abort(SbStoreWriter *w)
{
	SbError		ignored;

	/* no part left stored, or the object deleted when it was made */
	(void) sb_s3_upload_abort(w->upload, &ignored);
}

static void
s3_writer_release(SbStoreWriter *w)
{
	sb_s3_upload_free(w->upload);	/* aborts one neither finished nor aborted */
	w->upload = NULL;
}

/* ---------- files read by path: s3://bucket/key, reached with the caller's settings ---------- */

static bool
s3_file_open(SbStoreFile *f, SbError *err)
{
	if (!sb_s3_parse_location(f->path, &f->object, err) ||
		(f->client = sb_s3_client_open(f->s3, f->object.bucket, 1, err)) == NULL)
		return false;
	if (sb_s3_head_object(f->client, f->object.bucket, f->object.prefix, &f->size, err))
		return true;
	if (err->code == SB_ENOTFOUND)
		confirm_absent(f->client, f->object.bucket, f->object.prefix, f->path, err);
	return false;
}

static ssize_t
s3_file_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err)
{
	SbS3Request req;

	if (offset >= f->size || len == 0)
		return 0;
	if (len > f->size - offset)
		len = (size_t) (f->size - offset);
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	strcpy(req.bucket, f->object.bucket);
	snprintf(req.key, sizeof(req.key), "%s", f->object.prefix);
	req.range_offset = offset;
	req.range_length = len;
	req.into = buf;
	req.into_len = len;
	if (!sb_s3_run(f->client, &req, err))
	{
		sb_s3_request_reset(&req);
		return -1;
	}
	len = req.got;
	sb_s3_request_reset(&req);
	return (ssize_t) len;
}

static SbIo *
s3_file_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err)
{
	/* The connection settings the object was opened with, not looked up again. */
	return sb_io_new_s3_reader(sb_s3_client_config(f->client), f->object.bucket, f->object.prefix, depth,
							   err);
}

static void
s3_file_close(SbStoreFile *f)
{
	sb_s3_client_free(f->client);
	f->client = NULL;
}

static char *
s3_read_small(const char *path, const SbS3Settings *s3, size_t max, size_t *len, SbError *err)
{
	SbS3Location loc;
	SbS3Client *client;
	uint8_t    *data = NULL;

	if (!sb_s3_parse_location(path, &loc, err) || (client = sb_s3_client_open(s3, loc.bucket, 1, err)) == NULL)
		return NULL;
	/* its size first: nothing larger than MAX is read, and the buffer is its size */
	(void) sb_s3_get_object(client, loc.bucket, loc.prefix, max, &data, len, err);
	sb_s3_client_free(client);
	return (char *) data;
}

static bool
s3_file_size(const char *path, const SbS3Settings *s3, uint64_t *size, SbError *err)
{
	SbStoreFile f;

	if (!sb_store_open(&f, path, s3, err))
		return false;
	*size = f.size;
	sb_store_close(&f);
	return true;
}

static bool
s3_is_folder(const char *path)
{
	SbS3Location loc;
	SbError		ignored;

	return sb_s3_parse_location(path, &loc, &ignored);
}

static void
s3_release(SbStore *s)
{
	if (s->s3 == NULL)
		return;
	sb_s3_config_clear(&s->s3->config);
	free(s->s3);
	s->s3 = NULL;
}

const SbStoreDriver sb_store_s3_driver = {
	.name = "s3",
	.features = SB_STORE_LAZY | SB_STORE_BUFFERED_APPEND | SB_STORE_CONNECTION,
	.enter = s3_enter,
	.list = s3_list,
	.list_all = s3_list_all,
	.open_in = s3_open_in,
	.put = s3_put,
	.stamp = s3_stamp,
	.stamp_open = s3_stamp_open,
	.remove = s3_remove,
	.sync = s3_sync,
	.make = s3_make,
	.remove_folder = s3_remove_folder,
	.identity = s3_identity,
	.canonical = s3_canonical,
	.create = s3_create,
	.append = s3_append,
	.write_at = s3_write_at,
	.writer_io = s3_writer_io,
	.writer_sync = s3_writer_sync,
	.finish = s3_finish,
	.abort = s3_abort,
	.writer_release = s3_writer_release,
	.release = s3_release,
	.file_open = s3_file_open,
	.file_pread = s3_file_pread,
	.file_io = s3_file_io,
	.file_close = s3_file_close,
	.read_small = s3_read_small,
	.file_size = s3_file_size,
	.is_folder = s3_is_folder,
};
