/*
 * crypto.c
 *		The user's key file, a backup's keys, and sealing its chunks and
 *		manifest with AES-256-GCM (OpenSSL's libcrypto).  See crypto.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/core_names.h>
#include <openssl/kdf.h>
#include <openssl/rand.h>

#include "crypto/crypto.h"
#include "util/fsutil.h"

/* What each derived key is for: HKDF's "info", never the same twice. */
#define INFO_WRAP "stripebackup 1 key-encryption key"
#define INFO_CHUNKS "stripebackup 1 chunks"
#define INFO_MANIFEST "stripebackup 1 manifest"
#define INFO_MASK "stripebackup 1 raw hashes"
#define INFO_SEGMENT_NONCES "stripebackup 2 manifest nonces"
#define AAD_DATA_KEY "stripebackup 1 data key"
#define AAD_SEGMENT "stripebackup 2 manifest"
#define AAD_CHUNK "SBCK"

/* ---------- the key file ---------- */

/* Only its owner (the server's user, or root with the group reading) may touch it. */
static bool
key_file_private(const char *path, const struct stat *st, SbError *err)
{
	bool		by_me = st->st_uid == geteuid();
	bool		by_root = st->st_uid == 0;

	if (!S_ISREG(st->st_mode))
		return sb_error_set(err, SB_EKEY, "encryption key file \"%s\" is not a regular file", path);
	if (!by_me && !by_root)
		return sb_error_set(err, SB_EKEY,
							"encryption key file \"%s\" must be owned by this user or by root", path);
	if ((by_me && (st->st_mode & (S_IRWXG | S_IRWXO)) != 0) ||
		(!by_me && (st->st_mode & (S_IWGRP | S_IXGRP | S_IRWXO)) != 0))
		return sb_error_set(err, SB_EKEY,
							"encryption key file \"%s\" may be read or written by others (mode %04o): "
							"it must be u=rw (0600) or less, or u=rw,g=r (0640) if owned by root",
							path, (unsigned) (st->st_mode & 07777));
	return true;
}

bool
sb_key_load(const char *path, SbKey *key, SbError *err)
{
	int			fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ssize_t		n = -1;

	memset(key, 0, sizeof(*key));
	if (fd < 0 || fstat(fd, &st) != 0)
	{
		sb_error_set_errno(err, errno, "could not open encryption key file \"%s\"", path);
		err->code = SB_EKEY;
	}
	else if (key_file_private(path, &st, err))
		n = sb_pread_upto(fd, key->secret, sizeof(key->secret), 0, path, err);
	if (fd >= 0)
		close(fd);
	if (n < 0)
		return false;
	key->len = (size_t) n;
	if (key->len > 0 && key->secret[key->len - 1] == '\n')
		key->len--;
	if (key->len < SB_KEY_MIN_BYTES || (size_t) n == sizeof(key->secret))
	{
		sb_key_clear(key);
		return sb_error_set(err, SB_EKEY, "encryption key file \"%s\" must hold %d to %d bytes of secret",
							path, SB_KEY_MIN_BYTES, SB_KEY_MAX_BYTES - 1);
	}
	return true;
}

void
sb_key_clear(SbKey *key)
{
	OPENSSL_cleanse(key, sizeof(*key));
}

/* ---------- primitives ---------- */

static bool
openssl_failed(SbError *err, const char *what)
{
	return sb_error_set(err, SB_ENOMEM, "OpenSSL could not %s", what);
}

bool
sb_hkdf_sha256(const uint8_t *ikm, size_t ikm_len, const uint8_t *salt, size_t salt_len,
			   const uint8_t *info, size_t info_len, uint8_t *out, size_t out_len, SbError *err)
{
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_HKDF, NULL);
	size_t		len = out_len;
	bool		ok;

	ok = ctx != NULL && EVP_PKEY_derive_init(ctx) > 0 &&
		EVP_PKEY_CTX_set_hkdf_md(ctx, EVP_sha256()) > 0 &&
		EVP_PKEY_CTX_set1_hkdf_salt(ctx, salt, (int) salt_len) > 0 &&
		EVP_PKEY_CTX_set1_hkdf_key(ctx, ikm, (int) ikm_len) > 0 &&
		EVP_PKEY_CTX_add1_hkdf_info(ctx, info, (int) info_len) > 0 &&
		EVP_PKEY_derive(ctx, out, &len) > 0 && len == out_len;
	EVP_PKEY_CTX_free(ctx);
	return ok || openssl_failed(err, "derive a key");
}

/* ---------- AES-256-GCM, in one call or in pieces ---------- */

bool
sb_gcm_stream_begin(SbGcmStream *s, bool encrypt, const uint8_t key[SB_CRYPTO_KEY_LEN],
					const uint8_t nonce[SB_CRYPTO_NONCE_LEN], const uint8_t *aad, size_t aad_len,
					SbError *err)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int			n = 0;

	s->ctx = ctx;
	s->encrypt = encrypt;
	if (ctx != NULL &&
		EVP_CipherInit_ex(ctx, EVP_aes_256_gcm(), NULL, key, nonce, encrypt ? 1 : 0) > 0 &&
		(aad_len == 0 || EVP_CipherUpdate(ctx, NULL, &n, aad, (int) aad_len) > 0))
		return true;
	sb_gcm_stream_free(s);
	return openssl_failed(err, encrypt ? "start encrypting" : "start decrypting");
}

bool
sb_gcm_stream_update(SbGcmStream *s, const uint8_t *in, size_t len, uint8_t *out, SbError *err)
{
	int			n = 0;

	/* GCM is a stream cipher: each piece gives exactly its length back, and may be done in place. */
	if (len == 0 || (len <= INT32_MAX && EVP_CipherUpdate(s->ctx, out, &n, in, (int) len) > 0 &&
					 (size_t) n == len))
		return true;
	return openssl_failed(err, s->encrypt ? "encrypt" : "decrypt");
}

bool
sb_gcm_stream_seal_end(SbGcmStream *s, uint8_t tag[SB_CRYPTO_TAG_LEN], SbError *err)
{
	uint8_t		none[16];
	int			n = 0;
	bool		ok;

	ok = EVP_CipherFinal_ex(s->ctx, none, &n) > 0 &&
		EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_GET_TAG, SB_CRYPTO_TAG_LEN, tag) > 0;
	sb_gcm_stream_free(s);
	return ok || openssl_failed(err, "encrypt");
}

bool
sb_gcm_stream_open_end(SbGcmStream *s, const uint8_t tag[SB_CRYPTO_TAG_LEN], SbError *err)
{
	uint8_t		t[SB_CRYPTO_TAG_LEN];
	uint8_t		none[16];
	int			n = 0;
	bool		ok;

	memcpy(t, tag, sizeof(t));
	if (EVP_CIPHER_CTX_ctrl(s->ctx, EVP_CTRL_GCM_SET_TAG, SB_CRYPTO_TAG_LEN, t) <= 0)
	{
		sb_gcm_stream_free(s);
		return openssl_failed(err, "decrypt");
	}
	ok = EVP_CipherFinal_ex(s->ctx, none, &n) > 0;
	sb_gcm_stream_free(s);
	return ok || sb_error_set(err, SB_ECORRUPT, "authentication failed: the sealed bytes, or where they "
							  "belong, are not what was sealed");
}

void
sb_gcm_stream_free(SbGcmStream *s)
{
	EVP_CIPHER_CTX_free(s->ctx);
	s->ctx = NULL;
}

/* One whole message sealed (ENCRYPT, TAG written) or opened (TAG checked). */
static bool
gcm_once(bool encrypt, const uint8_t *key, const uint8_t *nonce, const uint8_t *aad, size_t aad_len,
		 const uint8_t *in, size_t len, uint8_t *out, uint8_t *tag, SbError *err)
{
	SbGcmStream s;

	if (!sb_gcm_stream_begin(&s, encrypt, key, nonce, aad, aad_len, err))
		return false;
	if (!sb_gcm_stream_update(&s, in, len, out, err))
	{
		sb_gcm_stream_free(&s);
		return false;
	}
	return encrypt ? sb_gcm_stream_seal_end(&s, tag, err) : sb_gcm_stream_open_end(&s, tag, err);
}

bool
sb_aes_gcm_seal(const uint8_t key[SB_CRYPTO_KEY_LEN], const uint8_t nonce[SB_CRYPTO_NONCE_LEN],
				const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len, uint8_t *out,
				uint8_t tag[SB_CRYPTO_TAG_LEN], SbError *err)
{
	return gcm_once(true, key, nonce, aad, aad_len, in, len, out, tag, err);
}

bool
sb_aes_gcm_open(const uint8_t key[SB_CRYPTO_KEY_LEN], const uint8_t nonce[SB_CRYPTO_NONCE_LEN],
				const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
				const uint8_t tag[SB_CRYPTO_TAG_LEN], uint8_t *out, SbError *err)
{
	uint8_t		t[SB_CRYPTO_TAG_LEN];

	memcpy(t, tag, sizeof(t));
	return gcm_once(false, key, nonce, aad, aad_len, in, len, out, t, err);
}

bool
sb_random_bytes(uint8_t *out, size_t len, SbError *err)
{
	return (len <= INT32_MAX && RAND_bytes(out, (int) len) == 1) || openssl_failed(err, "draw random bytes");
}

/* A message sealed with a fresh random nonce: OUT = nonce || ciphertext || tag. */
static bool
seal(const uint8_t *key, const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
	 uint8_t *out, SbError *err)
{
	if (!sb_random_bytes(out, SB_CRYPTO_NONCE_LEN, err))
		return false;
	return sb_aes_gcm_seal(key, out, aad, aad_len, in, len, out + SB_CRYPTO_NONCE_LEN,
						   out + SB_CRYPTO_NONCE_LEN + len, err);
}

static bool
unseal(const uint8_t *key, const uint8_t *aad, size_t aad_len, const uint8_t *in, size_t len,
	   uint8_t *out, SbError *err)
{
	size_t		body;

	if (len < SB_CRYPTO_OVERHEAD)
		return sb_error_set(err, SB_ECORRUPT, "a sealed message of %zu bytes is too short", len);
	body = len - SB_CRYPTO_OVERHEAD;
	return sb_aes_gcm_open(key, in, aad, aad_len, in + SB_CRYPTO_NONCE_LEN, body,
						   in + SB_CRYPTO_NONCE_LEN + body, out, err);
}

/* ---------- a backup's keys ---------- */

/* LABEL || UUID: associated data tying a message to one backup. */
static size_t
backup_aad(const char *label, const uint8_t *uuid, uint8_t *out)
{
	size_t		n = strlen(label);

	memcpy(out, label, n);
	memcpy(out + n, uuid, SB_CRYPTO_UUID_LEN);
	return n + SB_CRYPTO_UUID_LEN;
}

static bool
derive(const uint8_t *ikm, size_t ikm_len, const uint8_t *uuid, const char *info, uint8_t *out,
	   SbError *err)
{
	return sb_hkdf_sha256(ikm, ikm_len, uuid, SB_CRYPTO_UUID_LEN, (const uint8_t *) info, strlen(info),
						  out, SB_CRYPTO_KEY_LEN, err);
}

/* The keys of *C from its data key DATA_KEY (and C->uuid). */
static bool
derive_all(const uint8_t *data_key, SbCipher *c, SbError *err)
{
	return derive(data_key, SB_CRYPTO_KEY_LEN, c->uuid, INFO_CHUNKS, c->chunk_key, err) &&
		derive(data_key, SB_CRYPTO_KEY_LEN, c->uuid, INFO_MANIFEST, c->manifest_key, err) &&
		derive(data_key, SB_CRYPTO_KEY_LEN, c->uuid, INFO_MASK, c->mask_key, err) &&
		derive(data_key, SB_CRYPTO_KEY_LEN, c->uuid, INFO_SEGMENT_NONCES, c->nonce_key, err);
}

/* *C emptied for backup UUID, and the key that wraps its data key, from the user's. */
static bool
begin_keys(const SbKey *user_key, const uint8_t *uuid, SbCipher *c, uint8_t *kek, SbError *err)
{
	memset(c, 0, sizeof(*c));
	memcpy(c->uuid, uuid, SB_CRYPTO_UUID_LEN);
	return derive(user_key->secret, user_key->len, uuid, INFO_WRAP, kek, err);
}

bool
sb_cipher_create(const SbKey *user_key, const uint8_t uuid[SB_CRYPTO_UUID_LEN], SbCipher *c,
				 uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN], SbError *err)
{
	uint8_t		data_key[SB_CRYPTO_KEY_LEN];
	uint8_t		kek[SB_CRYPTO_KEY_LEN];
	uint8_t		aad[64];
	bool		ok;

	ok = begin_keys(user_key, uuid, c, kek, err) &&
		sb_random_bytes(data_key, sizeof(data_key), err) &&
		seal(kek, aad, backup_aad(AAD_DATA_KEY, uuid, aad), data_key, sizeof(data_key), wrapped, err) &&
		derive_all(data_key, c, err);
	OPENSSL_cleanse(data_key, sizeof(data_key));
	OPENSSL_cleanse(kek, sizeof(kek));
	return ok;
}

bool
sb_cipher_open(const SbKey *user_key, const uint8_t uuid[SB_CRYPTO_UUID_LEN],
			   const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN], SbCipher *c, SbError *err)
{
	uint8_t		data_key[SB_CRYPTO_KEY_LEN];
	uint8_t		kek[SB_CRYPTO_KEY_LEN];
	uint8_t		aad[64];
	bool		ok;

	ok = begin_keys(user_key, uuid, c, kek, err);
	if (ok && !unseal(kek, aad, backup_aad(AAD_DATA_KEY, uuid, aad), wrapped, SB_CRYPTO_WRAPPED_LEN,
					  data_key, err))
		ok = sb_error_set(err, SB_EKEY, "the encryption key is not the one this backup was encrypted with (or its wrapped key was altered)");
	ok = ok && derive_all(data_key, c, err);
	OPENSSL_cleanse(data_key, sizeof(data_key));
	OPENSSL_cleanse(kek, sizeof(kek));
	return ok;
}

void
sb_cipher_clear(SbCipher *c)
{
	OPENSSL_cleanse(c, sizeof(*c));
}

/* ---------- chunks, hashes, the manifest ---------- */

static void
put_le(uint8_t *p, uint64_t v, int bytes)
{
	int			i;

	for (i = 0; i < bytes; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* "SBCK" || uuid || stripe || chunk id || raw length || codec */
static size_t
chunk_aad(const SbCipher *c, const SbChunkPlace *place, uint8_t *out)
{
	size_t		n = backup_aad(AAD_CHUNK, c->uuid, out);

	put_le(out + n, place->stripe, 4);
	put_le(out + n + 4, place->chunk_id, 8);
	put_le(out + n + 12, place->raw_len, 4);
	out[n + 16] = place->codec;
	return n + 17;
}

bool
sb_cipher_seal_chunk(const SbCipher *c, const SbChunkPlace *place, const uint8_t *in, size_t len,
					 uint8_t *out, SbError *err)
{
	uint8_t		aad[64];

	return seal(c->chunk_key, aad, chunk_aad(c, place, aad), in, len, out, err);
}

bool
sb_cipher_open_chunk(const SbCipher *c, const SbChunkPlace *place, const uint8_t *in, size_t len,
					 uint8_t *out, SbError *err)
{
	uint8_t		aad[64];

	return unseal(c->chunk_key, aad, chunk_aad(c, place, aad), in, len, out, err);
}

uint64_t
sb_cipher_mask_hash(const SbCipher *c, uint64_t chunk_id, uint64_t raw_hash)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	uint8_t		block[16] = {0};
	uint8_t		pad[32];
	uint64_t	mask = 0;
	int			n = 0;
	int			i;

	/* AES-256 of the chunk's number: a pseudo-random mask only the key gives */
	put_le(block, chunk_id, 8);
	if (ctx == NULL || EVP_EncryptInit_ex(ctx, EVP_aes_256_ecb(), NULL, c->mask_key, NULL) <= 0 ||
		EVP_CIPHER_CTX_set_padding(ctx, 0) <= 0 ||
		EVP_EncryptUpdate(ctx, pad, &n, block, sizeof(block)) <= 0 || n != 16)
		abort();				/* a fixed-size AES block cannot fail but for a broken library */
	EVP_CIPHER_CTX_free(ctx);
	for (i = 0; i < 8; i++)
		mask |= (uint64_t) pad[i] << (8 * i);
	return raw_hash ^ mask;
}

/* "stripebackup 2 manifest" || uuid || segment number || whether it is the last */
static size_t
segment_aad(const SbCipher *c, uint64_t index, bool last, uint8_t *out)
{
	size_t		n = backup_aad(AAD_SEGMENT, c->uuid, out);

	put_le(out + n, index, 8);
	out[n + 8] = last ? 1 : 0;
	return n + 9;
}

/* HMAC-SHA256 under KEY (KEY_LEN bytes) of A then B into OUT. */
static bool
hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *a, size_t a_len, const uint8_t *b,
			size_t b_len, uint8_t out[32], SbError *err)
{
	EVP_MAC    *mac = EVP_MAC_fetch(NULL, "HMAC", NULL);
	EVP_MAC_CTX *ctx = mac ? EVP_MAC_CTX_new(mac) : NULL;
	OSSL_PARAM	params[] = {
		OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, (char *) "SHA256", 0),
		OSSL_PARAM_construct_end()
	};
	size_t		out_len = 0;
	bool		ok;

	ok = ctx != NULL && EVP_MAC_init(ctx, key, key_len, params) > 0 &&
		EVP_MAC_update(ctx, a, a_len) > 0 && (b_len == 0 || EVP_MAC_update(ctx, b, b_len) > 0) &&
		EVP_MAC_final(ctx, out, &out_len, 32) > 0 && out_len == 32;
	EVP_MAC_CTX_free(ctx);
	EVP_MAC_free(mac);
	return ok || openssl_failed(err, "compute a MAC");
}

bool
sb_hmac_sha256(const uint8_t *key, size_t key_len, const uint8_t *data, size_t len, uint8_t out[32],
			   SbError *err)
{
	return hmac_sha256(key, key_len, data, len, NULL, 0, out, err);
}

/* HMAC-SHA256 under KEY of A then B, its first SB_CRYPTO_NONCE_LEN bytes into NONCE. */
static bool
mac_nonce(const uint8_t *key, const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len,
		  uint8_t *nonce, SbError *err)
{
	uint8_t		out[32];
	bool		ok = hmac_sha256(key, SB_CRYPTO_KEY_LEN, a, a_len, b, b_len, out, err);

	memcpy(nonce, out, SB_CRYPTO_NONCE_LEN);
	OPENSSL_cleanse(out, sizeof(out));
	return ok;
}

bool
sb_cipher_seal_segment(const SbCipher *c, uint64_t index, bool last, const uint8_t *in, size_t len,
					   uint8_t *out, SbError *err)
{
	uint8_t		aad[64];
	size_t		aad_len = segment_aad(c, index, last, aad);

	return mac_nonce(c->nonce_key, aad, aad_len, in, len, out, err) &&
		sb_aes_gcm_seal(c->manifest_key, out, aad, aad_len, in, len, out + SB_CRYPTO_NONCE_LEN,
						out + SB_CRYPTO_NONCE_LEN + len, err);
}

bool
sb_cipher_open_segment(const SbCipher *c, uint64_t index, bool last, const uint8_t *in, size_t len,
					   uint8_t *out, SbError *err)
{
	uint8_t		aad[64];

	return unseal(c->manifest_key, aad, segment_aad(c, index, last, aad), in, len, out, err);
}
