/*
 * sb_guc.h
 *		stripebackup.* settings.
 */
#ifndef SB_GUC_H
#define SB_GUC_H

extern int	sb_guc_buffer_count;
extern int	sb_guc_transfer_size_kb;
extern int	sb_guc_compression_workers;
extern bool sb_guc_fast_checkpoint;

/* Define every stripebackup.* setting. */
extern void sb_guc_define(void);

#endif							/* SB_GUC_H */
