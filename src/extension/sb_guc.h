/*
 * sb_guc.h
 *		stripebackup.* settings.
 */
#ifndef SB_GUC_H
#define SB_GUC_H

#include "stripebackup/sb_archive.h"

extern int	sb_guc_buffer_count;
extern int	sb_guc_redundancy;
extern int	sb_guc_transfer_size_kb;
extern int	sb_guc_frame_size_kb;
extern int	sb_guc_compression_workers;
extern bool sb_guc_fast_checkpoint;
extern int	sb_guc_io_method;
extern int	sb_guc_queue_depth;
extern bool sb_guc_direct_io;
extern bool sb_guc_skip_unchanged;
extern bool sb_guc_use_wal_summaries;
extern char *sb_guc_max_rate;
extern int	sb_guc_max_memory_kb;
extern char *sb_guc_archive_destinations;
extern char *sb_guc_encryption_key_file;
extern int	sb_guc_archive_compression;
extern int	sb_guc_archive_level;
extern int	sb_guc_archive_workers;
extern int	sb_guc_archive_batch;
extern int	sb_guc_archive_redundancy;
extern int	sb_guc_check_max_backup_age;
extern int	sb_guc_retention_full_count;
extern int	sb_guc_retention_window;

/*
 * The folders of stripebackup.archive_destinations (TEXT) into OUT (room for
 * SB_MAX_STRIPES): how many, 0 when none is set, -1 with *WHY when wrong.
 */
extern int	sbx_guc_archive_destination_list(const char *text, char (*out)[MAXPGPATH], const char **why);

/* stripebackup.max_memory in bytes. */
extern uint64 sbx_guc_max_memory_bytes(void);

/* Rate limits for N destinations (MB/s, 0 = none) from stripebackup.max_rate. */
extern void sbx_guc_max_rates(int n, double *rates);

/* The I/O method to use; a NOTICE, once per session, when io_uring is not available. */
extern int	sbx_guc_io_method_checked(void);

/*
 * Read options from the settings, for the engine's threads run in this
 * session (RATES: room for SB_MAX_STRIPES, the limits); no tick set.
 */
extern void sbx_guc_read_options(SbReadOptions *o, double *rates);

/* Define every stripebackup.* setting. */
extern void sbx_guc_define(void);

#endif							/* SB_GUC_H */
