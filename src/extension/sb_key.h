/*
 * sb_key.h
 *		The encryption key in force: the file stripebackup.encryption_key_file
 *		names, in the caller's session, and the same file in the worker that
 *		runs the caller's job.
 */
#ifndef SB_KEY_H
#define SB_KEY_H

#include "stripebackup/sb_crypto.h"

/*
 * In the caller: copy the key file in force into BUF (LEN bytes; empty for
 * none) for its job's worker, after checking that it loads: a key file that
 * cannot be used is an ERROR here, before any row or file.
 */
extern void sbx_key_file_capture(char *buf, size_t len);

/* In a job's worker: the key file its caller captured is the one in force. */
extern void sbx_key_file_use_for_job(const char *path);

/*
 * The key in force, loaded (wiped and freed with the current memory
 * context), or NULL when no key file is set.  ERROR if it cannot be loaded.
 */
extern const SbKey *sbx_key_current(void);

#endif							/* SB_KEY_H */
