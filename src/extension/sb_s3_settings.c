/*
 * sb_s3_settings.c
 *		stripebackup.s3_*: where object-storage destinations (s3://bucket/prefix)
 *		are reached, with which credentials file, trusting which certificates,
 *		which buckets they may be, and how long one request may take.
 *
 * They are server settings (postgresql.conf or ALTER SYSTEM, then a
 * reload), not session ones: the server's requests go where its
 * configuration says, whoever calls, and a job's worker sees what the
 * caller's session sees.  No setting holds a secret: the keys are in the
 * credentials file (AWS's form) or the server's environment, so they are in
 * no setting, log line or history row.  Each process hands the values to
 * the engine as they are set (assign hooks), which reads them when it
 * opens a connection.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "stripebackup/sb_s3.h"
#include "sb_s3_settings.h"

static char *s3_endpoint = NULL;
static char *s3_region = NULL;
static int	s3_url_style = 0;
static char *s3_credentials_file = NULL;
static char *s3_ca_file = NULL;
static char *s3_bucket_endpoints = NULL;
static char *s3_allowed_buckets = NULL;
static int	s3_timeout = SB_S3_TIMEOUT_DEFAULT;

/* The values as they are being set: a hook sees its new value before the variable holds it. */
static const char *current[6];
static const char *current_style = NULL;
static char current_timeout[16];

static const struct config_enum_entry url_styles[] = {
	{"auto", 0, false},			/* host for AWS's own endpoint, path for others */
	{"path", 1, false},
	{"host", 2, false},
	{NULL, 0, false}
};

/* The settings as they are now, for the engine's options: valid until the next reload. */
static SbS3Settings settings;

static void
publish(void)
{
	settings.endpoint = current[0];
	settings.region = current[1];
	settings.credentials_file = current[2];
	settings.ca_file = current[3];
	settings.bucket_endpoints = current[4];
	settings.allowed_buckets = current[5];
	settings.timeout = current_timeout[0] != '\0' ? current_timeout : NULL;
	settings.url_style = current_style;
}

const SbS3Settings *
sbx_s3_settings(void)
{
	return &settings;
}

static bool
check_endpoint(char **newval, void **extra, GucSource source)
{
	SbError		err;

	if (sb_s3_check_endpoint(*newval, &err))
		return true;
	GUC_check_errdetail("%s", err.message);
	return false;
}

static bool
check_bucket_endpoints(char **newval, void **extra, GucSource source)
{
	SbError		err;

	if (sb_s3_check_bucket_endpoints(*newval, &err))
		return true;
	GUC_check_errdetail("%s", err.message);
	return false;
}

static bool
check_allowed_buckets(char **newval, void **extra, GucSource source)
{
	SbError		err;

	if (sb_s3_check_allowed_buckets(*newval, &err))
		return true;
	GUC_check_errdetail("%s", err.message);
	return false;
}

static bool
check_absolute(char **newval, void **extra, GucSource source)
{
	if (*newval == NULL || (*newval)[0] == '\0' || (*newval)[0] == '/')
		return true;
	GUC_check_errdetail("The file must be given by an absolute path.");
	return false;
}

static void
assign_endpoint(const char *newval, void *extra)
{
	current[0] = newval;
	publish();
}

static void
assign_region(const char *newval, void *extra)
{
	current[1] = newval;
	publish();
}

static void
assign_credentials_file(const char *newval, void *extra)
{
	current[2] = newval;
	publish();
}

static void
assign_ca_file(const char *newval, void *extra)
{
	current[3] = newval;
	publish();
}

static void
assign_bucket_endpoints(const char *newval, void *extra)
{
	current[4] = newval;
	publish();
}

static void
assign_allowed_buckets(const char *newval, void *extra)
{
	current[5] = newval;
	publish();
}

static void
assign_timeout(int newval, void *extra)
{
	snprintf(current_timeout, sizeof(current_timeout), "%d", newval);
	publish();
}

static void
assign_url_style(int newval, void *extra)
{
	current_style = newval == 1 ? "path" : newval == 2 ? "host" : NULL;
	publish();
}

/*
 * Is this the first time this process writes to BUCKET while every bucket
 * is allowed?  Remembered for 16 buckets: past them, enough was said.
 */
static bool
first_write_to(const char *bucket)
{
	static char seen[16][SB_S3_BUCKET_MAX + 1];
	static int	nseen = 0;
	int			i;

	for (i = 0; i < nseen; i++)
		if (strcmp(seen[i], bucket) == 0)
			return false;
	if (nseen == lengthof(seen))
		return false;
	strlcpy(seen[nseen++], bucket, sizeof(seen[0]));
	return true;
}

void
sbx_s3_settings_check_location(const char *location, bool writes)
{
	SbS3Location loc;
	SbError		err;

	if (!sb_s3_parse_location(location, &loc, &err) || !sb_s3_location_allowed(&settings, location, &err))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE), errmsg("%s", err.message),
				 errhint("The buckets s3:// destinations may be are set by stripebackup.s3_allowed_buckets.")));
	if (writes && sb_s3_any_bucket_allowed(&settings) && first_write_to(loc.bucket))
		ereport(NOTICE,
				(errmsg("stripebackup.s3_allowed_buckets is empty, so any bucket the endpoints serve may be "
						"written: bucket \"%s\" is", loc.bucket),
				 errhint("List the buckets (or bucket/prefix) backups and the WAL archive may use in "
						 "stripebackup.s3_allowed_buckets.")));
}

void
sbx_s3_settings_define(void)
{
	/* where the server's requests go and its credentials are: superusers and pg_read_all_settings only */
	DefineCustomStringVariable("stripebackup.s3_endpoint",
							   "Where s3:// destinations are reached: http(s)://host[:port].",
							   "Empty: AWS's endpoint of stripebackup.s3_region (or AWS_ENDPOINT_URL in the server's environment).",
							   &s3_endpoint, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, check_endpoint, assign_endpoint, NULL);
	DefineCustomStringVariable("stripebackup.s3_region",
							   "The region s3:// requests are signed for.",
							   "Empty: AWS_REGION in the server's environment, else us-east-1.",
							   &s3_region, "", PGC_SIGHUP, 0, NULL, assign_region, NULL);
	DefineCustomEnumVariable("stripebackup.s3_url_style",
							 "Whether the bucket goes in the host name (host) or the path (path) of s3:// requests.",
							 "auto: host for AWS's endpoint, path for any other (MinIO, Ceph RGW).",
							 &s3_url_style, 0, url_styles, PGC_SIGHUP, 0, NULL, assign_url_style, NULL);
	DefineCustomStringVariable("stripebackup.s3_credentials_file",
							   "A credentials file of AWS's form ([default] aws_access_key_id, aws_secret_access_key) for s3:// destinations.",
							   "Only its owner (the server's user) and group may read it. Empty: the server's environment, then ~/.aws/credentials.",
							   &s3_credentials_file, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, check_absolute,
							   assign_credentials_file, NULL);
	DefineCustomStringVariable("stripebackup.s3_ca_file",
							   "Certificates (PEM) that sign an https s3_endpoint's, when not the system's (a private CA).",
							   "Empty: the system's certificates (or AWS_CA_BUNDLE in the server's environment).",
							   &s3_ca_file, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, check_absolute, assign_ca_file, NULL);
	DefineCustomStringVariable("stripebackup.s3_bucket_endpoints",
							   "Buckets reached elsewhere than s3_endpoint: bucket=endpoint[@region], comma-separated.",
							   "For buckets of another service, or of another AWS region, in the same backup. Empty: every bucket at s3_endpoint.",
							   &s3_bucket_endpoints, "", PGC_SIGHUP, GUC_SUPERUSER_ONLY, check_bucket_endpoints,
							   assign_bucket_endpoints, NULL);
	DefineCustomStringVariable("stripebackup.s3_allowed_buckets",
							   "The only buckets (bucket, or bucket/prefix; comma-separated) that s3:// destinations, "
							   "backups and the WAL archive may use.",
							   "Empty: any bucket the endpoints serve, signed with the server's keys.",
							   &s3_allowed_buckets, "", PGC_SIGHUP, 0, check_allowed_buckets,
							   assign_allowed_buckets, NULL);
	DefineCustomIntVariable("stripebackup.s3_timeout",
							"How long one S3 request may take, all its retries included.",
							"A server that does not answer fails the request after this long.",
							&s3_timeout, SB_S3_TIMEOUT_DEFAULT, 1, SB_S3_TIMEOUT_MAX, PGC_SIGHUP, GUC_UNIT_S,
							NULL, assign_timeout, NULL);
}
