/*
 * checksum.c
 *		Thin wrappers over libxxhash and ISA-L's CRC-32C.
 *
 * ISA-L's crc32_iscsi(buf, len, init) runs the reflected register from INIT
 * and returns it as it ends, without the initial or final inversion of
 * CRC-32C: callers start at SB_CRC32C_INIT and invert at the end
 * (sb_crc32c_final); the unit tests check this numerically.
 *
 * On x86-64, XXH3 goes through libxxhash's dispatch, which picks the AVX2 or
 * AVX-512 code the CPU has.  Its default entry points are built for plain
 * SSE2, and legacy SSE code that runs right after libzstd's AVX2 code (a
 * chunk hashed as it is decompressed) pays for the AVX state left behind:
 * restoring 1 GB, 0.40 s in XXH3 (2.5 GB/s) against 0.05 s through the
 * dispatch (17-22 GB/s).
 */
#include <isa-l/crc.h>
#include <openssl/evp.h>
#include <stdlib.h>
#include <xxhash.h>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#define HASH64 XXH3_64bits_dispatch
#define HASH64_UPDATE XXH3_64bits_update_dispatch
#else
#define HASH64 XXH3_64bits
#define HASH64_UPDATE XXH3_64bits_update
#endif

#include "format/checksum.h"

/* ISA-L takes an int length: feed it in pieces well below INT_MAX. */
#define CRC_STEP (1u << 30)

uint64_t
sb_hash64(const void *data, size_t len)
{
	return (uint64_t) HASH64(data, len);
}

struct SbHashStream
{
	XXH3_state_t *state;
};

SbHashStream *
sb_hash_stream_new(SbError *err)
{
	SbHashStream *s = calloc(1, sizeof(SbHashStream));

	if (s == NULL || (s->state = XXH3_createState()) == NULL)
	{
		free(s);
		sb_error_set(err, SB_ENOMEM, "out of memory (a hash state)");
		return NULL;
	}
	sb_hash_stream_reset(s);
	return s;
}

void
sb_hash_stream_free(SbHashStream *s)
{
	if (s == NULL)
		return;
	XXH3_freeState(s->state);
	free(s);
}

void
sb_hash_stream_reset(SbHashStream *s)
{
	XXH3_64bits_reset(s->state);
}

void
sb_hash_stream_update(SbHashStream *s, const void *data, size_t len)
{
	HASH64_UPDATE(s->state, data, len);
}

uint64_t
sb_hash_stream_digest(const SbHashStream *s)
{
	return (uint64_t) XXH3_64bits_digest(s->state);
}

/* EVP_Digest allocates a context, so it can fail: never trust OUT then. */
bool
sb_sha256(const void *data, size_t len, uint8_t out[SB_SHA256_LEN], SbError *err)
{
	unsigned int out_len = 0;

	if (EVP_Digest(data, len, out, &out_len, EVP_sha256(), NULL) != 1 ||
		out_len != SB_SHA256_LEN)
		return sb_error_set(err, SB_ENOMEM, "could not compute a SHA-256 (libcrypto failed)");
	return true;
}

SbSha256 *
sb_sha256_begin(SbError *err)
{
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();

	if (ctx == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
	{
		EVP_MD_CTX_free(ctx);
		sb_error_set(err, SB_ENOMEM, "could not start a SHA-256 (libcrypto failed)");
		return NULL;
	}
	return (SbSha256 *) ctx;
}

bool
sb_sha256_update(SbSha256 *s, const void *data, size_t len, SbError *err)
{
	if (EVP_DigestUpdate((EVP_MD_CTX *) s, data, len) != 1)
		return sb_error_set(err, SB_ENOMEM, "could not compute a SHA-256 (libcrypto failed)");
	return true;
}

bool
sb_sha256_end(SbSha256 *s, uint8_t out[SB_SHA256_LEN], SbError *err)
{
	unsigned int out_len = 0;
	bool		ok = EVP_DigestFinal_ex((EVP_MD_CTX *) s, out, &out_len) == 1 &&
		out_len == SB_SHA256_LEN;

	sb_sha256_free(s);
	return ok ? true : sb_error_set(err, SB_ENOMEM, "could not compute a SHA-256 (libcrypto failed)");
}

void
sb_sha256_free(SbSha256 *s)
{
	EVP_MD_CTX_free((EVP_MD_CTX *) s);
}

uint32_t
sb_crc32c_update(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;

	while (len > 0)
	{
		size_t		n = len < CRC_STEP ? len : CRC_STEP;

		crc = crc32_iscsi((unsigned char *) p, (int) n, crc);
		p += n;
		len -= n;
	}
	return crc;
}

/* Zeros add nothing of their own to a register: they only shift it. */
uint32_t
sb_crc32c_zeros(uint32_t crc, uint64_t len)
{
	return sb_crc32c_shift(crc, len);
}

/* ISA-L neither inverts on entry nor on exit: started at 0, it is the raw register. */
uint32_t
sb_crc32c_raw(const void *data, size_t len)
{
	return sb_crc32c_update(0, data, len);
}

uint32_t
sb_crc32c_final(uint32_t crc)
{
	return crc ^ 0xFFFFFFFFu;
}

void
sb_hex_encode(const uint8_t *bytes, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t		i;

	for (i = 0; i < len; i++)
	{
		out[2 * i] = digits[bytes[i] >> 4];
		out[2 * i + 1] = digits[bytes[i] & 15];
	}
	out[2 * len] = '\0';
}
