/*
 * sb_paths.h
 *		Where a backup or a restore may write: never inside the running
 *		cluster (its data directory or any of its tablespaces).
 */
#ifndef SB_PATHS_H
#define SB_PATHS_H

/*
 * ERROR unless PATH (WHAT, for messages: "destination", "restore target") is
 * absolute and outside the data directory and every tablespace.
 */
extern void sb_check_outside_cluster(const char *path, const char *what);

/*
 * ERROR unless the N directories DIRS (WHATS, for messages) a restore writes
 * into are each outside the cluster, absent (with a writable parent) or
 * empty and writable, and none inside another.
 */
extern void sb_check_restore_directories(const char *const *dirs, const char *const *whats, int n);

#endif							/* SB_PATHS_H */
