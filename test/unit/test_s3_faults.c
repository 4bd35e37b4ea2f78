/*
 * test_s3_faults.c
 *		The S3 client's answers to a server that fails: a scripted HTTP
 *		server on 127.0.0.1 (a thread of this test) answers each request
 *		with the next answer of its script: 503 and 429 are retried, a
 *		dropped connection is retried, a 200 whose ETag is not the MD5 sent is
 *		retried and then fails, 403 and 501 fail at once, a completion that
 *		answers 200 with an <Error> is retried, a GET that sends more than
 *		asked is refused, an upload whose part fails for good fails and is
 *		aborted.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "harness.h"
#include "s3_client.h"
#include "s3_upload.h"
#include "tests.h"

#define MAX_SCRIPT 32
#define ETAG_OF_BODY "@md5"		/* in an answer: the MD5 of the request's body */
#define DROP "@drop"			/* an answer: close the connection without one */

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
	snprintf(out, len, "%s\r\nContent-Length: %zu\r\n\r\n%s", head, strlen(blank + 4), blank + 4);
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
		fill_answer(answer, body, body_len, out, sizeof(out));
		if (write(fd, out, strlen(out)) < 0)
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

static SbS3Client *
client_of(const Server *s, int max_attempts)
{
	SbS3Config	c = {0};
	SbError		err;

	snprintf(c.endpoint, sizeof(c.endpoint), "http://127.0.0.1:%d", s->port);
	strcpy(c.region, "us-east-1");
	strcpy(c.access_key, "AKID");
	strcpy(c.secret_key, "the-secret");
	c.url_style = SB_S3_URL_PATH;
	c.max_attempts = max_attempts;
	c.connect_timeout = 5;
	c.low_speed_seconds = 5;
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
	ok(!sb_s3_put_object(c, "bk", "k", "hello", 5, &err) && err.code == SB_EKEY, "403: refused at once");
	like(err.message, "AccessDenied: Access Denied", "with the server's code and message");
	is_int(s.requests, 1, "not retried");
	ok(strstr(err.message, "the-secret") == NULL, "no secret in the message");

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
	ok(u != NULL && !sb_s3_upload_finish(u, &err) && err.code == SB_EKEY, "the upload fails: %s", err.message);
	ok(u != NULL && !sb_s3_upload_append(u, data, 1, &err), "and takes nothing more");
	ok(u != NULL && sb_s3_upload_abort(u, &err), "it is aborted");
	is_str(s.methods, "POST,PUT,DELETE,", "begin, the part (the next waits for it: one in flight until one is stored), the abort");
	sb_s3_upload_free(u);
	free(data);
	server_stop(&s);
}
