/*
 * store.c
 *		Reading files or objects by path (store.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "s3/io_s3.h"
#include "s3/s3_client.h"
#include "store.h"

bool
sb_store_open(SbStoreFile *f, const char *path, SbError *err)
{
	struct stat st;

	memset(f, 0, sizeof(*f));
	f->path = path;
	f->fd = -1;
	if (sb_s3_is_location(path))
	{
		if (!sb_s3_parse_location(path, &f->object, err) ||
			(f->client = sb_s3_client_open(f->object.bucket, 1, err)) == NULL)
			return false;
		if (!sb_s3_head_object(f->client, f->object.bucket, f->object.prefix, &f->size, err))
		{
			sb_store_close(f);
			return false;
		}
		return true;
	}
	f->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (f->fd < 0)
	{
		sb_error_set_errno(err, errno, "could not open \"%s\"", path);
		if (errno == ENOENT)
			err->code = SB_ENOTFOUND;
		return false;
	}
	if (fstat(f->fd, &st) != 0)
	{
		sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
		sb_store_close(f);
		return false;
	}
	f->size = (uint64_t) st.st_size;
	return true;
}

ssize_t
sb_store_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err)
{
	SbS3Request req;

	if (f->client == NULL)
		return sb_pread_upto(f->fd, buf, len, offset, f->path, err);
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

SbIo *
sb_store_reader_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err)
{
	if (f->client == NULL)
	{
		(void) posix_fadvise(f->fd, 0, 0, POSIX_FADV_SEQUENTIAL);
		return sb_io_new(method, depth, NULL, err);
	}
	/* The connection settings the object was opened with, not looked up again. */
	return sb_io_new_s3_reader(sb_s3_client_config(f->client), f->object.bucket, f->object.prefix, depth,
							   err);
}

void
sb_store_close(SbStoreFile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	sb_s3_client_free(f->client);
	f->client = NULL;
}

char *
sb_store_read_small(const char *path, size_t max, size_t *len, SbError *err)
{
	SbS3Location loc;
	SbS3Client *client;
	uint8_t    *data = NULL;

	if (!sb_s3_is_location(path))
		return sb_read_small_file(path, max, len, err);
	if (!sb_s3_parse_location(path, &loc, err) || (client = sb_s3_client_open(loc.bucket, 1, err)) == NULL)
		return NULL;
	/* its size first: nothing larger than MAX is read, and the buffer is its size */
	(void) sb_s3_get_object(client, loc.bucket, loc.prefix, max, &data, len, err);
	sb_s3_client_free(client);
	return (char *) data;
}

bool
sb_store_file_size(const char *path, uint64_t *size, SbError *err)
{
	SbStoreFile f;
	SbError		ignored;
	struct stat st;

	if (err == NULL)
		err = &ignored;
	if (!sb_s3_is_location(path))
	{
		if (stat(path, &st) != 0)
		{
			sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
			if (err->sys_errno == ENOENT)
				err->code = SB_ENOTFOUND;
			return false;
		}
		if (!S_ISREG(st.st_mode))
			return sb_error_set(err, SB_ENOTFOUND, "\"%s\" is not a file", path);
		*size = (uint64_t) st.st_size;
		return true;
	}
	if (!sb_store_open(&f, path, err))
		return false;
	*size = f.size;
	sb_store_close(&f);
	return true;
}

bool
sb_store_is_folder(const char *path)
{
	struct stat st;
	SbS3Location loc;
	SbError		ignored;

	if (sb_s3_is_location(path))
		return sb_s3_parse_location(path, &loc, &ignored);
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}
