/*
 * s3_sign.c
 *		AWS Signature Version 4, header form, for S3.
 *
 * The steps are those of AWS's "Signature Version 4 signing process": the
 * canonical request, the string to sign (its SHA-256 with the date and the
 * scope), a signing key derived from the secret by HMAC-SHA256 over the day,
 * the region, the service and "aws4_request", and the signature, the
 * string to sign's HMAC under that key.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "format/checksum.h"
#include "store/s3/s3_sign.h"

#define SCOPE_MAX 160

/* Appends to a fixed buffer; remembers whether anything did not fit. */
typedef struct Text
{
	char	   *buf;
	size_t		len;
	size_t		used;
	bool		overflow;
} Text;

static void
text_add(Text *t, const char *s, size_t n)
{
	if (t->overflow || t->used + n + 1 > t->len)
	{
		t->overflow = true;
		return;
	}
	memcpy(t->buf + t->used, s, n);
	t->used += n;
	t->buf[t->used] = '\0';
}

static void
text_str(Text *t, const char *s)
{
	text_add(t, s, strlen(s));
}

bool
sb_s3_sha256_hex(const void *data, size_t len, char out[SB_S3_HEX_SHA256_LEN + 1], SbError *err)
{
	uint8_t		sha[SB_SHA256_LEN];

	if (!sb_sha256(data, len, sha, err))
		return false;
	sb_hex_encode(sha, sizeof(sha), out);
	return true;
}

void
sb_s3_amz_date(long long t, char out[SB_S3_AMZ_DATE_LEN + 1])
{
	time_t		tt = (time_t) t;
	struct tm	tm;

	gmtime_r(&tt, &tm);
	strftime(out, SB_S3_AMZ_DATE_LEN + 1, "%Y%m%dT%H%M%SZ", &tm);
}

bool
sb_s3_uri_encode(const char *in, bool keep_slash, char *out, size_t len)
{
	static const char digits[] = "0123456789ABCDEF";
	size_t		used = 0;

	for (; *in != '\0'; in++)
	{
		unsigned char c = (unsigned char) *in;
		bool		plain = isalnum(c) || c == '-' || c == '.' || c == '_' || c == '~' ||
			(keep_slash && c == '/');

		if (used + (plain ? 1 : 3) + 1 > len)
			return false;
		if (plain)
			out[used++] = (char) c;
		else
		{
			out[used++] = '%';
			out[used++] = digits[c >> 4];
			out[used++] = digits[c & 15];
		}
	}
	if (len == 0)
		return false;
	out[used] = '\0';
	return true;
}

/* A header's name lower-cased, for sorting and signing. */
static void
lower_name(const char *name, char *out, size_t len)
{
	size_t		i;

	for (i = 0; name[i] != '\0' && i + 1 < len; i++)
		out[i] = (char) tolower((unsigned char) name[i]);
	out[i] = '\0';
}

/* The indexes of S's headers in the order of their lower-cased names. */
static void
sorted_headers(const SbS3Signing *s, int order[SB_S3_MAX_HEADERS])
{
	int			i,
				j;

	for (i = 0; i < s->nheaders; i++)
		order[i] = i;
	for (i = 1; i < s->nheaders; i++)
		for (j = i; j > 0 && strcasecmp(s->headers[order[j - 1]].name,
										s->headers[order[j]].name) > 0; j--)
		{
			int			swap = order[j];

			order[j] = order[j - 1];
			order[j - 1] = swap;
		}
}

/* VALUE trimmed, its inner runs of spaces made one, appended to T. */
static void
add_trimmed_value(Text *t, const char *value)
{
	bool		space = false;

	while (*value == ' ' || *value == '\t')
		value++;
	for (; *value != '\0'; value++)
	{
		if (*value == ' ' || *value == '\t')
		{
			space = true;
			continue;
		}
		if (space)
			text_add(t, " ", 1);
		space = false;
		text_add(t, value, 1);
	}
}

/* "host;range;x-amz-date": the names signed. */
static void
add_signed_names(Text *t, const SbS3Signing *s, const int order[SB_S3_MAX_HEADERS])
{
	char		name[128];
	int			i;

	for (i = 0; i < s->nheaders; i++)
	{
		lower_name(s->headers[order[i]].name, name, sizeof(name));
		if (i > 0)
			text_add(t, ";", 1);
		text_str(t, name);
	}
}

bool
sb_s3_canonical_request(const SbS3Signing *s, char *buf, size_t len, SbError *err)
{
	Text		t = {buf, len, 0, false};
	int			order[SB_S3_MAX_HEADERS];
	char		name[128];
	int			i;

	if (s->nheaders < 0 || s->nheaders > SB_S3_MAX_HEADERS)
		return sb_error_set(err, SB_EINVAL, "a request signs at most %d headers", SB_S3_MAX_HEADERS);
	sorted_headers(s, order);
	if (len > 0)
		buf[0] = '\0';
	text_str(&t, s->method);
	text_add(&t, "\n", 1);
	text_str(&t, s->path);
	text_add(&t, "\n", 1);
	text_str(&t, s->query);
	text_add(&t, "\n", 1);
	for (i = 0; i < s->nheaders; i++)
	{
		lower_name(s->headers[order[i]].name, name, sizeof(name));
		text_str(&t, name);
		text_add(&t, ":", 1);
		add_trimmed_value(&t, s->headers[order[i]].value);
		text_add(&t, "\n", 1);
	}
	text_add(&t, "\n", 1);
	add_signed_names(&t, s, order);
	text_add(&t, "\n", 1);
	text_str(&t, s->payload_sha256);
	if (t.overflow)
		return sb_error_set(err, SB_EINVAL, "the request to sign is too long (%s %.200s)",
							s->method, s->path);
	return true;
}

/* "20130524/us-east-1/s3/aws4_request" */
static void
credential_scope(const SbS3Signing *s, char *out, size_t len)
{
	snprintf(out, len, "%.8s/%s/%s/aws4_request", s->amz_date, s->region, s->service);
}

bool
sb_s3_string_to_sign(const SbS3Signing *s, char *buf, size_t len, SbError *err)
{
	size_t		canon_len = 16384 + strlen(s->path) + strlen(s->query);
	char	   *canon = malloc(canon_len);
	char		hash[SB_S3_HEX_SHA256_LEN + 1];
	char		scope[SCOPE_MAX];
	bool		ok;

	if (canon == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory signing a request");
	ok = sb_s3_canonical_request(s, canon, canon_len, err) &&
		sb_s3_sha256_hex(canon, strlen(canon), hash, err);
	free(canon);
	if (!ok)
		return false;
	if (strlen(s->amz_date) != SB_S3_AMZ_DATE_LEN)
		return sb_error_set(err, SB_EINVAL, "bad request date \"%s\"", s->amz_date);
	credential_scope(s, scope, sizeof(scope));
	if ((size_t) snprintf(buf, len, "AWS4-HMAC-SHA256\n%s\n%s\n%s", s->amz_date, scope, hash) >= len)
		return sb_error_set(err, SB_EINVAL, "the string to sign is too long");
	return true;
}

static bool
hmac(const uint8_t *key, size_t key_len, const char *data, uint8_t out[SB_SHA256_LEN], SbError *err)
{
	unsigned int out_len = 0;

	if (HMAC(EVP_sha256(), key, (int) key_len, (const unsigned char *) data, strlen(data),
			 out, &out_len) == NULL || out_len != SB_SHA256_LEN)
		return sb_error_set(err, SB_EIO, "HMAC-SHA256 failed");
	return true;
}

/* The day's signing key: the secret through day, region, service and "aws4_request". */
static bool
signing_key(const SbS3Signing *s, uint8_t key[SB_SHA256_LEN], SbError *err)
{
	char		seed[256];
	char		day[9];
	size_t		seed_len;
	bool		ok;

	seed_len = (size_t) snprintf(seed, sizeof(seed), "AWS4%s", s->secret_key);
	if (seed_len >= sizeof(seed))
		return sb_error_set(err, SB_EINVAL, "the secret access key is too long");
	snprintf(day, sizeof(day), "%.8s", s->amz_date);
	ok = hmac((const uint8_t *) seed, seed_len, day, key, err) &&
		hmac(key, SB_SHA256_LEN, s->region, key, err) &&
		hmac(key, SB_SHA256_LEN, s->service, key, err) &&
		hmac(key, SB_SHA256_LEN, "aws4_request", key, err);
	OPENSSL_cleanse(seed, sizeof(seed));
	return ok;
}

bool
sb_s3_authorization(const SbS3Signing *s, char *buf, size_t len, SbError *err)
{
	char		to_sign[SCOPE_MAX + 128];
	uint8_t		key[SB_SHA256_LEN];
	uint8_t		mac[SB_SHA256_LEN];
	char		signature[2 * SB_SHA256_LEN + 1];
	char		names[SB_S3_AUTH_MAX];
	char		scope[SCOPE_MAX];
	Text		t = {names, sizeof(names), 0, false};
	int			order[SB_S3_MAX_HEADERS];
	bool		ok;

	if (!sb_s3_string_to_sign(s, to_sign, sizeof(to_sign), err))
		return false;
	ok = signing_key(s, key, err) && hmac(key, sizeof(key), to_sign, mac, err);
	OPENSSL_cleanse(key, sizeof(key));
	if (!ok)
		return false;
	sb_hex_encode(mac, sizeof(mac), signature);
	sorted_headers(s, order);
	names[0] = '\0';
	add_signed_names(&t, s, order);
	credential_scope(s, scope, sizeof(scope));
	if (t.overflow ||
		(size_t) snprintf(buf, len, "AWS4-HMAC-SHA256 Credential=%s/%s,SignedHeaders=%s,Signature=%s",
						  s->access_key, scope, names, signature) >= len)
		return sb_error_set(err, SB_EINVAL, "the Authorization header is too long");
	return true;
}
