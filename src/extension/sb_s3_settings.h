/*
 * sb_s3_settings.h
 *		stripebackup.s3_* settings (sb_s3_settings.c).
 */
#ifndef SB_S3_SETTINGS_H
#define SB_S3_SETTINGS_H

/* Define stripebackup.s3_endpoint, s3_region, s3_url_style, s3_credentials_file and s3_ca_file. */
extern void sb_s3_settings_define(void);

#endif							/* SB_S3_SETTINGS_H */
