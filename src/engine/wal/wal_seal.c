/*
 * wal_seal.c
 *		The keys of an archived WAL file sealed under the user's key (WAL
 *		archive format 2.0, docs/FORMAT.md section 8.7): derived for that
 *		file alone, the tag of its header, the masks of its hashes, the
 *		associated data of its payload.
 *
 * A file's keys come from the user's key by HKDF-SHA256 with a random salt
 * the header carries, and the cluster's system identifier and the file's
 * name in the info: a file copied under another name, or into another
 * cluster's archive, opens with other keys and fails, and no two files
 * share a key.  The header's tag (HMAC-SHA256) lets a listing trust a
 * file's name, cluster and lengths from 128 bytes, without the payload;
 * the payload's GCM tag is what a full read checks.  The raw bytes'
 * XXH3-64 and CRC-32C are stored masked: in the clear they would let
 * whoever keeps the storage confirm a guess of a file's content.
 */
#include <string.h>

#include <openssl/crypto.h>

#include "crypto/crypto.h"
#include "format/format.h"
#include "wal/wal_internal.h"

/* HKDF's info and the payload's associated data begin with these: nothing else uses them. */
#define INFO_FILE_KEYS "stripebackup wal 2 file keys"
#define AAD_PAYLOAD "stripebackup wal 2 payload"

/* The name as the header holds it: ASCII, padded with NUL bytes to 40. */
static void
name_field(const SbWalHeader *h, uint8_t out[SB_WAL_NAME_MAX])
{
	memset(out, 0, SB_WAL_NAME_MAX);
	memcpy(out, h->name, strnlen(h->name, SB_WAL_NAME_MAX));
}

bool
sb_wal_keys_derive(const SbKey *key, const SbWalHeader *h, SbWalKeys *k, SbError *err)
{
	uint8_t		info[sizeof(INFO_FILE_KEYS) - 1 + 8 + SB_WAL_NAME_MAX];
	uint8_t		okm[SB_CRYPTO_KEY_LEN * 2 + SB_WAL_MASK_LEN];
	size_t		n = sizeof(INFO_FILE_KEYS) - 1;
	bool		ok;

	memcpy(info, INFO_FILE_KEYS, n);
	sb_format_put64(info + n, h->system_identifier);
	name_field(h, info + n + 8);
	ok = sb_hkdf_sha256(key->secret, key->len, h->salt, SB_WAL_SALT_LEN, info, sizeof(info),
						okm, sizeof(okm), err);
	/* One derivation, cut in three: the payload's key, the header's, the mask. */
	memcpy(k->payload, okm, SB_CRYPTO_KEY_LEN);
	memcpy(k->header, okm + SB_CRYPTO_KEY_LEN, SB_CRYPTO_KEY_LEN);
	memcpy(k->mask, okm + 2 * SB_CRYPTO_KEY_LEN, SB_WAL_MASK_LEN);
	OPENSSL_cleanse(okm, sizeof(okm));
	return ok;
}

void
sb_wal_keys_clear(SbWalKeys *k)
{
	OPENSSL_cleanse(k, sizeof(*k));
}

bool
sb_wal_tag(const SbWalKeys *k, const uint8_t header[SB_WAL_HEADER_SIZE], uint8_t tag[SB_WAL_TAG_LEN],
		   SbError *err)
{
	uint8_t		mac[32];
	bool		ok = sb_hmac_sha256(k->header, SB_CRYPTO_KEY_LEN, header, SB_WAL_TAGGED_LEN, mac, err);

	memcpy(tag, mac, SB_WAL_TAG_LEN);
	return ok;
}

bool
sb_wal_tag_check(const SbWalKeys *k, const uint8_t header[SB_WAL_HEADER_SIZE], SbError *err)
{
	uint8_t		tag[SB_WAL_TAG_LEN];

	if (!sb_wal_tag(k, header, tag, err))
		return false;
	/* In constant time: a tag found a byte at a time would be a forgery made a byte at a time. */
	if (CRYPTO_memcmp(tag, header + SB_WAL_TAGGED_LEN, SB_WAL_TAG_LEN) != 0)
		return sb_error_set(err, SB_ECORRUPT, "its header's tag does not match: it was not sealed with this key "
							"(another key, or a header forged or altered)");
	return true;
}

void
sb_wal_mask(const SbWalKeys *k, uint64_t *raw_hash, uint32_t *crc32c)
{
	*raw_hash ^= sb_format_get64(k->mask);
	*crc32c ^= sb_format_get32(k->mask + 8);
}

size_t
sb_wal_payload_aad(const SbWalHeader *h, uint8_t out[SB_WAL_AAD_MAX])
{
	size_t		n = sizeof(AAD_PAYLOAD) - 1;

	/* Where the payload belongs and how it is read: cluster, name, raw length, codec, salt. */
	memcpy(out, AAD_PAYLOAD, n);
	sb_format_put64(out + n, h->system_identifier);
	name_field(h, out + n + 8);
	sb_format_put64(out + n + 8 + SB_WAL_NAME_MAX, h->raw_len);
	out[n + 16 + SB_WAL_NAME_MAX] = h->codec;
	memcpy(out + n + 17 + SB_WAL_NAME_MAX, h->salt, SB_WAL_SALT_LEN);
	return n + 17 + SB_WAL_NAME_MAX + SB_WAL_SALT_LEN;
}
