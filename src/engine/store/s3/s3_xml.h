/*
 * s3_xml.h
 *		The parts of S3's XML replies that the client reads, through libxml2's
 *		stream reader (no tree; a DOCTYPE or an entity refused).
 */
#ifndef SB_S3_XML_H
#define SB_S3_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_error.h"

/* One object of a listing, or one upload in progress. */
typedef struct SbS3Item
{
	const char *key;
	uint64_t	size;			/* objects */
	const char *upload_id;		/* uploads in progress */
} SbS3Item;

/* Called for each item of a listing; false stops (ERR set). */
typedef bool (*SbS3ItemFn) (void *arg, const SbS3Item *item, SbError *err);

/* A listing's page: whether more follows, and where from. */
typedef struct SbS3Page
{
	bool		truncated;
	char		next[1024];		/* NextContinuationToken, or the next key/upload markers (longer: refused) */
	char		next_upload[1024];
} SbS3Page;

/*
 * An <Error> document's Code and Message (each cut to its buffer); false
 * when BODY is not one.
 */
extern bool sb_s3_xml_error(const char *body, size_t len, char *code, size_t code_len,
							char *message, size_t message_len);

/* The text of the first element named NAME anywhere in BODY, into OUT. */
extern bool sb_s3_xml_text(const char *body, size_t len, const char *name, char *out,
						   size_t out_len, SbError *err);

/*
 * Each <Contents> of a ListObjectsV2 page (Key, Size) to FN; *PAGE its
 * continuation.  SB_ECORRUPT for a page of more than 1,000 items, a key
 * longer than S3's 1,024 bytes, a size that is not a number, bad XML.
 */
extern bool sb_s3_xml_objects(const char *body, size_t len, SbS3ItemFn fn, void *arg,
							  SbS3Page *page, SbError *err);

/* Each <Upload> of a ListMultipartUploads page (Key, UploadId) to FN; *PAGE its continuation; as above. */
extern bool sb_s3_xml_uploads(const char *body, size_t len, SbS3ItemFn fn, void *arg,
							  SbS3Page *page, SbError *err);

#endif							/* SB_S3_XML_H */
