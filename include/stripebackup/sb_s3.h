/*
 * sb_s3.h
 *		Object-storage destinations: a destination written s3://bucket/prefix
 *		is reached by the S3 protocol (AWS S3, MinIO, Ceph RGW, the clouds'
 *		S3 endpoints).
 *
 * Where to connect and as whom comes from the caller's settings first (the
 * server's stripebackup.s3_* settings, the command's --s3-* options), then
 * from the environment as AWS's tools read it (AWS_ENDPOINT_URL, AWS_REGION
 * or AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
 * AWS_SESSION_TOKEN, AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE, AWS_CA_BUNDLE), then from a
 * credentials file of AWS's form (~/.aws/credentials).  Secrets are never
 * settings of their own and never appear in a message.
 */
#ifndef SB_S3_H
#define SB_S3_H

#include <stdbool.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

#define SB_S3_SCHEME "s3://"
#define SB_S3_BUCKET_MAX 63
#define SB_S3_PREFIX_MAX 900

typedef enum SbS3UrlStyle
{
	SB_S3_URL_PATH,				/* http://endpoint/bucket/key */
	SB_S3_URL_HOST				/* http://bucket.endpoint/key */
} SbS3UrlStyle;

/* What the caller was told; NULL or "" = not set. */
typedef struct SbS3Settings
{
	const char *endpoint;		/* http(s)://host[:port] */
	const char *region;
	const char *url_style;		/* "path" or "host" */
	const char *credentials_file;
	const char *profile;
	const char *ca_file;		/* certificates that sign an https endpoint's (PEM) */
	const char *bucket_endpoints;	/* "bucket=endpoint[@region], ...": buckets elsewhere */
	const char *allowed_buckets;	/* "bucket[/prefix], ...": the only places reached; "" any */
	const char *timeout;		/* seconds one request may take, its retries included */
} SbS3Settings;

#define SB_S3_ALLOWED_MAX 4096	/* the text of an allowed-buckets list */
#define SB_S3_TIMEOUT_DEFAULT 120	/* seconds (docs/DECISIONS.md: the deadline) */
#define SB_S3_TIMEOUT_MAX 3600

/* Everything a connection needs, settled. */
typedef struct SbS3Config
{
	char		endpoint[256];	/* scheme://host[:port], no trailing slash */
	char		region[64];
	SbS3UrlStyle url_style;
	char		access_key[128];
	char		secret_key[128];
	char		session_token[4096];	/* temporary credentials, or "" */
	char		ca_file[1024];	/* "" : the system's certificates */
	char		allowed[SB_S3_ALLOWED_MAX];	/* "bucket[/prefix],...": the only places reached; "" any */
	int			max_attempts;	/* tries of one request, retries included */
	double		timeout;		/* seconds one request may take, all its tries included */
	double		connect_timeout;	/* seconds, of one try */
	double		low_speed_seconds;	/* a try slower than 1 kB/s this long is given up */
} SbS3Config;

/* A destination s3://bucket/prefix, taken apart. */
typedef struct SbS3Location
{
	char		bucket[SB_S3_BUCKET_MAX + 1];
	char		prefix[SB_S3_PREFIX_MAX + 1];	/* no leading or trailing "/"; may be "" */
} SbS3Location;

/* Whether DESTINATION is an object-storage one (begins with s3://). */
extern bool sb_s3_is_location(const char *destination);

/*
 * Take URL (s3://bucket/prefix) apart into LOC: SB_EINVAL naming it when
 * the bucket is not a valid bucket name, or the prefix holds "." or ".."
 * components, empty components, control characters or is too long.
 */
extern bool sb_s3_parse_location(const char *url, SbS3Location *loc, SbError *err);

/*
 * Settle CONFIG from SETTINGS, the environment and the credentials file.
 * SB_EINVAL names a bad setting; SB_EKEY says that no credentials were found
 * or that the credentials file cannot be used (not its content).
 */
extern bool sb_s3_config_load(const SbS3Settings *settings, SbS3Config *config, SbError *err);

/*
 * The same for BUCKET: its own endpoint (and region) when the bucket
 * endpoints name it (a bucket of another service, or another AWS region),
 * else the common one.  Credentials are the same for all.
 */
extern bool sb_s3_config_for_bucket(const SbS3Settings *settings, const char *bucket,
									SbS3Config *config, SbError *err);

/*
 * Is TEXT a list of bucket endpoints: "bucket=endpoint[@region]" separated
 * by commas (each bucket once, each endpoint http(s)://host[:port])?  ERR
 * says which entry is not.
 */
extern bool sb_s3_check_bucket_endpoints(const char *text, SbError *err);

/* Whether ENDPOINT (NULL or "" = none) is an endpoint: http(s)://host[:port]; else ERR says why. */
extern bool sb_s3_check_endpoint(const char *endpoint, SbError *err);

/*
 * Is TEXT a list of allowed places: "bucket" or "bucket/prefix" separated
 * by commas (at most 64, each a valid bucket and prefix)?  ERR says which
 * entry is not.
 */
extern bool sb_s3_check_allowed_buckets(const char *text, SbError *err);

/*
 * May a request of CONFIG reach KEY in BUCKET (LISTING: every key beginning
 * with KEY)?  Yes when the allowed list is empty, or an entry is the bucket,
 * or its prefix holds KEY; else ERR (SB_EINVAL) names the place and the
 * setting.
 */
extern bool sb_s3_config_allows(const SbS3Config *config, const char *bucket, const char *key,
								bool listing, SbError *err);

/*
 * The same for a destination URL (s3://bucket/prefix) with SETTINGS (NULL:
 * none), then the environment: what the extension checks before it starts.
 */
extern bool sb_s3_location_allowed(const SbS3Settings *settings, const char *url, SbError *err);

/* Whether SETTINGS (NULL: none), then the environment, allow every bucket (no allowed list). */
extern bool sb_s3_any_bucket_allowed(const SbS3Settings *settings);

/* Wipe the secrets of CONFIG. */
extern void sb_s3_config_clear(SbS3Config *config);

/*
 * A stop check: true when the process's current operation must stop (a
 * cancel, a signal).  It is called from any thread, every 100 ms at most
 * while an S3 request waits, so it may only read flags (sig_atomic_t): no
 * lock, no allocation, no call into the server.  NULL: nothing stops.
 */
typedef bool (*SbS3StopFn) (void);

/* The process's stop check (set once, before any thread starts). */
extern void sb_s3_set_stop_check(SbS3StopFn fn);

/* What the process's stop check says now (false without one). */
extern bool sb_s3_stop_requested(void);

/* The environment that gives another process the settings given: no secret is among them. */
#define SB_S3_ENV_MAX 9
typedef struct SbS3Environment
{
	uint32_t	count;
	const char *names[SB_S3_ENV_MAX];
	char	   *values[SB_S3_ENV_MAX];	/* malloc'd */
} SbS3Environment;

/*
 * The variables (AWS_ENDPOINT_URL, AWS_REGION, STRIPEBACKUP_S3_URL_STYLE,
 * AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE, AWS_CA_BUNDLE,
 * STRIPEBACKUP_S3_BUCKET_ENDPOINTS, STRIPEBACKUP_S3_ALLOWED_BUCKETS,
 * STRIPEBACKUP_S3_TIMEOUT) with which the
 * command, run by PostgreSQL as restore_command, reaches the buckets the
 * way this process does: each from SETTINGS (NULL: none), else from this
 * process's environment.  Keys are never among them: they come from the
 * credentials file, or the environment of the server that runs the command.
 */
extern bool sb_s3_environment(const SbS3Settings *settings, SbS3Environment *env, SbError *err);
extern void sb_s3_environment_free(SbS3Environment *env);

#endif							/* SB_S3_H */
