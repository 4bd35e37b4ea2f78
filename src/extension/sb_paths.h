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

#endif							/* SB_PATHS_H */
