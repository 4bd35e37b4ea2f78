/*
 * test_crypto.c
 *		Encryption's primitives against published vectors (HKDF-SHA256 from
 *		RFC 5869, AES-256-GCM from the GCM specification), a backup's keys
 *		(a wrong user key fails closed), chunks and manifests bound to their
 *		place, the raw-hash mask, and the rules of the key file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crypto/crypto.h"
#include "harness.h"
#include "tests.h"

/* HEX into OUT (at most MAX bytes); the number of bytes. */
static size_t
unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t		n = 0;

	for (; hex[0] && hex[1] && n < max; hex += 2)
	{
		unsigned	b;

		sscanf(hex, "%2x", &b);
		out[n++] = (uint8_t) b;
	}
	return n;
}

static bool
equals_hex(const uint8_t *got, size_t len, const char *hex)
{
	uint8_t		want[256];

	return unhex(hex, want, sizeof(want)) == len && memcmp(got, want, len) == 0;
}

void
test_crypto_vectors(void)
{
	uint8_t		ikm[22],
				salt[13],
				info[10],
				okm[42];
	uint8_t		key[32],
				nonce[12],
				aad[20],
				plain[60],
				out[60],
				back[60],
				tag[16];
	SbError		err;
	size_t		i;

	th_begin("crypto: HKDF-SHA256 and AES-256-GCM give the published vectors");
	memset(ikm, 0x0b, sizeof(ikm));
	for (i = 0; i < sizeof(salt); i++)
		salt[i] = (uint8_t) i;
	for (i = 0; i < sizeof(info); i++)
		info[i] = (uint8_t) (0xf0 + i);
	ok(sb_hkdf_sha256(ikm, sizeof(ikm), salt, sizeof(salt), info, sizeof(info), okm, sizeof(okm), &err) &&
	   equals_hex(okm, sizeof(okm), "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
				  "34007208d5b887185865"), "RFC 5869 test case 1");

	memset(key, 0, sizeof(key));
	memset(nonce, 0, sizeof(nonce));
	memset(plain, 0, 16);
	ok(sb_aes_gcm_seal(key, nonce, NULL, 0, NULL, 0, out, tag, &err) &&
	   equals_hex(tag, 16, "530f8afbc74536b9a963b4f1c4cb738b"), "GCM test case 13 (nothing to seal)");
	ok(sb_aes_gcm_seal(key, nonce, NULL, 0, plain, 16, out, tag, &err) &&
	   equals_hex(out, 16, "cea7403d4d606b6e074ec5d3baf39d18") &&
	   equals_hex(tag, 16, "d0d1c8a799996bf0265b98b5d48ab919"), "GCM test case 14 (one zero block)");

	unhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", key, sizeof(key));
	unhex("cafebabefacedbaddecaf888", nonce, sizeof(nonce));
	unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad, sizeof(aad));
	unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
		  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39", plain, sizeof(plain));
	ok(sb_aes_gcm_seal(key, nonce, aad, sizeof(aad), plain, sizeof(plain), out, tag, &err) &&
	   equals_hex(out, sizeof(out), "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
				  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662") &&
	   equals_hex(tag, 16, "76fc6ece0f4e1768cddf8853bb2d551b"), "GCM test case 16 (with associated data)");
	ok(sb_aes_gcm_open(key, nonce, aad, sizeof(aad), out, sizeof(out), tag, back, &err) &&
	   memcmp(back, plain, sizeof(plain)) == 0, "and it opens again");
	aad[0] ^= 1;
	ok(!sb_aes_gcm_open(key, nonce, aad, sizeof(aad), out, sizeof(out), tag, back, &err) &&
	   err.code == SB_ECORRUPT, "not with other associated data: %s", err.message);
	aad[0] ^= 1;
	out[59] ^= 0x80;
	ok(!sb_aes_gcm_open(key, nonce, aad, sizeof(aad), out, sizeof(out), tag, back, &err),
	   "nor with one bit of the ciphertext flipped");
}

/* GCM test case 16 sealed and opened in uneven pieces, in place: the bytes of the one-call seal; HMAC's RFC 4231 vector. */
void
test_crypto_streams(void)
{
	static const size_t pieces[] = {7, 20, 33};
	uint8_t		key[32],
				nonce[12],
				aad[20],
				plain[60],
				buf[60],
				tag[16],
				mac[32];
	SbGcmStream s;
	SbError		err;
	size_t		at = 0,
				i;
	bool		done = true;

	th_begin("crypto: AES-256-GCM in pieces, HMAC-SHA256");
	unhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", key, sizeof(key));
	unhex("cafebabefacedbaddecaf888", nonce, sizeof(nonce));
	unhex("feedfacedeadbeeffeedfacedeadbeefabaddad2", aad, sizeof(aad));
	unhex("d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
		  "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39", plain, sizeof(plain));
	memcpy(buf, plain, sizeof(buf));
	done = sb_gcm_stream_begin(&s, true, key, nonce, aad, sizeof(aad), &err);
	for (i = 0; done && i < 3; at += pieces[i++])
		done = sb_gcm_stream_update(&s, buf + at, pieces[i], buf + at, &err);
	ok(done && sb_gcm_stream_seal_end(&s, tag, &err) &&
	   equals_hex(buf, sizeof(buf), "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
				  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662") &&
	   equals_hex(tag, 16, "76fc6ece0f4e1768cddf8853bb2d551b"), "sealed in three pieces, in place: test case 16");
	done = sb_gcm_stream_begin(&s, false, key, nonce, aad, sizeof(aad), &err);
	for (i = 0, at = 0; done && i < 3; at += pieces[i++])
		done = sb_gcm_stream_update(&s, buf + at, pieces[i], buf + at, &err);
	ok(done && sb_gcm_stream_open_end(&s, tag, &err) && memcmp(buf, plain, sizeof(plain)) == 0,
	   "and opened in pieces");
	tag[15] ^= 1;
	ok(sb_gcm_stream_begin(&s, false, key, nonce, aad, sizeof(aad), &err) &&
	   sb_gcm_stream_update(&s, buf, sizeof(buf), buf, &err) && !sb_gcm_stream_open_end(&s, tag, &err) &&
	   err.code == SB_ECORRUPT, "a tag that is not its own fails the end: %s", err.message);
	ok(sb_hmac_sha256((const uint8_t *) "Jefe", 4, (const uint8_t *) "what do ya want for nothing?", 28, mac, &err) &&
	   equals_hex(mac, 32, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
	   "HMAC-SHA256: RFC 4231 test case 2");
}

static void
make_key(SbKey *k, uint8_t fill)
{
	memset(k, 0, sizeof(*k));
	memset(k->secret, fill, 40);
	k->len = 40;
}

void
test_crypto_backup_keys(void)
{
	static const uint8_t uuid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	uint8_t		other_uuid[16];
	uint8_t		wrapped[SB_CRYPTO_WRAPPED_LEN];
	uint8_t		data[1000],
				sealed[1000 + SB_CRYPTO_OVERHEAD],
				opened[1000];
	SbKey		mine,
				theirs;
	SbCipher	c,
				again;
	SbChunkPlace place = {2, 77, 4096, 1};
	SbChunkPlace moved;
	SbError		err;

	th_begin("crypto: a backup's keys, its chunks and manifest bound to their place");
	make_key(&mine, 'a');
	make_key(&theirs, 'b');
	th_fill(data, sizeof(data), 5, false);
	ok(sb_cipher_create(&mine, uuid, &c, wrapped, &err), "a new backup's keys");
	ok(sb_cipher_open(&mine, uuid, wrapped, &again, &err) &&
	   memcmp(c.chunk_key, again.chunk_key, sizeof(c.chunk_key)) == 0 &&
	   memcmp(c.manifest_key, again.manifest_key, 32) == 0 && memcmp(c.mask_key, again.mask_key, 32) == 0,
	   "the same keys again from the wrapped data key");
	ok(memcmp(c.chunk_key, c.manifest_key, 32) != 0 && memcmp(c.chunk_key, c.mask_key, 32) != 0,
	   "one key for each purpose");
	ok(!sb_cipher_open(&theirs, uuid, wrapped, &again, &err) && err.code == SB_EKEY,
	   "another user key fails closed: %s", err.message);
	memcpy(other_uuid, uuid, 16);
	other_uuid[15] ^= 1;
	ok(!sb_cipher_open(&mine, other_uuid, wrapped, &again, &err) && err.code == SB_EKEY,
	   "so does the wrapped key of another backup");

	ok(sb_cipher_seal_chunk(&c, &place, data, sizeof(data), sealed, &err), "a chunk sealed");
	ok(memmem(sealed, sizeof(sealed), data, 16) == NULL, "its bytes do not show");
	ok(sb_cipher_open_chunk(&c, &place, sealed, sizeof(sealed), opened, &err) &&
	   memcmp(opened, data, sizeof(data)) == 0, "and opened where it belongs");
	moved = place;
	moved.stripe = 1;
	ok(!sb_cipher_open_chunk(&c, &moved, sealed, sizeof(sealed), opened, &err) && err.code == SB_ECORRUPT,
	   "not in another stripe");
	moved = place;
	moved.chunk_id = 78;
	ok(!sb_cipher_open_chunk(&c, &moved, sealed, sizeof(sealed), opened, &err), "nor as another chunk");
	moved = place;
	moved.raw_len = 4095;
	ok(!sb_cipher_open_chunk(&c, &moved, sealed, sizeof(sealed), opened, &err), "nor with another length");
	moved = place;
	moved.codec = 0;
	ok(!sb_cipher_open_chunk(&c, &moved, sealed, sizeof(sealed), opened, &err), "nor with another codec");
	ok(!sb_cipher_open_chunk(&c, &place, sealed, sizeof(sealed) - 1, opened, &err), "nor cut short");
	ok(!sb_cipher_open_chunk(&c, &place, sealed, 10, opened, &err) && err.code == SB_ECORRUPT,
	   "nor shorter than a seal");
	{
		SbCipher	other;
		uint8_t		w2[SB_CRYPTO_WRAPPED_LEN];

		ok(sb_cipher_create(&mine, other_uuid, &other, w2, &err) &&
		   !sb_cipher_open_chunk(&other, &place, sealed, sizeof(sealed), opened, &err),
		   "nor in another backup, though under the same user key");
	}

	ok(sb_cipher_mask_hash(&c, 77, 0x1234) != 0x1234 &&
	   sb_cipher_mask_hash(&c, 77, sb_cipher_mask_hash(&c, 77, 0x1234)) == 0x1234 &&
	   sb_cipher_mask_hash(&c, 78, 0x1234) != sb_cipher_mask_hash(&c, 77, 0x1234),
	   "a raw hash masked, unmasked by the same operation, another mask for each chunk");

	{
		const uint8_t text[] = "{\"a\": 1}\n";
		uint8_t		seg[sizeof(text) + SB_CRYPTO_OVERHEAD],
					seg2[sizeof(text) + SB_CRYPTO_OVERHEAD],
					back[sizeof(text)];
		uint8_t		other_text[sizeof(text)];

		ok(sb_cipher_seal_segment(&c, 3, false, text, sizeof(text), seg, &err) &&
		   sb_cipher_seal_segment(&c, 3, false, text, sizeof(text), seg2, &err) &&
		   memcmp(seg, seg2, sizeof(seg)) == 0, "a manifest's segment sealed twice: the same bytes");
		ok(sb_cipher_open_segment(&c, 3, false, seg, sizeof(seg), back, &err) &&
		   memcmp(back, text, sizeof(text)) == 0, "and opened at its place");
		ok(!sb_cipher_open_segment(&c, 4, false, seg, sizeof(seg), back, &err) && err.code == SB_ECORRUPT,
		   "not as another segment");
		ok(!sb_cipher_open_segment(&c, 3, true, seg, sizeof(seg), back, &err), "nor as the last one");
		ok(sb_cipher_seal_segment(&c, 4, false, text, sizeof(text), seg2, &err) &&
		   memcmp(seg, seg2, SB_CRYPTO_NONCE_LEN) != 0, "the same text at another place: another nonce");
		memcpy(other_text, text, sizeof(text));
		other_text[0] ^= 1;
		ok(sb_cipher_seal_segment(&c, 3, false, other_text, sizeof(text), seg2, &err) &&
		   memcmp(seg, seg2, SB_CRYPTO_NONCE_LEN) != 0, "another text at the same place: another nonce");
		seg[SB_CRYPTO_NONCE_LEN] ^= 1;
		ok(!sb_cipher_open_segment(&c, 3, false, seg, sizeof(seg), back, &err) && err.code == SB_ECORRUPT,
		   "not once altered: %s", err.message);
		ok(!sb_cipher_open_segment(&c, 3, false, (const uint8_t *) "short", 5, back, &err), "nor too short");
	}
	sb_cipher_clear(&c);
	sb_cipher_clear(&again);
}

void
test_crypto_key_file(void)
{
	char		dir[256],
				path[300];
	SbKey		k;
	SbError		err;
	char		secret[64];

	th_begin("crypto: the key file: private, long enough, its secret never in a message");
	th_tempdir(dir, "key");
	memset(secret, 'Q', sizeof(secret));
	th_path(path, "%s/key", dir);
	ok(th_write_file(path, secret, 48, 0600), "a key file of 48 bytes");
	ok(sb_key_load(path, &k, &err) && k.len == 48, "loaded");
	secret[48] = '\n';
	ok(th_write_file(path, secret, 49, 0600) && sb_key_load(path, &k, &err) && k.len == 48,
	   "a trailing newline is not part of the secret");
	ok(chmod(path, 0640) == 0 && !sb_key_load(path, &k, &err) && err.code == SB_EKEY &&
	   strstr(err.message, "0640") != NULL && strstr(err.message, "QQQQ") == NULL,
	   "one the group may read is refused, its mode named: %s", err.message);
	ok(chmod(path, 0604) == 0 && !sb_key_load(path, &k, &err), "and one others may read");
	ok(th_write_file(path, secret, 31, 0600) && chmod(path, 0600) == 0 && !sb_key_load(path, &k, &err) &&
	   err.code == SB_EKEY && k.len == 0, "too short: %s", err.message);
	{
		char	   *big = malloc(SB_KEY_MAX_BYTES + 10);

		memset(big, 'x', SB_KEY_MAX_BYTES + 10);
		ok(big && th_write_file(path, big, SB_KEY_MAX_BYTES + 10, 0600) && !sb_key_load(path, &k, &err),
		   "too long");
		free(big);
	}
	ok(!sb_key_load(dir, &k, &err) && err.code == SB_EKEY, "a directory: %s", err.message);
	th_path(path, "%s/absent", dir);
	ok(!sb_key_load(path, &k, &err) && err.code == SB_EKEY && strstr(err.message, "absent") != NULL,
	   "an absent one names its path: %s", err.message);
	sb_key_clear(&k);
	th_rmtree(dir);
}
