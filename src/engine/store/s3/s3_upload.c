/*
 * s3_upload.c
 *		Writing one object front to back with parts in flight (s3_upload.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/fsutil.h"
#include "store/s3/s3_upload.h"

#define PARTS_PER_SIZE 2000		/* the part size doubles after this many */
#define BUFFERED_SECONDS 1.0	/* at most this much of the bucket's pace in flight */

typedef struct Part
{
	uint8_t    *buf;
	size_t		cap;
	size_t		len;
	unsigned	number;			/* 1-based, once sent */
	bool		busy;			/* its upload is in flight */
	SbS3Request req;
} Part;

struct SbS3Upload
{
	SbS3Client *client;
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		key[SB_S3_KEY_MAX];
	char		name[SB_S3_BUCKET_MAX + SB_S3_KEY_MAX + 8];
	char		upload_id[1024];	/* once the multipart upload began */
	bool		made;			/* the object exists */
	size_t		part_size;		/* of the first parts */
	Part	   *parts;
	unsigned	nparts;
	Part	   *current;		/* being filled */
	unsigned	next_number;
	char		(*etags)[128];	/* of parts 1.. */
	uint64_t	size;
	uint64_t	bytes_sent;		/* of the parts whose upload completed */
	double		first_part_at;	/* when the first part was started */
	bool		failed;
	SbError		failure;
};

SbS3Upload *
sb_s3_upload_new(const SbS3Config *config, const char *bucket, const char *key, unsigned in_flight,
				 size_t part_size, SbError *err)
{
	SbS3Upload *u = calloc(1, sizeof(*u));

	if (u == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory for an S3 upload");
		return NULL;
	}
	if (in_flight == 0)
		in_flight = 1;
	snprintf(u->bucket, sizeof(u->bucket), "%s", bucket);
	snprintf(u->key, sizeof(u->key), "%s", key);
	sb_s3_describe(bucket, key, u->name, sizeof(u->name));
	u->part_size = part_size >= SB_S3_PART_MIN ? part_size : SB_S3_PART_FIRST;
	u->next_number = 1;
	u->nparts = in_flight + 1;
	u->parts = calloc(u->nparts, sizeof(Part));
	u->etags = calloc(SB_S3_MAX_PARTS, sizeof(*u->etags));
	u->client = u->parts && u->etags ? sb_s3_client_new(config, in_flight, err) : NULL;
	if (u->client == NULL)
	{
		if (u->parts == NULL || u->etags == NULL)
			sb_error_set(err, SB_ENOMEM, "out of memory for an S3 upload");
		sb_s3_upload_free(u);
		return NULL;
	}
	return u;
}

const char *
sb_s3_upload_name(const SbS3Upload *u)
{
	return u->name;
}

uint64_t
sb_s3_upload_size(const SbS3Upload *u)
{
	return u->size;
}

/* The size of part NUMBER: doubling every PARTS_PER_SIZE parts. */
static size_t
part_target(const SbS3Upload *u, unsigned number)
{
	unsigned	doublings = (number - 1) / PARTS_PER_SIZE;

	return u->part_size << (doublings < 8 ? doublings : 8);
}

static bool
fail(SbS3Upload *u, const SbError *err)
{
	if (!u->failed)
	{
		u->failed = true;
		u->failure = *err;
	}
	return false;
}

/* Take finished part uploads (waiting for MIN), their ETags kept; false at the first failure. */
static bool
reap_parts(SbS3Upload *u, int min, SbError *err)
{
	SbS3Request *done[16];
	int			n = sb_s3_reap(u->client, done, 16, min, err);

	if (n < 0)
		return fail(u, err);
	for (int i = 0; i < n; i++)
	{
		Part	   *p = done[i]->tag;

		p->busy = false;
		if (!done[i]->ok)
			fail(u, &done[i]->error);
		else if (done[i]->etag[0] == '\0')
			fail(u, &(SbError) {SB_EIO, 0, "the S3 server gave no ETag for a part"});
		else
		{
			snprintf(u->etags[p->number - 1], sizeof(u->etags[0]), "%s", done[i]->etag);
			u->bytes_sent += p->len;
		}
		p->len = 0;
		sb_s3_request_reset(done[i]);
	}
	if (u->failed)
	{
		*err = u->failure;
		sb_error_prefix(err, "uploading %s", u->name);
		return false;
	}
	return true;
}

/* A part buffer to fill, waiting for one to come back when all are in flight. */
static Part *
free_part(SbS3Upload *u, SbError *err)
{
	for (;;)
	{
		for (unsigned i = 0; i < u->nparts; i++)
			if (!u->parts[i].busy)
				return &u->parts[i];
		if (!reap_parts(u, 1, err))
			return NULL;
	}
}

/*
 * Parts allowed in flight: what the bucket takes in BUFFERED_SECONDS at its
 * pace so far (one part at least, and only one until a part has completed).  A
 * slow bucket then holds little more than it can send soon: under adaptive
 * balance its writer takes the next chunk only when the bucket has really
 * taken the last ones, and it does not finish long after the others.
 */
static unsigned
parts_allowed(const SbS3Upload *u, size_t part)
{
	double		elapsed = sb_monotonic_seconds() - u->first_part_at;
	double		pace = elapsed > 0 ? (double) u->bytes_sent / elapsed : 0;
	unsigned	n = u->bytes_sent == 0 ? 1 : (unsigned) ceil(pace * BUFFERED_SECONDS / (double) part);

	return n < 1 ? 1 : n > u->nparts - 1 ? u->nparts - 1 : n;
}

static bool
send_part(SbS3Upload *u, Part *p, SbError *err)
{
	if (u->next_number > SB_S3_MAX_PARTS)
		return sb_error_set(err, SB_EINVAL, "%s would need more than %d parts", u->name, SB_S3_MAX_PARTS);
	if (u->upload_id[0] == '\0' &&
		!sb_s3_multipart_begin(u->client, u->bucket, u->key, u->upload_id, sizeof(u->upload_id), err))
		return fail(u, err);
	if (u->next_number == 1)
		u->first_part_at = sb_monotonic_seconds();
	while (sb_s3_in_flight(u->client) >= parts_allowed(u, p->len))
		if (!reap_parts(u, 1, err))
			return false;
	p->number = u->next_number++;
	sb_s3_multipart_part_request(&p->req, u->bucket, u->key, u->upload_id, p->number, p->buf, p->len);
	p->req.tag = p;
	if (!sb_s3_start(u->client, &p->req, err))
		return fail(u, err);
	p->busy = true;
	return true;
}

bool
sb_s3_upload_append(SbS3Upload *u, const void *data, size_t len, SbError *err)
{
	const uint8_t *bytes = data;

	if (u->failed)
	{
		*err = u->failure;
		return false;
	}
	while (len > 0)
	{
		size_t		target = part_target(u, u->next_number);
		size_t		n;

		if (u->current == NULL && (u->current = free_part(u, err)) == NULL)
			return false;
		if (u->current->cap < target)
		{
			uint8_t    *grown = realloc(u->current->buf, target);

			if (grown == NULL)
				return sb_error_set(err, SB_ENOMEM, "out of memory for a part of %s", u->name);
			u->current->buf = grown;
			u->current->cap = target;
		}
		n = target - u->current->len < len ? target - u->current->len : len;
		memcpy(u->current->buf + u->current->len, bytes, n);
		u->current->len += n;
		u->size += n;
		bytes += n;
		len -= n;
		if (u->current->len == target)
		{
			Part	   *full = u->current;

			u->current = NULL;
			if (!send_part(u, full, err))
				return false;
		}
	}
	return true;
}

/* Wait for every part in flight. */
static bool
drain(SbS3Upload *u, SbError *err)
{
	while (sb_s3_in_flight(u->client) > 0)
		if (!reap_parts(u, (int) sb_s3_in_flight(u->client), err))
			return false;
	return !u->failed || (*err = u->failure, false);
}

bool
sb_s3_upload_flush(SbS3Upload *u, SbError *err)
{
	return drain(u, err);
}

bool
sb_s3_upload_finish(SbS3Upload *u, SbError *err)
{
	bool		ok;

	if (u->failed)
	{
		*err = u->failure;
		return false;
	}
	/* Small enough for one part: one PUT, no multipart upload to clean up. */
	if (u->upload_id[0] == '\0')
	{
		ok = sb_s3_put_object(u->client, u->bucket, u->key, u->current ? u->current->buf : (const uint8_t *) "",
							  u->current ? u->current->len : 0, err);
		u->made = ok;
		return ok || fail(u, err);
	}
	if (u->current != NULL && u->current->len > 0 && !send_part(u, u->current, err))
		return false;
	u->current = NULL;
	if (!drain(u, err))
		return false;
	ok = sb_s3_multipart_complete(u->client, u->bucket, u->key, u->upload_id, u->etags,
								  u->next_number - 1, err);
	u->made = ok;
	return ok || fail(u, err);
}

bool
sb_s3_upload_abort(SbS3Upload *u, SbError *err)
{
	SbError		ignored;
	SbS3Request *done[16];
	bool		ok = true;

	/*
	 * The parts in flight end first: an abort while one is stored may leave
	 * it.  After a stop they end at once (abandoned); what follows is
	 * clean-up, which runs even then, within its deadline.
	 */
	while (sb_s3_in_flight(u->client) > 0)
	{
		int			n = sb_s3_reap(u->client, done, 16, 1, &ignored);

		if (n < 0)
			break;
		for (int i = 0; i < n; i++)
		{
			((Part *) done[i]->tag)->busy = false;
			sb_s3_request_reset(done[i]);
		}
	}
	sb_s3_client_set_cleanup(u->client);
	if (u->made)
		ok = sb_s3_delete_object(u->client, u->bucket, u->key, err);
	else if (u->upload_id[0] != '\0')
		ok = sb_s3_multipart_abort(u->client, u->bucket, u->key, u->upload_id, err);
	if (ok)
	{
		u->made = false;
		u->upload_id[0] = '\0';
	}
	return ok;
}

void
sb_s3_upload_free(SbS3Upload *u)
{
	SbError		ignored;

	if (u == NULL)
		return;
	if (u->client != NULL && (u->upload_id[0] != '\0' && !u->made))
		(void) sb_s3_upload_abort(u, &ignored);
	for (unsigned i = 0; u->parts != NULL && i < u->nparts; i++)
	{
		sb_s3_request_reset(&u->parts[i].req);
		free(u->parts[i].buf);
	}
	free(u->parts);
	free(u->etags);
	sb_s3_client_free(u->client);
	free(u);
}
