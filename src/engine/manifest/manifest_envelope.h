/*
 * manifest_envelope.h
 *		The bytes of manifest.json: a backup's manifest in the clear, or an
 *		encrypted backup's envelope (docs/FORMAT.md section 9), which keeps
 *		the manifest sealed beside the data key wrapped under the user's key.
 */
#ifndef SB_MANIFEST_ENVELOPE_H
#define SB_MANIFEST_ENVELOPE_H

#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_crypto.h"
#include "stripebackup/sb_manifest.h"
#include "stripebackup/sb_s3.h"
#include "crypto/crypto.h"

/*
 * The text of manifest.json for M, handed to SINK a block at a time: its
 * JSON, or, when M->cipher is set, the envelope sealing it, with WRAPPED,
 * the data key wrapped under the user's key.  The same bytes every time.
 */
extern bool sb_manifest_emit_published(const SbManifest *m, const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN],
									   SbTextSink sink, void *arg, SbError *err);

/*
 * The manifest the envelope whose text READ hands over seals, opened with
 * KEY (SB_EKEY when NULL or not the backup's) a segment at a time, its
 * entries kept as KEEP says; json_sha256 and json_length are the
 * envelope's.
 */
extern SbManifest *sb_envelope_read_stream(SbManifestReadFn read, void *arg, const SbKey *key,
										   SbEntryKeep keep, const char *spool_dir, SbError *err);

/* What an envelope says in the clear: enough to check its stripes without the key. */
typedef struct SbEnvelopeOutline
{
	uint8_t		uuid[16];
	uint32_t	nstripes;
	char		file_names[SB_MAX_STRIPES][32];
	char	   *destinations[SB_MAX_STRIPES];	/* hints, or NULL; malloc'd */
} SbEnvelopeOutline;

/* Whether BYTES (LEN) are an envelope, as a writer begins one. */
extern bool sb_manifest_is_envelope(const char *bytes, size_t len);

/*
 * The outline of the envelope whose text READ hands over, and the SHA-256
 * and length of that text, read to its end a block at a time (no segment
 * opened): SB_ECORRUPT when it is not an envelope as this version writes
 * one, or its stripes are not named stripe-1.sbs, stripe-2.sbs ... in order.
 */
extern bool sb_envelope_outline_stream(SbManifestReadFn read, void *arg, SbEnvelopeOutline *o,
									   uint8_t sha256[32], uint64_t *len, SbError *err);
/*
 * Is the manifest.json at PATH an envelope (*ENVELOPE)?  If so its outline,
 * and the SHA-256 and length of its text, as sb_envelope_outline_stream
 * (manifest_stream.c, which reads the files).
 */
extern bool sb_envelope_outline_path(const char *path, const SbS3Settings *s3, SbEnvelopeOutline *o,
									 uint8_t sha256[32], uint64_t *len, bool *envelope, SbError *err);

extern void sb_envelope_outline_free(SbEnvelopeOutline *o);

#endif							/* SB_MANIFEST_ENVELOPE_H */
