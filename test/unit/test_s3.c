/*
 * test_s3.c
 *		The S3 client's pure parts: Signature Version 4 against the examples
 *		AWS publishes for S3 (GET with a range, PUT with a payload, a
 *		sub-resource, a listing), locations, settings and credentials, and
 *		the XML replies it reads.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "s3_client.h"
#include "s3_sign.h"
#include "s3_xml.h"
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
	"STRIPEBACKUP_S3_BUCKET_ENDPOINTS",
};

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
