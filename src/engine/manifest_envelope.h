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
#include "crypto.h"

/*
 * What a backup writes as manifest.json for M (malloc'd, *LEN bytes): its
 * JSON, or, when M->cipher is set, the envelope sealing it with WRAPPED,
 * the data key wrapped under the user's key.
 */
extern char *sb_manifest_publishable(const SbManifest *m, const uint8_t wrapped[SB_CRYPTO_WRAPPED_LEN],
									 size_t *len, SbError *err);

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
 * The outline of the envelope BYTES: SB_ECORRUPT when it is not one, or its
 * stripes are not named stripe-1.sbs, stripe-2.sbs ... in order.
 */
extern bool sb_envelope_outline(const char *bytes, size_t len, SbEnvelopeOutline *o, SbError *err);
extern void sb_envelope_outline_free(SbEnvelopeOutline *o);

#endif							/* SB_MANIFEST_ENVELOPE_H */
