/*
 * test_s3_live.c
 *		The S3 client against a real S3-protocol server (s3rver, started by
 *		test/s3/with-s3.sh, which sets SB_TEST_S3_ENDPOINT and the
 *		credentials): objects, ranges, listings, multipart uploads with parts
 *		in flight at once, and the failures a user meets (a bucket that does
 *		not exist, an unreachable endpoint, bad keys; against radosgw, which
 *		checks signatures, a wrong secret and an unknown key).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "stripebackup/sb_folder.h"
#include "stripebackup/sb_calibrate.h"
#include "store/s3/io_s3.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_upload.h"
#include "stripebackup/sb_s3.h"
#include "drivers.h"
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

	s.endpoint = endpoint != NULL ? endpoint : th_s3_endpoint();
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
	ok(sb_s3_get_object(c, BUCKET, key, 5, &data, &len, &err) && len == 5 && memcmp(data, "hello", 5) == 0,
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
	ok(!sb_s3_get_object(c, BUCKET, "no/such/key", 100, &data, &len, &err) && err.code == SB_ENOTFOUND,
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
	{
		sb_s3_client_free(c);
		free(data);
		return;
	}
	test_prefix(prefix, sizeof(prefix), "multipart");
	snprintf(key, sizeof(key), "%s/stripe-1.sbs", prefix);
	th_fill(data, part_len * nparts + 100, 11, false);
	ok(sb_s3_multipart_begin(c, BUCKET, key, id, sizeof(id), &err), "an upload begins");
	ok(upload_parts(c, key, id, data, part_len, nparts, etags), "3 parts of 5 MiB go at once");
	snprintf(probe, sizeof(probe), "%s", id);
	ok(sb_s3_list_uploads(c, BUCKET, prefix, find_upload, probe, &err) && probe[0] == '\0',
	   "the upload in progress is listed");
	ok(sb_s3_multipart_complete(c, BUCKET, key, id, etags, nparts, &err), "and completed");
	ok(sb_s3_get_object(c, BUCKET, key, part_len * nparts, &back, &len, &err) && len == part_len * nparts &&
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
	uint64_t	size = 0;
	double		t0;
	int			n = 0;
	SbError		err;

	th_begin("s3: a bucket that does not exist, an unreachable endpoint, bad keys");
	if ((c = test_client(2, NULL)) == NULL)
		return;
	ok(!sb_s3_put_object(c, "no-such-bucket", "k", "x", 1, &err) && err.code == SB_EIO &&
	   sb_s3_bucket_missing(&err), "a missing bucket: an error of the destination, not \"not found\"");
	like(err.message, "NoSuchBucket", "the server's reason is given (%s)", err.message);
	like(err.message, "s3://no-such-bucket/k", "and the object's place");
	like(err.message, "bucket \"no-such-bucket\" does not exist", "and the bucket named");
	/* a HEAD has no body: its 404 cannot tell (the store confirms it by a listing where it matters) */
	ok(!sb_s3_head_object(c, "no-such-bucket", "k", &size, &err) && err.code == SB_ENOTFOUND,
	   "a HEAD in a missing bucket: 404, which cannot say which (%s)", err.message);
	ok(!sb_s3_list_objects(c, "no-such-bucket", "k", count_item, &n, &err) && err.code == SB_EIO &&
	   sb_s3_bucket_missing(&err), "a listing of its key says the bucket is missing (%s)", err.message);
	ok(!sb_s3_head_object(c, BUCKET, "no/such/key", &size, &err) && err.code == SB_ENOTFOUND &&
	   !sb_s3_bucket_missing(&err), "a missing key stays \"not found\" (%s)", err.message);
	ok(!sb_s3_put_object(c, BUCKET, "", "x", 1, &err), "an empty key is refused (%s)", err.message);
	sb_s3_client_free(c);

	/* Port 9 (discard) on 127.0.0.1: nothing listens in a test machine. */
	if ((c = test_client(2, "http://127.0.0.1:9")) == NULL)
		return;
	t0 = th_now();
	ok(!sb_s3_get_object(c, BUCKET, "k", 100, &data, &len, &err) && err.code == SB_EIO,
	   "an unreachable endpoint fails");
	like(err.message, "after 3 tries", "after its retries (%s)", err.message);
	ok(th_now() - t0 >= 0.2, "with backoff between the tries (%.2f s)", th_now() - t0);
	ok(strstr(err.message, "S3RVER") == NULL, "no credential in the message");
	sb_s3_client_free(c);
}

/* A client of the test server signing with SECRET (and KEY_ID, unless NULL). */
static SbS3Client *
client_signing_with(const char *key_id, const char *secret)
{
	SbS3Settings s = {0};
	SbS3Config	c;
	SbS3Client *client;
	SbError		err;

	s.endpoint = th_s3_endpoint();
	s.region = "us-east-1";
	if (s.endpoint == NULL || !sb_s3_config_load(&s, &c, &err))
		return NULL;
	if (key_id != NULL)
		snprintf(c.access_key, sizeof(c.access_key), "%s", key_id);
	snprintf(c.secret_key, sizeof(c.secret_key), "%s", secret);
	c.max_attempts = 2;
	client = sb_s3_client_new(&c, 1, &err);
	sb_s3_config_clear(&c);
	return client;
}

/* ERR is a refusal (EACCES) naming CODE, and not the secret. */
static void
refused_as(const SbError *err, const char *code, const char *secret, const char *what)
{
	ok(err->code == SB_EIO && err->sys_errno == EACCES, "%s: refused (%s)", what, err->message);
	like(err->message, code, "%s: the server's error is named", what);
	ok(strstr(err->message, secret) == NULL, "%s: the secret is not in the message", what);
}

void
test_s3_live_signature(void)
{
	const char *secret = "a-wrong-secret-0f1e2d";
	const char *server = getenv("SB_TEST_S3_SERVER");
	SbS3Client *c;
	uint8_t    *data = NULL;
	size_t		len = 0;
	uint64_t	size = 0;
	int			n = 0;
	char		prefix[128],
				key[256];
	SbError		err;

	th_begin("s3: requests signed with a wrong secret or an unknown key are refused, the S3 error named");
	if (server == NULL || strcmp(server, "radosgw") != 0)
	{
		diag("skipped: the server (%s) checks no signature; SB_TEST_S3_SERVER=radosgw does",
			 server != NULL ? server : "s3rver");
		return;
	}
	if ((c = test_client(1, NULL)) == NULL)
		return;
	test_prefix(prefix, sizeof(prefix), "signature");
	snprintf(key, sizeof(key), "%s/object", prefix);
	ok(sb_s3_put_object(c, BUCKET, key, "hello", 5, &err), "the right keys put an object");
	sb_s3_client_free(c);

	if (!ok((c = client_signing_with(NULL, secret)) != NULL, "a client with a wrong secret"))
		return;
	ok(!sb_s3_put_object(c, BUCKET, key, "x", 1, &err), "a PUT signed with a wrong secret fails");
	refused_as(&err, "HTTP 403 SignatureDoesNotMatch", secret, "PUT");
	ok(!sb_s3_get_object(c, BUCKET, key, 100, &data, &len, &err), "a GET fails");
	refused_as(&err, "SignatureDoesNotMatch", secret, "GET");
	ok(!sb_s3_head_object(c, BUCKET, key, &size, &err), "a HEAD fails");
	refused_as(&err, "SignatureDoesNotMatch", secret, "HEAD (no body: told by a 1-byte GET)");
	ok(!sb_s3_list_objects(c, BUCKET, prefix, count_item, &n, &err), "a listing fails");
	refused_as(&err, "SignatureDoesNotMatch", secret, "listing");
	sb_s3_client_free(c);

	if (!ok((c = client_signing_with("SBNOSUCHACCESSKEY", secret)) != NULL, "a client with an unknown key"))
		return;
	ok(!sb_s3_head_object(c, BUCKET, key, &size, &err), "a HEAD with an unknown key fails");
	refused_as(&err, "InvalidAccessKeyId", secret, "unknown key");
	sb_s3_client_free(c);

	if ((c = test_client(1, NULL)) == NULL)
		return;
	ok(sb_s3_get_object(c, BUCKET, key, 100, &data, &len, &err) && len == 5 && memcmp(data, "hello", 5) == 0,
	   "the object is as the right keys put it");
	free(data);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "clean up");
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
	s.endpoint = th_s3_endpoint();
	if (!ok(s.endpoint != NULL && data != NULL && sb_s3_config_load(&s, &config, &err),
			"an S3 server to test against"))
	{
		free(data);
		return;
	}
	if ((c = test_client(1, NULL)) == NULL)
	{
		sb_s3_config_clear(&config);
		free(data);
		return;
	}
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

void
test_s3_live_calibrate(void)
{
	SbCalibrationOptions o = {0};
	SbCalibrationResult results[32];
	SbS3Client *c;
	char		prefix[128],
				dir[256];
	int			n = 0,
				left = 0;
	SbError		err;

	th_begin("s3: calibrating a bucket: write, read and random reads, the test object removed");
	if ((c = test_client(1, NULL)) == NULL)
		return;
	test_prefix(prefix, sizeof(prefix), "calibrate");
	snprintf(dir, sizeof(dir), "s3://" BUCKET "/%s", prefix);
	setenv("AWS_ENDPOINT_URL", th_s3_endpoint(), 1);
	o.directory = dir;
	o.size = 20 * 1024 * 1024;
	o.block_size = 1024 * 1024;
	o.queue_depth = 4;
	ok(sb_calibrate(&o, true, false, results, &n, &err), "a bucket is calibrated");
	is_int(n, 3, "sequential write and read, random reads");
	ok(n == 3 && results[0].mb_per_s > 0 && results[1].mb_per_s > 0 && results[2].iops > 0,
	   "each measured (%.0f MB/s written, %.0f MB/s read, %.0f reads/s)",
	   results[0].mb_per_s, results[1].mb_per_s, results[2].iops);
	ok(sb_s3_list_objects(c, BUCKET, prefix, count_item, &left, &err) && left == 0,
	   "the test object is gone");
	o.directory = "s3://no-such-bucket/x";
	ok(!sb_calibrate(&o, false, false, results, &n, &err), "a bucket that does not exist: refused (%s)",
	   err.message);
	unsetenv("AWS_ENDPOINT_URL");
	sb_s3_client_free(c);
}

/* Put BODY as BUCKET/KEY through a client of the test server. */
static bool
put_text(SbS3Client *c, const char *key, const char *body)
{
	SbError		err;

	return sb_s3_put_object(c, BUCKET, key, body, strlen(body), &err);
}

void
test_s3_live_backup(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbFolderRemoval r;
	SbS3Client *c;
	SbError		err;
	char		prefix[128],
				bucket_dest[256],
				location[300],
				key[400],
				path[PATH_MAX];
	const char *dests[2];
	uint8_t		other_uuid[16] = {1};
	int			left = 0;
	uint64_t	size = 0;

	th_begin("s3: a backup to a folder and a bucket: restored, verified, planned, removed by retention");
	if ((c = test_client(1, NULL)) == NULL)
		return;
	setenv("AWS_ENDPOINT_URL", th_s3_endpoint(), 1);
	test_prefix(prefix, sizeof(prefix), "backup");
	snprintf(bucket_dest, sizeof(bucket_dest), "s3://" BUCKET "/%s", prefix);
	th_fixture(&f, "s3backup", 1);
	ok(th_write_pattern(th_path(path, "%s/big", f.src), 12 * 1024 * 1024 + 777, 3, false, 0600) &&
	   th_write_pattern(th_path(path, "%s/small", f.src), 5000, 4, true, 0600), "a source of 12 MB and a small file");
	dests[0] = f.dests[0];
	dests[1] = bucket_dest;
	th_options(&o, dests, 2, "b1");
	o.chunk_size = 1024 * 1024;
	ok(th_backup_tree(&o, f.src, &m, &err), "backed up to a folder and a bucket");
	if (m == NULL)
		th_diag_error("backup", &err);
	ok(!th_backup_tree(&o, f.src, NULL, &err) && err.code == SB_EEXIST,
	   "the same name again is refused: %s", err.message);
	snprintf(key, sizeof(key), "%s/b1/stripe-2.sbs", prefix);
	ok(sb_s3_head_object(c, BUCKET, key, &size, &err) && m != NULL && size == m->stripes[1].file_bytes,
	   "the bucket holds stripe 2 (%llu bytes)", (unsigned long long) size);
	snprintf(location, sizeof(location), "%s/b1", bucket_dest);
	ok(th_restore(location, f.target, &err) && th_trees_equal(f.src, f.target, 0),
	   "restored from the bucket's location: the source, byte for byte");
	if (!th_exists(f.target))
		th_diag_error("restore", &err);
	is_int(th_verify(location), 0, "verify reads both stripes and finds nothing wrong");
	is_int(th_verify(th_location(&f, 0, "b1", path)), 0, "from the folder's copy too");
	{
		SbArchive  *a = sb_archive_open(location, &err);
		SbPlan		plan;

		ok(a != NULL && sb_archive_plan(a, &plan, &err) && plan.nstripes == 2 && plan.stripes[0].present &&
		   plan.stripes[1].present, "the plan finds both stripes, the bucket's by its size");
		sb_archive_close(a);
	}

	ok(sb_backup_folder_remove(bucket_dest, NULL, "b1", other_uuid, true, &r, &err) && r.verdict == SB_FOLDER_FOREIGN,
	   "retention keeps a backup of another uuid: %s", r.detail);
	snprintf(key, sizeof(key), "%s/b1/notes.txt", prefix);
	ok(put_text(c, key, "mine"), "a user's object beside the backup");
	ok(m && sb_backup_folder_remove(bucket_dest, NULL, "b1", m->uuid, false, &r, &err) &&
	   r.verdict == SB_FOLDER_FOREIGN && strstr(r.detail, "notes.txt") != NULL,
	   "which keeps the whole backup: %s", r.detail);
	ok(sb_s3_delete_object(c, BUCKET, key, &err), "the user's object removed");
	ok(m && sb_backup_folder_remove(bucket_dest, NULL, "b1", m->uuid, true, &r, &err) &&
	   r.verdict == SB_FOLDER_REMOVED && r.files == 2, "a dry run would remove its 2 objects");
	ok(m && sb_backup_folder_remove(bucket_dest, NULL, "b1", m->uuid, false, &r, &err) &&
	   r.verdict == SB_FOLDER_REMOVED && r.files == 2 && r.bytes > 12 * 1000 * 1000 / 2,
	   "retention removes them (%llu bytes)", (unsigned long long) r.bytes);
	ok(sb_s3_list_objects(c, BUCKET, prefix, count_item, &left, &err) && left == 0, "nothing is left");
	ok(m && sb_backup_folder_remove(bucket_dest, NULL, "b1", m->uuid, false, &r, &err) && r.verdict == SB_FOLDER_ABSENT,
	   "again: nothing there");
	ok(m && sb_backup_folder_remove("s3://no-such-bucket/x", NULL, "b1", m->uuid, false, &r, &err) &&
	   r.verdict == SB_FOLDER_BUCKET_MISSING, "a bucket that does not exist: %s", r.detail);
	like(r.detail, "bucket \"no-such-bucket\" does not exist", "named");

	dests[1] = "s3://no-such-bucket/x";
	th_options(&o, dests, 2, "b2");
	ok(!th_backup_tree(&o, f.src, NULL, &err) && strstr(err.message, "NoSuchBucket") != NULL,
	   "a backup to a bucket that does not exist fails: %s", err.message);
	ok(!th_exists(th_location(&f, 0, "b2", path)), "leaving nothing in the folder");
	dests[1] = "s3://Bad_Bucket/x";
	ok(!th_backup_tree(&o, f.src, NULL, &err) && err.code == SB_EINVAL, "a bad bucket name is refused");
	dests[1] = dests[0];
	dests[0] = bucket_dest;
	dests[1] = bucket_dest;
	ok(!th_backup_tree(&o, f.src, NULL, &err) && strstr(err.message, "same folder") != NULL,
	   "the same bucket and prefix twice are refused");
	unsetenv("AWS_ENDPOINT_URL");
	sb_manifest_free(m);
	th_fixture_done(&f);
	sb_s3_client_free(c);
}
