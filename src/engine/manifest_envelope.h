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

#endif							/* SB_MANIFEST_ENVELOPE_H */
