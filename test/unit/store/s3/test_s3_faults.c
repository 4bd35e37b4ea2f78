/*
 * test_s3_faults.c
 *		The S3 client's answers to a server that fails: a scripted HTTP
 *		server on 127.0.0.1 (a thread of this test) answers each request
 *		with the next answer of its script: 503 and 429 are retried, a
 *		dropped connection is retried, a 200 whose ETag is not the MD5 sent is
 *		retried and then fails, 403 and 501 fail at once, a completion that
 *		answers 200 with an <Error> is retried, a GET that sends more than
 *		asked is refused, an upload whose part fails for good fails and is
 *		aborted.  And a server that misbehaves: listings that loop or never
 *		end, replies larger than what was asked for (refused with their
 *		size, never held), a server that never answers (abandoned on a stop
 *		within 0.1 s, failed at the request's deadline), and places that the
 *		allowed buckets do not hold (no request sent).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "harness.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_upload.h"
#include "tests.h"

#define MAX_SCRIPT 32
#define ETAG_OF_BODY "@md5"		/* in an answer: the MD5 of the request's body */
#define DROP "@drop"			/* an answer: close the connection without one */
#define SILENT "@silent"		/* an answer: none, the connection kept open until the client goes */
#define BIG_LISTING "@big-listing"	/* a 20 MB listing page, its Content-Length said */
#define BIG_CHUNKED "@big-chunked"	/* the same, chunked: its size not said */
#define BIG_LISTING_BYTES (20 * 1024 * 1024)

typedef struct Server
{
	int			listener;
	int			port;
	pthread_t	thread;
	const char *script[MAX_SCRIPT];
	int			nscript;
	int			next;
	int			requests;
	char		methods[MAX_SCRIPT * 8];	/* "PUT,PUT,GET," */
	pthread_mutex_t mutex;
} Server;

/* Read one request from FD: headers, then Content-Length bytes of body (malloc'd). */
static bool
read_request(int fd, char *head, size_t head_len, char **body, size_t *body_len)
{
	size_t		used = 0;
	char	   *end = NULL;
	const char *cl;

	while (end == NULL)
	{
		ssize_t		n = read(fd, head + used, head_len - used - 1);

		if (n <= 0)
			return false;
		used += (size_t) n;
		head[used] = '\0';
		end = strstr(head, "\r\n\r\n");
	}
	cl = strcasestr(head, "\r\nContent-Length:");
	*body_len = cl != NULL ? strtoul(cl + 17, NULL, 10) : 0;
	*body = malloc(*body_len + 1);
	used -= (size_t) (end + 4 - head);
	memcpy(*body, end + 4, used);
	while (used < *body_len)
	{
		ssize_t		n = read(fd, *body + used, *body_len - used);

		if (n <= 0)
			return false;
		used += (size_t) n;
	}
	return true;
}

/*
 * ANSWER (a status line, headers, an empty line, a body) as sent: the
 * request body's MD5 in place of ETAG_OF_BODY, and its Content-Length.
 */
static void
fill_answer(const char *answer, const char *body, size_t body_len, char *out, size_t len)
{
	const char *at = strstr(answer, ETAG_OF_BODY);
	const char *blank = strstr(answer, "\r\n\r\n");
	uint8_t		md5[16];
	unsigned int md5_len;
	char		hex[33] = "";
	char		head[4096];

	if (at != NULL)
	{
		EVP_Digest(body, body_len, md5, &md5_len, EVP_md5(), NULL);
		for (int i = 0; i < 16; i++)
			snprintf(hex + 2 * i, 3, "%02x", md5[i]);
		snprintf(head, sizeof(head), "%.*s%s%.*s", (int) (at - answer), answer, hex,
				 (int) (blank - at - strlen(ETAG_OF_BODY)), at + strlen(ETAG_OF_BODY));
	}
	else
		snprintf(head, sizeof(head), "%.*s", (int) (blank - answer), answer);
	/* an answer may say its own Content-Length (a HEAD's, of the object) */
	if (strcasestr(head, "\r\nContent-Length:") != NULL)
		snprintf(out, len, "%s\r\n\r\n%s", head, blank + 4);
	else
		snprintf(out, len, "%s\r\nContent-Length: %zu\r\n\r\n%s", head, strlen(blank + 4), blank + 4);
}

/* Send LEN bytes of BUF; false when the client went away (no SIGPIPE). */
static bool
send_all(int fd, const char *buf, size_t len)
{
	while (len > 0)
	{
		ssize_t		n = send(fd, buf, len, MSG_NOSIGNAL);

		if (n <= 0)
			return false;
		buf += n;
		len -= (size_t) n;
	}
	return true;
}

/*
 * A listing page of BIG_LISTING_BYTES, made as it is sent (CHUNKED: in
 * chunks, its size not said): well-formed items, enough to hold a backend.
 * The client is expected to go away long before the end.
 */
static void
send_big_listing(int fd, bool chunked)
{
	const char *item = "<Contents><Key>p/0123456789abcdef0123456789abcdef</Key><Size>1</Size></Contents>";
	char		block[65536];
	char		head[256];
	size_t		used = 0;
	size_t		sent = 0;

	while (used + strlen(item) < sizeof(block))
	{
		memcpy(block + used, item, strlen(item));
		used += strlen(item);
	}
	if (chunked)
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n");
	else
		snprintf(head, sizeof(head), "HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n", BIG_LISTING_BYTES);
	if (!send_all(fd, head, strlen(head)))
		return;
	while (sent < BIG_LISTING_BYTES)
	{
		char		size_line[32];

		snprintf(size_line, sizeof(size_line), "%zx\r\n", used);
		if ((chunked && !send_all(fd, size_line, strlen(size_line))) || !send_all(fd, block, used) ||
			(chunked && !send_all(fd, "\r\n", 2)))
			return;
		sent += used;
	}
}

/* No answer: wait until the client closes the connection (or a minute passes). */
static void
stay_silent(int fd)
{
	struct pollfd p = {fd, POLLIN, 0};
	char		byte;

	while (poll(&p, 1, 60000) > 0 && recv(fd, &byte, 1, 0) > 0)
		;
}

/* One connection: requests answered from the script until it closes or is dropped. */
static void
serve(Server *s, int fd)
{
	char		head[16384];
	char	   *body = NULL;
	size_t		body_len;

	while (read_request(fd, head, sizeof(head), &body, &body_len))
	{
		const char *answer;
		char		out[8192];

		pthread_mutex_lock(&s->mutex);
		answer = s->next < s->nscript ? s->script[s->next++] : "HTTP/1.1 500 Script Ended\r\n\r\n";
		s->requests++;
		strncat(s->methods, head, strcspn(head, " "));
		strcat(s->methods, ",");
		pthread_mutex_unlock(&s->mutex);
		if (strcmp(answer, DROP) == 0)
			break;
		if (strcmp(answer, SILENT) == 0)
		{
			stay_silent(fd);
			break;
		}
		if (strcmp(answer, BIG_LISTING) == 0 || strcmp(answer, BIG_CHUNKED) == 0)
		{
			send_big_listing(fd, strcmp(answer, BIG_CHUNKED) == 0);
			break;
		}
		fill_answer(answer, body, body_len, out, sizeof(out));
		if (!send_all(fd, out, strlen(out)))
			break;
		free(body);
		body = NULL;
	}
	free(body);
	close(fd);
}

typedef struct Connection
{
	Server	   *server;
	int			fd;
} Connection;

static void *
connection_main(void *arg)
{
	Connection *conn = arg;

	serve(conn->server, conn->fd);
	free(conn);
	return NULL;
}

/* Each connection in a thread of its own: a client keeps several open at once. */
static void *
server_main(void *arg)
{
	Server	   *s = arg;
	int			fd;

	while ((fd = accept(s->listener, NULL, NULL)) >= 0)
	{
		Connection *conn = malloc(sizeof(Connection));
		pthread_t	thread;

		conn->server = s;
		conn->fd = fd;
		if (pthread_create(&thread, NULL, connection_main, conn) == 0)
			pthread_detach(thread);
		else
		{
			close(fd);
			free(conn);
		}
	}
	return NULL;
}

static bool
server_start(Server *s)
{
	struct sockaddr_in addr = {0};
	socklen_t	len = sizeof(addr);

	pthread_mutex_init(&s->mutex, NULL);
	s->listener = socket(AF_INET, SOCK_STREAM, 0);
	addr.sin_family = AF_INET;
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s->listener < 0 || bind(s->listener, (struct sockaddr *) &addr, sizeof(addr)) != 0 ||
		listen(s->listener, 8) != 0 || getsockname(s->listener, (struct sockaddr *) &addr, &len) != 0)
		return false;
	s->port = ntohs(addr.sin_port);
	return pthread_create(&s->thread, NULL, server_main, s) == 0;
}

static void
server_stop(Server *s)
{
	shutdown(s->listener, SHUT_RDWR);
	close(s->listener);
	pthread_join(s->thread, NULL);
	pthread_mutex_destroy(&s->mutex);
}

/* Give the server a new script (ANSWERS, NULL-terminated), its counts reset. */
static void
script(Server *s, const char *const *answers)
{
	pthread_mutex_lock(&s->mutex);
	s->nscript = 0;
	while (answers[s->nscript] != NULL)
	{
		s->script[s->nscript] = answers[s->nscript];
		s->nscript++;
	}
	s->next = 0;
	s->requests = 0;
	s->methods[0] = '\0';
	pthread_mutex_unlock(&s->mutex);
}

/* The settings of a client of S, trying each request MAX_ATTEMPTS times. */
static SbS3Config
config_of(const Server *s, int max_attempts)
{
	SbS3Config	c = {0};

	snprintf(c.endpoint, sizeof(c.endpoint), "http://127.0.0.1:%d", s->port);
	strcpy(c.region, "us-east-1");
	strcpy(c.access_key, "AKID");
	strcpy(c.secret_key, "the-secret");
	c.url_style = SB_S3_URL_PATH;
	c.max_attempts = max_attempts;
	c.connect_timeout = 5;
	c.low_speed_seconds = 5;
	return c;
}

static SbS3Client *
client_of(const Server *s, int max_attempts)
{
	SbS3Config	c = config_of(s, max_attempts);
	SbError		err;

	return sb_s3_client_new(&c, 4, &err);
}

#define OK_ETAG "HTTP/1.1 200 OK\r\nETag: \"" ETAG_OF_BODY "\"\r\n\r\n"
#define SLOW_DOWN "HTTP/1.1 503 Slow Down\r\n\r\n<Error><Code>SlowDown</Code><Message>Reduce</Message></Error>\n\n"
#define TOO_MANY "HTTP/1.1 429 Too Many\r\n\r\n"
#define WRONG_ETAG "HTTP/1.1 200 OK\r\nETag: \"0123456789abcdef0123456789abcdef\"\r\n\r\n"
#define DENIED "HTTP/1.1 403 Forbidden\r\n\r\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>"
#define NOT_IMPLEMENTED "HTTP/1.1 501 Not Implemented\r\n\r\n"
#define BODY_10 "HTTP/1.1 206 Partial\r\n\r\n0123456789"
#define BODY_20 "HTTP/1.1 200 OK\r\n\r\n01234567890123456789"

void
test_s3_faults(void)
{
	Server		s = {0};
	SbS3Client *c;
	SbS3Request req = {0};
	uint8_t		buf[16];
	SbError		err;

	th_begin("s3: a server that fails: what is retried, what fails at once, and how it says so");
	if (!ok(server_start(&s), "a scripted server") || (c = client_of(&s, 3)) == NULL)
		return;

	script(&s, (const char *const[]) {SLOW_DOWN, TOO_MANY, OK_ETAG, NULL});
	ok(sb_s3_put_object(c, "bk", "k", "hello", 5, &err), "503 then 429 then 200: the PUT succeeds");
	is_int(s.requests, 3, "after 3 tries");

	script(&s, (const char *const[]) {DROP, OK_ETAG, NULL});
	ok(sb_s3_put_object(c, "bk", "k", "hello", 5, &err), "a dropped connection, then 200: it succeeds");

	script(&s, (const char *const[]) {WRONG_ETAG, WRONG_ETAG, WRONG_ETAG, NULL});
	ok(!sb_s3_put_object(c, "bk", "k", "hello", 5, &err) && err.code == SB_ECORRUPT,
	   "an ETag that is not the MD5 sent, every time: it fails");
	like(err.message, "is not the MD5 of what was sent", "saying so (%s)", err.message);
	like(err.message, "after 3 tries", "after its tries");

	script(&s, (const char *const[]) {DENIED, OK_ETAG, NULL});
	ok(!sb_s3_put_object(c, "bk", "k", "hello", 5, &err) && err.code == SB_EIO && err.sys_errno == EACCES,
	   "403: refused at once, for want of permission (not an encryption key's error)");
	like(err.message, "AccessDenied: Access Denied", "with the server's code and message");
	is_int(s.requests, 1, "not retried");
	ok(strstr(err.message, "the-secret") == NULL, "no secret in the message");

	script(&s, (const char *const[]) {"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", DENIED, NULL});
	ok(!sb_s3_head_object(c, "bk", "manifest.json", &(uint64_t) {0}, &err) && err.sys_errno == EACCES,
	   "a HEAD refused (403, no body)");
	like(err.message, "S3 GET s3://bk/manifest.json: HTTP 403 AccessDenied: Access Denied",
		 "says why, from the error document of a GET of its first byte (%s)", err.message);
	script(&s, (const char *const[]) {NOT_IMPLEMENTED, OK_ETAG, NULL});
	ok(!sb_s3_put_object(c, "bk", "k", "hello", 5, &err) && s.requests == 1, "501: not retried");

	script(&s, (const char *const[]) {BODY_20, NULL});
	req.method = "GET";
	strcpy(req.bucket, "bk");
	strcpy(req.key, "k");
	req.range_length = 10;
	req.into = buf;
	req.into_len = 10;
	ok(!sb_s3_run(c, &req, &err) && err.code == SB_ECORRUPT, "a GET answered with more than asked is refused");
	sb_s3_request_reset(&req);
	script(&s, (const char *const[]) {BODY_10, NULL});
	ok(sb_s3_run(c, &req, &err) && req.got == 10 && memcmp(buf, "0123456789", 10) == 0, "a ranged GET");
	sb_s3_request_reset(&req);

	script(&s, (const char *const[]) {
		"HTTP/1.1 200 OK\r\n\r\n<Error><Code>InternalError</Code><Message>Oops</Message></Error>",
		"HTTP/1.1 200 OK\r\n\r\n<CompleteMultipartUploadResult></CompleteMultipartUploadResult>",
	NULL});
	ok(sb_s3_multipart_complete(c, "bk", "k", "u1", (char[1][128]) {"e"}, 1, &err),
	   "a completion answered 200 with an <Error> is retried");
	is_int(s.requests, 2, "once");
	sb_s3_client_free(c);
	server_stop(&s);
}

void
test_s3_faults_upload(void)
{
	Server		s = {0};
	SbS3Config	c = {0};
	SbS3Upload *u;
	uint8_t    *data = calloc(1, 6 * 1024 * 1024);
	SbError		err;

	th_begin("s3: an upload whose part fails for good fails, and is aborted");
	if (!ok(server_start(&s) && data != NULL, "a scripted server"))
		return;
	snprintf(c.endpoint, sizeof(c.endpoint), "http://127.0.0.1:%d", s.port);
	strcpy(c.region, "us-east-1");
	strcpy(c.access_key, "AKID");
	strcpy(c.secret_key, "the-secret");
	c.max_attempts = 2;
	c.connect_timeout = 5;
	c.low_speed_seconds = 5;
	script(&s, (const char *const[]) {
		"HTTP/1.1 200 OK\r\n\r\n<InitiateMultipartUploadResult><UploadId>up-1</UploadId></InitiateMultipartUploadResult>",
		DENIED,
		"HTTP/1.1 204 No Content\r\n\r\n",
	NULL});
	u = sb_s3_upload_new(&c, "bk", "stripe", 2, SB_S3_PART_MIN, &err);
	ok(u != NULL && sb_s3_upload_append(u, data, 6 * 1024 * 1024, &err), "a part is sent");
	ok(u != NULL && !sb_s3_upload_finish(u, &err) && err.sys_errno == EACCES, "the upload fails: %s", err.message);
	ok(u != NULL && !sb_s3_upload_append(u, data, 1, &err), "and takes nothing more");
	ok(u != NULL && sb_s3_upload_abort(u, &err), "it is aborted");
	is_str(s.methods, "POST,PUT,DELETE,", "begin, the part (the next waits for it: one in flight until one is stored), the abort");
	sb_s3_upload_free(u);
	free(data);
	server_stop(&s);
}

/* ---------- a server that misbehaves ---------- */

#define PAGE_AT(token) "HTTP/1.1 200 OK\r\n\r\n<ListBucketResult><IsTruncated>true</IsTruncated>" \
	"<NextContinuationToken>" token "</NextContinuationToken><Contents><Key>p/a</Key><Size>1</Size>" \
	"</Contents></ListBucketResult>"
#define LAST_PAGE "HTTP/1.1 200 OK\r\n\r\n<ListBucketResult><IsTruncated>false</IsTruncated>" \
	"<Contents><Key>p/z</Key><Size>1</Size></Contents></ListBucketResult>"

static bool
count_items(void *arg, const SbS3Item *item, SbError *err)
{
	(*(int *) arg)++;
	return true;
}

void
test_s3_faults_listing(void)
{
	Server		s = {0};
	SbS3Client *c;
	uint8_t    *data;
	size_t		len;
	int			n = 0;
	SbError		err;

	th_begin("s3: listings that loop or never end, replies larger than asked for: refused with their size");
	if (!ok(server_start(&s), "a scripted server") || (c = client_of(&s, 3)) == NULL)
		return;

	script(&s, (const char *const[]) {PAGE_AT("t1"), PAGE_AT("t2"), LAST_PAGE, NULL});
	ok(sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err) && n == 3, "a listing of three pages, each item once");
	script(&s, (const char *const[]) {PAGE_AT("same"), PAGE_AT("same"), PAGE_AT("same"), NULL});
	ok(!sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err) && err.code == SB_ECORRUPT,
	   "a listing whose continuation token comes again fails");
	like(err.message, "listing of s3://bk/p/ gives continuation \"same\" a second time", "naming the bucket, the prefix, the token (%s)",
		 err.message);
	is_int(s.requests, 2, "at its second page");
	script(&s, (const char *const[]) {PAGE_AT("a"), PAGE_AT("b"), PAGE_AT("a"), PAGE_AT("b"), NULL});
	ok(!sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err) && s.requests == 3,
	   "a listing that goes round two tokens fails when the first comes again");
	script(&s, (const char *const[]) {"HTTP/1.1 200 OK\r\n\r\n<ListBucketResult><IsTruncated>true</IsTruncated>"
		"</ListBucketResult>", NULL});
	ok(!sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err), "a page cut without a token fails");
	like(err.message, "is cut without saying where it goes on", "saying so");

	script(&s, (const char *const[]) {BIG_LISTING, NULL});
	ok(!sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err) && err.code == SB_ECORRUPT,
	   "a 20 MB listing page is refused");
	like(err.message, "S3 GET s3://bk/p/ (a listing): the server's answer (20971520 bytes) is larger than the "
		 "8388608 bytes that a listing page may be", "with its size and the limit (%s)", err.message);
	is_int(s.requests, 1, "not retried");
	script(&s, (const char *const[]) {BIG_CHUNKED, NULL});
	ok(!sb_s3_list_objects(c, "bk", "p/", count_items, &n, &err) && err.code == SB_ECORRUPT,
	   "the same without its size said (chunked) is refused when it passes the limit");
	like(err.message, "answer is larger than the 8388608 bytes that a listing page may be", "%s", err.message);

	script(&s, (const char *const[]) {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", BODY_20, NULL});
	ok(!sb_s3_get_object(c, "bk", "k", 100, &data, &len, &err) && err.code == SB_ECORRUPT,
	   "an object whose GET sends more than its HEAD said is refused");
	like(err.message, "(20 bytes) is larger than the 5 bytes asked for", "%s", err.message);
	script(&s, (const char *const[]) {"HTTP/1.1 200 OK\r\nContent-Length: 3000000000\r\n\r\n", BODY_20, NULL});
	ok(!sb_s3_get_object(c, "bk", "manifest.json", 1000000, &data, &len, &err) && err.code == SB_ECORRUPT,
	   "an object larger than its reader takes is refused");
	like(err.message, "s3://bk/manifest.json is 3000000000 bytes, more than the 1000000 bytes it may be", "%s",
		 err.message);
	is_int(s.requests, 1, "before it is read (its HEAD only)");
	script(&s, (const char *const[]) {"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\nhello", NULL});
	ok(sb_s3_get_object(c, "bk", "k", 5, &data, &len, &err) && len == 5 && memcmp(data, "hello", 6) == 0,
	   "an object of the size its HEAD said is read whole, NUL-terminated");
	free(data);

	script(&s, (const char *const[]) {"HTTP/1.1 403 Forbidden\r\nContent-Length: 20000000\r\n\r\n", NULL});
	ok(!sb_s3_put_object(c, "bk", "k", "x", 1, &err) && err.sys_errno == EACCES,
	   "a 403 with a 20 MB error document is the 403");
	like(err.message, "HTTP 403 no error document (its error document is larger than 65536 bytes: not read)",
		 "its document not read (%s)", err.message);
	sb_s3_client_free(c);
	server_stop(&s);
}

/* The stop check of these tests: a flag a thread raises. */
static volatile int stop_flag = 0;
static double stop_at = 0;

static bool
test_stop(void)
{
	return stop_flag != 0;
}

/* Raise the stop flag after 350 ms: between two of the wait's 100 ms checks, not on one. */
static void *
stop_later(void *arg)
{
	(void) arg;
	usleep(350 * 1000);
	stop_at = th_now();
	stop_flag = 1;
	return NULL;
}

/* A GET (a silent server's) run in a thread of its own, as the engine's readers do. */
typedef struct ThreadRun
{
	SbS3Client *client;
	bool		ok;
	SbError		err;
	double		ended;
} ThreadRun;

static void *
run_get(void *arg)
{
	ThreadRun  *t = arg;
	SbS3Request req = {0};
	uint8_t		buf[16];

	req.method = "GET";
	strcpy(req.bucket, "bk");
	strcpy(req.key, "k");
	req.into = buf;
	req.into_len = sizeof(buf);
	t->ok = sb_s3_run(t->client, &req, &t->err);
	t->ended = th_now();
	sb_s3_request_reset(&req);
	return NULL;
}

/* Start three GETs of a silent server on C and reap: all abandoned at the stop? */
static bool
reap_abandoned(SbS3Client *c)
{
	SbS3Request reqs[3];
	SbS3Request *done[3];
	uint8_t		buf[3][16];
	SbError		err;
	int			n = 0;
	bool		all = true;

	memset(reqs, 0, sizeof(reqs));
	for (int i = 0; i < 3; i++)
	{
		reqs[i].method = "GET";
		strcpy(reqs[i].bucket, "bk");
		snprintf(reqs[i].key, sizeof(reqs[i].key), "k%d", i);
		reqs[i].into = buf[i];
		reqs[i].into_len = sizeof(buf[i]);
		all = all && sb_s3_start(c, &reqs[i], &err);
	}
	while (all && n < 3)
	{
		int			got = sb_s3_reap(c, done, 3, 3 - n, &err);

		for (int i = 0; i < got; i++)
			all = all && !done[i]->ok && done[i]->error.code == SB_ECANCELED;
		n += got > 0 ? got : 3;
	}
	for (int i = 0; i < 3; i++)
		sb_s3_request_reset(&reqs[i]);
	return all && sb_s3_in_flight(c) == 0;
}

/* FN(C) against a silent server, a stop raised 350 ms in: how long after the stop it returned. */
static double
stopped_after(Server *s, bool (*fn) (SbS3Client *c, SbError *err), SbS3Client *c, SbError *err, bool *result)
{
	pthread_t	stopper;

	stop_flag = 0;
	script(s, (const char *const[]) {SILENT, SILENT, SILENT, NULL});
	pthread_create(&stopper, NULL, stop_later, NULL);
	*result = fn(c, err);
	pthread_join(stopper, NULL);
	return th_now() - stop_at;
}

static bool
get_one(SbS3Client *c, SbError *err)
{
	ThreadRun	t = {c, false, {0}, 0};

	run_get(&t);
	*err = t.err;
	return t.ok;
}

static bool
get_three(SbS3Client *c, SbError *err)
{
	(void) err;
	return reap_abandoned(c);
}

void
test_s3_faults_stop(void)
{
	Server		s = {0};
	SbS3Config	config;
	SbS3Client *c;
	pthread_t	thread,
				stopper;
	ThreadRun	t = {0};
	double		t0,
				after;
	bool		result;
	SbError		err;

	th_begin("s3: a server that never answers: a stop abandons its requests at once, the deadline ends them");
	if (!ok(server_start(&s), "a scripted server") || (c = client_of(&s, 3)) == NULL)
		return;
	sb_s3_set_stop_check(test_stop);

	after = stopped_after(&s, get_one, c, &err, &result);
	ok(!result && err.code == SB_ECANCELED, "a GET that is never answered ends on the stop, canceled (%s)", err.message);
	ok(after < 0.3, "%.3f s after the stop (the wait asks every 100 ms)", after);
	like(err.message, "S3 GET s3://bk/k: canceled", "saying what was canceled");

	after = stopped_after(&s, get_three, c, &err, &result);
	ok(result, "three requests in flight at once all end on the stop, canceled");
	ok(after < 0.3, "%.3f s after it", after);

	stop_flag = 0;
	script(&s, (const char *const[]) {SILENT, NULL});
	t.client = c;
	pthread_create(&thread, NULL, run_get, &t);
	pthread_create(&stopper, NULL, stop_later, NULL);
	pthread_join(thread, NULL);
	pthread_join(stopper, NULL);
	ok(!t.ok && t.err.code == SB_ECANCELED && t.ended - stop_at < 0.3,
	   "a request waiting in another thread (an engine's reader or writer) ends %.3f s after the stop",
	   t.ended - stop_at);

	script(&s, (const char *const[]) {OK_ETAG, "HTTP/1.1 204 No Content\r\n\r\n", NULL});
	ok(!sb_s3_put_object(c, "bk", "k", "x", 1, &err) && err.code == SB_ECANCELED && s.requests == 0,
	   "after a stop no request starts (none sent)");
	sb_s3_client_set_cleanup(c);
	ok(sb_s3_delete_object(c, "bk", "k", &err) && s.requests == 1,
	   "a clean-up client's request (an abort, a delete) runs after the stop");
	sb_s3_client_free(c);
	stop_flag = 0;
	sb_s3_set_stop_check(NULL);

	config = config_of(&s, 5);
	config.timeout = 1;
	c = sb_s3_client_new(&config, 1, &err);
	script(&s, (const char *const[]) {SILENT, SILENT, NULL});
	t0 = th_now();
	ok(c != NULL && !sb_s3_head_object(c, "bk", "k", &(uint64_t) {0}, &err) && err.code == SB_EIO,
	   "with a deadline of 1 s, a HEAD that is never answered fails");
	ok(th_now() - t0 >= 0.9 && th_now() - t0 < 1.6, "at the deadline (%.2f s)", th_now() - t0);
	like(err.message, "within the 1 s of stripebackup.s3_timeout", "saying so (%s)", err.message);
	script(&s, (const char *const[]) {SLOW_DOWN, SLOW_DOWN, SLOW_DOWN, SLOW_DOWN, SLOW_DOWN, NULL});
	t0 = th_now();
	result = sb_s3_put_object(c, "bk", "k", "x", 1, &err);
	after = th_now() - t0;
	ok(!result && after < 1.3 && s.requests >= 2,
	   "503s retried with backoff stop at the deadline too (%.2f s, %d tries: %s)", after, s.requests, err.message);
	sb_s3_client_free(c);
	server_stop(&s);
}

void
test_s3_faults_allowed(void)
{
	Server		s = {0};
	SbS3Config	config;
	SbS3Client *c;
	int			n = 0;
	SbError		err;

	th_begin("s3: requests only to the places stripebackup.s3_allowed_buckets holds");
	if (!ok(server_start(&s), "a scripted server"))
		return;
	config = config_of(&s, 1);
	strcpy(config.allowed, "bk1/pg, other-bk");
	c = sb_s3_client_new(&config, 1, &err);
	script(&s, (const char *const[]) {OK_ETAG, OK_ETAG, LAST_PAGE, NULL});
	ok(c != NULL && !sb_s3_put_object(c, "bk1", "elsewhere/k", "x", 1, &err) && err.code == SB_EINVAL,
	   "an object outside the allowed prefix is refused");
	like(err.message, "s3://bk1/elsewhere/k is outside the prefixes of bucket \"bk1\" that "
		 "stripebackup.s3_allowed_buckets allows (\"bk1/pg, other-bk\")", "naming it and the setting (%s)", err.message);
	ok(!sb_s3_put_object(c, "bk1", "pgx/k", "x", 1, &err), "a prefix is a folder: pgx is not under pg");
	ok(!sb_s3_put_object(c, "third", "pg/k", "x", 1, &err), "another bucket is refused");
	like(err.message, "bucket \"third\" is not allowed by stripebackup.s3_allowed_buckets", "%s", err.message);
	ok(!sb_s3_list_objects(c, "bk1", "pg", count_items, &n, &err), "a listing of \"pg\" (it would show pgx) is refused");
	is_int(s.requests, 0, "none of them was sent");
	ok(sb_s3_put_object(c, "bk1", "pg/main/k", "x", 1, &err) && sb_s3_put_object(c, "other-bk", "any/k", "x", 1, &err),
	   "under the prefix, and anywhere in a bucket allowed whole: sent");
	ok(sb_s3_list_objects(c, "bk1", "pg/main/", count_items, &n, &err), "a listing under the prefix: sent");
	is_int(s.requests, 3, "three requests");
	sb_s3_client_free(c);
	server_stop(&s);
}
