/*
 * s3_object.c
 *		S3 operations on objects, each waiting for its answer: put, get,
 *		head, delete, list, and the steps of a multipart upload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "s3_client.h"
#include "s3_sign.h"

/* REQ made for METHOD on BUCKET/KEY, nothing else set. */
static void
request_init(SbS3Request *req, const char *method, const char *bucket, const char *key)
{
	memset(req, 0, sizeof(*req));
	req->method = method;
	snprintf(req->bucket, sizeof(req->bucket), "%s", bucket);
	snprintf(req->key, sizeof(req->key), "%s", key);
}

static bool
key_fits(const char *key, SbError *err)
{
	if (key[0] == '\0')
		return sb_error_set(err, SB_EINVAL, "an S3 object needs a key");
	if (strlen(key) >= SB_S3_KEY_MAX)
		return sb_error_set(err, SB_EINVAL, "S3 key \"%.200s...\" is longer than %d bytes", key,
							SB_S3_KEY_MAX - 1);
	return true;
}

/* Run REQ; its reply stays with the caller on success, is dropped on failure. */
static bool
run(SbS3Client *c, SbS3Request *req, SbError *err)
{
	if (sb_s3_run(c, req, err))
		return true;
	sb_s3_request_reset(req);
	return false;
}

bool
sb_s3_put_object(SbS3Client *c, const char *bucket, const char *key, const void *data,
				 size_t len, SbError *err)
{
	SbS3Request req;
	bool		ok;

	if (!key_fits(key, err))
		return false;
	request_init(&req, "PUT", bucket, key);
	req.body = data;
	req.body_len = len;
	req.send_md5 = true;
	ok = run(c, &req, err);
	sb_s3_request_reset(&req);
	return ok;
}

bool
sb_s3_get_object(SbS3Client *c, const char *bucket, const char *key, uint8_t **data,
				 size_t *len, SbError *err)
{
	SbS3Request req;

	*data = NULL;
	*len = 0;
	if (!key_fits(key, err))
		return false;
	request_init(&req, "GET", bucket, key);
	if (!run(c, &req, err))
		return false;
	if (req.reply == NULL)
	{
		/* an empty object: still a NUL-terminated buffer */
		if ((req.reply = calloc(1, 1)) == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory reading an S3 object");
	}
	*data = (uint8_t *) req.reply;
	*len = req.reply_len;
	req.reply = NULL;
	sb_s3_request_reset(&req);
	return true;
}

bool
sb_s3_head_object(SbS3Client *c, const char *bucket, const char *key, uint64_t *size,
				  SbError *err)
{
	return sb_s3_head_object_etag(c, bucket, key, size, NULL, err);
}

bool
sb_s3_head_object_etag(SbS3Client *c, const char *bucket, const char *key, uint64_t *size,
					   char etag[128], SbError *err)
{
	SbS3Request req;

	if (!key_fits(key, err))
		return false;
	request_init(&req, "HEAD", bucket, key);
	if (!run(c, &req, err))
		return false;
	*size = req.content_length;
	if (etag != NULL)
		memcpy(etag, req.etag, sizeof(req.etag));
	sb_s3_request_reset(&req);
	return true;
}

bool
sb_s3_delete_object(SbS3Client *c, const char *bucket, const char *key, SbError *err)
{
	SbS3Request req;

	if (!key_fits(key, err))
		return false;
	request_init(&req, "DELETE", bucket, key);
	if (!run(c, &req, err))
		return err->code == SB_ENOTFOUND && strstr(err->message, "NoSuchBucket") == NULL;
	sb_s3_request_reset(&req);
	return true;
}

/* "name=value" (value encoded) appended to QUERY, "&" between: callers add in name order. */
static bool
query_add(char *query, size_t len, const char *name, const char *value)
{
	char		encoded[3 * SB_S3_KEY_MAX + 1];
	size_t		used = strlen(query);

	if (!sb_s3_uri_encode(value, false, encoded, sizeof(encoded)))
		return false;
	return (size_t) snprintf(query + used, len - used, "%s%s=%s", used > 0 ? "&" : "", name,
							 encoded) < len - used;
}

/* Page after page of a listing (objects or uploads) to FN. */
static bool
list_pages(SbS3Client *c, const char *bucket, const char *prefix, bool uploads, SbS3ItemFn fn,
		   void *arg, SbError *err)
{
	SbS3Page	page = {0};

	do
	{
		SbS3Request req;
		bool		ok;

		request_init(&req, "GET", bucket, "");
		/* Sorted names: the canonical query string is the URL's. */
		if (uploads)
			ok = (page.next[0] == '\0' || query_add(req.query, sizeof(req.query), "key-marker", page.next)) &&
				query_add(req.query, sizeof(req.query), "prefix", prefix) &&
				(page.next_upload[0] == '\0' ||
				 query_add(req.query, sizeof(req.query), "upload-id-marker", page.next_upload)) &&
				query_add(req.query, sizeof(req.query), "uploads", "");
		else
			ok = (page.next[0] == '\0' ||
				  query_add(req.query, sizeof(req.query), "continuation-token", page.next)) &&
				query_add(req.query, sizeof(req.query), "list-type", "2") &&
				query_add(req.query, sizeof(req.query), "prefix", prefix);
		if (!ok)
			return sb_error_set(err, SB_EINVAL, "S3 listing of \"%.200s\": the request is too long", prefix);
		if (!run(c, &req, err))
			return false;
		ok = uploads ? sb_s3_xml_uploads(req.reply, req.reply_len, fn, arg, &page, err) :
			sb_s3_xml_objects(req.reply, req.reply_len, fn, arg, &page, err);
		sb_s3_request_reset(&req);
		if (!ok)
			return false;
		if (page.truncated && page.next[0] == '\0')
			return sb_error_set(err, SB_ECORRUPT,
								"the S3 server's listing of s3://%s/%s is cut without saying where it goes on",
								bucket, prefix);
	} while (page.truncated);
	return true;
}

bool
sb_s3_list_objects(SbS3Client *c, const char *bucket, const char *prefix, SbS3ItemFn fn,
				   void *arg, SbError *err)
{
	return list_pages(c, bucket, prefix, false, fn, arg, err);
}

bool
sb_s3_list_uploads(SbS3Client *c, const char *bucket, const char *prefix, SbS3ItemFn fn,
				   void *arg, SbError *err)
{
	return list_pages(c, bucket, prefix, true, fn, arg, err);
}

bool
sb_s3_multipart_begin(SbS3Client *c, const char *bucket, const char *key, char *id, size_t id_len,
				   SbError *err)
{
	SbS3Request req;
	bool		ok;

	if (!key_fits(key, err))
		return false;
	request_init(&req, "POST", bucket, key);
	strcpy(req.query, "uploads=");
	if (!run(c, &req, err))
		return false;
	ok = sb_s3_xml_text(req.reply, req.reply_len, "UploadId", id, id_len, err);
	sb_s3_request_reset(&req);
	return ok;
}

void
sb_s3_multipart_part_request(SbS3Request *req, const char *bucket, const char *key,
						  const char *upload_id, unsigned number, const void *data, size_t len)
{
	char		n[16];

	request_init(req, "PUT", bucket, key);
	snprintf(n, sizeof(n), "%u", number);
	query_add(req->query, sizeof(req->query), "partNumber", n);
	query_add(req->query, sizeof(req->query), "uploadId", upload_id);
	req->body = data;
	req->body_len = len;
	req->send_md5 = true;
}

bool
sb_s3_multipart_complete(SbS3Client *c, const char *bucket, const char *key, const char *upload_id,
					  char (*etags)[128], unsigned nparts, SbError *err)
{
	size_t		cap = 128 + (size_t) nparts * 200;
	char	   *xml = malloc(cap);
	size_t		used;
	SbS3Request req;
	bool		ok;

	if (xml == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory completing an S3 upload");
	used = (size_t) snprintf(xml, cap, "<CompleteMultipartUpload>");
	for (unsigned i = 0; i < nparts; i++)
		used += (size_t) snprintf(xml + used, cap - used,
								  "<Part><PartNumber>%u</PartNumber><ETag>\"%s\"</ETag></Part>",
								  i + 1, etags[i]);
	snprintf(xml + used, cap - used, "</CompleteMultipartUpload>");
	request_init(&req, "POST", bucket, key);
	query_add(req.query, sizeof(req.query), "uploadId", upload_id);
	req.body = (const uint8_t *) xml;
	req.body_len = strlen(xml);
	ok = run(c, &req, err);
	sb_s3_request_reset(&req);
	free(xml);
	return ok;
}

bool
sb_s3_multipart_abort(SbS3Client *c, const char *bucket, const char *key, const char *upload_id,
				   SbError *err)
{
	SbS3Request req;

	request_init(&req, "DELETE", bucket, key);
	query_add(req.query, sizeof(req.query), "uploadId", upload_id);
	if (!run(c, &req, err))
		return err->code == SB_ENOTFOUND && strstr(err->message, "NoSuchUpload") != NULL;
	sb_s3_request_reset(&req);
	return true;
}
