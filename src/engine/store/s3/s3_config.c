/*
 * s3_config.c
 *		Object-storage locations (s3://bucket/prefix) and where a connection's
 *		endpoint, region and credentials come from (include/stripebackup/sb_s3.h).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>


#include <openssl/crypto.h>

#include "stripebackup/sb_s3.h"

#define CREDENTIALS_MAX (64 * 1024)

bool
sb_s3_is_location(const char *destination)
{
	return destination != NULL && strncmp(destination, SB_S3_SCHEME, strlen(SB_S3_SCHEME)) == 0;
}

/* AWS's rules for a bucket's name: 3 to 63 of a-z 0-9 . -, a letter or digit at each end. */
static bool
valid_bucket(const char *name, size_t len)
{
	size_t		i;

	if (len < 3 || len > SB_S3_BUCKET_MAX)
		return false;
	for (i = 0; i < len; i++)
	{
		char		c = name[i];

		if (!(islower((unsigned char) c) || isdigit((unsigned char) c) || c == '.' || c == '-'))
			return false;
	}
	return isalnum((unsigned char) name[0]) && isalnum((unsigned char) name[len - 1]) &&
		memmem(name, len, "..", 2) == NULL;
}

/* A prefix's components: none empty, ".", ".."; no control characters or backslashes. */
static bool
valid_prefix(const char *prefix)
{
	const char *p = prefix;

	for (const char *c = prefix; *c != '\0'; c++)
		if ((unsigned char) *c < 0x20 || *c == 0x7f || *c == '\\')
			return false;
	while (*p != '\0')
	{
		size_t		n = strcspn(p, "/");

		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p += n;
		if (*p == '/')
			p++;
	}
	return true;
}

bool
sb_s3_parse_location(const char *url, SbS3Location *loc, SbError *err)
{
	const char *rest;
	size_t		bucket_len;
	size_t		prefix_len;

	memset(loc, 0, sizeof(*loc));
	if (!sb_s3_is_location(url))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not an object-storage location (s3://bucket/prefix)",
							url);
	rest = url + strlen(SB_S3_SCHEME);
	bucket_len = strcspn(rest, "/");
	if (!valid_bucket(rest, bucket_len))
		return sb_error_set(err, SB_EINVAL,
							"\"%s\" does not name a valid bucket (3 to 63 of a-z, 0-9, \".\" and \"-\")",
							url);
	memcpy(loc->bucket, rest, bucket_len);
	rest += bucket_len;
	if (*rest == '/')
		rest++;
	prefix_len = strlen(rest);
	if (prefix_len > 0 && rest[prefix_len - 1] == '/')
		prefix_len--;
	if (prefix_len > SB_S3_PREFIX_MAX)
		return sb_error_set(err, SB_EINVAL, "the prefix of \"%.200s...\" is longer than %d bytes",
							url, SB_S3_PREFIX_MAX);
	memcpy(loc->prefix, rest, prefix_len);
	loc->prefix[prefix_len] = '\0';
	if (!valid_prefix(loc->prefix))
		return sb_error_set(err, SB_EINVAL,
							"the prefix of \"%s\" has an empty, \".\" or \"..\" component or a control character",
							url);
	return true;
}

/* The first of A (a setting) and the environment variables, or NULL. */
static const char *
first_set(const char *setting, const char *env1, const char *env2)
{
	const char *v;

	if (setting != NULL && setting[0] != '\0')
		return setting;
	v = env1 != NULL ? getenv(env1) : NULL;
	if (v != NULL && v[0] != '\0')
		return v;
	v = env2 != NULL ? getenv(env2) : NULL;
	return v != NULL && v[0] != '\0' ? v : NULL;
}

static bool
copy_setting(char *dst, size_t len, const char *value, const char *what, SbError *err)
{
	if (strlen(value) >= len)
		return sb_error_set(err, SB_EINVAL, "%s is longer than %zu bytes", what, len - 1);
	strcpy(dst, value);
	return true;
}

bool
sb_s3_check_endpoint(const char *endpoint, SbError *err)
{
	const char *host;
	size_t		len;

	if (endpoint == NULL || endpoint[0] == '\0')
		return true;
	if (strncmp(endpoint, "http://", 7) != 0 && strncmp(endpoint, "https://", 8) != 0)
		return sb_error_set(err, SB_EINVAL,
							"S3 endpoint \"%s\" is not an http:// or https:// address", endpoint);
	if (strpbrk(endpoint, " \t\r\n?#@\\") != NULL)
		return sb_error_set(err, SB_EINVAL, "S3 endpoint \"%s\" has characters an endpoint cannot have",
							endpoint);
	host = strstr(endpoint, "://") + 3;
	len = strlen(host);
	while (len > 0 && host[len - 1] == '/')
		len--;
	if (len == 0 || memchr(host, '/', len) != NULL)
		return sb_error_set(err, SB_EINVAL, "S3 endpoint \"%s\" is not scheme://host[:port] (no path)",
							endpoint);
	return true;
}

static bool
settle_endpoint(const SbS3Settings *s, SbS3Config *c, SbError *err)
{
	const char *endpoint = first_set(s->endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL");
	const char *style = first_set(s->url_style, "STRIPEBACKUP_S3_URL_STYLE", NULL);
	size_t		len;

	if (!copy_setting(c->region, sizeof(c->region),
					  first_set(s->region, "AWS_REGION", "AWS_DEFAULT_REGION") ?: "us-east-1",
					  "the S3 region", err))
		return false;
	if (endpoint == NULL)
		snprintf(c->endpoint, sizeof(c->endpoint), "https://s3.%s.amazonaws.com", c->region);
	else if (!sb_s3_check_endpoint(endpoint, err) ||
			 !copy_setting(c->endpoint, sizeof(c->endpoint), endpoint, "the S3 endpoint", err))
		return false;
	len = strlen(c->endpoint);
	while (len > 0 && c->endpoint[len - 1] == '/')
		c->endpoint[--len] = '\0';
	if (!copy_setting(c->ca_file, sizeof(c->ca_file),
					  first_set(s->ca_file, "AWS_CA_BUNDLE", NULL) ?: "", "the S3 CA file", err))
		return false;
	/* AWS's own endpoints take the bucket in the host name; other servers mostly in the path. */
	if (style == NULL)
		c->url_style = endpoint == NULL ? SB_S3_URL_HOST : SB_S3_URL_PATH;
	else if (strcmp(style, "path") == 0)
		c->url_style = SB_S3_URL_PATH;
	else if (strcmp(style, "host") == 0)
		c->url_style = SB_S3_URL_HOST;
	else
		return sb_error_set(err, SB_EINVAL, "S3 URL style \"%s\" is neither \"path\" nor \"host\"", style);
	return true;
}

/*
 * Whether the credentials file FD (its status ST) is one only the server
 * may have written: owned by the user we run as (or root, who may write
 * anything anyway), and writable by no one else.  A file another user owns
 * holds keys that user chose, or can swap at will, however private its
 * mode: PostgreSQL asks the same of its TLS key.
 */
static bool
credentials_file_trusted(const char *path, const struct stat *st, SbError *err)
{
	uid_t		me = geteuid();

	if (!S_ISREG(st->st_mode))
		return sb_error_set(err, SB_EKEY, "S3 credentials file \"%s\" is not a regular file", path);
	if (st->st_uid != me && st->st_uid != 0)
		return sb_error_set(err, SB_EKEY,
							"S3 credentials file \"%s\" is owned by uid %u (mode %04o): it must be owned by "
							"the server's user (uid %u) or root",
							path, (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777), (unsigned) me);
	if ((st->st_mode & (S_IRWXO | S_IWGRP)) != 0)
		return sb_error_set(err, SB_EKEY,
							"S3 credentials file \"%s\" (owner uid %u) has mode %04o: only its owner may "
							"use it, and its group read it (0600 or 0640)",
							path, (unsigned) st->st_uid, (unsigned) (st->st_mode & 07777));
	return true;
}

/* The credentials file's text, refused unless credentials_file_trusted. */
static bool
read_credentials_file(const char *path, char *buf, size_t len, SbError *err)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t		got;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not open S3 credentials file \"%s\"", path);
	if (fstat(fd, &st) != 0)
	{
		sb_error_set_errno(err, errno, "could not stat S3 credentials file \"%s\"", path);
		close(fd);
		return false;
	}
	if (!credentials_file_trusted(path, &st, err))
	{
		close(fd);
		return false;
	}
	got = read(fd, buf, len - 1);
	close(fd);
	if (got < 0)
		return sb_error_set_errno(err, errno, "could not read S3 credentials file \"%s\"", path);
	buf[got] = '\0';
	return true;
}

/* LINE without surrounding blanks (in place). */
static char *
trim(char *line)
{
	char	   *end;

	while (isspace((unsigned char) *line))
		line++;
	end = line + strlen(line);
	while (end > line && isspace((unsigned char) end[-1]))
		*--end = '\0';
	return line;
}

/* The keys of [PROFILE] in TEXT (AWS's INI form) into C. */
static void
parse_credentials(char *text, const char *profile, SbS3Config *c)
{
	bool		in_profile = false;
	char	   *save = NULL;

	for (char *line = strtok_r(text, "\n", &save); line != NULL; line = strtok_r(NULL, "\n", &save))
	{
		char	   *eq;

		line = trim(line);
		if (line[0] == '#' || line[0] == ';' || line[0] == '\0')
			continue;
		if (line[0] == '[')
		{
			char	   *close = strchr(line, ']');

			if (close != NULL)
				*close = '\0';
			in_profile = strcmp(trim(line + 1), profile) == 0;
			continue;
		}
		if (!in_profile || (eq = strchr(line, '=')) == NULL)
			continue;
		*eq = '\0';
		line = trim(line);
		eq = trim(eq + 1);
		if (strcmp(line, "aws_access_key_id") == 0 && strlen(eq) < sizeof(c->access_key))
			strcpy(c->access_key, eq);
		else if (strcmp(line, "aws_secret_access_key") == 0 && strlen(eq) < sizeof(c->secret_key))
			strcpy(c->secret_key, eq);
		else if (strcmp(line, "aws_session_token") == 0 && strlen(eq) < sizeof(c->session_token))
			strcpy(c->session_token, eq);
	}
}

static bool
settle_credentials(const SbS3Settings *s, SbS3Config *c, SbError *err)
{
	const char *key = getenv("AWS_ACCESS_KEY_ID");
	const char *secret = getenv("AWS_SECRET_ACCESS_KEY");
	const char *token = getenv("AWS_SESSION_TOKEN");
	const char *file = first_set(s->credentials_file, "AWS_SHARED_CREDENTIALS_FILE", NULL);
	const char *profile = first_set(s->profile, "AWS_PROFILE", NULL) ?: "default";
	char		home_file[1024];
	char	   *text;
	bool		ok;

	/* Keys named in the environment win over a file, unless a file was set. */
	if (s->credentials_file == NULL || s->credentials_file[0] == '\0')
		if (key != NULL && secret != NULL && key[0] != '\0' && secret[0] != '\0')
			return copy_setting(c->access_key, sizeof(c->access_key), key, "AWS_ACCESS_KEY_ID", err) &&
				copy_setting(c->secret_key, sizeof(c->secret_key), secret, "AWS_SECRET_ACCESS_KEY", err) &&
				copy_setting(c->session_token, sizeof(c->session_token), token ?: "", "AWS_SESSION_TOKEN", err);
	if (file == NULL && getenv("HOME") != NULL)
	{
		snprintf(home_file, sizeof(home_file), "%s/.aws/credentials", getenv("HOME"));
		file = home_file;
	}
	if (file == NULL || (file == home_file && access(file, F_OK) != 0))
		return sb_error_set(err, SB_EKEY,
							"no S3 credentials: set stripebackup.s3_credentials_file, "
							"AWS_SHARED_CREDENTIALS_FILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY");
	if ((text = malloc(CREDENTIALS_MAX)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading S3 credentials");
	ok = read_credentials_file(file, text, CREDENTIALS_MAX, err);
	if (ok)
		parse_credentials(text, profile, c);
	OPENSSL_cleanse(text, CREDENTIALS_MAX);
	free(text);
	if (ok && (c->access_key[0] == '\0' || c->secret_key[0] == '\0'))
		return sb_error_set(err, SB_EKEY,
							"S3 credentials file \"%s\" has no aws_access_key_id and aws_secret_access_key in profile \"%s\"",
							file, profile);
	return ok;
}

/* ---------- buckets elsewhere ---------- */

#define SB_S3_BUCKET_LIST_MAX 64

/* One entry of a bucket endpoint list, taken apart (pointers into a copy). */
typedef struct BucketEndpoint
{
	char	   *bucket;
	char	   *endpoint;
	char	   *region;			/* NULL: the common region */
} BucketEndpoint;

/* Split ENTRY (modified) "bucket=endpoint[@region]"; ERR names it when it is not one. */
static bool
parse_bucket_endpoint(char *entry, BucketEndpoint *be, SbError *err)
{
	char	   *eq = strchr(entry, '=');
	char	   *at;

	if (eq == NULL)
		return sb_error_set(err, SB_EINVAL, "bucket endpoint \"%s\" is not bucket=endpoint[@region]", entry);
	*eq = '\0';
	be->bucket = trim(entry);
	be->endpoint = trim(eq + 1);
	be->region = NULL;
	if ((at = strchr(be->endpoint, '@')) != NULL)
	{
		*at = '\0';
		be->region = trim(at + 1);
	}
	if (!valid_bucket(be->bucket, strlen(be->bucket)))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a bucket name (3 to 63 of a-z, 0-9, \".\" and \"-\")",
							be->bucket);
	if (be->region != NULL && (be->region[0] == '\0' || strlen(be->region) >= 64 ||
							   strspn(be->region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(be->region)))
		return sb_error_set(err, SB_EINVAL, "region \"%s\" of bucket \"%s\" is not a region name",
							be->region, be->bucket);
	return sb_s3_check_endpoint(be->endpoint, err);
}

/*
 * Check every entry of TEXT (a bucket named twice is refused) and find
 * WANT's (MATCH->bucket NULL when none), pointing into *COPY (to free).
 */
static bool
walk_bucket_endpoints(const char *text, const char *want, BucketEndpoint *match, char **copy,
					  SbError *err)
{
	char	   *save = NULL;
	char	   *names[SB_S3_BUCKET_LIST_MAX];
	int			n = 0;

	*copy = NULL;
	match->bucket = NULL;
	if (text == NULL || text[0] == '\0')
		return true;
	if ((*copy = strdup(text)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory for the bucket endpoints");
	for (char *entry = strtok_r(*copy, ",", &save); entry != NULL; entry = strtok_r(NULL, ",", &save))
	{
		BucketEndpoint be;

		if (!parse_bucket_endpoint(entry, &be, err))
			return false;
		for (int i = 0; i < n; i++)
			if (strcmp(names[i], be.bucket) == 0)
				return sb_error_set(err, SB_EINVAL, "bucket \"%s\" is given two endpoints", be.bucket);
		if (n == SB_S3_BUCKET_LIST_MAX)
			return sb_error_set(err, SB_EINVAL, "more than %d bucket endpoints", SB_S3_BUCKET_LIST_MAX);
		names[n++] = be.bucket;
		if (want != NULL && strcmp(be.bucket, want) == 0)
			*match = be;
	}
	return true;
}

bool
sb_s3_check_bucket_endpoints(const char *text, SbError *err)
{
	BucketEndpoint match;
	char	   *copy;
	bool		ok = walk_bucket_endpoints(text, NULL, &match, &copy, err);

	free(copy);
	return ok;
}

/* CONFIG's endpoint and region for BUCKET when the bucket endpoints of S name it. */
static bool
settle_bucket_endpoint(const SbS3Settings *s, const char *bucket, SbS3Config *c, SbError *err)
{
	const char *text = first_set(s->bucket_endpoints, "STRIPEBACKUP_S3_BUCKET_ENDPOINTS", NULL);
	BucketEndpoint match;
	char	   *copy;
	bool		ok = walk_bucket_endpoints(text, bucket, &match, &copy, err);

	if (ok && match.bucket != NULL)
	{
		ok = copy_setting(c->endpoint, sizeof(c->endpoint), match.endpoint, "the S3 endpoint", err) &&
			(match.region == NULL ||
			 copy_setting(c->region, sizeof(c->region), match.region, "the S3 region", err));
		for (size_t len = strlen(c->endpoint); len > 0 && c->endpoint[len - 1] == '/'; len--)
			c->endpoint[len - 1] = '\0';
		/* A service of its own: the bucket in the path, unless a style was set. */
		if (first_set(s->url_style, "STRIPEBACKUP_S3_URL_STYLE", NULL) == NULL)
			c->url_style = SB_S3_URL_PATH;
	}
	free(copy);
	return ok;
}

/* ---------- the places requests may go (stripebackup.s3_allowed_buckets) ---------- */

/* One allowed place: a bucket, and a prefix in it ("" the whole bucket). */
typedef struct AllowedPlace
{
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		prefix[SB_S3_PREFIX_MAX + 1];	/* no "/" at either end */
} AllowedPlace;

/* ENTRY (LEN bytes, blanks trimmed) "bucket[/prefix][/]" into P; ERR names it when it is not one. */
static bool
parse_allowed_place(const char *entry, size_t len, AllowedPlace *p, SbError *err)
{
	size_t		bucket_len = 0;
	size_t		prefix_len;

	while (bucket_len < len && entry[bucket_len] != '/')
		bucket_len++;
	prefix_len = bucket_len < len ? len - bucket_len - 1 : 0;
	if (prefix_len > 0 && entry[len - 1] == '/')
		prefix_len--;
	if (!valid_bucket(entry, bucket_len))
		return sb_error_set(err, SB_EINVAL,
							"allowed bucket \"%.*s\" is not bucket or bucket/prefix (a bucket is 3 to 63 of "
							"a-z, 0-9, \".\" and \"-\")", (int) len, entry);
	if (prefix_len > SB_S3_PREFIX_MAX)
		return sb_error_set(err, SB_EINVAL, "the prefix of allowed bucket \"%.200s...\" is longer than %d bytes",
							entry, SB_S3_PREFIX_MAX);
	memcpy(p->bucket, entry, bucket_len);
	p->bucket[bucket_len] = '\0';
	memcpy(p->prefix, entry + bucket_len + 1, prefix_len);
	p->prefix[prefix_len] = '\0';
	if (!valid_prefix(p->prefix))
		return sb_error_set(err, SB_EINVAL,
							"the prefix of allowed bucket \"%.*s\" has an empty, \".\" or \"..\" component or a "
							"control character", (int) len, entry);
	return true;
}

/*
 * Each place of TEXT (comma-separated, blanks around each dropped) to FN,
 * until FN says true (*FOUND) or the list ends; false (ERR) at the first
 * entry that is not a place, or past SB_S3_BUCKET_LIST_MAX of them.
 */
static bool
walk_allowed(const char *text, bool (*fn) (void *arg, const AllowedPlace *p), void *arg,
			 bool *found, SbError *err)
{
	const char *p = text;
	int			n = 0;

	*found = false;
	if (strlen(text) >= SB_S3_ALLOWED_MAX)
		return sb_error_set(err, SB_EINVAL, "the allowed buckets are longer than %d bytes",
							SB_S3_ALLOWED_MAX - 1);
	while (*p != '\0' && !*found)
	{
		size_t		len = strcspn(p, ",");
		size_t		start = 0;
		AllowedPlace place;

		while (start < len && isspace((unsigned char) p[start]))
			start++;
		while (len > start && isspace((unsigned char) p[len - 1]))
			len--;
		if (++n > SB_S3_BUCKET_LIST_MAX)
			return sb_error_set(err, SB_EINVAL, "more than %d allowed buckets", SB_S3_BUCKET_LIST_MAX);
		if (!parse_allowed_place(p + start, len - start, &place, err))
			return false;
		*found = fn != NULL && fn(arg, &place);
		p += strcspn(p, ",");
		if (*p == ',')
			p++;
	}
	return true;
}

bool
sb_s3_check_allowed_buckets(const char *text, SbError *err)
{
	bool		found;

	return text == NULL || walk_allowed(text, NULL, NULL, &found, err);
}

/* A place asked about: KEY in BUCKET, or (LISTING) every key beginning with KEY. */
typedef struct AllowedAsk
{
	const char *bucket;
	const char *key;
	bool		listing;
	bool		bucket_named;	/* an entry names the bucket (for the message) */
} AllowedAsk;

/*
 * Does place P hold what ASK reaches?  A prefix holds the key equal to it
 * and those under it ("p" holds "p" and "p/x", not "px"); a listing must
 * stay under it ("p/..."), since a listing of "p" would show "px" too.
 */
static bool
place_holds(void *arg, const AllowedPlace *p)
{
	AllowedAsk *ask = arg;
	size_t		n = strlen(p->prefix);

	if (strcmp(p->bucket, ask->bucket) != 0)
		return false;
	ask->bucket_named = true;
	if (n == 0)
		return true;
	if (strncmp(ask->key, p->prefix, n) != 0)
		return false;
	return ask->key[n] == '/' || (!ask->listing && ask->key[n] == '\0');
}

/* Does the allowed list TEXT ("" or NULL: every place) hold BUCKET's KEY? */
static bool
allowed_by(const char *text, const char *bucket, const char *key, bool listing, SbError *err)
{
	AllowedAsk	ask = {bucket, key, listing, false};
	bool		found;

	if (text == NULL || text[0] == '\0')
		return true;
	if (!walk_allowed(text, place_holds, &ask, &found, err))
		return false;
	if (found)
		return true;
	if (!ask.bucket_named)
		return sb_error_set(err, SB_EINVAL,
							"bucket \"%s\" is not allowed by stripebackup.s3_allowed_buckets (\"%s\"): no request "
							"goes to s3://%s/%s (the command: STRIPEBACKUP_S3_ALLOWED_BUCKETS)",
							bucket, text, bucket, key);
	return sb_error_set(err, SB_EINVAL,
						"s3://%s/%s is outside the prefixes of bucket \"%s\" that stripebackup.s3_allowed_buckets "
						"allows (\"%s\"): no request goes there (the command: STRIPEBACKUP_S3_ALLOWED_BUCKETS)",
						bucket, key, bucket, text);
}

bool
sb_s3_config_allows(const SbS3Config *config, const char *bucket, const char *key, bool listing,
					SbError *err)
{
	return allowed_by(config->allowed, bucket, key, listing, err);
}

/*
 * The deadline of one request (TIMEOUT seconds, all its tries and their
 * backoff included) and the limits of one try within it: a connection
 * made within 10 s, a transfer that moves at least 1 kB/s over 30 s; each
 * cut to the deadline.  A dead endpoint (one that accepts and never
 * answers) then fails within TIMEOUT, and a try that stalls makes room for
 * a retry long before it.
 */
static bool
settle_limits(const SbS3Settings *s, SbS3Config *c, SbError *err)
{
	const char *text = first_set(s->timeout, "STRIPEBACKUP_S3_TIMEOUT", NULL);
	double		timeout = SB_S3_TIMEOUT_DEFAULT;
	char	   *end;

	if (text != NULL)
	{
		errno = 0;
		timeout = strtod(text, &end);
		if (errno != 0 || end == text || *end != '\0' || !(timeout >= 0.1 && timeout <= SB_S3_TIMEOUT_MAX))
			return sb_error_set(err, SB_EINVAL,
								"S3 timeout \"%s\" is not a number of seconds from 0.1 to %d", text,
								SB_S3_TIMEOUT_MAX);
	}
	c->max_attempts = 5;
	c->timeout = timeout;
	c->connect_timeout = timeout < 10 ? timeout : 10;
	c->low_speed_seconds = timeout < 30 ? timeout : 30;
	return true;
}

/* The allowed places of S (or the environment), checked, into C. */
static bool
settle_allowed(const SbS3Settings *s, SbS3Config *c, SbError *err)
{
	const char *text = first_set(s->allowed_buckets, "STRIPEBACKUP_S3_ALLOWED_BUCKETS", NULL);

	if (text == NULL)
		return true;
	return sb_s3_check_allowed_buckets(text, err) &&
		copy_setting(c->allowed, sizeof(c->allowed), text, "the allowed buckets", err);
}

bool
sb_s3_config_for_bucket(const SbS3Settings *settings, const char *bucket, SbS3Config *config,
						SbError *err)
{
	const SbS3Settings none = {0};
	const SbS3Settings *s = settings != NULL ? settings : &none;

	memset(config, 0, sizeof(*config));
	if (!settle_limits(s, config, err) || !settle_allowed(s, config, err) ||
		!settle_endpoint(s, config, err) ||
		(bucket != NULL && !settle_bucket_endpoint(s, bucket, config, err)) ||
		!settle_credentials(s, config, err))
	{
		sb_s3_config_clear(config);
		return false;
	}
	return true;
}

bool
sb_s3_config_load(const SbS3Settings *settings, SbS3Config *config, SbError *err)
{
	return sb_s3_config_for_bucket(settings, NULL, config, err);
}

void
sb_s3_config_clear(SbS3Config *config)
{
	OPENSSL_cleanse(config->access_key, sizeof(config->access_key));
	OPENSSL_cleanse(config->secret_key, sizeof(config->secret_key));
	OPENSSL_cleanse(config->session_token, sizeof(config->session_token));
}

bool
sb_s3_location_allowed(const SbS3Settings *settings, const char *url, SbError *err)
{
	SbS3Location loc;
	char		key[SB_S3_PREFIX_MAX + 2];

	if (!sb_s3_parse_location(url, &loc, err))
		return false;
	/* Whatever goes under the destination: a listing of "prefix/" (of the whole bucket without one). */
	snprintf(key, sizeof(key), "%s%s", loc.prefix, loc.prefix[0] != '\0' ? "/" : "");
	return allowed_by(first_set(settings != NULL ? settings->allowed_buckets : NULL,
								"STRIPEBACKUP_S3_ALLOWED_BUCKETS", NULL),
					  loc.bucket, key, true, err);
}

bool
sb_s3_any_bucket_allowed(const SbS3Settings *settings)
{
	return first_set(settings != NULL ? settings->allowed_buckets : NULL, "STRIPEBACKUP_S3_ALLOWED_BUCKETS",
					 NULL) == NULL;
}

/*
 * The stop check, read by every thread's waiting requests: set once at
 * start-up (the extension's _PG_init, the command's main), so an atomic
 * load is all a reader needs.
 */
static SbS3StopFn stop_check = NULL;

void
sb_s3_set_stop_check(SbS3StopFn fn)
{
	__atomic_store_n(&stop_check, fn, __ATOMIC_RELEASE);
}

bool
sb_s3_stop_requested(void)
{
	SbS3StopFn	fn = __atomic_load_n(&stop_check, __ATOMIC_ACQUIRE);

	return fn != NULL && fn();
}

/* Add NAME=VALUE to ENV when VALUE is set. */
static bool
add_variable(SbS3Environment *env, const char *name, const char *value, SbError *err)
{
	if (value == NULL || value[0] == '\0')
		return true;
	if ((env->values[env->count] = strdup(value)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory for the S3 settings");
	env->names[env->count++] = name;
	return true;
}

bool
sb_s3_environment(const SbS3Settings *settings, SbS3Environment *env, SbError *err)
{
	const SbS3Settings none = {0};
	const SbS3Settings *s = settings != NULL ? settings : &none;
	bool		ok;

	memset(env, 0, sizeof(*env));
	ok = add_variable(env, "AWS_ENDPOINT_URL", first_set(s->endpoint, "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"),
					  err) &&
		add_variable(env, "AWS_REGION", first_set(s->region, "AWS_REGION", "AWS_DEFAULT_REGION"), err) &&
		add_variable(env, "STRIPEBACKUP_S3_URL_STYLE", first_set(s->url_style, "STRIPEBACKUP_S3_URL_STYLE", NULL),
					 err) &&
		add_variable(env, "AWS_SHARED_CREDENTIALS_FILE",
					 first_set(s->credentials_file, "AWS_SHARED_CREDENTIALS_FILE", NULL), err) &&
		add_variable(env, "AWS_PROFILE", first_set(s->profile, "AWS_PROFILE", NULL), err) &&
		add_variable(env, "AWS_CA_BUNDLE", first_set(s->ca_file, "AWS_CA_BUNDLE", NULL), err) &&
		add_variable(env, "STRIPEBACKUP_S3_BUCKET_ENDPOINTS",
					 first_set(s->bucket_endpoints, "STRIPEBACKUP_S3_BUCKET_ENDPOINTS", NULL), err) &&
		add_variable(env, "STRIPEBACKUP_S3_ALLOWED_BUCKETS",
					 first_set(s->allowed_buckets, "STRIPEBACKUP_S3_ALLOWED_BUCKETS", NULL), err) &&
		add_variable(env, "STRIPEBACKUP_S3_TIMEOUT", first_set(s->timeout, "STRIPEBACKUP_S3_TIMEOUT", NULL), err);
	if (!ok)
		sb_s3_environment_free(env);
	return ok;
}

void
sb_s3_environment_free(SbS3Environment *env)
{
	for (uint32_t i = 0; i < env->count; i++)
		free(env->values[i]);
	memset(env, 0, sizeof(*env));
}
