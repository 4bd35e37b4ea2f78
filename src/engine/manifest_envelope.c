/*
 * manifest_envelope.c
 *		An encrypted backup's manifest.json: an envelope in the clear that
 *		names the backup, the cipher, the data key wrapped under the user's
 *		key and where the stripes are (so that a damaged copy's destinations
 *		can still be searched), and holds the manifest sealed (base64).
 *
 * Nothing in the envelope is trusted but what opens: the wrapped key must
 * unwrap under the user's key, the sealed manifest must open under the data
 * key with the envelope's uuid bound in, and the manifest inside must name
 * the same backup.  The stripes' trailers record the SHA-256 of the
 * envelope's bytes, as they do a plain manifest's.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "checksum.h"
#include "fsutil.h"
#include "manifest_envelope.h"

#define ENVELOPE_FORMAT "stripebackup-encrypted"
#define ENVELOPE_VERSION "1.0"
/* How a writer starts it: what tells an envelope from a manifest in the clear. */
#define ENVELOPE_START "{\"format\":\"" ENVELOPE_FORMAT "\""

/* ---------- writing ---------- */

/* A path worth a hint: printable ASCII that JSON carries as it is. */
static bool
plain_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e || *s == '"' || *s == '\\')
			return false;
	return true;
}

/* Where each stripe is: hints for finding another copy, trusted for nothing. */
static bool
add_stripes(cJSON *root, const SbManifest *m)
{
	cJSON	   *stripes = cJSON_AddArrayToObject(root, "stripes");
	uint32_t	i;

	for (i = 0; stripes != NULL && i < m->nstripes; i++)
	{
		cJSON	   *s = cJSON_CreateObject();

		if (s == NULL || !cJSON_AddItemToArray(stripes, s))
			return false;
		if (plain_ascii(m->stripes[i].destination) &&
			cJSON_AddStringToObject(s, "destination", m->stripes[i].destination) == NULL)
			return false;
		if (cJSON_AddStringToObject(s, "file_name", m->stripes[i].file_name) == NULL)
			return false;
	}
	return stripes != NULL;
}

/* The sealed manifest's bytes as base64 (malloc'd). */
static char *
base64(const uint8_t *bytes, size_t len, SbError *err)
{
	char	   *out = sb_alloc(4 * ((len + 2) / 3) + 1, err);

	if (out != NULL)
		EVP_EncodeBlock((unsigned char *) out, bytes, (int) len);
	return out;
}

static cJSON *
envelope_json(const SbManifest *m, const uint8_t *wrapped, const char *sealed_b64)
{
	cJSON	   *root = cJSON_CreateObject();
	cJSON	   *enc;
	char		uuid[33],
				key[2 * SB_CRYPTO_WRAPPED_LEN + 1];
	bool		ok;

	sb_hex_encode(m->uuid, 16, uuid);
	sb_hex_encode(wrapped, SB_CRYPTO_WRAPPED_LEN, key);
	ok = root != NULL && cJSON_AddStringToObject(root, "format", ENVELOPE_FORMAT) &&
		cJSON_AddStringToObject(root, "format_version", ENVELOPE_VERSION) &&
		cJSON_AddStringToObject(root, "backup_uuid", uuid) &&
		(enc = cJSON_AddObjectToObject(root, "encryption")) != NULL &&
		cJSON_AddStringToObject(enc, "cipher", "aes-256-gcm") &&
		cJSON_AddStringToObject(enc, "key_derivation", "hkdf-sha256") &&
		cJSON_AddStringToObject(enc, "wrapped_key", key) &&
		add_stripes(root, m) &&
		cJSON_AddStringToObject(root, "sealed_manifest", sealed_b64);
	if (!ok)
	{
		cJSON_Delete(root);
		return NULL;
	}
	return root;
}

/* The envelope of M, whose manifest text INNER (LEN bytes) it seals. */
static char *
envelope(const SbManifest *m, const uint8_t *wrapped, const char *inner, size_t inner_len,
		 size_t *len, SbError *err)
{
	uint8_t    *sealed = NULL;
	size_t		sealed_len;
	char	   *b64 = NULL;
	cJSON	   *root = NULL;
	char	   *text = NULL;
	char	   *out = NULL;

	if (sb_cipher_seal_manifest(m->cipher, (const uint8_t *) inner, inner_len, &sealed, &sealed_len, err) &&
		(b64 = base64(sealed, sealed_len, err)) != NULL &&
		((root = envelope_json(m, wrapped, b64)) == NULL ||
		 (text = cJSON_PrintUnformatted(root)) == NULL))
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest's envelope");
	if (text != NULL && (out = sb_alloc(strlen(text) + 2, err)) != NULL)
	{
		*len = strlen(text) + 1;
		memcpy(out, text, *len - 1);
		out[*len - 1] = '\n';
		out[*len] = '\0';
	}
	free(sealed);
	free(b64);
	cJSON_Delete(root);
	cJSON_free(text);
	return out;
}

char *
sb_manifest_publishable(const SbManifest *m, const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN], size_t *len,
						SbError *err)
{
	char	   *inner = sb_manifest_serialize(m, len, err);
	char	   *out;

	if (inner == NULL || m->cipher == NULL)
		return inner;
	out = envelope(m, wrapped, inner, *len, len, err);
	free(inner);
	return out;
}

/* ---------- reading ---------- */

static const char *
get_string(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Exactly LEN bytes of lowercase hex. */
static bool
from_hex(const char *hex, uint8_t *out, size_t len)
{
	size_t		i;

	if (hex == NULL || strlen(hex) != 2 * len)
		return false;
	for (i = 0; i < 2 * len; i++)
	{
		char		c = hex[i];
		int			d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (d < 0)
			return false;
		out[i / 2] = (uint8_t) (i % 2 == 0 ? d << 4 : out[i / 2] | d);
	}
	return true;
}

/* Base64 into a malloc'd buffer (*LEN bytes); NULL if it is not base64. */
static uint8_t *
unbase64(const char *text, size_t *len, SbError *err)
{
	size_t		n = text ? strlen(text) : 0;
	uint8_t    *out;
	int			got;

	if (n == 0 || n % 4 != 0)
		return NULL;
	if ((out = sb_alloc(n / 4 * 3 + 1, err)) == NULL)
		return NULL;
	got = EVP_DecodeBlock(out, (const unsigned char *) text, (int) n);
	if (got < 0)
	{
		free(out);
		return NULL;
	}
	/* EVP_DecodeBlock counts the padding as zero bytes */
	*len = (size_t) got - (text[n - 1] == '=') - (text[n - 2] == '=');
	return out;
}

typedef struct Envelope
{
	uint8_t		uuid[16];
	uint8_t		wrapped[SB_CRYPTO_WRAPPED_LEN];
	uint8_t    *sealed;
	size_t		sealed_len;
} Envelope;

static bool
parse_envelope(const char *bytes, size_t len, Envelope *e, SbError *err)
{
	cJSON	   *root = cJSON_ParseWithLength(bytes, len);
	const cJSON *enc = cJSON_GetObjectItemCaseSensitive(root, "encryption");
	const char *version = get_string(root, "format_version");
	bool		ok;

	memset(e, 0, sizeof(*e));
	sb_error_clear(err);
	ok = root != NULL && version != NULL && strcmp(version, ENVELOPE_VERSION) == 0 &&
		from_hex(get_string(root, "backup_uuid"), e->uuid, 16) &&
		cJSON_IsObject(enc) && get_string(enc, "cipher") && strcmp(get_string(enc, "cipher"), "aes-256-gcm") == 0 &&
		get_string(enc, "key_derivation") && strcmp(get_string(enc, "key_derivation"), "hkdf-sha256") == 0 &&
		from_hex(get_string(enc, "wrapped_key"), e->wrapped, SB_CRYPTO_WRAPPED_LEN) &&
		(e->sealed = unbase64(get_string(root, "sealed_manifest"), &e->sealed_len, err)) != NULL;
	if (!ok && err->code != SB_ENOMEM)
		sb_error_set(err, version != NULL && strcmp(version, ENVELOPE_VERSION) != 0 ? SB_EVERSION : SB_ECORRUPT,
					 "not an envelope of an encrypted backup as this version writes it (format_version %.16s)",
					 version ? version : "missing");
	cJSON_Delete(root);
	return ok;
}

/* The manifest the envelope E seals, opened with KEY; it must name E's backup. */
static SbManifest *
open_envelope(const Envelope *e, const SbKey *key, SbError *err)
{
	SbCipher   *cipher = sb_alloc(sizeof(SbCipher), err);
	uint8_t    *inner = NULL;
	size_t		inner_len;
	SbManifest *m = NULL;

	if (cipher != NULL && sb_cipher_open(key, e->uuid, e->wrapped, cipher, err) &&
		sb_cipher_open_manifest(cipher, e->sealed, e->sealed_len, &inner, &inner_len, err))
		m = sb_manifest_from_json((const char *) inner, inner_len, err);
	free(inner);
	if (m != NULL && (memcmp(m->uuid, e->uuid, 16) != 0 || !m->encrypted))
	{
		sb_manifest_free(m);
		m = NULL;
		sb_error_set(err, SB_ECORRUPT, "the sealed manifest is of another backup than its envelope");
	}
	if (m != NULL)
		m->cipher = cipher;
	else if (cipher != NULL)
	{
		sb_cipher_clear(cipher);
		free(cipher);
	}
	return m;
}

bool
sb_manifest_is_envelope(const char *bytes, size_t len)
{
	return len >= strlen(ENVELOPE_START) && memcmp(bytes, ENVELOPE_START, strlen(ENVELOPE_START)) == 0;
}

/* The stripes of the envelope ROOT, each named as a writer names stripe K. */
static bool
outline_stripes(const cJSON *root, SbEnvelopeOutline *o)
{
	const cJSON *stripes = cJSON_GetObjectItemCaseSensitive(root, "stripes");
	const cJSON *s;

	if (!cJSON_IsArray(stripes) || cJSON_GetArraySize(stripes) < 1 ||
		cJSON_GetArraySize(stripes) > SB_MAX_STRIPES)
		return false;
	cJSON_ArrayForEach(s, stripes)
	{
		const char *name = get_string(s, "file_name");
		const char *dest = get_string(s, "destination");

		sb_stripe_file_name(o->nstripes + 1, o->file_names[o->nstripes], sizeof(o->file_names[0]));
		if (name == NULL || strcmp(name, o->file_names[o->nstripes]) != 0)
			return false;
		o->destinations[o->nstripes++] = dest != NULL && plain_ascii(dest) ? strdup(dest) : NULL;
	}
	return true;
}

bool
sb_envelope_outline(const char *bytes, size_t len, SbEnvelopeOutline *o, SbError *err)
{
	cJSON	   *root = sb_manifest_is_envelope(bytes, len) ? cJSON_ParseWithLength(bytes, len) : NULL;
	const char *version = get_string(root, "format_version");
	bool		ok;

	memset(o, 0, sizeof(*o));
	ok = root != NULL && version != NULL && strcmp(version, ENVELOPE_VERSION) == 0 &&
		from_hex(get_string(root, "backup_uuid"), o->uuid, 16) && outline_stripes(root, o);
	cJSON_Delete(root);
	if (!ok)
	{
		sb_envelope_outline_free(o);
		return sb_error_set(err, SB_ECORRUPT, "not the envelope of an encrypted backup as this version writes it");
	}
	return true;
}

void
sb_envelope_outline_free(SbEnvelopeOutline *o)
{
	for (uint32_t i = 0; i < SB_MAX_STRIPES; i++)
	{
		free(o->destinations[i]);
		o->destinations[i] = NULL;
	}
}

SbManifest *
sb_manifest_from_bytes(const char *bytes, size_t len, const SbKey *key, SbError *err)
{
	Envelope	e;
	SbManifest *m = NULL;

	if (!sb_manifest_is_envelope(bytes, len))
		return sb_manifest_from_json(bytes, len, err);
	if (key == NULL)
	{
		sb_error_set(err, SB_EKEY, "the backup is encrypted: its key is needed "
					 "(stripebackup.encryption_key_file, or the command's --encryption-key-file)");
		return NULL;
	}
	if (!parse_envelope(bytes, len, &e, err))
	{
		free(e.sealed);
		return NULL;
	}
	m = open_envelope(&e, key, err);
	free(e.sealed);
	if (m != NULL && !sb_sha256(bytes, len, m->json_sha256, err))
	{
		sb_manifest_free(m);
		return NULL;
	}
	if (m != NULL)
		m->json_length = len;
	return m;
}
