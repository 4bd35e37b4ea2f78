/*
 * s3_sign.h
 *		AWS Signature Version 4 for S3 requests: the canonical request, the
 *		string to sign, the signing key and the Authorization header.
 *
 * Written here, not left to libcurl's CURLOPT_AWS_SIGV4: curl 7.88 signs
 * neither the x-amz-content-sha256 header that S3 requires nor a date we
 * choose, so its signatures cannot be checked against AWS's published
 * examples; ours are (test/unit/test_s3.c).  libcurl still does all of HTTP.
 */
#ifndef SB_S3_SIGN_H
#define SB_S3_SIGN_H

#include <stdbool.h>
#include <stddef.h>

#include "stripebackup/sb_error.h"

#define SB_S3_MAX_HEADERS 12
#define SB_S3_HEX_SHA256_LEN 64
#define SB_S3_AMZ_DATE_LEN 16	/* YYYYMMDDTHHMMSSZ */
#define SB_S3_AUTH_MAX 512

/* SHA-256 of an empty payload, the hash a bodiless request signs. */
#define SB_S3_EMPTY_SHA256 "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

typedef struct SbS3Header
{
	const char *name;			/* any case: signed lower-cased */
	const char *value;
} SbS3Header;

/* What a signature covers. */
typedef struct SbS3Signing
{
	const char *method;			/* GET, PUT, POST, DELETE, HEAD */
	const char *path;			/* the URI's path, already encoded: /bucket/key */
	const char *query;			/* the canonical query string (sorted, encoded), or "" */
	SbS3Header	headers[SB_S3_MAX_HEADERS];	/* every header signed: host, x-amz-* ... */
	int			nheaders;
	const char *payload_sha256; /* hex, or UNSIGNED-PAYLOAD */
	const char *amz_date;		/* YYYYMMDDTHHMMSSZ, also in an x-amz-date header */
	const char *region;
	const char *service;		/* "s3" */
	const char *access_key;
	const char *secret_key;
} SbS3Signing;

/*
 * The canonical request of S into BUF (LEN bytes): method, path, query,
 * headers (lower-cased, trimmed, sorted), signed header names, payload hash.
 */
extern bool sb_s3_canonical_request(const SbS3Signing *s, char *buf, size_t len, SbError *err);

/* The string to sign of S (its canonical request hashed), into BUF. */
extern bool sb_s3_string_to_sign(const SbS3Signing *s, char *buf, size_t len, SbError *err);

/* The Authorization header's value for S, into BUF (SB_S3_AUTH_MAX bytes). */
extern bool sb_s3_authorization(const SbS3Signing *s, char *buf, size_t len, SbError *err);

/*
 * IN percent-encoded as SigV4 wants (unreserved A-Z a-z 0-9 - . _ ~ kept;
 * "/" kept when KEEP_SLASH, for paths) into OUT; false when it does not fit.
 */
extern bool sb_s3_uri_encode(const char *in, bool keep_slash, char *out, size_t len);

/* LEN bytes of DATA hashed with SHA-256, as 64 lower-case hex digits and a NUL. */
extern bool sb_s3_sha256_hex(const void *data, size_t len, char out[SB_S3_HEX_SHA256_LEN + 1],
							 SbError *err);

/* UNIX time T as x-amz-date (YYYYMMDDTHHMMSSZ), in OUT. */
extern void sb_s3_amz_date(long long t, char out[SB_S3_AMZ_DATE_LEN + 1]);

#endif							/* SB_S3_SIGN_H */
