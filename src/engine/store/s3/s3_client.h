/*
 * s3_client.h
 *		S3 requests over libcurl, many at once, each retried on the failures
 *		that pass (5xx, 429, timeouts, dropped connections) with exponential
 *		backoff, each signed (s3_sign.h) at every try.
 *
 * A client belongs to one thread: its connections (kept alive, reused) and
 * its requests in flight are that thread's.  The pattern is SbIo's (io.h):
 * start requests, reap the finished ones.
 */
#ifndef SB_S3_CLIENT_H
#define SB_S3_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_s3.h"
#include "store/s3/s3_xml.h"

#define SB_S3_KEY_MAX 1024
#define SB_S3_QUERY_MAX 2048

/*
 * What a body read into REPLY may be, at most: an error document or the
 * answer to a multipart upload's start or completion (a few hundred bytes,
 * a key and an upload id at most: 64 kB is ten times the largest), and a
 * listing page (s3_object.c says why 8 MiB).  A larger one is refused as it
 * comes, never held.
 */
#define SB_S3_LIST_PAGES_MAX 100000	/* 10^8 keys: s3_object.c says why */
#define SB_S3_SMALL_REPLY_MAX ((size_t) 64 * 1024)
#define SB_S3_LIST_REPLY_MAX ((size_t) 8 * 1024 * 1024)

typedef struct SbS3Client SbS3Client;

typedef struct SbS3Request
{
	/* the caller's */
	const char *method;			/* GET PUT POST DELETE HEAD */
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		key[SB_S3_KEY_MAX];	/* "" for the bucket itself */
	char		query[SB_S3_QUERY_MAX];	/* canonical: sorted, encoded; "" for none */
	const uint8_t *body;		/* PUT and POST */
	size_t		body_len;
	bool		send_md5;		/* send Content-MD5 and check the ETag against it */
	uint64_t	range_offset;	/* a GET of RANGE_LENGTH bytes from here ... */
	uint64_t	range_length;	/* ... when not 0 */
	uint8_t    *into;			/* a GET's body goes here (INTO_LEN bytes at most), */
	size_t		into_len;		/* else into REPLY */
	size_t		reply_max;		/* REPLY's bytes at most (0: SB_S3_SMALL_REPLY_MAX) */
	const char *reply_what;		/* what REPLY holds, for a message ("a listing page") */
	const char *list_prefix;	/* a listing: the keys it reaches (allowed buckets, messages) */
	void	   *tag;
	/* the outcome, once reaped */
	bool		ok;
	long		status;			/* HTTP status of the last try */
	char		etag[128];		/* without quotes */
	uint64_t	content_length; /* HEAD: the object's size */
	size_t		got;			/* bytes received into INTO */
	char	   *reply;			/* a body not read INTO (XML), NUL-terminated; the client frees it */
	size_t		reply_len;
	SbError		error;			/* why it failed, after every try */
	int			attempts;
	/* the client's */
	struct SbS3Attempt *attempt;
} SbS3Request;

/* A client for CONFIG (copied) with at most MAX_IN_FLIGHT requests at once. */
extern SbS3Client *sb_s3_client_new(const SbS3Config *config, unsigned max_in_flight, SbError *err);
extern void sb_s3_client_free(SbS3Client *c);

/* A client for BUCKET with SETTINGS (NULL: none), the environment and the credentials file. */
extern SbS3Client *sb_s3_client_open(const SbS3Settings *settings, const char *bucket, unsigned max_in_flight,
									 SbError *err);

/*
 * C's requests from now on are clean-up after a stop (aborting an upload,
 * deleting what a failed job made): they run even when the stop check says
 * stop, within their deadline.  Every other request stops at once then.
 */
extern void sb_s3_client_set_cleanup(SbS3Client *c);

/* What the client was made with. */
extern const SbS3Config *sb_s3_client_config(const SbS3Client *c);

/* Start REQ (the caller's until reaped). False (ERR) if it cannot start: too many, bad key. */
extern bool sb_s3_start(SbS3Client *c, SbS3Request *req, SbError *err);

/*
 * Wait until at least MIN requests have finished (after their retries), and
 * return up to MAX of them in DONE; each says ok or its error.  Returns how
 * many, or -1 (ERR) when the client itself fails.  Every 100 ms at most it
 * asks the stop check (sb_s3_stop_requested): on a stop every request in
 * flight is abandoned and finishes with SB_ECANCELED.  A request ends by
 * its deadline (the config's timeout, all tries included) whatever the
 * server does.
 */
extern int	sb_s3_reap(SbS3Client *c, SbS3Request **done, int max, int min, SbError *err);

/* Requests started and not yet reaped. */
extern unsigned sb_s3_in_flight(const SbS3Client *c);

/* Start REQ and wait for it; false with ERR (its error) when it failed. */
extern bool sb_s3_run(SbS3Client *c, SbS3Request *req, SbError *err);

/* Forget REQ's reply and per-try state (before reusing or dropping it). */
extern void sb_s3_request_reset(SbS3Request *req);

/* "s3://bucket/key", for messages. */
extern void sb_s3_describe(const char *bucket, const char *key, char *out, size_t len);

/* ---- Operations on top, each waiting for its answer ---- */

extern bool sb_s3_put_object(SbS3Client *c, const char *bucket, const char *key,
							 const void *data, size_t len, SbError *err);

/*
 * The whole object into *DATA (malloc'd, NUL-terminated) and *LEN, when it
 * is at most MAX bytes: its size is asked first (HEAD), and the GET reads
 * into a buffer of that size, no more.  SB_ENOTFOUND when absent,
 * SB_ECORRUPT (its size and MAX) when larger.
 */
extern bool sb_s3_get_object(SbS3Client *c, const char *bucket, const char *key, size_t max,
							 uint8_t **data, size_t *len, SbError *err);

/* The object's size; SB_ENOTFOUND when absent. */
extern bool sb_s3_head_object(SbS3Client *c, const char *bucket, const char *key,
							  uint64_t *size, SbError *err);

/*
 * Did ERR come of a bucket that does not exist (NoSuchBucket, which is
 * SB_EIO: a missing bucket is never SB_ENOTFOUND, "no such object")?
 */
extern bool sb_s3_bucket_missing(const SbError *err);

/* The same, and its ETag (without quotes) into ETAG. */
extern bool sb_s3_head_object_etag(SbS3Client *c, const char *bucket, const char *key,
								   uint64_t *size, char etag[128], SbError *err);

/* Remove the object (no error when it is already gone). */
extern bool sb_s3_delete_object(SbS3Client *c, const char *bucket, const char *key, SbError *err);

/*
 * Each object whose key begins with PREFIX, to FN, in key order.  A server
 * whose continuation token comes again, or whose listing goes past
 * SB_S3_LIST_PAGES_MAX pages, fails it (SB_ECORRUPT, naming the bucket and
 * the prefix): a listing that would never end.
 */
extern bool sb_s3_list_objects(SbS3Client *c, const char *bucket, const char *prefix,
							   SbS3ItemFn fn, void *arg, SbError *err);

/* Multipart uploads: begin (the upload id into ID), complete, abort, list. */
extern bool sb_s3_multipart_begin(SbS3Client *c, const char *bucket, const char *key,
							   char *id, size_t id_len, SbError *err);

/* REQ made the upload of part NUMBER (1-based) of DATA; start it with sb_s3_start. */
extern void sb_s3_multipart_part_request(SbS3Request *req, const char *bucket, const char *key,
									  const char *upload_id, unsigned number,
									  const void *data, size_t len);

/* Join the NPARTS parts, whose ETags are ETAGS[0..NPARTS-1], into the object. */
extern bool sb_s3_multipart_complete(SbS3Client *c, const char *bucket, const char *key,
								  const char *upload_id, char (*etags)[128], unsigned nparts,
								  SbError *err);

/* Drop the upload and its parts (no error when it is already gone). */
extern bool sb_s3_multipart_abort(SbS3Client *c, const char *bucket, const char *key,
							   const char *upload_id, SbError *err);

/* Each multipart upload in progress under PREFIX (Key, UploadId) to FN. */
extern bool sb_s3_list_uploads(SbS3Client *c, const char *bucket, const char *prefix,
							   SbS3ItemFn fn, void *arg, SbError *err);

#endif							/* SB_S3_CLIENT_H */
