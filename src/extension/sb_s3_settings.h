/*
 * sb_s3_settings.h
 *		stripebackup.s3_* settings (sb_s3_settings.c).
 */
#ifndef SB_S3_SETTINGS_H
#define SB_S3_SETTINGS_H

#include "stripebackup/sb_s3.h"

/*
 * Define stripebackup.s3_endpoint, s3_region, s3_url_style,
 * s3_credentials_file, s3_ca_file, s3_bucket_endpoints, s3_allowed_buckets
 * and s3_timeout.
 */
extern void sbx_s3_settings_define(void);

/*
 * The server's stripebackup.s3_* settings as an SbS3Settings, for the
 * engine's options (every store the engine opens keeps the settings it was
 * given): the strings are the settings' own, valid until the next reload.
 */
extern const SbS3Settings *sbx_s3_settings(void);

/*
 * Before anything is sent to LOCATION (s3://bucket/prefix): ERROR when
 * stripebackup.s3_allowed_buckets does not hold it.  With no list, a backup
 * or the WAL archive (WRITES) to a bucket says so in a NOTICE, the first
 * time in this process for that bucket.
 */
extern void sbx_s3_settings_check_location(const char *location, bool writes);

#endif							/* SB_S3_SETTINGS_H */
