/*
 * archive_auth.h
 *		Which manifest copy an archive trusts: the one whose SHA-256 the
 *		stripes' trailers record (archive_auth.c).
 */
#ifndef SB_ARCHIVE_AUTH_H
#define SB_ARCHIVE_AUTH_H

#include "stripebackup/sb_archive.h"

/*
 * Where stripe I of manifest M is, for an archive opened at LOCATION: next
 * to the manifest the user pointed at (a folder copied whole), else in the
 * backup folder of the destination it was written to (an object reached
 * with S3).  Malloc'd.
 */
extern char *sb_archive_locate_stripe(const char *location, const SbS3Settings *s3, const SbManifest *m,
									  uint32_t i, SbError *err);

/*
 * Read A->location's manifest copy and authenticate it against the
 * trailers of the stripes it can reach; if it is not the backup's, or not
 * what EXPECT says, look for a copy that is in EXPECT's folders, then in
 * the other destinations.  Sets A's manifest, manifest_path,
 * authenticated, stripe_paths and notes.
 */
extern bool sb_archive_authenticate(SbArchive *a, const SbArchiveExpect *expect, SbError *err);

/*
 * After stripe I moved: if its trailer records the manifest's SHA-256, A is
 * authenticated.  A stripe of the same backup recording another digest
 * shows an unauthenticated manifest wrong: SB_ECORRUPT.
 */
extern bool sb_archive_recheck_stripe(SbArchive *a, uint32_t i, SbError *err);

/*
 * Every manifest copy in the location and the backup's destinations that
 * exists but is not byte for byte the one in use: one problem each.
 * Returns how many.
 */
extern uint64_t sb_archive_report_copies(const SbArchive *a, SbProblemFn on_problem,
										 void *problem_arg);

/* Add NOTE to what opening A found amiss (a->notes). */
extern bool sb_archive_add_note(SbArchive *a, const char *note, SbError *err);

/*
 * With redundancy: which of A's stripes are lost, and why (a->lost_why,
 * a->nlost), each one a note (stripe_survey.c).  False only when memory
 * runs out.
 */
extern bool sb_archive_survey(SbArchive *a, SbError *err);
extern bool sb_archive_survey_stripe(SbArchive *a, uint32_t i, SbError *err);

#endif							/* SB_ARCHIVE_AUTH_H */
