/*
 * wal_bucket.c
 *		The folder of a WAL archive in a bucket: the objects under
 *		"PREFIX/wal/<sysid>/" of s3://bucket/PREFIX (wal_internal.h).
 *
 * An object is made by one PUT of its whole bytes, which S3 shows all at
 * once or not at all: no temporary object, no rename.  S3 has no "create
 * unless it exists" every store offers, so a write that must not replace
 * looks first (HEAD): the one archiver of a cluster is the only writer of
 * its names, and the check catches a second cluster archiving into the
 * same place, as the local check before writing does on file systems
 * without RENAME_NOREPLACE.
 *
 * A missing bucket must not pass for an empty archive (recovery would end
 * early, believing the WAL all replayed): S3 answers 404 for it as for a
 * missing object (with no body to tell them apart after a HEAD), so a
 * missing object is confirmed by a listing, and NoSuchBucket is turned into
 * an error of the destination, never "not there".
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "wal_internal.h"

/* A 404 that says the bucket is missing: the destination is unusable, not empty. */
static bool
bucket_missing(SbError *err)
{
	if (err->code == SB_ENOTFOUND && strstr(err->message, "NoSuchBucket") != NULL)
		err->code = SB_EIO;
	return false;
}

bool
sb_wal_bucket_open(const char *dest, uint64_t sysid, SbWalFolder *f, SbError *err)
{
	SbS3Location loc;
	char		sysid_text[21];
	int			n;

	if (!sb_s3_parse_location(dest, &loc, err))
		return false;
	sb_wal_sysid_text(sysid, sysid_text);
	f->bucket = true;
	snprintf(f->s3_bucket, sizeof(f->s3_bucket), "%s", loc.bucket);
	n = snprintf(f->s3_prefix, sizeof(f->s3_prefix), "%s%s" SB_WAL_FOLDER "/%s/", loc.prefix,
				 loc.prefix[0] ? "/" : "", sysid_text);
	if (n < 0 || (size_t) n >= sizeof(f->s3_prefix) - SB_WAL_FILE_NAME_MAX)
		return sb_error_set(err, SB_EINVAL, "WAL archive destination \"%s\" is too long", dest);
	snprintf(f->path, sizeof(f->path), "s3://%s/%.*s", f->s3_bucket, n - 1, f->s3_prefix);
	return true;
}

/* The key of FILE in F. */
static void
key_of(const SbWalFolder *f, const char *file, char key[SB_S3_KEY_MAX])
{
	snprintf(key, SB_S3_KEY_MAX, "%s%s", f->s3_prefix, file);
}

typedef struct Lister
{
	const SbWalFolder *f;
	SbWalEntryFn fn;
	void	   *arg;
} Lister;

/* An SbS3ItemFn: an object directly under the prefix, by its name there. */
static bool
list_item(void *arg, const SbS3Item *item, SbError *err)
{
	Lister	   *l = arg;
	const char *entry = item->key + strlen(l->f->s3_prefix);

	if (entry[0] == '\0' || strchr(entry, '/') != NULL)
		return true;
	return l->fn(l->arg, entry, item->size > INT64_MAX ? INT64_MAX : (int64_t) item->size, err);
}

bool
sb_wal_bucket_list(SbWalFolder *f, SbWalEntryFn fn, void *arg, SbError *err)
{
	Lister		l = {.f = f, .fn = fn, .arg = arg};
	SbS3Client *c = sb_s3_client_open(f->s3_bucket, 1, err);
	bool		ok;

	if (c == NULL)
		return false;
	ok = sb_s3_list_objects(c, f->s3_bucket, f->s3_prefix, list_item, &l, err);
	sb_s3_client_free(c);
	if (!ok)
	{
		bucket_missing(err);
		/* An empty prefix lists as nothing; an error here is the destination's. */
		if (err->code == SB_ENOTFOUND)
			err->code = SB_EIO;
		if (strstr(err->message, f->path) == NULL)
			sb_error_prefix(err, "could not list \"%s\"", f->path);
	}
	return ok;
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
 * HEAD said 404 for FILE, which it says of a missing bucket too (a HEAD has
 * no body to tell): a listing of its key does tell, as NoSuchBucket.
 */
static bool
confirm_absent(SbWalFolder *f, const char *file, const char *path, SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	bool		listed = false;
	SbS3Client *c = sb_s3_client_open(f->s3_bucket, 1, err);
	bool		ok;

	if (c == NULL)
		return false;
	key_of(f, file, key);
	ok = sb_s3_list_objects(c, f->s3_bucket, key, found_any, &listed, err);
	sb_s3_client_free(c);
	if (!ok)
	{
		bucket_missing(err);
		if (err->code == SB_ENOTFOUND)
			err->code = SB_EIO;
		sb_error_prefix(err, "could not look for \"%s\"", path);
		return false;
	}
	return sb_error_set(err, SB_ENOTFOUND, "\"%s\" does not exist", path);
}

bool
sb_wal_bucket_open_file(SbWalFolder *f, const char *file, SbWalFileIn *in, SbError *err)
{
	/* IN's path is the object's URL: s3://bucket/<prefix><file>. */
	if (sb_store_open(&in->store, in->path, err))
		return true;
	if (err->code == SB_ENOTFOUND)
		return confirm_absent(f, file, in->path, err);
	return false;
}

bool
sb_wal_bucket_stamp(SbWalFolder *f, const char *file, SbWalStamp *stamp)
{
	char		key[SB_S3_KEY_MAX];
	uint64_t	size;
	SbError		ignored;
	SbS3Client *c = sb_s3_client_open(f->s3_bucket, 1, &ignored);
	bool		ok;

	if (c == NULL)
		return false;
	key_of(f, file, key);
	ok = sb_s3_head_object_etag(c, f->s3_bucket, key, &size, stamp->etag, &ignored);
	sb_s3_client_free(c);
	stamp->st.st_size = (off_t) size;
	return ok;
}

bool
sb_wal_bucket_remove(SbWalFolder *f, const char *file, SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	SbS3Client *c = sb_s3_client_open(f->s3_bucket, 1, err);
	bool		ok;

	if (c == NULL)
		return false;
	key_of(f, file, key);
	ok = sb_s3_delete_object(c, f->s3_bucket, key, err);
	sb_s3_client_free(c);
	if (!ok)
		sb_error_prefix(err, "could not remove \"%s/%s\"", f->path, file);
	return ok;
}

bool
sb_wal_bucket_put(SbWalFolder *f, const char *file, const void *data, size_t len, bool replace,
				  SbError *err)
{
	char		key[SB_S3_KEY_MAX];
	uint64_t	size;
	SbS3Client *c = sb_s3_client_open(f->s3_bucket, 1, err);
	bool		ok = c != NULL;

	key_of(f, file, key);
	if (ok && !replace)
	{
		if (sb_s3_head_object(c, f->s3_bucket, key, &size, err))
			ok = sb_error_set(err, SB_EEXIST, "\"%s/%s\" appeared while it was being written",
							  f->path, file);
		else if (err->code == SB_ENOTFOUND && strstr(err->message, "NoSuchBucket") == NULL)
			sb_error_clear(err);
		else
			ok = false;
	}
	ok = ok && sb_s3_put_object(c, f->s3_bucket, key, data, len, err);
	sb_s3_client_free(c);
	if (!ok && err->code != SB_EEXIST && strstr(err->message, f->path) == NULL)
		sb_error_prefix(err, "could not write \"%s/%s\"", f->path, file);
	return ok;
}
