/*
 * io_s3.c
 *		The I/O interface over object storage (io_s3.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "store/s3/io_s3.h"

typedef struct Reader
{
	SbS3Client *client;
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		key[SB_S3_KEY_MAX];
	SbS3Request *requests;		/* one per operation in flight */
	SbS3Request **free_list;
	unsigned	nfree;
} Reader;

static bool
reader_start(void *state, SbIo *io, SbIoOp *op, SbError *err)
{
	Reader	   *r = state;
	SbS3Request *req;

	if (op->kind != SB_IO_READ || op->iovcnt != 1 || op->length == 0)
		return sb_error_set(err, SB_EINVAL, "an object-storage read is one non-empty buffer");
	if (r->nfree == 0)
		return sb_error_set(err, SB_EINVAL, "too many object-storage reads at once");
	req = r->free_list[--r->nfree];
	memset(req, 0, sizeof(*req));
	req->method = "GET";
	strcpy(req->bucket, r->bucket);
	strcpy(req->key, r->key);
	req->range_offset = op->offset;
	req->range_length = op->length;
	req->into = op->iov[0].iov_base;
	req->into_len = op->iov[0].iov_len;
	req->tag = op;
	if (!sb_s3_start(r->client, req, err))
	{
		r->free_list[r->nfree++] = req;
		return false;
	}
	return true;
}

static bool
reader_wait(void *state, SbIo *io, unsigned min, SbError *err)
{
	Reader	   *r = state;

	while (sb_io_completed(io) < min)
	{
		SbS3Request *done[16];
		int			n = sb_s3_reap(r->client, done, 16, 1, err);

		if (n < 0)
			return false;
		for (int i = 0; i < n; i++)
		{
			SbIoOp	   *op = done[i]->tag;

			op->done = done[i]->got;
			if (!done[i]->ok)
				op->error = done[i]->error.code == SB_ENOTFOUND ? ENOENT :
					done[i]->error.code == SB_ECANCELED ? ECANCELED : EIO;
			sb_io_backend_complete(io, op, &done[i]->error);
			sb_s3_request_reset(done[i]);
			r->free_list[r->nfree++] = done[i];
		}
	}
	return true;
}

static void
reader_free(void *state)
{
	Reader	   *r = state;

	if (r == NULL)
		return;
	sb_s3_client_free(r->client);
	free(r->requests);
	free(r->free_list);
	free(r);
}

static const SbIoBackend reader_backend = {reader_start, reader_wait, reader_free};

SbIo *
sb_io_new_s3_reader(const SbS3Config *config, const char *bucket, const char *key, unsigned depth,
					SbError *err)
{
	Reader	   *r = sb_alloc(sizeof(Reader), err);

	if (r == NULL)
		return NULL;
	depth = depth ? depth : 1;
	snprintf(r->bucket, sizeof(r->bucket), "%s", bucket);
	snprintf(r->key, sizeof(r->key), "%s", key);
	r->requests = calloc(depth, sizeof(SbS3Request));
	r->free_list = calloc(depth, sizeof(SbS3Request *));
	if (r->requests == NULL || r->free_list == NULL)
	{
		reader_free(r);
		sb_error_set(err, SB_ENOMEM, "out of memory for object-storage reads");
		return NULL;
	}
	for (unsigned i = 0; i < depth; i++)
		r->free_list[r->nfree++] = &r->requests[i];
	if ((r->client = sb_s3_client_new(config, depth, err)) == NULL)
	{
		reader_free(r);
		return NULL;
	}
	return sb_io_new_backend(&reader_backend, r, depth, err);
}

/* ---- appending ---- */

static bool
appender_start(void *state, SbIo *io, SbIoOp *op, SbError *err)
{
	SbS3Upload *u = state;
	SbError		failure;

	if (op->kind != SB_IO_WRITE || op->offset != sb_s3_upload_size(u))
		return sb_error_set(err, SB_EINVAL, "%s is written front to back only", sb_s3_upload_name(u));
	sb_error_clear(&failure);
	for (int i = 0; i < op->iovcnt && op->error == 0; i++)
		if (!sb_s3_upload_append(u, op->iov[i].iov_base, op->iov[i].iov_len, &failure))
			op->error = EIO;
		else
			op->done += op->iov[i].iov_len;
	sb_io_backend_complete(io, op, &failure);
	return true;
}

static bool
appender_wait(void *state, SbIo *io, unsigned min, SbError *err)
{
	return true;				/* every append completed when it started */
}

static void
appender_free(void *state)
{
	/* the upload is the caller's */
}

static const SbIoBackend appender_backend = {appender_start, appender_wait, appender_free};

SbIo *
sb_io_new_s3_appender(SbS3Upload *upload, SbError *err)
{
	return sb_io_new_backend(&appender_backend, upload, 1, err);
}
