/*
 * manifest_envelope.c
 *		An encrypted backup's manifest.json: an envelope in the clear that
 *		names the backup, the cipher, the data key wrapped under the user's
 *		key and where the stripes are (so that a damaged copy's destinations
 *		can still be searched), then holds the manifest's text sealed in
 *		segments (base64), each authenticated on its own.
 *
 * The text of a manifest of a million files is some 150 MB: it is never
 * whole in memory.  The writer seals it a segment at a time as it is
 * emitted, and emits it twice (to hash it, then into every copy) to the
 * same bytes, the nonces being made from what they seal (crypto.h).  The
 * reader opens a segment at a time, and hands on a segment's text only once
 * its tag checks: every segment is bound to the backup, to its place and to
 * whether it is the last, so none can be altered, moved, dropped or added,
 * nor the text cut short, without the open failing.
 *
 * Nothing in the envelope is trusted but what opens: the wrapped key must
 * unwrap under the user's key, every segment must open under the data key
 * with the envelope's uuid bound in, and the manifest inside must name the
 * same backup.  The stripes' trailers record the SHA-256 of the envelope's
 * bytes, as they do a plain manifest's.
 */
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "format/checksum.h"
#include "util/fsutil.h"
#include "manifest/json_scan.h"
#include "manifest/manifest_envelope.h"
#include "manifest/manifest_text.h"

#define ENVELOPE_FORMAT "stripebackup-encrypted"
#define ENVELOPE_VERSION "2.0"
/* How a writer starts it: what tells an envelope from a manifest in the clear. */
#define ENVELOPE_START "{\"format\":\"" ENVELOPE_FORMAT "\""
#define SEGMENTS_KEY "\"sealed_manifest\""

/* The manifest's text a writer seals at a time; a reader takes up to SEGMENT_MAX. */
#define SEGMENT_BYTES ((size_t) 1 << 20)
#define SEGMENT_MAX ((size_t) 16 << 20)
#define BASE64_LEN(n) (4 * (((n) + 2) / 3))
/* What a segment's base64 may decode into, its padding counted as bytes (as OpenSSL writes them) */
#define SEALED_CAP (SEGMENT_MAX + SB_CRYPTO_OVERHEAD + 2)
/* What the members before the segments may hold in all: 64 stripes and their destinations. */
#define HEAD_MAX ((size_t) 1 << 20)

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

/* The envelope's members before its segments, as one object (cJSON's text, malloc'd). */
static char *
head_text(const SbManifest *m, const uint8_t *wrapped, SbError *err)
{
	cJSON	   *root = cJSON_CreateObject();
	cJSON	   *enc;
	char		uuid[33],
				key[2 * SB_CRYPTO_WRAPPED_LEN + 1];
	char	   *text = NULL;

	sb_hex_encode(m->uuid, 16, uuid);
	sb_hex_encode(wrapped, SB_CRYPTO_WRAPPED_LEN, key);
	if (root != NULL && cJSON_AddStringToObject(root, "format", ENVELOPE_FORMAT) &&
		cJSON_AddStringToObject(root, "format_version", ENVELOPE_VERSION) &&
		cJSON_AddStringToObject(root, "backup_uuid", uuid) &&
		(enc = cJSON_AddObjectToObject(root, "encryption")) != NULL &&
		cJSON_AddStringToObject(enc, "cipher", "aes-256-gcm") &&
		cJSON_AddStringToObject(enc, "key_derivation", "hkdf-sha256") &&
		cJSON_AddStringToObject(enc, "wrapped_key", key) &&
		add_stripes(root, m))
		text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (text == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory writing the manifest's envelope");
	return text;
}

/* The manifest's text, sealed a segment at a time as it is emitted. */
typedef struct Sealer
{
	const SbCipher *cipher;
	SbTextSink	sink;
	void	   *arg;
	uint8_t    *plain;			/* SEGMENT_BYTES: the segment being filled */
	size_t		fill;
	uint8_t    *sealed;
	char	   *text;			/* a sealed segment in base64, its quotes and a comma */
	uint64_t	index;			/* of the segment being filled */
} Sealer;

static bool
flush_segment(Sealer *s, bool last, SbError *err)
{
	char	   *p = s->text;

	if (!sb_cipher_seal_segment(s->cipher, s->index, last, s->plain, s->fill, s->sealed, err))
		return false;
	if (s->index > 0)
		*p++ = ',';
	*p++ = '"';
	p += EVP_EncodeBlock((unsigned char *) p, s->sealed, (int) (s->fill + SB_CRYPTO_OVERHEAD));
	*p++ = '"';
	s->index++;
	s->fill = 0;
	return s->sink(s->arg, s->text, (size_t) (p - s->text), err);
}

static bool
seal_text(void *arg, const char *text, size_t len, SbError *err)
{
	Sealer	   *s = arg;

	while (len > 0)
	{
		size_t		n;

		if (s->fill == SEGMENT_BYTES && !flush_segment(s, false, err))
			return false;
		n = len < SEGMENT_BYTES - s->fill ? len : SEGMENT_BYTES - s->fill;
		memcpy(s->plain + s->fill, text, n);
		s->fill += n;
		text += n;
		len -= n;
	}
	return true;
}

/* The envelope of M: its head, then M's text sealed, the last segment marked so. */
static bool
emit_envelope(const SbManifest *m, const uint8_t *wrapped, SbTextSink sink, void *arg, SbError *err)
{
	Sealer		s = {m->cipher, sink, arg, NULL, 0, NULL, NULL, 0};
	char	   *head = head_text(m, wrapped, err);
	bool		ok = head != NULL &&
		(s.plain = sb_alloc(SEGMENT_BYTES, err)) != NULL &&
		(s.sealed = sb_alloc(SEGMENT_BYTES + SB_CRYPTO_OVERHEAD, err)) != NULL &&
		(s.text = sb_alloc(BASE64_LEN(SEGMENT_BYTES + SB_CRYPTO_OVERHEAD) + 4, err)) != NULL;

	/* the head's object, left open for the segments */
	ok = ok && sink(arg, head, strlen(head) - 1, err) &&
		sink(arg, "," SEGMENTS_KEY ":[", strlen("," SEGMENTS_KEY ":["), err) &&
		sb_manifest_emit(m, seal_text, &s, err) && flush_segment(&s, true, err) &&
		sink(arg, "]}\n", 3, err);
	cJSON_free(head);
	free(s.plain);
	free(s.sealed);
	free(s.text);
	return ok;
}

bool
sb_manifest_emit_published(const SbManifest *m, const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN],
						   SbTextSink sink, void *arg, SbError *err)
{
	return m->cipher == NULL ? sb_manifest_emit(m, sink, arg, err) :
		emit_envelope(m, wrapped, sink, arg, err);
}

/* ---------- reading: the members before the segments ---------- */

static const char *
get_string(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static bool
is_string(const cJSON *o, const char *key, const char *want)
{
	const char *v = get_string(o, key);

	return v != NULL && strcmp(v, want) == 0;
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

/* What an envelope says before its segments. */
typedef struct Head
{
	uint8_t		wrapped[SB_CRYPTO_WRAPPED_LEN];
	SbEnvelopeOutline outline;
} Head;

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

/* The head DOC (LEN bytes, one object) into *H: every member as this version writes it. */
static bool
parse_head(const char *doc, size_t len, Head *h, SbError *err)
{
	cJSON	   *root = cJSON_ParseWithLength(doc, len);
	const cJSON *enc = cJSON_GetObjectItemCaseSensitive(root, "encryption");
	const char *version = get_string(root, "format_version");
	bool		ok;

	ok = root != NULL && is_string(root, "format", ENVELOPE_FORMAT) &&
		version != NULL && strcmp(version, ENVELOPE_VERSION) == 0 &&
		from_hex(get_string(root, "backup_uuid"), h->outline.uuid, 16) &&
		cJSON_IsObject(enc) && is_string(enc, "cipher", "aes-256-gcm") &&
		is_string(enc, "key_derivation", "hkdf-sha256") &&
		from_hex(get_string(enc, "wrapped_key"), h->wrapped, SB_CRYPTO_WRAPPED_LEN) &&
		outline_stripes(root, &h->outline);
	if (!ok)
		sb_error_set(err, version != NULL && strcmp(version, ENVELOPE_VERSION) != 0 ? SB_EVERSION : SB_ECORRUPT,
					 "not an envelope of an encrypted backup as this version writes it (format_version %.16s)",
					 version ? version : "missing");
	cJSON_Delete(root);
	return ok;
}

/* TEXT (LEN bytes) after what *DOC holds, within HEAD_MAX. */
static bool
append(char **doc, size_t *doc_len, const char *text, size_t len, SbError *err)
{
	char	   *grown;

	if (*doc_len + len > HEAD_MAX)
		return sb_error_set(err, SB_ECORRUPT, "manifest: an envelope's members hold more than %zu bytes",
							HEAD_MAX);
	if ((grown = realloc(*doc, *doc_len + len + 1)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory reading the manifest's envelope");
	memcpy(grown + *doc_len, text, len);
	*doc_len += len;
	grown[*doc_len] = '\0';
	*doc = grown;
	return true;
}

/* One member before the segments, into DOC; *AT_SEGMENTS when it is their key (their value not consumed). */
static bool
read_member(SbJsonScan *j, char **doc, size_t *doc_len, bool *at_segments)
{
	char	   *key = NULL;
	size_t		key_len,
				start,
				len;
	bool		ok = sb_json_key(j, &key, &key_len);

	*at_segments = ok && strcmp(key, SEGMENTS_KEY) == 0;
	if (ok && !*at_segments)
	{
		ok = sb_json_delimit(j, &start, &len) &&
			append(doc, doc_len, *doc_len > 1 ? "," : "", *doc_len > 1 ? 1 : 0, j->err) &&
			append(doc, doc_len, key, key_len, j->err) && append(doc, doc_len, ":", 1, j->err) &&
			append(doc, doc_len, j->buf + start, len, j->err);
		j->pos = start + len;
	}
	free(key);
	return ok;
}

/*
 * The members before the segments (which the writer puts last), into *H
 * (zeroed first); J is then at the first segment.
 */
static bool
read_head(SbJsonScan *j, Head *h)
{
	char	   *doc = NULL;
	size_t		doc_len = 0;
	bool		at_segments = false;
	bool		ok;

	memset(h, 0, sizeof(*h));
	ok = sb_json_expect(j, '{') && append(&doc, &doc_len, "{", 1, j->err);
	while (ok && !at_segments)
	{
		int			c;

		ok = sb_json_peek(j, &c);
		if (ok && c == '}')
			ok = sb_error_set(j->err, SB_ECORRUPT, "manifest: an envelope without " SEGMENTS_KEY);
		ok = ok && (doc_len == 1 || sb_json_expect(j, ',')) && read_member(j, &doc, &doc_len, &at_segments);
	}
	ok = ok && append(&doc, &doc_len, "}", 1, j->err) && parse_head(doc, doc_len, h, j->err) &&
		sb_json_expect(j, '[');
	free(doc);
	return ok;
}

/* After the last segment: the object closed, then nothing but white space. */
static bool
read_tail(SbJsonScan *j)
{
	int			c;

	if (!sb_json_expect(j, '}') || !sb_json_peek(j, &c))
		return false;
	return c == SB_JSON_AT_END || sb_json_not_json(j);
}

/* ---------- reading: the segments ---------- */

/* The segments of an envelope, opened one at a time as their text is asked for. */
typedef struct Opener
{
	SbJsonScan	j;				/* the envelope's text, at the next segment */
	SbCipher	cipher;
	uint64_t	index;			/* of the next segment */
	bool		last_opened;
	uint8_t    *sealed;			/* the segment being opened, decoded */
	uint8_t    *plain;			/* the text of the segment opened last */
	size_t		cap;			/* of both: what the longest segment so far needed */
	size_t		plain_len;
	size_t		plain_pos;
} Opener;

/* The next segment, a string, delimited: [*START, *START + *LEN) of J's buffer, quotes and all. */
static bool
delimit_segment(SbJsonScan *j, size_t *start, size_t *len)
{
	int			c;

	if (!sb_json_peek(j, &c))
		return false;
	if (c != '"')
		return sb_error_set(j->err, SB_ECORRUPT, "manifest: an envelope's segment is not a string");
	return sb_json_delimit(j, start, len);
}

/* Past the segment delimited at START (LEN bytes): *LAST when the array ends after it. */
static bool
pass_segment(SbJsonScan *j, size_t start, size_t len, bool *last)
{
	bool		more;

	j->pos = start + len;
	if (!sb_json_next_item(j, ']', &more))
		return false;
	*last = !more;
	return true;
}

/* Base64 (LEN bytes) into OUT (room for LEN / 4 * 3 bytes); false if it is not base64. */
static bool
unbase64(const char *b64, size_t len, uint8_t *out, size_t *out_len)
{
	int			got;

	if (len == 0 || len % 4 != 0)
		return false;
	if ((got = EVP_DecodeBlock(out, (const unsigned char *) b64, (int) len)) < 0)
		return false;
	/* EVP_DecodeBlock counts the padding as zero bytes */
	*out_len = (size_t) got - (b64[len - 1] == '=') - (b64[len - 2] == '=');
	return true;
}

/* Room in O's buffers for a segment whose base64 is LEN bytes (at most SEALED_CAP decoded). */
static bool
make_room(Opener *o, size_t len)
{
	size_t		need = len / 4 * 3;
	uint8_t    *sealed,
			   *plain;

	if (need <= o->cap)
		return true;
	if (need > SEALED_CAP)
		return sb_error_set(o->j.err, SB_ECORRUPT, "manifest: segment %llu of the envelope is longer "
							"than %zu bytes", (unsigned long long) o->index, SEGMENT_MAX);
	free(o->sealed);
	free(o->plain);
	o->sealed = sealed = malloc(need);
	o->plain = plain = malloc(need);
	o->cap = sealed != NULL && plain != NULL ? need : 0;
	return o->cap > 0 || sb_error_set(o->j.err, SB_ENOMEM, "out of memory reading the manifest's envelope");
}

static bool
open_segment(Opener *o)
{
	size_t		start,
				len,
				sealed_len = 0;
	bool		decoded,
				last;

	if (!delimit_segment(&o->j, &start, &len) || !make_room(o, len))
		return false;
	decoded = len >= 2 && unbase64(o->j.buf + start + 1, len - 2, o->sealed, &sealed_len);
	if (!pass_segment(&o->j, start, len, &last))
		return false;
	if (!decoded || sealed_len < SB_CRYPTO_OVERHEAD || sealed_len > SEGMENT_MAX + SB_CRYPTO_OVERHEAD)
		return sb_error_set(o->j.err, SB_ECORRUPT, "manifest: segment %llu of the envelope is not a sealed "
							"segment in base64", (unsigned long long) o->index);
	o->plain_len = sealed_len - SB_CRYPTO_OVERHEAD;
	o->plain_pos = 0;
	if (!sb_cipher_open_segment(&o->cipher, o->index, last, o->sealed, sealed_len, o->plain, o->j.err))
	{
		sb_error_prefix(o->j.err, "manifest: segment %llu of the envelope",
						(unsigned long long) o->index);
		return false;
	}
	o->index++;
	o->last_opened = last;
	return true;
}

/* The manifest's text, as the segments open: what the manifest's reader reads. */
static ssize_t
read_opened(void *arg, char *buf, size_t len, SbError *err)
{
	Opener	   *o = arg;
	size_t		n;

	(void) err;					/* o->j.err, the same */
	while (o->plain_pos == o->plain_len)
	{
		if (o->last_opened)
			return 0;
		if (!open_segment(o))
			return -1;
	}
	n = o->plain_len - o->plain_pos < len ? o->plain_len - o->plain_pos : len;
	memcpy(buf, o->plain + o->plain_pos, n);
	o->plain_pos += n;
	return (ssize_t) n;
}

/* The manifest the open envelope O seals, its entries kept as KEEP says; it must name O's backup. */
static SbManifest *
read_sealed(Opener *o, const Head *h, SbEntryKeep keep, const char *spool_dir, SbError *err)
{
	SbManifest *m = sb_manifest_read_stream(read_opened, o, keep, spool_dir, err);

	if (m != NULL && (memcmp(m->uuid, h->outline.uuid, 16) != 0 || !m->encrypted))
	{
		sb_manifest_free(m);
		sb_error_set(err, SB_ECORRUPT, "the sealed manifest is of another backup than its envelope");
		return NULL;
	}
	if (m != NULL && (!o->last_opened || !read_tail(&o->j)))
	{
		sb_manifest_free(m);
		return NULL;
	}
	return m;
}

static SbManifest *
open_envelope(Opener *o, const SbKey *key, SbEntryKeep keep, const char *spool_dir, SbError *err)
{
	Head		h;
	SbManifest *m = NULL;

	memset(&h, 0, sizeof(h));
	o->j.max_value = BASE64_LEN(SEGMENT_MAX + SB_CRYPTO_OVERHEAD) + 2;
	if (!read_head(&o->j, &h))
		goto done;
	if (key == NULL)
	{
		sb_error_set(err, SB_EKEY, "the backup is encrypted: its key is needed "
					 "(stripebackup.encryption_key_file, or the command's --encryption-key-file)");
		goto done;
	}
	if (!sb_cipher_open(key, h.outline.uuid, h.wrapped, &o->cipher, err) ||
		(m = read_sealed(o, &h, keep, spool_dir, err)) == NULL)
		goto done;
	m->json_length = o->j.total;
	if (!sb_json_scan_end(&o->j, m->json_sha256) ||
		(m->cipher = sb_alloc(sizeof(SbCipher), err)) == NULL)
	{
		sb_manifest_free(m);
		m = NULL;
		goto done;
	}
	*m->cipher = o->cipher;
done:
	sb_envelope_outline_free(&h.outline);
	return m;
}

SbManifest *
sb_envelope_read_stream(SbManifestReadFn read, void *arg, const SbKey *key, SbEntryKeep keep,
						const char *spool_dir, SbError *err)
{
	Opener		o;
	SbManifest *m = NULL;

	memset(&o, 0, sizeof(o));
	sb_error_clear(err);
	if (sb_json_scan_begin(&o.j, read, arg, err))
		m = open_envelope(&o, key, keep, spool_dir, err);
	sb_json_scan_free(&o.j);
	sb_cipher_clear(&o.cipher);
	free(o.sealed);
	free(o.plain);
	return m;
}

bool
sb_manifest_is_envelope(const char *bytes, size_t len)
{
	return len >= strlen(ENVELOPE_START) && memcmp(bytes, ENVELOPE_START, strlen(ENVELOPE_START)) == 0;
}

/* ---------- the outline, without the key ---------- */

/* Every segment delimited, none opened; then the end of the envelope. */
static bool
skip_segments(SbJsonScan *j)
{
	size_t		start,
				len;
	bool		last = false;

	while (!last)
		if (!delimit_segment(j, &start, &len) || !pass_segment(j, start, len, &last))
			return false;
	return read_tail(j);
}

bool
sb_envelope_outline_stream(SbManifestReadFn read, void *arg, SbEnvelopeOutline *o,
						   uint8_t sha256[32], uint64_t *len, SbError *err)
{
	SbJsonScan	j;
	Head		h;
	bool		ok = sb_json_scan_begin(&j, read, arg, err);

	memset(&h, 0, sizeof(h));
	memset(o, 0, sizeof(*o));
	j.max_value = BASE64_LEN(SEGMENT_MAX + SB_CRYPTO_OVERHEAD) + 2;
	ok = ok && read_head(&j, &h) && skip_segments(&j);
	*len = j.total;
	ok = ok && sb_json_scan_end(&j, sha256);
	sb_json_scan_free(&j);
	if (ok)
		*o = h.outline;
	else
		sb_envelope_outline_free(&h.outline);
	return ok;
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
