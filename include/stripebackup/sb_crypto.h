/*
 * sb_crypto.h
 *		The user's encryption key, as the callers load it.
 *
 * An encrypted backup's chunks and manifest are sealed with AES-256-GCM
 * under keys derived from a random data key of that backup; the data key is
 * stored wrapped by a key derived from the user's key file (docs/FORMAT.md,
 * "Encrypted backups").  The key file holds the secret itself: at least 32
 * bytes (one trailing newline is not part of it), for example
 * `openssl rand -base64 48`.  Like an SSH or a TLS private key, it is refused
 * when anyone but its owner may read or write it.
 */
#ifndef SB_CRYPTO_H
#define SB_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

#define SB_KEY_MIN_BYTES 32
#define SB_KEY_MAX_BYTES 1024

typedef struct SbKey
{
	uint8_t		secret[SB_KEY_MAX_BYTES];
	size_t		len;
} SbKey;

/*
 * Read the key file PATH into KEY: SB_EKEY naming the path (never the
 * content) if it cannot be read, is not a regular file, may be read or
 * written by others than its owner, or holds fewer than SB_KEY_MIN_BYTES or
 * more than SB_KEY_MAX_BYTES bytes.
 */
extern bool sb_key_load(const char *path, SbKey *key, SbError *err);

/* Wipe KEY's secret (memory the compiler may not skip clearing). */
extern void sb_key_clear(SbKey *key);

#endif							/* SB_CRYPTO_H */
