/*
 * stripe_reader.h
 *		Opening one stripe file and reading its chunks, with every check that
 *		ties the stripe to its manifest (same backup, same number, an index
 *		that lists exactly the chunks the manifest puts there).
 */
#ifndef SB_STRIPE_READER_H
#define SB_STRIPE_READER_H

#include <stdint.h>

#include "stripebackup/sb_manifest.h"
#include "format/format.h"
#include "store/store.h"

typedef struct SbStripeReader
{
	const SbManifest *manifest;
	uint32_t	index;			/* 0-based */
	const char *path;
	SbStoreFile file;			/* a stripe file, or an object */
	uint64_t	file_size;
	SbStripeHeader header;
	SbTrailer	trailer;
	SbIndexEntry *entries;		/* its data chunks, in file order */
	uint64_t	nentries;
	SbIndexEntry *parity_entries;	/* its parity records (redundancy, FORMAT.md
									 * section 10), in file order: never in
									 * ENTRIES, which readers of data walk */
	uint64_t	nparity;
} SbStripeReader;

/* Open stripe INDEX at PATH (an object reached with S3) and load and check its index. */
extern bool sb_stripe_open(SbStripeReader *r, const SbManifest *m, uint32_t index,
						   const char *path, const SbS3Settings *s3, SbError *err);

/* Bytes of the I-th chunk record (header and payload), as the index says. */
extern size_t sb_stripe_record_length(const SbStripeReader *r, uint64_t i);

/*
 * Check the I-th chunk record, read into RECORD (GOT bytes of it): its
 * header against the index, and the payload's stored checksum.
 */
extern bool sb_stripe_check_record(const SbStripeReader *r, uint64_t i, const uint8_t *record,
								   size_t got, SbError *err);

/*
 * Check parity record E (FORMAT.md 10.2), read into RECORD (GOT bytes): its
 * header against its index entry, and its payload's hash.
 */
extern bool sb_stripe_check_parity_record(const SbIndexEntry *e, const uint8_t *record, size_t got,
										  SbError *err);

extern void sb_stripe_close(SbStripeReader *r);

/* The bytes of E's payload before sealing: the codec's output (all of it in the clear). */
extern uint32_t sb_entry_payload_len(const SbIndexEntry *e);

/* The XXH3-64 of E's raw bytes, unmasked with M's keys when the backup is encrypted. */
extern uint64_t sb_entry_raw_hash(const SbManifest *m, const SbIndexEntry *e);

#endif							/* SB_STRIPE_READER_H */
