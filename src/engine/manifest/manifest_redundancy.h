/*
 * manifest_redundancy.h
 *		A manifest's redundancy checked against the layout it names
 *		(manifest_redundancy.c).
 */
#ifndef SB_MANIFEST_REDUNDANCY_H
#define SB_MANIFEST_REDUNDANCY_H

#include "stripebackup/sb_manifest.h"

/* Nothing to check without redundancy; else false (ERR names the value) unless FORMAT.md 10.3 holds. */
extern bool sb_manifest_check_redundancy(const SbManifest *m, SbError *err);

#endif							/* SB_MANIFEST_REDUNDANCY_H */
