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

/*
 * The manifest in the LEN bytes of a manifest.json: in the clear, or an
 * envelope opened with KEY (SB_EKEY when KEY is NULL or not the backup's).
 * Either way json_sha256 and json_length describe those bytes, which is
 * what the stripes' trailers record.
 */
extern SbManifest *sb_manifest_from_bytes(const char *bytes, size_t len, const SbKey *key, SbError *err);

#endif							/* SB_MANIFEST_ENVELOPE_H */
