/*
 * crypto.h
 *		Authenticated encryption of one backup (OpenSSL's libcrypto, EVP).
 *
 * Every encrypted backup has a random 32-byte data key.  It is stored
 * wrapped: sealed with AES-256-GCM under a key-encryption key derived by
 * HKDF-SHA256 from the user's key file, with the backup's uuid as the salt,
 * so that the same key file gives every backup another wrapping key.  From
 * the data key HKDF derives four keys, each for one purpose: the chunks',
 * the manifest's, the one that masks the chunks' raw-byte hashes (an
 * XXH3-64 of plaintext, stored in the clear, would let whoever holds the
 * storage confirm a guess of a chunk's content), and the one that makes
 * the nonces of the manifest's segments.
 *
 * A sealed message is nonce (12 bytes) || ciphertext || tag (16 bytes); its
 * associated data binds it to its place: the backup's uuid, for a chunk its
 * stripe, its number, its raw length and its codec, for a segment of the
 * manifest its number and whether it is the last.  Opening
 * fails (SB_ECORRUPT) unless every one of those and every byte is as sealed.
 */
#ifndef SB_ENGINE_CRYPTO_H
#define SB_ENGINE_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_error.h"

#define SB_CRYPTO_KEY_LEN 32
#define SB_CRYPTO_NONCE_LEN 12
#define SB_CRYPTO_TAG_LEN 16
/* what sealing adds to a message: its nonce and its tag */
#define SB_CRYPTO_OVERHEAD (SB_CRYPTO_NONCE_LEN + SB_CRYPTO_TAG_LEN)
/* a wrapped data key: nonce, the sealed key, tag */
#define SB_CRYPTO_WRAPPED_LEN (SB_CRYPTO_KEY_LEN + SB_CRYPTO_OVERHEAD)
#define SB_CRYPTO_UUID_LEN 16

/* The keys of one backup, derived from its data key. */
typedef struct SbCipher
{
	uint8_t		uuid[SB_CRYPTO_UUID_LEN];
	uint8_t		chunk_key[SB_CRYPTO_KEY_LEN];
	uint8_t		manifest_key[SB_CRYPTO_KEY_LEN];
	uint8_t		mask_key[SB_CRYPTO_KEY_LEN];
	uint8_t		nonce_key[SB_CRYPTO_KEY_LEN];	/* the manifest segments' nonces */
} SbCipher;

/* Where a chunk belongs: bound into its seal. */
typedef struct SbChunkPlace
{
	uint32_t	stripe;			/* 1-based */
	uint64_t	chunk_id;
	uint32_t	raw_len;
	uint8_t		codec;
} SbChunkPlace;

/*
 * A new backup's keys: a random data key, returned WRAPPED under USER_KEY
 * for backup UUID, and the keys derived from it in *C.
 */
extern bool sb_cipher_create(const SbKey *user_key, const uint8_t uuid[SB_CRYPTO_UUID_LEN],
							 SbCipher *c, uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN], SbError *err);

/*
 * An existing backup's keys, from its WRAPPED data key: SB_EKEY if
 * USER_KEY is not the key that wrapped it (or the wrapped key was altered).
 */
extern bool sb_cipher_open(const SbKey *user_key, const uint8_t uuid[SB_CRYPTO_UUID_LEN],
						   const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN], SbCipher *c, SbError *err);

/* Wipe *C. */
extern void sb_cipher_clear(SbCipher *c);

/* Seal LEN bytes of chunk payload at PLACE into OUT (LEN + SB_CRYPTO_OVERHEAD bytes). */
extern bool sb_cipher_seal_chunk(const SbCipher *c, const SbChunkPlace *place, const uint8_t *in,
								 size_t len, uint8_t *out, SbError *err);

/* Open a sealed chunk payload of LEN bytes into OUT (LEN - SB_CRYPTO_OVERHEAD bytes). */
extern bool sb_cipher_open_chunk(const SbCipher *c, const SbChunkPlace *place, const uint8_t *in,
								 size_t len, uint8_t *out, SbError *err);

/*
 * RAW_HASH of chunk CHUNK_ID masked (or unmasked: the same operation) with
 * a value only the key gives: what the stripes store in its place.
 */
extern uint64_t sb_cipher_mask_hash(const SbCipher *c, uint64_t chunk_id, uint64_t raw_hash);

/*
 * Segment INDEX of the manifest's text (LAST: the last one), LEN bytes,
 * sealed into OUT (LEN + SB_CRYPTO_OVERHEAD bytes) with the manifest key.
 * Its nonce is not drawn but made, an HMAC-SHA256 under the nonce key of
 * all the seal binds (the segment's place and bytes): a writer that emits
 * its manifest twice (once to hash it, once to write its copies) writes the
 * same bytes both times, and two different segments never share a nonce
 * (the synthetic-IV construction).
 */
extern bool sb_cipher_seal_segment(const SbCipher *c, uint64_t index, bool last, const uint8_t *in,
								   size_t len, uint8_t *out, SbError *err);

/* Open a sealed segment of LEN bytes into OUT (LEN - SB_CRYPTO_OVERHEAD): SB_ECORRUPT unless at its place. */
extern bool sb_cipher_open_segment(const SbCipher *c, uint64_t index, bool last, const uint8_t *in,
								   size_t len, uint8_t *out, SbError *err);

/* ---------- the primitives (the WAL archive's files use them too) ---------- */

/* LEN random bytes into OUT (OpenSSL's generator). */
extern bool sb_random_bytes(uint8_t *out, size_t len, SbError *err);

/* HMAC-SHA256 under KEY (KEY_LEN bytes) of LEN bytes DATA into OUT. */
extern bool sb_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len,
						   uint8_t out[32], SbError *err);

/*
 * AES-256-GCM of one message given in pieces, for messages too large to
 * hold whole (an archived WAL file is up to 1 GB).  Begin with the key,
 * nonce and associated data; each update encrypts or decrypts LEN bytes
 * (IN and OUT may be the same buffer); the end writes the tag (sealing) or
 * checks it (opening: SB_ECORRUPT when it does not match).  Until an open
 * ends well, what its updates gave is unauthenticated: a caller keeps it
 * where nothing uses it (a temporary file) until then.  An end, or
 * sb_gcm_stream_free after a failure, frees the stream.
 */
typedef struct SbGcmStream
{
	void	   *ctx;			/* OpenSSL's EVP_CIPHER_CTX */
	bool		encrypt;
} SbGcmStream;

extern bool sb_gcm_stream_begin(SbGcmStream *s, bool encrypt, const uint8_t key[SB_CRYPTO_KEY_LEN],
								const uint8_t nonce[SB_CRYPTO_NONCE_LEN], const uint8_t *aad,
								size_t aad_len, SbError *err);
extern bool sb_gcm_stream_update(SbGcmStream *s, const uint8_t *in, size_t len, uint8_t *out,
								 SbError *err);
extern bool sb_gcm_stream_seal_end(SbGcmStream *s, uint8_t tag[SB_CRYPTO_TAG_LEN], SbError *err);
extern bool sb_gcm_stream_open_end(SbGcmStream *s, const uint8_t tag[SB_CRYPTO_TAG_LEN],
								   SbError *err);
extern void sb_gcm_stream_free(SbGcmStream *s);

/* HKDF-SHA256 (RFC 5869) of IKM with SALT and INFO into OUT (OUT_LEN bytes). */
extern bool sb_hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
						   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len,
						   SbError *err);

/*
 * AES-256-GCM of LEN bytes IN with KEY, the given NONCE and associated data
 * AAD into OUT (LEN bytes) and TAG; open checks TAG (false, SB_ECORRUPT).
 */
extern bool sb_aes_gcm_seal(const uint8_t key[SB_CRYPTO_KEY_LEN], const uint8_t nonce[SB_CRYPTO_NONCE_LEN],
							const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
							uint8_t *out, uint8_t tag[SB_CRYPTO_TAG_LEN], SbError *err);
extern bool sb_aes_gcm_open(const uint8_t key[SB_CRYPTO_KEY_LEN], const uint8_t nonce[SB_CRYPTO_NONCE_LEN],
							const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
							const uint8_t tag[SB_CRYPTO_TAG_LEN], uint8_t *out, SbError *err);

#endif							/* SB_ENGINE_CRYPTO_H */
