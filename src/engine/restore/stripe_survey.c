/*
 * stripe_survey.c
 *		Which stripes of a backup with redundancy are lost (docs/FORMAT.md
 *		section 10.4), found as the archive opens: each stripe is opened as
 *		a reader opens it (header, trailer, index), so that a restore knows
 *		before it writes anything whether what is left is enough, and the
 *		read pipeline knows which stripes to recover rather than read.
 *
 * A backup without redundancy is not surveyed: every stripe is needed,
 * and the readers find a lost one as they always did.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_archive.h"
#include "restore/archive_auth.h"
#include "restore/stripe_reader.h"
#include "util/fsutil.h"

/* Stripe I's state: lost (and why) or not.  False only when memory runs out. */
bool
sb_archive_survey_stripe(SbArchive *a, uint32_t i, SbError *err)
{
	const SbManifest *m = a->manifest;
	SbStripeReader r;
	SbError		why;
	bool		lost;

	if (m->redundancy.parity == 0)
		return true;
	sb_error_clear(&why);
	lost = !sb_stripe_open(&r, m, i, a->stripe_paths[i], a->s3, &why);
	sb_stripe_close(&r);
	if (a->lost_why[i] != NULL)
		a->nlost--;
	free(a->lost_why[i]);
	a->lost_why[i] = NULL;
	if (!lost)
		return true;
	if ((a->lost_why[i] = sb_strdup(why.message, err)) == NULL)
		return false;
	a->nlost++;
	return true;
}

bool
sb_archive_survey(SbArchive *a, SbError *err)
{
	const SbManifest *m = a->manifest;
	char		note[1024];
	char		left[128];
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		if (!sb_archive_survey_stripe(a, i, err))
			return false;
	sb_archive_describe_redundancy(a, left, sizeof(left));
	for (i = 0; i < m->nstripes; i++)
	{
		if (a->lost_why[i] == NULL)
			continue;
		snprintf(note, sizeof(note),
				 "backup \"%s\": stripe %u of %u (\"%s\", destination \"%s\") is lost: %.400s; %s",
				 m->name, i + 1, m->nstripes, a->stripe_paths[i], m->stripes[i].destination,
				 a->lost_why[i], left);
		if (!sb_archive_add_note(a, note, err))
			return false;
	}
	return true;
}

bool
sb_archive_describe_redundancy(const SbArchive *a, char *buf, size_t len)
{
	uint32_t	m = a->manifest->redundancy.parity;
	uint32_t	n = a->manifest->nstripes;
	uint32_t	lost = 0,
				i;

	for (i = 0; i < n; i++)
		lost += a->lost_why[i] != NULL || a->damaged[i];
	if (lost > m || a->unrecovered > 0)
	{
		snprintf(buf, len, "NOT restorable: %u of %u destinations lost or damaged, redundancy %u",
				 lost, n, m);
		return false;
	}
	snprintf(buf, len, "restorable: %u of %u destinations lost, %u more may be lost", lost, n, m - lost);
	return true;
}

bool
sb_archive_check_lost(const SbArchive *a, SbError *err)
{
	const SbArchive *link;
	char		named[2048] = "";
	size_t		used = 0;
	bool		beyond = false;
	uint32_t	i;

	for (link = a; link != NULL; link = link->parent)
		beyond |= link->nlost > link->manifest->redundancy.parity;
	if (!beyond)
		return true;
	for (link = a; link != NULL; link = link->parent)
		for (i = 0; i < link->manifest->nstripes && used < sizeof(named); i++)
			if (link->lost_why[i] != NULL)
				used += (size_t) snprintf(named + used, sizeof(named) - used,
										  "%sbackup \"%s\" stripe %u (\"%s\"): %.300s",
										  used ? "; " : "", link->manifest->name, i + 1,
										  link->stripe_paths[i], link->lost_why[i]);
	for (link = a; link != NULL; link = link->parent)
		if (link->nlost > link->manifest->redundancy.parity)
			return sb_error_set(err, SB_ECORRUPT,
								"backup \"%s\" cannot be restored: %u of its %u stripes are lost and its redundancy is %u; nothing was written; lost: %s",
								link->manifest->name, link->nlost, link->manifest->nstripes,
								link->manifest->redundancy.parity, named);
	return true;
}
