/*
 * s3_object.c
 *		S3 operations on objects, each waiting for its answer: put, get,
 *		head, delete, list, and the steps of a multipart upload.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/s3/s3_client.h"
#include "store/s3/s3_sign.h"

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
sb_s3_get_object(SbS3Client *c, const char *bucket, const char *key, size_t max, uint8_t **data,
				 size_t *len, SbError *err)
{
	SbS3Request req;
	uint64_t	size;
	char		where[SB_S3_BUCKET_MAX + SB_S3_KEY_MAX + 8];
	bool		ok;

	*data = NULL;
	*len = 0;
	if (!key_fits(key, err) || !sb_s3_head_object(c, bucket, key, &size, err))
		return false;
	sb_s3_describe(bucket, key, where, sizeof(where));
	if (size > max)
		return sb_error_set(err, SB_ECORRUPT, "%s is %llu bytes, more than the %zu bytes it may be",
							where, (unsigned long long) size, max);
	/* a byte more, for the NUL that ends text, and for an empty object */
	if ((*data = malloc((size_t) size + 1)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading %s (%llu bytes)", where,
							(unsigned long long) size);
	request_init(&req, "GET", bucket, key);
	req.into = *data;
	req.into_len = (size_t) size;
	ok = run(c, &req, err);
	if (ok && req.got != size)
		ok = sb_error_set(err, SB_ECORRUPT, "%s changed while it was read: %zu bytes where HEAD said %llu",
						  where, req.got, (unsigned long long) size);
	if (!ok)
	{
		sb_s3_request_reset(&req);
		free(*data);
		*data = NULL;
		return false;
	}
	(*data)[size] = '\0';
	*len = (size_t) size;
	sb_s3_request_reset(&req);
	return true;
}

bool
sb_s3_head_object(SbS3Client *c, const char *bucket, const char *key, uint64_t *size,
				  SbError *err)
{
	return sb_s3_head_object_etag(c, bucket, key, size, NULL, err);
}

/*
 * A HEAD that failed (STATUS) has no body to say why: a GET of its first
 * byte, refused the same way, brings the server's error document
 * (AccessDenied, SignatureDoesNotMatch ...), whose error replaces ERR's.
 * A 404 needs none: NoSuchKey and NoSuchBucket, which a HEAD cannot tell
 * apart, are told apart by a listing where it matters (store_s3.c, on a
 * read of a file that is not there), so that the look before a put that
 * must not replace, which finds nothing each time, costs no second request
 * (a missing bucket fails the put itself, naming it).
 */
static void
explain_head_failure(SbS3Client *c, const char *bucket, const char *key, long status, SbError *err)
{
	SbS3Request req;
	uint8_t		byte;
	SbError		why;

	if (status < 400 || status == 404 || err->code == SB_ECANCELED)
		return;
	request_init(&req, "GET", bucket, key);
	req.range_length = 1;
	req.into = &byte;
	req.into_len = 1;
	if (!sb_s3_run(c, &req, &why) && req.status == status)
		*err = why;
	sb_s3_request_reset(&req);
}

bool
sb_s3_head_object_etag(SbS3Client *c, const char *bucket, const char *key, uint64_t *size,
					   char etag[128], SbError *err)
{
	SbS3Request req;

	if (!key_fits(key, err))
		return false;
	request_init(&req, "HEAD", bucket, key);
	if (!sb_s3_run(c, &req, err))
	{
		long		status = req.status;

		sb_s3_request_reset(&req);
		explain_head_failure(c, bucket, key, status, err);
		return false;
	}
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
		return err->code == SB_ENOTFOUND;	/* NoSuchBucket is SB_EIO */
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

/*
 * The continuation tokens a listing was given, as 64-bit hashes in an
 * open-addressed table: a token that comes again means a listing that
 * would go round for ever.  (Two tokens of one listing sharing a hash is a
 * chance of about pages^2 / 2^65: 3e-10 at the page limit.)
 */
typedef struct SeenTokens
{
	uint64_t   *slots;			/* 0: empty */
	size_t		cap;
	size_t		n;
} SeenTokens;

/* FNV-1a over A, a NUL, then B: never 0 (the empty slot). */
static uint64_t
token_hash(const char *a, const char *b)
{
	uint64_t	h = 14695981039346656037ULL;

	for (const char *p = a;; p++)
	{
		h = (h ^ (unsigned char) *p) * 1099511628211ULL;
		if (*p == '\0')
			break;
	}
	for (const char *p = b; *p != '\0'; p++)
		h = (h ^ (unsigned char) *p) * 1099511628211ULL;
	return h != 0 ? h : 1;
}

/* Insert H into SEEN (kept at most half full); *AGAIN when it was there. */
static bool
seen_add(SeenTokens *seen, uint64_t h, bool *again, SbError *err)
{
	size_t		i;

	if (2 * (seen->n + 1) > seen->cap)
	{
		SeenTokens	grown = {calloc(seen->cap ? 2 * seen->cap : 64, sizeof(uint64_t)),
		seen->cap ? 2 * seen->cap : 64, 0};

		if (grown.slots == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory following an S3 listing");
		for (i = 0; i < seen->cap; i++)
			if (seen->slots[i] != 0)
				(void) seen_add(&grown, seen->slots[i], again, err);
		free(seen->slots);
		*seen = grown;
	}
	for (i = h % seen->cap; seen->slots[i] != 0; i = (i + 1) % seen->cap)
		if (seen->slots[i] == h)
			return *again = true;
	seen->slots[i] = h;
	seen->n++;
	*again = false;
	return true;
}

/* The query of a listing's next page (names in sorted order: the canonical query is the URL's). */
static bool
list_query(char *query, size_t len, const char *prefix, bool uploads, const SbS3Page *page)
{
	if (uploads)
		return (page->next[0] == '\0' || query_add(query, len, "key-marker", page->next)) &&
			query_add(query, len, "max-uploads", "1000") &&
			query_add(query, len, "prefix", prefix) &&
			(page->next_upload[0] == '\0' || query_add(query, len, "upload-id-marker", page->next_upload)) &&
			query_add(query, len, "uploads", "");
	return (page->next[0] == '\0' || query_add(query, len, "continuation-token", page->next)) &&
		query_add(query, len, "list-type", "2") &&
		query_add(query, len, "max-keys", "1000") &&
		query_add(query, len, "prefix", prefix);
}

/*
 * One page of a listing to FN, *PAGE then saying where the next begins.
 *
 * Its reply may be SB_S3_LIST_REPLY_MAX (8 MiB): a page holds at most 1,000
 * items (max-keys, max-uploads), each a key of at most 1,024 bytes, which
 * XML escaping makes at most 6 KiB ("&quot;", "&#x1F;" for one byte), and
 * its other elements (LastModified, ETag, Size, StorageClass, an Owner of a
 * 64-digit ID and a name; an upload id and an Initiator) under 1 KiB:
 * 7 MiB, and the page's own elements (Name, Prefix, tokens) fit in the
 * rest.  Our own pages are far smaller (keys of 100 bytes: 400 kB).  The
 * page is read into memory, then parsed as a stream (s3_xml.c): no tree.
 */
static bool
list_page(SbS3Client *c, const char *bucket, const char *prefix, bool uploads, SbS3ItemFn fn,
		  void *arg, SbS3Page *page, SbError *err)
{
	SbS3Request req;
	bool		ok;

	request_init(&req, "GET", bucket, "");
	if (!list_query(req.query, sizeof(req.query), prefix, uploads, page))
		return sb_error_set(err, SB_EINVAL, "S3 listing of \"%.200s\": the request is too long", prefix);
	req.list_prefix = prefix;
	req.reply_max = SB_S3_LIST_REPLY_MAX;
	req.reply_what = "a listing page";
	if (!run(c, &req, err))
		return false;
	ok = uploads ? sb_s3_xml_uploads(req.reply, req.reply_len, fn, arg, page, err) :
		sb_s3_xml_objects(req.reply, req.reply_len, fn, arg, page, err);
	sb_s3_request_reset(&req);
	if (!ok)
		sb_error_prefix(err, "S3 listing of s3://%s/%s", bucket, prefix);
	return ok;
}

/*
 * Whether a listing may go on after page number PAGES (PAGE just read): it
 * says where from, it was not there before, and it stays within
 * SB_S3_LIST_PAGES_MAX pages.  That limit is 10^8 keys: the largest
 * listing of a destination is its WAL archive's, and 10^8 segments are
 * 1.6 EB of WAL.
 */
static bool
list_goes_on(const char *bucket, const char *prefix, const SbS3Page *page, unsigned long pages,
			 SeenTokens *seen, SbError *err)
{
	bool		again = false;

	if (page->next[0] == '\0')
		return sb_error_set(err, SB_ECORRUPT,
							"the S3 server's listing of s3://%s/%s is cut without saying where it goes on",
							bucket, prefix);
	if (!seen_add(seen, token_hash(page->next, page->next_upload), &again, err))
		return false;
	if (again)
		return sb_error_set(err, SB_ECORRUPT,
							"the S3 server's listing of s3://%s/%s gives continuation \"%.100s\" a second time "
							"(after page %lu): it would never end",
							bucket, prefix, page->next, pages);
	if (pages >= SB_S3_LIST_PAGES_MAX)
		return sb_error_set(err, SB_ECORRUPT,
							"the S3 server's listing of s3://%s/%s goes on past %d pages of 1,000 keys, more than "
							"any destination holds",
							bucket, prefix, SB_S3_LIST_PAGES_MAX);
	return true;
}

/* Page after page of a listing (objects or uploads) to FN. */
static bool
list_pages(SbS3Client *c, const char *bucket, const char *prefix, bool uploads, SbS3ItemFn fn,
		   void *arg, SbError *err)
{
	SbS3Page	page = {0};
	SeenTokens	seen = {NULL, 0, 0};
	unsigned long pages = 0;
	bool		ok;

	do
	{
		ok = list_page(c, bucket, prefix, uploads, fn, arg, &page, err);
		pages++;
		ok = ok && (!page.truncated || list_goes_on(bucket, prefix, &page, pages, &seen, err));
	} while (ok && page.truncated);
	free(seen.slots);
	return ok;
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
