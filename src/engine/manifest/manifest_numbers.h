/*
 * manifest_numbers.h
 *		How the integers of a manifest are written (manifest_numbers.c).
 */
#ifndef SB_MANIFEST_NUMBERS_H
#define SB_MANIFEST_NUMBERS_H

#include <stddef.h>

#include "stripebackup/sb_error.h"

/*
 * Every number of the manifest TEXT (JSON that cJSON accepted) under a key
 * the format defines as an integer is written as a plain decimal integer,
 * without a sign unless the field may be negative.  SB_ECORRUPT if not.
 */
extern bool sb_manifest_check_integer_text(const char *text, size_t len, SbError *err);

#endif							/* SB_MANIFEST_NUMBERS_H */
