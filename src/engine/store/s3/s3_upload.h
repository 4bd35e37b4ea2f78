/*
 * s3_upload.h
 *		An object written front to back, as a stripe is: bytes appended into
 *		part buffers, each full part uploaded while the next fills (several
 *		in flight), the last part and the multipart completion at the end.
 *		An object that ends before its first part is full goes up in one PUT.
 *
 * Parts are 8 MiB at first and double every 2,000 parts, so that S3's
 * 10,000 parts reach about 500 GB per object; every part but the last is at
 * least S3's 5 MiB.  Memory: (in_flight + 1) part buffers.
 */
#ifndef SB_S3_UPLOAD_H
#define SB_S3_UPLOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/s3/s3_client.h"

#define SB_S3_PART_FIRST (8u * 1024 * 1024)
#define SB_S3_PART_MIN (5u * 1024 * 1024)
#define SB_S3_MAX_PARTS 10000
#define SB_S3_PARTS_IN_FLIGHT 4	/* at most, per stripe */

typedef struct SbS3Upload SbS3Upload;

/*
 * An upload of BUCKET/KEY through a client of its own (made from CONFIG),
 * with up to IN_FLIGHT parts sent at once.  PART_SIZE 0 = SB_S3_PART_FIRST;
 * tests give smaller (at least SB_S3_PART_MIN).  Nothing is sent yet.
 */
extern SbS3Upload *sb_s3_upload_new(const SbS3Config *config, const char *bucket, const char *key,
									unsigned in_flight, size_t part_size, SbError *err);

/* Append LEN bytes; may wait for a part to go.  False (ERR) when a part failed. */
extern bool sb_s3_upload_append(SbS3Upload *u, const void *data, size_t len, SbError *err);

/* Bytes appended so far: where the next append lands in the object. */
extern uint64_t sb_s3_upload_size(const SbS3Upload *u);

/*
 * Wait until every full part sent is stored (what remains, less than a
 * part, waits for the end: only the last part may be small).
 */
extern bool sb_s3_upload_flush(SbS3Upload *u, SbError *err);

/* Send what remains, wait for every part, and make the object. */
extern bool sb_s3_upload_finish(SbS3Upload *u, SbError *err);

/*
 * Undo: wait for the parts in flight, abort the multipart upload (no part
 * is left stored), or delete the object when it was made.  Quiet: cleanup
 * goes on whatever fails; false when something may be left (ERR says what).
 */
extern bool sb_s3_upload_abort(SbS3Upload *u, SbError *err);

/* Free U (after finish or abort; an upload neither finished nor aborted is aborted). */
extern void sb_s3_upload_free(SbS3Upload *u);

/* "s3://bucket/key", for messages. */
extern const char *sb_s3_upload_name(const SbS3Upload *u);

#endif							/* SB_S3_UPLOAD_H */
