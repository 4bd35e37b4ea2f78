/*
 * io_s3.h
 *		Object storage behind the engine's I/O interface (io.h): a stripe in
 *		an S3 bucket is read by ranged GETs, several at once, and written by
 *		appending to its upload (s3_upload.h), as a file would be.
 */
#ifndef SB_IO_S3_H
#define SB_IO_S3_H

#include "util/io.h"
#include "store/s3/s3_upload.h"

/*
 * Reads of BUCKET/KEY: each operation (one iovec) a ranged GET of its
 * offset and length, up to DEPTH at once on a client of its own.
 */
extern SbIo *sb_io_new_s3_reader(const SbS3Config *config, const char *bucket, const char *key,
								 unsigned depth, SbError *err);

/*
 * Writes appended to UPLOAD (the caller's, not freed with the context):
 * each operation must start where the object ends so far.
 */
extern SbIo *sb_io_new_s3_appender(SbS3Upload *upload, SbError *err);

#endif							/* SB_IO_S3_H */
