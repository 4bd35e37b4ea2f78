/*
 * test_s3.c
 *		The S3 client's pure parts: Signature Version 4 against the examples
 *		AWS publishes for S3 (GET with a range, PUT with a payload, a
 *		sub-resource, a listing), locations, settings and credentials (the
 *		file's owner and mode), the allowed buckets, the deadline, the stop
 *		check, and the XML replies it reads, hostile ones included.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_euid.h"
#include "harness.h"
#include "store/s3/s3_client.h"
#include "store/s3/s3_sign.h"
#include "store/s3/s3_xml.h"
#include "stripebackup/sb_s3.h"
#include "tests.h"

#define EXAMPLE_KEY "AKIAIOSFODNN7EXAMPLE"
#define EXAMPLE_SECRET "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
#define EXAMPLE_DATE "20130524T000000Z"
#define EXAMPLE_HOST "examplebucket.s3.amazonaws.com"

static SbS3Signing
example(const char *method, const char *path, const char *query, const char *payload)
{
	SbS3Signing s = {0};

	s.method = method;
	s.path = path;
	s.query = query;
	s.payload_sha256 = payload;
	s.amz_date = EXAMPLE_DATE;
	s.region = "us-east-1";
	s.service = "s3";
	s.access_key = EXAMPLE_KEY;
	s.secret_key = EXAMPLE_SECRET;
	s.headers[s.nheaders++] = (SbS3Header) {"Host", EXAMPLE_HOST};
	return s;
}

/* S's string to sign ends with HASH and its Authorization with SIGNATURE. */
static void
check_signature(const SbS3Signing *s, const char *name, const char *hash, const char *signed_names,
				const char *signature)
{
	char		to_sign[512];
	char		auth[SB_S3_AUTH_MAX];
	char		want[SB_S3_AUTH_MAX];
	SbError		err;

	ok(sb_s3_string_to_sign(s, to_sign, sizeof(to_sign), &err), "%s: string to sign", name);
	like(to_sign, hash, "%s: the canonical request hashes as AWS's example", name);
	ok(sb_s3_authorization(s, auth, sizeof(auth), &err), "%s: signed", name);
	snprintf(want, sizeof(want),
			 "AWS4-HMAC-SHA256 Credential=" EXAMPLE_KEY "/20130524/us-east-1/s3/aws4_request,"
			 "SignedHeaders=%s,Signature=%s", signed_names, signature);
	is_str(auth, want, "%s: the Authorization header is AWS's", name);
}

void
test_s3_sign_vectors(void)
{
	SbS3Signing s;
	char		canon[1024];
	char		encoded[64];
	char		sha[SB_S3_HEX_SHA256_LEN + 1];
	SbError		err;

	th_begin("s3: Signature Version 4 gives AWS's published S3 examples");

	s = example("GET", "/test.txt", "", SB_S3_EMPTY_SHA256);
	s.headers[s.nheaders++] = (SbS3Header) {"Range", "bytes=0-9"};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-content-sha256", SB_S3_EMPTY_SHA256};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-date", EXAMPLE_DATE};
	ok(sb_s3_canonical_request(&s, canon, sizeof(canon), &err), "GET object: canonical request");
	is_str(canon, "GET\n/test.txt\n\nhost:" EXAMPLE_HOST "\nrange:bytes=0-9\n"
		   "x-amz-content-sha256:" SB_S3_EMPTY_SHA256 "\nx-amz-date:" EXAMPLE_DATE "\n\n"
		   "host;range;x-amz-content-sha256;x-amz-date\n" SB_S3_EMPTY_SHA256,
		   "GET object: the canonical request is AWS's, byte for byte");
	check_signature(&s, "GET object", "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972",
					"host;range;x-amz-content-sha256;x-amz-date",
					"f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");

	ok(sb_s3_uri_encode("/test$file.text", true, encoded, sizeof(encoded)) &&
	   strcmp(encoded, "/test%24file.text") == 0, "a key is encoded as SigV4 wants (%s)", encoded);
	ok(sb_s3_sha256_hex("Welcome to Amazon S3.", 21, sha, &err) &&
	   strcmp(sha, "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072") == 0,
	   "the payload's SHA-256 is the example's");
	s = example("PUT", encoded, "", sha);
	s.headers[s.nheaders++] = (SbS3Header) {"Date", "Fri, 24 May 2013 00:00:00 GMT"};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-date", EXAMPLE_DATE};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-storage-class", " REDUCED_REDUNDANCY "};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-content-sha256", sha};
	check_signature(&s, "PUT object", "9e0e90d9c76de8fa5b200d8c849cd5b8dc7a3be3951ddb7f6a76b4158342019d",
					"date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
					"98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd");

	s = example("GET", "/", "lifecycle=", SB_S3_EMPTY_SHA256);
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-date", EXAMPLE_DATE};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-content-sha256", SB_S3_EMPTY_SHA256};
	check_signature(&s, "GET lifecycle", "9766c798316ff2757b517bc739a67f6213b4ab36dd5da2f94eaebf79c77395ca",
					"host;x-amz-content-sha256;x-amz-date",
					"fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543");

	s = example("GET", "/", "max-keys=2&prefix=J", SB_S3_EMPTY_SHA256);
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-date", EXAMPLE_DATE};
	s.headers[s.nheaders++] = (SbS3Header) {"x-amz-content-sha256", SB_S3_EMPTY_SHA256};
	check_signature(&s, "list objects", "df57d21db20da04d7fa30298dd4488ba3a2b47ca3a489c74750e0f1e7df1b9b7",
					"host;x-amz-content-sha256;x-amz-date",
					"34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7");

	s.secret_key = "another secret";
	ok(sb_s3_authorization(&s, canon, sizeof(canon), &err) &&
	   strstr(canon, "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7") == NULL,
	   "another secret signs differently");
	ok(!sb_s3_uri_encode("abc", false, encoded, 3), "an encoding that does not fit is refused");
	sb_s3_amz_date(1369353600, encoded);
	is_str(encoded, EXAMPLE_DATE, "a UNIX time becomes x-amz-date");
}

void
test_s3_locations(void)
{
	static const char *const bad[] = {
		"s3://", "s3://ab/x", "s3://Bucket/x", "s3://bucket_x/x", "s3://-bucket/x", "s3://bucket-/x",
		"s3://a..b/x", "s3://bucket/a//b", "s3://bucket/./b", "s3://bucket/a/../b", "s3://bucket/..",
		"s3://bucket/a\nb", "s3://bucket/a\\b", "/local/path", "S3://bucket/x",
	};
	SbS3Location loc;
	SbError		err;

	th_begin("s3: locations are taken apart, and bad ones refused with their value");
	ok(sb_s3_is_location("s3://b/x") && !sb_s3_is_location("/mnt/s3:") && !sb_s3_is_location(NULL),
	   "s3:// marks an object-storage destination");
	ok(sb_s3_parse_location("s3://backups-eu/pg/main/", &loc, &err), "s3://backups-eu/pg/main/ parses");
	is_str(loc.bucket, "backups-eu", "its bucket");
	is_str(loc.prefix, "pg/main", "its prefix, the trailing slash dropped");
	ok(sb_s3_parse_location("s3://my.bucket.1", &loc, &err) && strcmp(loc.prefix, "") == 0,
	   "a bucket without a prefix parses");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		bool		parsed = sb_s3_parse_location(bad[i], &loc, &err);

		/* TAP lines cannot hold the newline of one of them. */
		ok(!parsed && err.code == SB_EINVAL, "refused: bad location %zu%s%s", i,
		   strchr(bad[i], '\n') == NULL ? " " : "", strchr(bad[i], '\n') == NULL ? bad[i] : "");
	}
	ok(!sb_s3_parse_location("s3://Bad/x", &loc, &err), "an upper-case bucket is refused");
	like(err.message, "\"s3://Bad/x\"", "the error names the value");
}

/* Set (VALUE non-NULL) or unset an environment variable. */
static void
set_env(const char *name, const char *value)
{
	if (value != NULL)
		setenv(name, value, 1);
	else
		unsetenv(name);
}

static const char *const aws_env[] = {
	"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL", "AWS_REGION", "AWS_DEFAULT_REGION",
	"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN",
	"AWS_SHARED_CREDENTIALS_FILE", "AWS_PROFILE", "STRIPEBACKUP_S3_URL_STYLE", "HOME", "AWS_CA_BUNDLE",
	"STRIPEBACKUP_S3_BUCKET_ENDPOINTS", "STRIPEBACKUP_S3_ALLOWED_BUCKETS", "STRIPEBACKUP_S3_TIMEOUT",
};

/* The deadline: from the settings or STRIPEBACKUP_S3_TIMEOUT, each try's limits within it. */
static void
check_limits(SbS3Settings *s)
{
	SbS3Config	c;
	SbError		err;

	ok(sb_s3_config_load(s, &c, &err) && c.timeout == SB_S3_TIMEOUT_DEFAULT && c.connect_timeout == 10 &&
	   c.low_speed_seconds == 30 && c.max_attempts == 5, "by default: %d s a request, 10 s to connect, 30 s of stall",
	   SB_S3_TIMEOUT_DEFAULT);
	s->timeout = "4";
	ok(sb_s3_config_load(s, &c, &err) && c.timeout == 4 && c.connect_timeout == 4 && c.low_speed_seconds == 4,
	   "a shorter deadline cuts each try's limits to it");
	s->timeout = NULL;
	set_env("STRIPEBACKUP_S3_TIMEOUT", "0.5");
	ok(sb_s3_config_load(s, &c, &err) && c.timeout == 0.5, "STRIPEBACKUP_S3_TIMEOUT (the command)");
	set_env("STRIPEBACKUP_S3_TIMEOUT", "soon");
	ok(!sb_s3_config_load(s, &c, &err) && err.code == SB_EINVAL, "a timeout that is not a number is refused");
	like(err.message, "S3 timeout \"soon\" is not a number of seconds", "naming it (%s)", err.message);
	set_env("STRIPEBACKUP_S3_TIMEOUT", "7200");
	ok(!sb_s3_config_load(s, &c, &err), "nor one over an hour");
	unsetenv("STRIPEBACKUP_S3_TIMEOUT");
	sb_s3_config_clear(&c);
}

/* The allowed buckets: their form, what each holds, where they come from. */
static void
check_allowed(SbS3Settings *s)
{
	static const char *const bad[][2] = {
		{"Bk1", "\"Bk1\" is not bucket or bucket/prefix"},
		{"bk1, ,bk2", "\"\" is not bucket or bucket/prefix"},
		{"bk1/a/../b", "has an empty, \".\" or \"..\" component"},
		{"bk1//b", "has an empty"},
		{"b", "\"b\" is not bucket"},
	};
	SbS3Config	c;
	SbError		err;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		ok(!sb_s3_check_allowed_buckets(bad[i][0], &err) && err.code == SB_EINVAL,
		   "allowed buckets \"%s\" are refused", bad[i][0]);
		like(err.message, bad[i][1], "saying why (%s)", err.message);
	}
	ok(sb_s3_check_allowed_buckets(" bk1 , bk2/pg/main/ ", &err) && sb_s3_check_allowed_buckets("", &err),
	   "buckets, prefixes (a trailing / dropped), blanks around them, or none");
	s->allowed_buckets = "bk1/pg/main, bk2";
	ok(sb_s3_config_load(s, &c, &err) && strcmp(c.allowed, "bk1/pg/main, bk2") == 0, "in the config");
	ok(sb_s3_config_allows(&c, "bk1", "pg/main", false, &err) &&
	   sb_s3_config_allows(&c, "bk1", "pg/main/x/stripe-1.sbs", false, &err) &&
	   sb_s3_config_allows(&c, "bk1", "pg/main/", true, &err) && sb_s3_config_allows(&c, "bk2", "", true, &err),
	   "a prefix holds itself and what is under it; a bucket, all of it");
	ok(!sb_s3_config_allows(&c, "bk1", "pg/mainx", false, &err) && !sb_s3_config_allows(&c, "bk1", "pg/main", true, &err) &&
	   !sb_s3_config_allows(&c, "bk1", "", true, &err) && !sb_s3_config_allows(&c, "bk3", "pg/main/x", false, &err),
	   "not a name that only begins like it, a listing that reaches past it, another bucket");
	ok(sb_s3_location_allowed(s, "s3://bk1/pg/main/20261130T031900Z-1", &err) &&
	   !sb_s3_location_allowed(s, "s3://bk1/pg", &err) && !sb_s3_any_bucket_allowed(s),
	   "a destination is checked with the settings given");
	like(err.message, "s3://bk1/pg/ is outside the prefixes of bucket \"bk1\"", "%s", err.message);
	s->allowed_buckets = NULL;
	ok(sb_s3_any_bucket_allowed(s) && sb_s3_location_allowed(s, "s3://bk9/x", &err), "none: every bucket");
	set_env("STRIPEBACKUP_S3_ALLOWED_BUCKETS", "bk1/pg");
	ok(!sb_s3_location_allowed(NULL, "s3://bk9/x", &err) && !sb_s3_any_bucket_allowed(NULL),
	   "STRIPEBACKUP_S3_ALLOWED_BUCKETS (the command)");
	set_env("STRIPEBACKUP_S3_ALLOWED_BUCKETS", "not a bucket");
	ok(!sb_s3_config_load(s, &c, &err) && err.code == SB_EINVAL, "a bad one refused where the config is made");
	unsetenv("STRIPEBACKUP_S3_ALLOWED_BUCKETS");
	ok(sb_s3_any_bucket_allowed(NULL), "no settings and no environment: every bucket");
	sb_s3_config_clear(&c);
}

void
test_s3_config(void)
{
	char		saved[sizeof(aws_env) / sizeof(aws_env[0])][4096];
	bool		had[sizeof(aws_env) / sizeof(aws_env[0])];
	char		dir[PATH_MAX];
	char		file[PATH_MAX];
	SbS3Settings s = {0};
	SbS3Config	c;
	SbError		err;
	const char *text = "# comment\n[default]\naws_access_key_id = DEFKEY\naws_secret_access_key=DEFSECRET\n"
		"[backup]\n aws_access_key_id = BKEY \naws_secret_access_key = BSECRET\naws_session_token = TOKEN\n";

	th_begin("s3: endpoint, region, style and credentials from settings, environment and file");
	for (size_t i = 0; i < sizeof(aws_env) / sizeof(aws_env[0]); i++)
	{
		const char *v = getenv(aws_env[i]);

		had[i] = v != NULL;
		snprintf(saved[i], sizeof(saved[i]), "%s", v != NULL ? v : "");
		unsetenv(aws_env[i]);
	}
	th_tempdir(dir, "s3config");
	set_env("HOME", dir);
	ok(!sb_s3_config_load(&s, &c, &err) && err.code == SB_EKEY, "no credentials anywhere: refused");
	like(err.message, "no S3 credentials", "and said so (%s)", err.message);

	set_env("AWS_ACCESS_KEY_ID", "ENVKEY");
	set_env("AWS_SECRET_ACCESS_KEY", "ENVSECRET");
	ok(sb_s3_config_load(&s, &c, &err), "keys from the environment");
	is_str(c.access_key, "ENVKEY", "the environment's key");
	is_str(c.endpoint, "https://s3.us-east-1.amazonaws.com", "AWS's endpoint by default");
	ok(c.url_style == SB_S3_URL_HOST, "AWS's endpoint: the bucket in the host name");

	set_env("AWS_REGION", "eu-west-3");
	set_env("AWS_ENDPOINT_URL", "http://127.0.0.1:9000/");
	ok(sb_s3_config_load(&s, &c, &err), "endpoint and region from the environment");
	is_str(c.endpoint, "http://127.0.0.1:9000", "the endpoint, its trailing slash dropped");
	is_str(c.ca_file, "", "the system's certificates");
	set_env("AWS_CA_BUNDLE", "/etc/private-ca.pem");
	ok(sb_s3_config_load(&s, &c, &err) && strcmp(c.ca_file, "/etc/private-ca.pem") == 0,
	   "a CA bundle from the environment");
	s.ca_file = "/srv/ca.pem";
	ok(sb_s3_config_load(&s, &c, &err) && strcmp(c.ca_file, "/srv/ca.pem") == 0, "or from the settings");
	s.ca_file = NULL;
	is_str(c.region, "eu-west-3", "the region");
	ok(c.url_style == SB_S3_URL_PATH, "another endpoint: the bucket in the path");
	s.endpoint = "http://minio:9000";
	s.region = "local";
	s.url_style = "host";
	ok(sb_s3_config_load(&s, &c, &err) && strcmp(c.endpoint, "http://minio:9000") == 0 &&
	   strcmp(c.region, "local") == 0 && c.url_style == SB_S3_URL_HOST, "settings win over the environment");
	s.url_style = "sideways";
	ok(!sb_s3_config_load(&s, &c, &err) && err.code == SB_EINVAL, "a bad URL style is refused");
	like(err.message, "\"sideways\"", "naming it");
	s.url_style = NULL;
	s.endpoint = "ftp://host";
	ok(!sb_s3_config_load(&s, &c, &err), "a non-HTTP endpoint is refused (%s)", err.message);
	s.endpoint = "http://host/path";
	ok(!sb_s3_config_load(&s, &c, &err), "an endpoint with a path is refused (%s)", err.message);
	s.endpoint = "http://user@host";
	ok(!sb_s3_config_load(&s, &c, &err), "an endpoint with credentials in it is refused (%s)", err.message);
	s.endpoint = NULL;

	th_path(file, "%s/credentials", dir);
	th_write_file(file, text, strlen(text), 0600);
	s.credentials_file = file;
	ok(sb_s3_config_load(&s, &c, &err), "keys from a credentials file");
	is_str(c.access_key, "DEFKEY", "its default profile's key, the file set winning over the environment");
	is_str(c.secret_key, "DEFSECRET", "and secret");
	s.profile = "backup";
	ok(sb_s3_config_load(&s, &c, &err), "another profile");
	is_str(c.access_key, "BKEY", "its key, trimmed");
	is_str(c.session_token, "TOKEN", "its session token");
	s.profile = "missing";
	ok(!sb_s3_config_load(&s, &c, &err) && err.code == SB_EKEY, "a profile that is not there: refused");
	ok(strstr(err.message, "DEFSECRET") == NULL && strstr(err.message, "BSECRET") == NULL,
	   "the error shows no secret (%s)", err.message);
	s.profile = NULL;
	chmod(file, 0604);
	ok(!sb_s3_config_load(&s, &c, &err) && err.code == SB_EKEY, "a file others may read is refused");
	like(err.message, file, "naming the file");
	s.credentials_file = NULL;
	set_env("AWS_SHARED_CREDENTIALS_FILE", file);
	chmod(file, 0640);
	unsetenv("AWS_ACCESS_KEY_ID");
	ok(sb_s3_config_load(&s, &c, &err) && strcmp(c.access_key, "DEFKEY") == 0,
	   "AWS_SHARED_CREDENTIALS_FILE, a file its group may read");
	/* owned by a user that is neither the (faked) server user nor root, whoever runs the tests */
	if (geteuid() == 0)
		ok(chown(file, 4242, (gid_t) -1) == 0, "as root: the file given to uid 4242");
	th_fake_euid(geteuid() == 0 ? 4243 : getuid() + 1);
	ok(!sb_s3_config_load(&s, &c, &err) && err.code == SB_EKEY,
	   "a private file that another user than the server's owns is refused");
	th_real_euid();
	if (geteuid() == 0 && chown(file, 0, (gid_t) -1) != 0)
		diag("cannot give %s back to root", file);
	like(err.message, "is owned by uid", "saying whose it is (%s)", err.message);
	like(err.message, "(mode 0640)", "its mode");
	like(err.message, file, "and naming it");
	ok(strstr(err.message, "DEFSECRET") == NULL && strstr(err.message, "DEFKEY") == NULL, "not its content");
	sb_s3_config_clear(&c);
	ok(c.secret_key[0] == '\0' && c.access_key[0] == '\0', "clearing wipes the secrets");

	s.bucket_endpoints = " eu-copies = http://10.0.0.5:9000@eu-west-3 , us-copies=https://s3.us-east-1.amazonaws.com";
	ok(sb_s3_config_for_bucket(&s, "eu-copies", &c, &err) && strcmp(c.endpoint, "http://10.0.0.5:9000") == 0 &&
	   strcmp(c.region, "eu-west-3") == 0 && c.url_style == SB_S3_URL_PATH &&
	   strcmp(c.access_key, "DEFKEY") == 0, "a bucket endpoint: its endpoint, region, the bucket in the path, the same keys");
	ok(sb_s3_config_for_bucket(&s, "us-copies", &c, &err) &&
	   strcmp(c.endpoint, "https://s3.us-east-1.amazonaws.com") == 0 && strcmp(c.region, "local") == 0,
	   "without a region, the common one");
	ok(sb_s3_config_for_bucket(&s, "other", &c, &err) && strcmp(c.endpoint, "http://127.0.0.1:9000") == 0,
	   "a bucket not named: the common endpoint");
	s.bucket_endpoints = NULL;
	set_env("STRIPEBACKUP_S3_BUCKET_ENDPOINTS", "eu-copies=http://10.0.0.6:9000");
	ok(sb_s3_config_for_bucket(&s, "eu-copies", &c, &err) && strcmp(c.endpoint, "http://10.0.0.6:9000") == 0,
	   "bucket endpoints from the environment (the command)");
	unsetenv("STRIPEBACKUP_S3_BUCKET_ENDPOINTS");
	{
		static const char *const bad[][2] = {
			{"eu-copies", "is not bucket=endpoint"},
			{"eu-copies=ftp://x", "\"ftp://x\""},
			{"Eu_Copies=http://x", "\"Eu_Copies\" is not a bucket name"},
			{"bk1=http://x,bk1=http://y", "\"bk1\" is given two endpoints"},
			{"bk1=http://x@EU", "region \"EU\""},
			{"bk1=http://x/path", "no path"},
		};

		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		{
			ok(!sb_s3_check_bucket_endpoints(bad[i][0], &err) && err.code == SB_EINVAL,
			   "bucket endpoints \"%s\" are refused", bad[i][0]);
			like(err.message, bad[i][1], "saying why");
		}
	}
	ok(sb_s3_check_bucket_endpoints("", &err) && sb_s3_check_bucket_endpoints(NULL, &err), "none at all is fine");
	sb_s3_config_clear(&c);
	check_limits(&s);
	check_allowed(&s);

	th_rmtree(dir);
	for (size_t i = 0; i < sizeof(aws_env) / sizeof(aws_env[0]); i++)
		set_env(aws_env[i], had[i] ? saved[i] : NULL);
}

static bool
collect(void *arg, const SbS3Item *item, SbError *err)
{
	char	   *out = arg;
	size_t		len = strlen(out);

	snprintf(out + len, 512 - len, "%s:%llu:%s;", item->key, (unsigned long long) item->size,
			 item->upload_id != NULL ? item->upload_id : "-");
	return true;
}

void
test_s3_xml(void)
{
	const char *error = "<?xml version=\"1.0\"?><Error><Code>NoSuchBucket</Code><Message>The specified "
		"bucket does not exist</Message><BucketName>nb</BucketName></Error>";
	const char *list = "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Name>b</Name>"
		"<IsTruncated>true</IsTruncated><NextContinuationToken>tok/1</NextContinuationToken>"
		"<Contents><Key>p/a</Key><Size>10</Size></Contents><Contents><Key>p/b&amp;c</Key><Size>5000000000"
		"</Size></Contents></ListBucketResult>";
	const char *uploads = "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated><Upload><Key>p/s1"
		"</Key><UploadId>u1</UploadId></Upload></ListMultipartUploadsResult>";
	const char *entity = "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><InitiateMultipartUploadResult>"
		"<UploadId>&e;</UploadId></InitiateMultipartUploadResult>";
	char		code[64],
				message[128],
				out[512] = "";
	SbS3Page	page;
	SbError		err;

	th_begin("s3: the XML replies the client reads");
	ok(sb_s3_xml_error(error, strlen(error), code, sizeof(code), message, sizeof(message)),
	   "an <Error> is recognised");
	is_str(code, "NoSuchBucket", "its code");
	is_str(message, "The specified bucket does not exist", "its message");
	ok(!sb_s3_xml_error(list, strlen(list), code, sizeof(code), message, sizeof(message)),
	   "a listing is not an error");
	ok(!sb_s3_xml_error("not xml", 7, code, sizeof(code), message, sizeof(message)), "nor is garbage");
	ok(sb_s3_xml_objects(list, strlen(list), collect, out, &page, &err), "a ListObjectsV2 page");
	is_str(out, "p/a:10:-;p/b&c:5000000000:-;", "its keys and sizes, entities decoded");
	ok(page.truncated && strcmp(page.next, "tok/1") == 0, "and where it goes on");
	out[0] = '\0';
	ok(sb_s3_xml_uploads(uploads, strlen(uploads), collect, out, &page, &err), "a ListMultipartUploads page");
	is_str(out, "p/s1:0:u1;", "its uploads");
	ok(!page.truncated, "complete");
	ok(!sb_s3_xml_objects(uploads, strlen(uploads), collect, out, &page, &err) && err.code == SB_ECORRUPT,
	   "a reply of the wrong kind is refused");
	ok(sb_s3_xml_text(error, strlen(error), "BucketName", code, sizeof(code), &err) &&
	   strcmp(code, "nb") == 0, "an element's text");
	ok(!sb_s3_xml_text(entity, strlen(entity), "UploadId", code, sizeof(code), &err) ||
	   strstr(code, "root") == NULL, "an external entity is not read");
	ok(!sb_s3_xml_text(error, strlen(error), "Missing", code, sizeof(code), &err), "a missing element");
}

static bool
count_keys(void *arg, const SbS3Item *item, SbError *err)
{
	(*(int *) arg)++;
	return true;
}

/* A ListObjectsV2 page of N keys ("k/0000001" ...), TRUNCATED or not, malloc'd. */
static char *
listing_of(int n, bool truncated)
{
	size_t		cap = 256 + (size_t) n * 128;	/* an item is under 100 bytes */
	char	   *xml = malloc(cap);
	size_t		used;

	used = (size_t) snprintf(xml, cap, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<ListBucketResult "
							 "xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><IsTruncated>%s</IsTruncated>",
							 truncated ? "true" : "false");
	for (int i = 0; i < n; i++)
		used += (size_t) snprintf(xml + used, cap - used, "<Contents><Key>k/%07d</Key><Size>%d</Size>"
								  "<Owner><ID>x</ID></Owner></Contents>", i, i);
	snprintf(xml + used, cap - used, "%s</ListBucketResult>",
			 truncated ? "<NextContinuationToken>next/1</NextContinuationToken>" : "");
	return xml;
}

/* Is BODY refused as a listing page, with a message holding WHY? */
static void
refused_page(const char *body, const char *why, const char *what)
{
	SbS3Page	page;
	SbError		err;
	int			n = 0;

	ok(!sb_s3_xml_objects(body, strlen(body), count_keys, &n, &page, &err) && err.code == SB_ECORRUPT,
	   "refused: %s", what);
	like(err.message, why, "saying why (%s)", err.message);
}

void
test_s3_xml_hostile(void)
{
	const char *laughs = "<?xml version=\"1.0\"?><!DOCTYPE l [<!ENTITY a \"aaaaaaaaaa\">"
		"<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\"><!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">"
		"<!ENTITY d \"&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;\"><!ENTITY e \"&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;\">]>"
		"<ListBucketResult><Contents><Key>&e;&e;&e;&e;</Key><Size>1</Size></Contents></ListBucketResult>";
	const char *external = "<!DOCTYPE x [<!ENTITY e SYSTEM \"file:///etc/passwd\">]><Error><Code>&e;</Code></Error>";
	char		long_key[1200];
	char		long_token[1200];
	char		body[4096];
	char		code[64],
				message[16];
	char	   *xml;
	SbS3Page	page;
	SbError		err;
	int			n = 0;
	double		t0;

	th_begin("s3: the XML replies read as a stream: pages of 1,000 keys, hostile and malformed replies refused");
	xml = listing_of(1000, true);
	ok(sb_s3_xml_objects(xml, strlen(xml), count_keys, &n, &page, &err), "a page of 1,000 keys (%zu bytes)", strlen(xml));
	is_int(n, 1000, "every key, once");
	ok(page.truncated && strcmp(page.next, "next/1") == 0, "truncated, and where it goes on");
	free(xml);
	xml = listing_of(1001, false);
	refused_page(xml, "more than the 1000 items asked for", "a page of 1,001 keys (max-keys is 1000)");
	free(xml);

	t0 = th_now();
	refused_page(laughs, "has a DOCTYPE", "entities that expand (a billion laughs)");
	ok(th_now() - t0 < 0.1, "at once (%.3f s)", th_now() - t0);
	ok(!sb_s3_xml_error(external, strlen(external), code, sizeof(code), message, sizeof(message)) && code[0] == '\0',
	   "an error document with an external entity is not read as one");
	refused_page("<ListBucketResult><Contents><Key>&e;</Key><Size>1</Size></Contents></ListBucketResult>",
				 "not well-formed", "an entity never declared");
	refused_page("<ListBucketResult><Contents><Key>a<b>c</b></Key><Size>1</Size></Contents></ListBucketResult>",
				 "<Key> holds an element <b>", "an element inside a key");
	refused_page("<ListBucketResult><Contents><Key>a</Key><Size>-1</Size></Contents></ListBucketResult>",
				 "size \"-1\", not a number", "a size that is not a number");
	refused_page("<ListBucketResult><Contents><Size>1</Size></Contents></ListBucketResult>", "without a <Key>",
				 "an item without a key");
	refused_page("<ListBucketResult><Contents><Key>a</Key><Size>1</Size></Contents>", "not well-formed",
				 "a page cut short");
	refused_page("<Error><Code>AccessDenied</Code></Error>", "is not a ListBucketResult but a <Error>",
				 "an error document where a listing was asked for");
	memset(long_key, 'k', sizeof(long_key) - 1);
	long_key[sizeof(long_key) - 1] = '\0';
	snprintf(body, sizeof(body), "<ListBucketResult><Contents><Key>%s</Key><Size>1</Size></Contents></ListBucketResult>",
			 long_key);
	refused_page(body, "<Key> is longer than 1024 bytes", "a key longer than S3's");
	memset(long_token, 't', sizeof(long_token) - 1);
	long_token[sizeof(long_token) - 1] = '\0';
	snprintf(body, sizeof(body), "<ListBucketResult><IsTruncated>true</IsTruncated><NextContinuationToken>%s"
			 "</NextContinuationToken></ListBucketResult>", long_token);
	refused_page(body, "<NextContinuationToken> is longer than 1023 bytes", "a continuation token too long to send back");

	snprintf(body, sizeof(body), "<Error><Code>SlowDown</Code><Message>%s</Message></Error>", long_key);
	ok(sb_s3_xml_error(body, strlen(body), code, sizeof(code), message, sizeof(message)) &&
	   strcmp(code, "SlowDown") == 0 && strlen(message) == sizeof(message) - 1,
	   "an error document's long message is cut to its buffer");
	ok(!sb_s3_xml_error("<Error><Code>x", 14, code, sizeof(code), message, sizeof(message)),
	   "a cut error document is not one");
	ok(sb_s3_xml_error("<Error><Code><![CDATA[Slow]]>Down</Code></Error>", 48, code, sizeof(code), message,
					   sizeof(message)) && strcmp(code, "SlowDown") == 0, "text and CDATA are read together");
}
