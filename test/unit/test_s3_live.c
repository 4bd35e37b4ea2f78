/*
 * test_s3_live.c
 *		The S3 client against a real S3-protocol server (s3rver, started by
 *		test/s3/with-s3.sh, which sets SB_TEST_S3_ENDPOINT and the
 *		credentials): objects, ranges, listings, multipart uploads with parts
 *		in flight at once, and the failures a user meets (a bucket that does
 *		not exist, an unreachable endpoint, bad keys).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "io_s3.h"
#include "s3_client.h"
#include "s3_upload.h"
#include "stripebackup/sb_s3.h"
#include "tests.h"

#define BUCKET "bk1"

/* A client of the test server; NULL (a failed assertion) without one. */
static SbS3Client *
test_client(unsigned in_flight, const char *endpoint)
{
	SbS3Settings s = {0};
	SbS3Config	c;
	SbS3Client *client;
	SbError		err;

	s.endpoint = endpoint != NULL ? endpoint : getenv("SB_TEST_S3_ENDPOINT");
	s.region = "us-east-1";
	if (!ok(s.endpoint != NULL, "an S3 server to test against (run under test/s3/with-s3.sh)"))
		return NULL;
	if (!sb_s3_config_load(&s, &c, &err))
	{
		th_diag_error("S3 settings", &err);
		return NULL;
	}
	c.max_attempts = 3;
	client = sb_s3_client_new(&c, in_flight, &err);
	sb_s3_config_clear(&c);
	if (client == NULL)
		th_diag_error("S3 client", &err);
	return client;
}

/* A prefix of our own in the shared bucket, so that runs do not meet. */
static void
test_prefix(char *out, size_t len, const char *what)
{
	snprintf(out, len, "unit-%d-%s", (int) getpid(), what);
}

static bool
count_item(void *arg, const SbS3Item *item, SbError *err)
{
	(*(int *) arg)++;
	return true;
}

void
test_s3_live_objects(void)
{
	SbS3Client *c;
	char		prefix[128],
				key[256];
	uint8_t    *data = NULL;
	size_t		len = 0;
	uint64_t	size = 0;
	uint8_t		big[300000];
	uint8_t		part[1000];
	SbS3Request req = {0};
	int			n = 0;
	SbError		err;

	th_begin("s3: objects on a real S3 server: put, get, ranges, head, list, delete");
	if ((c = test_client(4, NULL)) == NULL)
		return;
	test_prefix(prefix, sizeof(prefix), "objects");
	snprintf(key, sizeof(key), "%s/hello world+$.txt", prefix);
	ok(sb_s3_put_object(c, BUCKET, key, "hello", 5, &err), "a small object is put (key with spaces, + and $)");
	ok(sb_s3_get_object(c, BUCKET, key, &data, &len, &err) && len == 5 && memcmp(data, "hello", 5) == 0,
	   "and read back whole");
	free(data);
	th_fill(big, sizeof(big), 7, false);
	snprintf(key, sizeof(key), "%s/big", prefix);
	ok(sb_s3_put_object(c, BUCKET, key, big, sizeof(big), &err), "a 300 kB object (unsigned payload, MD5 checked)");
	ok(sb_s3_head_object(c, BUCKET, key, &size, &err) && size == sizeof(big), "its size from HEAD");
	strcpy(req.bucket, BUCKET);
	strcpy(req.key, key);
	req.method = "GET";
	req.range_offset = 123456;
	req.range_length = sizeof(part);
	req.into = part;
	req.into_len = sizeof(part);
	ok(sb_s3_run(c, &req, &err) && req.got == sizeof(part) && memcmp(part, big + 123456, sizeof(part)) == 0,
	   "a ranged GET reads exactly its bytes");
	req.range_length = 2 * sizeof(part);
	ok(!sb_s3_run(c, &req, &err) && err.code == SB_ECORRUPT,
	   "more bytes than the buffer holds are refused (%s)", err.message);
	sb_s3_request_reset(&req);
	ok(sb_s3_list_objects(c, BUCKET, prefix, count_item, &n, &err) && n == 2, "the prefix lists 2 objects");
	ok(!sb_s3_get_object(c, BUCKET, "no/such/key", &data, &len, &err) && err.code == SB_ENOTFOUND,
	   "a missing key: not found (%s)", err.message);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "an object is deleted");
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "deleting it again is no error");
	snprintf(key, sizeof(key), "%s/hello world+$.txt", prefix);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "the other one too");
	n = 0;
	ok(sb_s3_list_objects(c, BUCKET, prefix, count_item, &n, &err) && n == 0, "nothing is left");
	sb_s3_client_free(c);
}

/* Upload NPARTS parts of PART_LEN bytes of DATA, all in flight at once; their ETags into ETAGS. */
static bool
upload_parts(SbS3Client *c, const char *key, const char *id, const uint8_t *data, size_t part_len,
			 unsigned nparts, char (*etags)[128])
{
	SbS3Request reqs[8];
	SbS3Request *done[8];
	SbError		err;
	unsigned	finished = 0;
	bool		all_ok = true;

	memset(reqs, 0, sizeof(reqs));
	for (unsigned i = 0; i < nparts; i++)
	{
		sb_s3_multipart_part_request(&reqs[i], BUCKET, key, id, i + 1, data + i * part_len, part_len);
		reqs[i].tag = &reqs[i];
		if (!sb_s3_start(c, &reqs[i], &err))
			return false;
	}
	while (finished < nparts)
	{
		int			n = sb_s3_reap(c, done, 8, 1, &err);

		if (n < 0)
			return false;
		for (int i = 0; i < n; i++)
		{
			unsigned	k = (unsigned) ((SbS3Request *) done[i]->tag - reqs);

			all_ok &= done[i]->ok;
			snprintf(etags[k], 128, "%s", done[i]->etag);
		}
		finished += (unsigned) n;
	}
	for (unsigned i = 0; i < nparts; i++)
		sb_s3_request_reset(&reqs[i]);
	return all_ok;
}

static bool
find_upload(void *arg, const SbS3Item *item, SbError *err)
{
	if (strcmp(item->upload_id, (const char *) arg) == 0)
		((char *) arg)[0] = '\0';	/* found: the caller sees "" */
	return true;
}

void
test_s3_live_multipart(void)
{
	const size_t part_len = 5 * 1024 * 1024;
	const unsigned nparts = 3;
	SbS3Client *c;
	char		prefix[128],
				key[256],
				id[1024],
				probe[1024];
	char		etags[8][128];
	uint8_t    *data = malloc(part_len * nparts + 100);
	uint8_t    *back = NULL;
	size_t		len = 0;
	uint64_t	size = 0;
	SbError		err;

	th_begin("s3: multipart uploads on a real S3 server: parts at once, complete, abort, list");
	if ((c = test_client(4, NULL)) == NULL || data == NULL)
		return;
	test_prefix(prefix, sizeof(prefix), "multipart");
	snprintf(key, sizeof(key), "%s/stripe-1.sbs", prefix);
	th_fill(data, part_len * nparts + 100, 11, false);
	ok(sb_s3_multipart_begin(c, BUCKET, key, id, sizeof(id), &err), "an upload begins");
	ok(upload_parts(c, key, id, data, part_len, nparts, etags), "3 parts of 5 MiB go at once");
	snprintf(probe, sizeof(probe), "%s", id);
	ok(sb_s3_list_uploads(c, BUCKET, prefix, find_upload, probe, &err) && probe[0] == '\0',
	   "the upload in progress is listed");
	ok(sb_s3_multipart_complete(c, BUCKET, key, id, etags, nparts, &err), "and completed");
	ok(sb_s3_get_object(c, BUCKET, key, &back, &len, &err) && len == part_len * nparts &&
	   memcmp(back, data, len) == 0, "the object is the parts in order");
	free(back);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "removed");

	ok(sb_s3_multipart_begin(c, BUCKET, key, id, sizeof(id), &err), "another upload begins");
	ok(upload_parts(c, key, id, data, part_len, 1, etags), "a part is sent");
	ok(sb_s3_multipart_abort(c, BUCKET, key, id, &err), "the upload is aborted");
	snprintf(probe, sizeof(probe), "%s", id);
	ok(sb_s3_list_uploads(c, BUCKET, prefix, find_upload, probe, &err) && probe[0] != '\0',
	   "and is no longer listed");
	ok(!sb_s3_head_object(c, BUCKET, key, &size, &err) &&
	   err.code == SB_ENOTFOUND, "no object was made");
	ok(sb_s3_multipart_abort(c, BUCKET, key, id, &err), "aborting it again is no error");
	sb_s3_client_free(c);
	free(data);
}

void
test_s3_live_failures(void)
{
	SbS3Client *c;
	uint8_t    *data;
	size_t		len;
	double		t0;
	SbError		err;

	th_begin("s3: a bucket that does not exist, an unreachable endpoint, bad keys");
	if ((c = test_client(2, NULL)) == NULL)
		return;
	ok(!sb_s3_put_object(c, "no-such-bucket", "k", "x", 1, &err) && err.code == SB_ENOTFOUND,
	   "a missing bucket: not found");
	like(err.message, "NoSuchBucket", "the server's reason is given (%s)", err.message);
	like(err.message, "s3://no-such-bucket/k", "and the object's place");
	ok(!sb_s3_put_object(c, BUCKET, "", "x", 1, &err), "an empty key is refused (%s)", err.message);
	sb_s3_client_free(c);

	/* Port 9 (discard) on 127.0.0.1: nothing listens in a test machine. */
	if ((c = test_client(2, "http://127.0.0.1:9")) == NULL)
		return;
	t0 = th_now();
	ok(!sb_s3_get_object(c, BUCKET, "k", &data, &len, &err) && err.code == SB_EIO,
	   "an unreachable endpoint fails");
	like(err.message, "after 3 tries", "after its retries (%s)", err.message);
	ok(th_now() - t0 >= 0.2, "with backoff between the tries (%.2f s)", th_now() - t0);
	ok(strstr(err.message, "S3RVER") == NULL, "no credential in the message");
	sb_s3_client_free(c);
}

static bool
no_upload(void *arg, const SbS3Item *item, SbError *err)
{
	(*(int *) arg)++;
	return true;
}

/* Read OBJECT back through the I/O interface, three ranges at once; equal to WANT? */
static bool
read_back(const SbS3Config *config, const char *key, const uint8_t *want, size_t len)
{
	enum
	{
		PIECE = 1000 * 1000
	};
	SbIoOp		ops[3];
	bool		busy[3] = {false, false, false};
	SbIoOp	   *done[3];
	uint8_t    *got = malloc(len);
	SbError		err;
	SbIo	   *io = sb_io_new_s3_reader(config, BUCKET, key, 3, &err);
	size_t		next = 0,
				finished = 0;
	bool		same = io != NULL && got != NULL;

	while (same && finished < (len + PIECE - 1) / PIECE)
	{
		while (next < len && sb_io_in_flight(io) < 3)
		{
			int			k = !busy[0] ? 0 : !busy[1] ? 1 : 2;
			SbIoOp	   *op = &ops[k];

			busy[k] = true;

			memset(op, 0, sizeof(*op));
			op->kind = SB_IO_READ;
			op->fd = -1;
			op->offset = next;
			op->iov[0].iov_base = got + next;
			op->iov[0].iov_len = len - next < PIECE ? len - next : PIECE;
			op->iovcnt = 1;
			same = sb_io_start(io, op, &err);
			next += op->iov[0].iov_len;
		}
		for (int n = sb_io_reap(io, done, 3, 1, &err), i = 0; i < n; i++, finished++)
		{
			busy[done[i] - ops] = false;
			same &= done[i]->error == 0 && done[i]->done == done[i]->length;
		}
	}
	same = same && memcmp(got, want, len) == 0;
	sb_io_free(io);
	free(got);
	return same;
}

void
test_s3_live_upload(void)
{
	const size_t len = 13 * 1024 * 1024 + 12345;
	uint8_t    *data = malloc(len);
	SbS3Settings s = {0};
	SbS3Config	config;
	SbS3Client *c;
	SbS3Upload *u;
	char		prefix[128],
				key[256];
	uint64_t	size = 0;
	int			uploads = 0;
	SbError		err;

	th_begin("s3: an object written front to back in parts, read back by ranges; an upload aborted");
	s.endpoint = getenv("SB_TEST_S3_ENDPOINT");
	if (!ok(s.endpoint != NULL && data != NULL && sb_s3_config_load(&s, &config, &err),
			"an S3 server to test against") || (c = test_client(1, NULL)) == NULL)
		return;
	test_prefix(prefix, sizeof(prefix), "upload");
	th_fill(data, len, 5, false);
	snprintf(key, sizeof(key), "%s/parts", prefix);
	u = sb_s3_upload_new(&config, BUCKET, key, 2, SB_S3_PART_MIN, &err);
	ok(u != NULL, "an upload of 5 MiB parts, 2 in flight");
	for (size_t at = 0, step = 1; u != NULL && at < len; at += step, step = step * 7 % 999983 + 1)
		if (!sb_s3_upload_append(u, data + at, at + step > len ? len - at : step, &err))
			break;
	ok(u != NULL && sb_s3_upload_size(u) == len, "13 MiB appended in pieces of every size");
	ok(u != NULL && sb_s3_upload_finish(u, &err), "finished: 3 parts");
	sb_s3_upload_free(u);
	ok(sb_s3_head_object(c, BUCKET, key, &size, &err) && size == len, "the object has every byte");
	ok(read_back(&config, key, data, len), "read back by ranges, three at once, it is what was written");

	snprintf(key, sizeof(key), "%s/small", prefix);
	u = sb_s3_upload_new(&config, BUCKET, key, 2, 0, &err);
	ok(u != NULL && sb_s3_upload_append(u, data, 1000, &err) && sb_s3_upload_finish(u, &err),
	   "an object smaller than a part goes in one PUT");
	ok(u != NULL && sb_s3_upload_abort(u, &err), "undoing it after it was made deletes it");
	sb_s3_upload_free(u);
	ok(!sb_s3_head_object(c, BUCKET, key, &size, &err) && err.code == SB_ENOTFOUND, "it is gone");

	snprintf(key, sizeof(key), "%s/aborted", prefix);
	u = sb_s3_upload_new(&config, BUCKET, key, 2, SB_S3_PART_MIN, &err);
	ok(u != NULL && sb_s3_upload_append(u, data, 11 * 1024 * 1024, &err), "an upload with parts in flight");
	ok(u != NULL && sb_s3_upload_abort(u, &err), "is aborted");
	sb_s3_upload_free(u);
	ok(sb_s3_list_uploads(c, BUCKET, prefix, no_upload, &uploads, &err) && uploads == 0,
	   "no multipart upload is left (%d)", uploads);
	ok(!sb_s3_head_object(c, BUCKET, key, &size, &err), "and no object made");
	u = sb_s3_upload_new(&config, BUCKET, key, 2, SB_S3_PART_MIN, &err);
	ok(u != NULL && sb_s3_upload_append(u, data, 6 * 1024 * 1024, &err), "an upload left unfinished");
	sb_s3_upload_free(u);
	uploads = 0;
	ok(sb_s3_list_uploads(c, BUCKET, prefix, no_upload, &uploads, &err) && uploads == 0,
	   "is aborted when freed");

	snprintf(key, sizeof(key), "%s/parts", prefix);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "clean up");
	sb_s3_config_clear(&config);
	sb_s3_client_free(c);
	free(data);
}
