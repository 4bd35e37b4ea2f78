/*
 * path_set.h
 *		The checks of a manifest's paths (unique, and never under a file or
 *		symbolic link it lists) without its table: each path kept as a
 *		128-bit hash, the directories apart, and each entry checked against
 *		them as the entries are read again in order.
 *
 * Two different paths share a hash with odds of about n^2 / 2^129 (for a
 * million files, 1 in 10^27): the price of 16 bytes a file instead of the
 * paths themselves.
 */
#ifndef SB_PATH_SET_H
#define SB_PATH_SET_H

#include "stripebackup/sb_manifest.h"

typedef struct SbPathSet SbPathSet;

extern SbPathSet *sb_path_set_new(SbError *err);

/* Note entry E's path and whether it is a directory. */
extern bool sb_path_set_add(SbPathSet *set, const SbEntry *e, SbError *err);

/* Every path noted: sorted, and a path listed twice found (reported by the check below). */
extern void sb_path_set_finish(SbPathSet *set);

/*
 * After finish, each entry again: E is not listed twice and lies under no
 * listed path that is not a directory.  Entries in any order.
 */
extern bool sb_path_set_check_parents(SbPathSet *set, const SbEntry *e, SbError *err);

extern void sb_path_set_free(SbPathSet *set);

#endif							/* SB_PATH_SET_H */
