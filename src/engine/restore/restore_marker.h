/*
 * restore_marker.h
 *		The file a restore puts first into every directory it writes into,
 *		and removes last: a directory that still holds it is a restore that
 *		was cut short (a crash, a killed process), and whoever started that
 *		restore can recognize it and remove it (sb_restore_remove_incomplete).
 */
#ifndef SB_RESTORE_MARKER_H
#define SB_RESTORE_MARKER_H

#include <stdbool.h>

#include "stripebackup/sb_error.h"

/*
 * Write MARKER (the caller's words for this restore) into the open
 * directory DIRFD (PATH, for messages), saying whether the restore CREATED
 * it, and make it durable before anything else is written there.
 */
/* What a marker says of its directory: made by the restore, there before (empty), or a delta's. */
#define SB_MARKER_CREATED "created"
#define SB_MARKER_EXISTING "existing"
#define SB_MARKER_DELTA "delta"

extern bool sb_restore_marker_write(int dirfd, const char *path, const char *marker,
									const char *state, SbError *err);

/* Remove the marker from DIRFD: the restore is complete. */
extern bool sb_restore_marker_remove(int dirfd, const char *path, SbError *err);

#endif							/* SB_RESTORE_MARKER_H */
