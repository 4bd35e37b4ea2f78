/*
 * s3_client.c
 *		Signed S3 requests through libcurl's multi interface: several at
 *		once on kept-alive connections, each retried with backoff on what may
 *		pass (a 5xx, 429 SlowDown, a timeout, a dropped or refused connection,
 *		a part whose ETag is not the MD5 we sent), with a clear error for the
 *		rest.  Secrets go only into the Authorization header and the security
 *		token header, never into a message; libcurl never prints.
 *
 * Nothing a server does can hold a caller longer than it allows: a
 * request ends by its deadline (every try and its backoff included), the
 * wait asks the process's stop check every 100 ms and abandons every
 * request in flight on a stop, and a body is refused as soon as it passes
 * what its request may receive (its REPLY_MAX, or INTO_LEN).
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/evp.h>

#include "format/checksum.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_sign.h"
#include "util/thread.h"

#define SIGNED_BODY_MAX (64 * 1024) /* larger bodies: UNSIGNED-PAYLOAD, Content-MD5 */
#define BACKOFF_FIRST 0.2			/* seconds before the second try; doubles */
#define BACKOFF_MAX 10.0
#define PATH_MAX_LEN (3 * SB_S3_KEY_MAX + SB_S3_BUCKET_MAX + 8)
#define STOP_POLL_MS 100			/* the stop check is asked this often while waiting */
#define WHERE_MAX (SB_S3_BUCKET_MAX + SB_S3_KEY_MAX + 32)

typedef struct SbS3Attempt
{
	SbS3Request *req;
	CURL	   *easy;
	struct curl_slist *headers;
	char		url[PATH_MAX_LEN + 512 + SB_S3_QUERY_MAX];
	size_t		sent;			/* of the body */
	size_t		reply_cap;
	bool		overflow;		/* the server sent more than the request may receive */
	curl_off_t	declared;		/* then its Content-Length, or -1 */
	bool		out_of_memory;	/* REPLY could not grow */
	double		deadline;		/* monotonic seconds: no try goes on past it */
	double		retry_at;
	char		md5_base64[32];
	char		md5_hex[33];
	char		curl_error[CURL_ERROR_SIZE];
} SbS3Attempt;

struct SbS3Client
{
	SbS3Config	config;
	char		scheme[8];		/* http or https */
	char		host[256];		/* host[:port] of the endpoint */
	CURLM	   *multi;
	unsigned	max_in_flight;
	unsigned	in_flight;		/* started, not reaped */
	bool		cleanup;		/* requests run after a stop too (sb_s3_client_set_cleanup) */
	SbS3Request **running;		/* in the multi handle now */
	unsigned	nrunning;
	SbS3Request **waiting;		/* to be tried again at their retry_at */
	unsigned	nwaiting;
	SbS3Request **finished;		/* done, not reaped, oldest first */
	unsigned	nfinished;
};

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_result;

static void
init_curl(void)
{
	curl_init_result = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/*
 * A config made by hand (the tests') may leave the limits out: the default
 * deadline then, and no try's limit longer than the deadline.
 */
static void
normalize_limits(SbS3Config *c)
{
	if (!(c->timeout > 0))
		c->timeout = SB_S3_TIMEOUT_DEFAULT;
	if (!(c->connect_timeout > 0) || c->connect_timeout > c->timeout)
		c->connect_timeout = fmin(10, c->timeout);
	if (!(c->low_speed_seconds > 0) || c->low_speed_seconds > c->timeout)
		c->low_speed_seconds = fmin(30, c->timeout);
	if (c->max_attempts < 1)
		c->max_attempts = 1;
}

SbS3Client *
sb_s3_client_new(const SbS3Config *config, unsigned max_in_flight, SbError *err)
{
	SbS3Client *c;
	const char *host;

	pthread_once(&curl_once, init_curl);
	if (curl_init_result != CURLE_OK)
	{
		sb_error_set(err, SB_EIO, "libcurl could not start: %s", curl_easy_strerror(curl_init_result));
		return NULL;
	}
	if ((c = calloc(1, sizeof(*c))) == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory for an S3 client");
		return NULL;
	}
	c->config = *config;
	c->max_in_flight = max_in_flight > 0 ? max_in_flight : 1;
	host = strstr(config->endpoint, "://");
	snprintf(c->scheme, sizeof(c->scheme), "%.*s", (int) (host - config->endpoint), config->endpoint);
	snprintf(c->host, sizeof(c->host), "%s", host + 3);
	normalize_limits(&c->config);
	c->running = calloc(c->max_in_flight, sizeof(*c->running));
	c->waiting = calloc(c->max_in_flight, sizeof(*c->waiting));
	c->finished = calloc(c->max_in_flight, sizeof(*c->finished));
	c->multi = curl_multi_init();
	if (c->running == NULL || c->waiting == NULL || c->finished == NULL || c->multi == NULL)
	{
		sb_s3_client_free(c);
		sb_error_set(err, SB_ENOMEM, "out of memory for an S3 client");
		return NULL;
	}
	curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long) c->max_in_flight);
	return c;
}

static void
attempt_free(SbS3Attempt *a)
{
	if (a == NULL)
		return;
	curl_slist_free_all(a->headers);
	if (a->easy != NULL)
		curl_easy_cleanup(a->easy);
	free(a);
}

void
sb_s3_request_reset(SbS3Request *req)
{
	free(req->reply);
	req->reply = NULL;
	req->reply_len = 0;
	req->got = 0;
	req->etag[0] = '\0';
	req->ok = false;
	req->status = 0;
	req->attempts = 0;
	attempt_free(req->attempt);
	req->attempt = NULL;
	sb_error_clear(&req->error);
}

SbS3Client *
sb_s3_client_open(const SbS3Settings *settings, const char *bucket, unsigned max_in_flight, SbError *err)
{
	SbS3Config	config;
	SbS3Client *c;

	if (!sb_s3_config_for_bucket(settings, bucket, &config, err))
		return NULL;
	c = sb_s3_client_new(&config, max_in_flight, err);
	sb_s3_config_clear(&config);
	return c;
}

void
sb_s3_client_free(SbS3Client *c)
{
	if (c == NULL)
		return;
	if (c->multi != NULL)
		curl_multi_cleanup(c->multi);
	free(c->running);
	free(c->waiting);
	free(c->finished);
	sb_s3_config_clear(&c->config);
	free(c);
}

void
sb_s3_client_set_cleanup(SbS3Client *c)
{
	c->cleanup = true;
}

const SbS3Config *
sb_s3_client_config(const SbS3Client *c)
{
	return &c->config;
}

unsigned
sb_s3_in_flight(const SbS3Client *c)
{
	return c->in_flight;
}

void
sb_s3_describe(const char *bucket, const char *key, char *out, size_t len)
{
	snprintf(out, len, "s3://%s%s%s", bucket, key[0] != '\0' ? "/" : "", key);
}

/* Where REQ goes, for messages: its object, or the prefix its listing reaches. */
static void
describe_request(const SbS3Request *req, char *out, size_t len)
{
	if (req->list_prefix == NULL)
		sb_s3_describe(req->bucket, req->key, out, len);
	else
		snprintf(out, len, "s3://%s/%s (a listing)", req->bucket, req->list_prefix);
}

static double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* ---- one try of a request ---- */

/* The Content-Length of the answer being received, or -1 (none, or chunked). */
static curl_off_t
declared_length(SbS3Attempt *a)
{
	curl_off_t	len = -1;

	curl_easy_getinfo(a->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &len);
	return len;
}

/* Refuse what is being received: curl ends the transfer (a write error). */
static size_t
refuse_body(SbS3Attempt *a)
{
	a->overflow = true;
	a->declared = declared_length(a);
	return 0;
}

/* A 2xx GET's body into the caller's buffer, never past INTO_LEN. */
static size_t
into_body(SbS3Attempt *a, const char *data, size_t len)
{
	SbS3Request *req = a->req;

	if (req->got + len > req->into_len)
		return refuse_body(a);
	memcpy(req->into + req->got, data, len);
	req->got += len;
	return len;
}

/* What REPLY may hold for an answer of STATUS: an error document is small whatever was asked. */
static size_t
reply_limit(const SbS3Request *req, long status)
{
	size_t		max = req->reply_max > 0 ? req->reply_max : SB_S3_SMALL_REPLY_MAX;

	return status >= 300 && max > SB_S3_SMALL_REPLY_MAX ? SB_S3_SMALL_REPLY_MAX : max;
}

/* Any other body into REPLY, grown as it comes, never past its limit. */
static size_t
reply_body(SbS3Attempt *a, const char *data, size_t len, long status)
{
	SbS3Request *req = a->req;
	size_t		max = reply_limit(req, status);

	if (req->reply_len + len > max)
		return refuse_body(a);
	if (req->reply_len + len + 1 > a->reply_cap)
	{
		size_t		cap = a->reply_cap > 0 ? a->reply_cap : 4096;
		char	   *grown;

		while (cap < req->reply_len + len + 1)
			cap *= 2;
		if (cap > max + 1)
			cap = max + 1;
		if ((grown = realloc(req->reply, cap)) == NULL)
		{
			a->out_of_memory = true;
			return 0;
		}
		req->reply = grown;
		a->reply_cap = cap;
	}
	memcpy(req->reply + req->reply_len, data, len);
	req->reply_len += len;
	req->reply[req->reply_len] = '\0';
	return len;
}

/* Where the body of an answer of STATUS goes: the caller's buffer (a 2xx GET INTO), or REPLY. */
static bool
goes_into(const SbS3Request *req, long status)
{
	return req->into != NULL && status >= 200 && status < 300;
}

static size_t
on_body(char *data, size_t size, size_t n, void *arg)
{
	SbS3Attempt *a = arg;
	long		status = 0;

	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	if (goes_into(a->req, status))
		return into_body(a, data, size * n);
	return reply_body(a, data, size * n, status);
}

/*
 * At the end of an answer's headers: a body its Content-Length says is
 * larger than it may be is refused before a byte of it comes (a chunked one
 * when it gets there).  A HEAD's Content-Length is the object's, no body.
 */
static bool
declared_body_fits(SbS3Attempt *a)
{
	curl_off_t	declared = declared_length(a);
	long		status = 0;

	if (declared < 0 || strcmp(a->req->method, "HEAD") == 0)
		return true;
	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &status);
	return (uint64_t) declared <= (goes_into(a->req, status) ? a->req->into_len : reply_limit(a->req, status));
}

static size_t
on_send(char *buf, size_t size, size_t n, void *arg)
{
	SbS3Attempt *a = arg;
	size_t		len = a->req->body_len - a->sent;

	if (len > size * n)
		len = size * n;
	memcpy(buf, a->req->body + a->sent, len);
	a->sent += len;
	return len;
}

/* Rewind the body (curl resends it after a redirect or an early answer). */
static int
on_seek(void *arg, curl_off_t offset, int origin)
{
	SbS3Attempt *a = arg;

	if (origin != SEEK_SET || offset < 0 || (size_t) offset > a->req->body_len)
		return CURL_SEEKFUNC_FAIL;
	a->sent = (size_t) offset;
	return CURL_SEEKFUNC_OK;
}

/* An ETag header's value, quotes dropped. */
static size_t
on_header(char *line, size_t size, size_t n, void *arg)
{
	SbS3Attempt *a = arg;
	SbS3Request *req = a->req;
	size_t		len = size * n;

	if (len <= 2 && (line[0] == '\r' || line[0] == '\n') && !declared_body_fits(a))
		return refuse_body(a);
	if (len > 5 && strncasecmp(line, "ETag:", 5) == 0)
	{
		const char *v = line + 5;
		size_t		vlen = len - 5;

		while (vlen > 0 && (*v == ' ' || *v == '"'))
			v++, vlen--;
		while (vlen > 0 && (v[vlen - 1] == '\r' || v[vlen - 1] == '\n' || v[vlen - 1] == '"' ||
							v[vlen - 1] == ' '))
			vlen--;
		snprintf(req->etag, sizeof(req->etag), "%.*s", (int) vlen, v);
	}
	return len;
}

/* The body's MD5, as Content-MD5 (base64) and as an ETag is written (hex). */
static bool
body_md5(SbS3Attempt *a, SbError *err)
{
	uint8_t		md5[16];
	unsigned int md5_len = 0;

	if (!EVP_Digest(a->req->body, a->req->body_len, md5, &md5_len, EVP_md5(), NULL) || md5_len != 16)
		return sb_error_set(err, SB_EIO, "MD5 failed");
	EVP_EncodeBlock((unsigned char *) a->md5_base64, md5, 16);
	sb_hex_encode(md5, 16, a->md5_hex);
	return true;
}

static bool
add_header(SbS3Attempt *a, const char *name, const char *value, SbError *err)
{
	char		line[8192];
	struct curl_slist *grown;

	snprintf(line, sizeof(line), "%s: %s", name, value);
	if ((grown = curl_slist_append(a->headers, line)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory building an S3 request");
	a->headers = grown;
	return true;
}

/* The URL, the signed headers and the Authorization of this try. */
static bool
sign_attempt(SbS3Client *c, SbS3Attempt *a, SbError *err)
{
	SbS3Request *req = a->req;
	SbS3Signing s = {0};
	char		key[3 * SB_S3_KEY_MAX + 1];
	char		path[PATH_MAX_LEN];
	char		host[SB_S3_BUCKET_MAX + 300];
	char		date[SB_S3_AMZ_DATE_LEN + 1];
	char		payload[SB_S3_HEX_SHA256_LEN + 1];
	char		range[64];
	char		auth[SB_S3_AUTH_MAX];
	bool		host_style = c->config.url_style == SB_S3_URL_HOST;

	if (!sb_s3_uri_encode(req->key, true, key, sizeof(key)))
		return sb_error_set(err, SB_EINVAL, "S3 key \"%.200s\" is too long", req->key);
	snprintf(host, sizeof(host), host_style ? "%s.%s" : "%.0s%s", req->bucket, c->host);
	if (host_style)
		snprintf(path, sizeof(path), "/%s", key);
	else
		snprintf(path, sizeof(path), "/%s%s%s", req->bucket, req->key[0] != '\0' ? "/" : "", key);
	snprintf(a->url, sizeof(a->url), "%s://%s%s%s%s", c->scheme, host, path,
			 req->query[0] != '\0' ? "?" : "", req->query);
	sb_s3_amz_date((long long) time(NULL), date);
	if (req->body_len == 0)
		strcpy(payload, SB_S3_EMPTY_SHA256);
	else if (req->body_len > SIGNED_BODY_MAX)
		strcpy(payload, "UNSIGNED-PAYLOAD");
	else if (!sb_s3_sha256_hex(req->body, req->body_len, payload, err))
		return false;
	s.method = req->method;
	s.path = path;
	s.query = req->query;
	s.payload_sha256 = payload;
	s.amz_date = date;
	s.region = c->config.region;
	s.service = "s3";
	s.access_key = c->config.access_key;
	s.secret_key = c->config.secret_key;
	s.headers[s.nheaders++] = (SbS3Header) {"host", host};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-date", date};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-content-sha256", payload};
	if (req->range_length > 0)
	{
		snprintf(range, sizeof(range), "bytes=%llu-%llu", (unsigned long long) req->range_offset,
				 (unsigned long long) (req->range_offset + req->range_length - 1));
		s.headers[s.nheaders++] = (SbS3Header) {"range", range};
	}
	if (req->send_md5)
	{
		if (!body_md5(a, err))
			return false;
		s.headers[s.nheaders++] = (SbS3Header) {"content-md5", a->md5_base64};
	}
	if (c->config.session_token[0] != '\0')
		s.headers[s.nheaders++] = (SbS3Header) {"x-amz-security-token", c->config.session_token};
	if (!sb_s3_authorization(&s, auth, sizeof(auth), err))
		return false;
	curl_slist_free_all(a->headers);
	a->headers = NULL;
	for (int i = 0; i < s.nheaders; i++)
		if (!add_header(a, s.headers[i].name, s.headers[i].value, err))
			return false;
	return add_header(a, "Authorization", auth, err) &&
		add_header(a, "Expect", "", err) && add_header(a, "Content-Type", "", err);
}

static void
set_method(SbS3Attempt *a)
{
	SbS3Request *req = a->req;

	if (strcmp(req->method, "PUT") == 0)
	{
		curl_easy_setopt(a->easy, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(a->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t) req->body_len);
		curl_easy_setopt(a->easy, CURLOPT_READFUNCTION, on_send);
		curl_easy_setopt(a->easy, CURLOPT_READDATA, a);
		curl_easy_setopt(a->easy, CURLOPT_SEEKFUNCTION, on_seek);
		curl_easy_setopt(a->easy, CURLOPT_SEEKDATA, a);
	}
	else if (strcmp(req->method, "POST") == 0)
	{
		curl_easy_setopt(a->easy, CURLOPT_POST, 1L);
		curl_easy_setopt(a->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) req->body_len);
		curl_easy_setopt(a->easy, CURLOPT_POSTFIELDS, req->body_len > 0 ? (const char *) req->body : "");
	}
	else if (strcmp(req->method, "HEAD") == 0)
		curl_easy_setopt(a->easy, CURLOPT_NOBODY, 1L);
	else if (strcmp(req->method, "DELETE") == 0)
		curl_easy_setopt(a->easy, CURLOPT_CUSTOMREQUEST, "DELETE");
}

/*
 * A try's limits, within what is left of REQ's deadline: curl ends the try
 * at the deadline itself, so that no server can hold it longer.
 */
static void
set_limits(SbS3Client *c, SbS3Attempt *a)
{
	double		left = a->deadline - now_seconds();
	long		left_ms = left > 0.001 ? (long) ceil(left * 1000) : 1;
	long		connect_ms = (long) ceil(fmin(c->config.connect_timeout, fmax(left, 0.001)) * 1000);

	curl_easy_setopt(a->easy, CURLOPT_TIMEOUT_MS, left_ms);
	curl_easy_setopt(a->easy, CURLOPT_CONNECTTIMEOUT_MS, connect_ms);
	/* whole seconds for curl; a stall is given up (and retried) before the deadline when it can be */
	curl_easy_setopt(a->easy, CURLOPT_LOW_SPEED_LIMIT, 1024L);
	curl_easy_setopt(a->easy, CURLOPT_LOW_SPEED_TIME, (long) fmax(1, floor(c->config.low_speed_seconds)));
}

/* Prepare REQ's next try and hand it to the multi handle. */
static bool
start_attempt(SbS3Client *c, SbS3Request *req, SbError *err)
{
	SbS3Attempt *a = req->attempt;

	if (a->easy == NULL && (a->easy = curl_easy_init()) == NULL)
		return sb_error_set(err, SB_ENOMEM, "libcurl could not make a request");
	curl_easy_reset(a->easy);
	a->sent = 0;
	a->overflow = false;
	a->out_of_memory = false;
	a->declared = -1;
	req->got = 0;
	req->reply_len = 0;
	req->etag[0] = '\0';
	req->attempts++;
	if (!sign_attempt(c, a, err))
		return false;
	curl_easy_setopt(a->easy, CURLOPT_URL, a->url);
	curl_easy_setopt(a->easy, CURLOPT_HTTPHEADER, a->headers);
	curl_easy_setopt(a->easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(a->easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->config.ca_file[0] != '\0')
		curl_easy_setopt(a->easy, CURLOPT_CAINFO, c->config.ca_file);
	set_limits(c, a);
	curl_easy_setopt(a->easy, CURLOPT_ERRORBUFFER, a->curl_error);
	curl_easy_setopt(a->easy, CURLOPT_WRITEFUNCTION, on_body);
	curl_easy_setopt(a->easy, CURLOPT_WRITEDATA, a);
	curl_easy_setopt(a->easy, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(a->easy, CURLOPT_HEADERDATA, a);
	curl_easy_setopt(a->easy, CURLOPT_PRIVATE, req);
	a->curl_error[0] = '\0';
	set_method(a);
	if (curl_multi_add_handle(c->multi, a->easy) != CURLM_OK)
		return sb_error_set(err, SB_EIO, "libcurl could not start a request");
	c->running[c->nrunning++] = req;
	return true;
}

/* REQ left the multi handle (done, or abandoned). */
static void
forget_running(SbS3Client *c, SbS3Request *req)
{
	for (unsigned i = 0; i < c->nrunning; i++)
		if (c->running[i] == req)
		{
			c->running[i] = c->running[--c->nrunning];
			return;
		}
}

/* May REQ be started now: no stop asked (unless C cleans up), and a place the allowed buckets hold? */
static bool
may_start(SbS3Client *c, const SbS3Request *req, SbError *err)
{
	char		where[WHERE_MAX];

	if (!c->cleanup && sb_s3_stop_requested())
	{
		describe_request(req, where, sizeof(where));
		return sb_error_set(err, SB_ECANCELED, "S3 %s %s: canceled (the operation was asked to stop)",
							req->method, where);
	}
	/* a request without a key (a listing) reaches every key it may list */
	return sb_s3_config_allows(&c->config, req->bucket, req->list_prefix != NULL ? req->list_prefix : req->key,
							   req->list_prefix != NULL || req->key[0] == '\0', err);
}

bool
sb_s3_start(SbS3Client *c, SbS3Request *req, SbError *err)
{
	if (c->in_flight >= c->max_in_flight)
		return sb_error_set(err, SB_EINVAL, "too many S3 requests at once (%u)", c->max_in_flight);
	sb_s3_request_reset(req);
	if (!may_start(c, req, err))
		return false;
	if ((req->attempt = calloc(1, sizeof(SbS3Attempt))) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory for an S3 request");
	req->attempt->req = req;
	req->attempt->deadline = now_seconds() + c->config.timeout;
	if (!start_attempt(c, req, err))
	{
		attempt_free(req->attempt);
		req->attempt = NULL;
		return false;
	}
	c->in_flight++;
	return true;
}

/* ---- what a finished try means ---- */

typedef enum Verdict
{
	DONE,
	RETRY,
	FAILED
} Verdict;

static bool
retryable_transport(CURLcode r)
{
	switch (r)
	{
		case CURLE_COULDNT_CONNECT:
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_OPERATION_TIMEDOUT:
		case CURLE_SEND_ERROR:
		case CURLE_RECV_ERROR:
		case CURLE_GOT_NOTHING:
		case CURLE_PARTIAL_FILE:
		case CURLE_SSL_CONNECT_ERROR:
		case CURLE_HTTP2_STREAM:
			return true;
		default:
			return false;
	}
}

/*
 * An HTTP error's code and message from the server's <Error>, when it sent
 * one.  A refusal (401, 403) is an I/O error for want of permission
 * (EACCES: "insufficient privilege" in SQL), not SB_EKEY, which readers of
 * a backup take for "its encryption key is wrong" and answer otherwise.
 * A missing bucket is not SB_ENOTFOUND either: that says "this object (a
 * manifest, a stripe, a WAL file) is not there", which callers answer with
 * "not a backup" or "not archived"; a destination that does not exist is
 * an error of the destination (ENOENT: "undefined file" in SQL), named.
 */
static void
describe_status(SbS3Request *req, const char *where)
{
	char		code[128];
	char		message[512];
	bool		refused = req->status == 401 || req->status == 403;
	bool		no_bucket;

	if (!sb_s3_xml_error(req->reply, req->reply_len, code, sizeof(code), message, sizeof(message)))
		snprintf(code, sizeof(code), "%s", req->status == 404 ? "NotFound" : "no error document");
	no_bucket = strcmp(code, "NoSuchBucket") == 0;
	if (no_bucket)
		snprintf(message, sizeof(message), "bucket \"%s\" does not exist", req->bucket);
	sb_error_set(&req->error, req->status == 404 && !no_bucket ? SB_ENOTFOUND : SB_EIO,
				 "S3 %s %s: HTTP %ld %s%s%s",
				 req->method, where, req->status, code, message[0] != '\0' ? ": " : "", message);
	if (refused)
		req->error.sys_errno = EACCES;
	if (no_bucket)
		req->error.sys_errno = ENOENT;
}

bool
sb_s3_bucket_missing(const SbError *err)
{
	return err->code == SB_EIO && strstr(err->message, " NoSuchBucket: ") != NULL;
}

/* An HTTP error (STATUS >= 300): retried when it may pass (5xx that S3 retries, 429, RequestTimeout). */
static Verdict
judge_status(SbS3Attempt *a, const char *where)
{
	SbS3Request *req = a->req;
	char		code[128],
				message[8];

	describe_status(req, where);
	if (a->overflow)
	{
		size_t		len = strlen(req->error.message);

		snprintf(req->error.message + len, sizeof(req->error.message) - len,
				 " (its error document is larger than %zu bytes: not read)", reply_limit(req, req->status));
	}
	if (req->status == 500 || req->status == 502 || req->status == 503 || req->status == 504 ||
		req->status == 429)
		return RETRY;
	sb_s3_xml_error(req->reply, req->reply_len, code, sizeof(code), message, sizeof(message));
	return strcmp(code, "RequestTimeout") == 0 ? RETRY : FAILED;
}

/*
 * A 2xx answer larger than the request may receive: a GET INTO a buffer
 * sized by the caller (a range, an object whose size is known), or a reply
 * past its limit.  Never retried: the server means it.
 */
static Verdict
judge_overflow(SbS3Attempt *a, const char *where)
{
	SbS3Request *req = a->req;
	size_t		max = req->into != NULL ? req->into_len : reply_limit(req, req->status);
	const char *what = req->into != NULL ? "asked for" : "that";
	char		size[64] = "";

	if (a->declared >= 0)
		snprintf(size, sizeof(size), " (%lld bytes)", (long long) a->declared);
	if (req->into != NULL)
		sb_error_set(&req->error, SB_ECORRUPT, "S3 %s %s: the server's answer%s is larger than the %zu bytes %s",
					 req->method, where, size, max, what);
	else
		sb_error_set(&req->error, SB_ECORRUPT,
					 "S3 %s %s: the server's answer%s is larger than the %zu bytes %s %s may be: refused",
					 req->method, where, size, max, what, req->reply_what != NULL ? req->reply_what : "reply");
	return FAILED;
}

static Verdict
judge(SbS3Attempt *a, CURLcode result)
{
	SbS3Request *req = a->req;
	char		where[WHERE_MAX];

	describe_request(req, where, sizeof(where));
	curl_easy_getinfo(a->easy, CURLINFO_RESPONSE_CODE, &req->status);
	if (a->out_of_memory)
	{
		sb_error_set(&req->error, SB_ENOMEM, "S3 %s %s: out of memory for the server's answer", req->method, where);
		return FAILED;
	}
	if (req->status >= 300)
		return judge_status(a, where);
	if (a->overflow)
		return judge_overflow(a, where);
	if (result != CURLE_OK)
	{
		sb_error_set(&req->error, SB_EIO, "S3 %s %s: %s%s%s", req->method, where,
					 curl_easy_strerror(result), a->curl_error[0] != '\0' ? ": " : "", a->curl_error);
		return retryable_transport(result) ? RETRY : FAILED;
	}
	/* A 200 may still carry an <Error> (CompleteMultipartUpload does so). */
	if (strcmp(req->method, "POST") == 0 && req->reply_len > 0 &&
		sb_s3_xml_error(req->reply, req->reply_len, (char[128]) {0}, 128, (char[8]) {0}, 8))
	{
		describe_status(req, where);
		return RETRY;
	}
	if (req->send_md5 && strlen(req->etag) == 32 && strcasecmp(req->etag, a->md5_hex) != 0)
	{
		sb_error_set(&req->error, SB_ECORRUPT, "S3 %s %s: the server's ETag \"%s\" is not the MD5 of what was sent (%s)",
					 req->method, where, req->etag, a->md5_hex);
		return RETRY;
	}
	if (strcmp(req->method, "HEAD") == 0)
	{
		curl_off_t	len = declared_length(a);

		req->content_length = len >= 0 ? (uint64_t) len : 0;
	}
	return DONE;
}

/* Seconds before try N+1: doubling from BACKOFF_FIRST, at most BACKOFF_MAX, with jitter. */
static double
backoff(int attempts)
{
	double		base = fmin(BACKOFF_FIRST * pow(2, attempts - 1), BACKOFF_MAX);

	return base * (0.5 + (double) (rand() % 1000) / 2000.0);
}

/* TEXT added to the end of REQ's message. */
static void
note(SbS3Request *req, const char *text)
{
	size_t		len = strlen(req->error.message);

	snprintf(req->error.message + len, sizeof(req->error.message) - len, "%s", text);
}

static void
finish(SbS3Client *c, SbS3Request *req, bool ok)
{
	req->ok = ok;
	if (ok)
		sb_error_clear(&req->error);
	else if (req->attempts > 1)
	{
		char		tries[32];

		snprintf(tries, sizeof(tries), " (after %d tries)", req->attempts);
		note(req, tries);
	}
	c->finished[c->nfinished++] = req;
}

/*
 * Try again when the verdict allows it, tries are left and the retry would
 * start before the deadline; else the request ends with this try's error,
 * saying so when the deadline is what ended it.
 */
static void
retry_or_finish(SbS3Client *c, SbS3Request *req, Verdict v)
{
	double		now = now_seconds();
	double		at = now + backoff(req->attempts);

	if (v == RETRY && req->attempts < c->config.max_attempts && at < req->attempt->deadline)
	{
		req->attempt->retry_at = at;
		c->waiting[c->nwaiting++] = req;
		return;
	}
	if (v == RETRY && req->attempts < c->config.max_attempts)
	{
		char		why[128];

		snprintf(why, sizeof(why), " (no time left for another try within the %g s of stripebackup.s3_timeout)",
				 c->config.timeout);
		note(req, why);
	}
	finish(c, req, v == DONE);
}

static void
take_completions(SbS3Client *c)
{
	CURLMsg    *msg;
	int			left;

	while ((msg = curl_multi_info_read(c->multi, &left)) != NULL)
	{
		SbS3Request *req = NULL;
		Verdict		v;

		if (msg->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **) &req);
		v = judge(req->attempt, msg->data.result);
		curl_multi_remove_handle(c->multi, msg->easy_handle);
		forget_running(c, req);
		retry_or_finish(c, req, v);
	}
}

/* Start again the waiting requests whose time has come. */
static void
restart_due(SbS3Client *c)
{
	double		now = now_seconds();
	unsigned	i = 0;

	while (i < c->nwaiting)
	{
		SbS3Request *req = c->waiting[i];

		if (req->attempt->retry_at > now)
		{
			i++;
			continue;
		}
		c->waiting[i] = c->waiting[--c->nwaiting];
		if (!start_attempt(c, req, &req->error))
			finish(c, req, false);
	}
}

/*
 * How long to wait for transfers, in ms: until a waiting request is due,
 * and never longer than STOP_POLL_MS, so that a stop is seen in time.
 */
static long
next_wait(const SbS3Client *c)
{
	double		now = now_seconds();
	double		wait = STOP_POLL_MS / 1000.0;

	for (unsigned i = 0; i < c->nwaiting; i++)
		wait = fmin(wait, c->waiting[i]->attempt->retry_at - now);
	return wait > 0 ? (long) ceil(wait * 1000) : 0;
}

/* REQ ends now, unanswered: the operation was asked to stop. */
static void
abandon(SbS3Client *c, SbS3Request *req)
{
	char		where[WHERE_MAX];

	describe_request(req, where, sizeof(where));
	sb_error_set(&req->error, SB_ECANCELED, "S3 %s %s: canceled (the operation was asked to stop)",
				 req->method, where);
	finish(c, req, false);
}

/*
 * On a stop, every request of C in flight ends at once: the running ones
 * leave the multi handle (their connections close), the waiting ones are
 * not tried again.  True when it did so.
 */
static bool
abandon_on_stop(SbS3Client *c)
{
	if (c->cleanup || (c->nrunning == 0 && c->nwaiting == 0) || !sb_s3_stop_requested())
		return false;
	while (c->nrunning > 0)
	{
		SbS3Request *req = c->running[--c->nrunning];

		curl_multi_remove_handle(c->multi, req->attempt->easy);
		abandon(c, req);
	}
	while (c->nwaiting > 0)
		abandon(c, c->waiting[--c->nwaiting]);
	return true;
}

/* Move up to MAX finished requests into DONE (their per-try state freed); how many. */
static int
hand_over(SbS3Client *c, SbS3Request **done, int max)
{
	int			n = (int) c->nfinished < max ? (int) c->nfinished : max;

	for (int i = 0; i < n; i++)
		done[i] = c->finished[i];
	memmove(c->finished, c->finished + n, (c->nfinished - (unsigned) n) * sizeof(*c->finished));
	c->nfinished -= (unsigned) n;
	c->in_flight -= (unsigned) n;
	for (int i = 0; i < n; i++)
	{
		attempt_free(done[i]->attempt);
		done[i]->attempt = NULL;
	}
	return n;
}

int
sb_s3_reap(SbS3Client *c, SbS3Request **done, int max, int min, SbError *err)
{
	if ((unsigned) min > c->in_flight)
		min = (int) c->in_flight;
	for (;;)
	{
		int			running;

		restart_due(c);
		if (curl_multi_perform(c->multi, &running) != CURLM_OK)
			return sb_error_set(err, SB_EIO, "libcurl's transfers failed"), -1;
		take_completions(c);
		if (c->nfinished >= (unsigned) min || abandon_on_stop(c))
			break;
		if (curl_multi_poll(c->multi, NULL, 0, (int) next_wait(c), NULL) != CURLM_OK)
			return sb_error_set(err, SB_EIO, "libcurl could not wait for transfers"), -1;
	}
	return hand_over(c, done, max);
}

bool
sb_s3_run(SbS3Client *c, SbS3Request *req, SbError *err)
{
	SbS3Request *done[1];

	if (c->in_flight > 0)
		return sb_error_set(err, SB_EINVAL, "an S3 request runs alone only when none is in flight");
	if (!sb_s3_start(c, req, err))
		return false;
	if (sb_s3_reap(c, done, 1, 1, err) != 1)
		return false;
	if (!req->ok)
	{
		*err = req->error;
		return false;
	}
	return true;
}
