/*
 * verify_parity.c
 *		Verify's check of a backup's parity records (docs/FORMAT.md 10.2),
 *		which the read pipeline never reads: it reads data chunks, and a
 *		parity record only when it recovers one.  A damaged parity record
 *		costs nothing while its group's data is whole, but its group has
 *		one member fewer to lose: damage verify must report, as it reports
 *		a lost stripe, before a second loss makes it matter.
 *
 * One thread per stripe that is not lost (each stripe is on its own
 * device), each with a reader of its own; the problems are kept and
 * reported from the caller's thread once all are done, stripe by stripe.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "restore/read_pipeline.h"
#include "restore/recover.h"
#include "restore/stripe_reader.h"
#include "util/fsutil.h"

/* At most this many damaged records are named per stripe; the rest are counted. */
#define MAX_NAMED 32

typedef struct ParityCheck
{
	const SbArchive *a;
	uint32_t	index;			/* 0-based */
	pthread_t	thread;
	bool		started;
	uint64_t	checked;
	uint64_t	damaged;
	char	   *named[MAX_NAMED];	/* the first damaged records, described */
	SbError		failed;			/* the check itself could not run (memory) */
} ParityCheck;

static void
note_damaged(ParityCheck *c, const SbIndexEntry *e, const SbError *why)
{
	char		text[1024];

	if (c->damaged++ >= MAX_NAMED)
		return;
	snprintf(text, sizeof(text),
			 "parity record %" PRIu64 " in stripe %u (\"%s\", at offset %" PRIu64 ") is damaged: %.400s; "
			 "the data it covers is whole, but its group can lose one member fewer (rebuild the stripe)",
			 e->chunk_id, c->index + 1, c->a->stripe_paths[c->index], e->offset, why->message);
	c->named[c->damaged - 1] = strdup(text);
}

static void *
check_stripe(void *arg)
{
	ParityCheck *c = arg;
	SbStripeReader r;
	SbError		why;
	size_t		cap = sb_recover_record_cap(c->a->manifest);
	uint8_t    *buf = sb_alloc(cap, &c->failed);

	if (buf == NULL)
		return NULL;
	/* the stripe opened when the archive did: failing now is a problem of its own */
	if (!sb_stripe_open(&r, c->a->manifest, c->index, c->a->stripe_paths[c->index], c->a->s3, &why))
	{
		SbIndexEntry none = {0};

		note_damaged(c, &none, &why);
		free(buf);
		return NULL;
	}
	for (uint64_t i = 0; i < r.nparity; i++)
	{
		const SbIndexEntry *e = &r.parity_entries[i];
		size_t		len = SB_CHUNK_HEADER_SIZE + (size_t) e->stored_len;
		ssize_t		got;

		sb_error_clear(&why);
		got = len <= cap ? sb_store_pread(&r.file, buf, len, e->offset, &why) : -1;
		if (got < 0 || !sb_stripe_check_parity_record(e, buf, (size_t) got, &why))
			note_damaged(c, e, &why);
		c->checked++;
	}
	sb_stripe_close(&r);
	free(buf);
	return NULL;
}

/* Report stripe C's findings; how many problems. */
static uint64_t
report(ParityCheck *c, SbProblemFn on_problem, void *problem_arg)
{
	SbProblem	p = {.stripe = c->index + 1, .chunk = -1, .code = SB_ECORRUPT, .recovered = true};
	char		more[512];
	uint64_t	named = c->damaged < MAX_NAMED ? c->damaged : MAX_NAMED;

	for (uint64_t i = 0; i < named; i++)
	{
		p.message = c->named[i] != NULL ? c->named[i] : "a parity record is damaged";
		if (on_problem != NULL)
			on_problem(problem_arg, &p);
		free(c->named[i]);
	}
	if (c->damaged > named)
	{
		snprintf(more, sizeof(more), "stripe %u (\"%s\"): %" PRIu64 " more parity records are damaged",
				 c->index + 1, c->a->stripe_paths[c->index], c->damaged - named);
		p.message = more;
		if (on_problem != NULL)
			on_problem(problem_arg, &p);
		named++;
	}
	return named;
}

uint64_t
sb_verify_parity(const SbArchive *a, SbProblemFn on_problem, void *problem_arg, SbError *err)
{
	const SbManifest *m = a->manifest;
	ParityCheck *checks;
	uint64_t	found = 0;
	uint32_t	i;

	if (m->redundancy.parity == 0)
		return 0;
	if ((checks = sb_alloc(m->nstripes * sizeof(ParityCheck), err)) == NULL)
		return UINT64_MAX;
	for (i = 0; i < m->nstripes; i++)
	{
		checks[i].a = a;
		checks[i].index = i;
		/* a lost stripe is reported as lost (verify.c); its parity with it */
		if (a->lost_why[i] == NULL && m->stripes[i].parity_chunks > 0)
			checks[i].started = pthread_create(&checks[i].thread, NULL, check_stripe, &checks[i]) == 0;
		if (a->lost_why[i] == NULL && m->stripes[i].parity_chunks > 0 && !checks[i].started)
			check_stripe(&checks[i]);	/* no thread to be had: here, then */
	}
	for (i = 0; i < m->nstripes; i++)
		if (checks[i].started)
			pthread_join(checks[i].thread, NULL);
	for (i = 0; i < m->nstripes; i++)
	{
		if (checks[i].failed.code != SB_OK && found != UINT64_MAX)
		{
			*err = checks[i].failed;
			found = UINT64_MAX;
		}
		if (found != UINT64_MAX)
			found += report(&checks[i], on_problem, problem_arg);
		else
			for (uint32_t j = 0; j < MAX_NAMED; j++)
				free(checks[i].named[j]);
	}
	free(checks);
	return found;
}
