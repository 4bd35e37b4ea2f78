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
extern void sbx_check_outside_cluster(const char *path, const char *what);

/*
 * Where a plan's sample of a restore into TARGET is written, on the file
 * system the restore will write: TARGET itself when it is a directory, else
 * the folder a restore would make it in.  ERROR where a restore would refuse
 * it: not absolute, inside the cluster, not a directory, no folder to make
 * it in.
 */
extern const char *sbx_restore_sample_folder(const char *target);

#endif							/* SB_PATHS_H */
