/*
 * verify.c
 *		Verifying an archive without restoring it: the restore's read pipeline
 *		with nothing written, reporting every problem instead of stopping at
 *		the first (in the spirit of SQL Server's RESTORE VERIFYONLY).  Besides
 *		every chunk, verify checks the CRC-32C of every file whose chunks it
 *		read (combined from its pieces as they pass, file_check.h), every
 *		manifest copy it can find against the one the stripes vouch for, and
 *		reports a manifest that no stripe could authenticate.
 */
#include <stdio.h>
#include <string.h>

#include "restore/archive_auth.h"
#include "restore/chain.h"
#include "restore/read_pipeline.h"
#include "restore/recover.h"

/* Report one problem about no single stripe or chunk. */
static void
report_general(SbErrorCode code, const char *file, const char *message, SbProblemFn on_problem,
			   void *problem_arg)
{
	SbProblem	problem;

	memset(&problem, 0, sizeof(problem));
	problem.chunk = -1;
	problem.file = file;
	problem.code = code;
	problem.message = message;
	if (on_problem != NULL)
		on_problem(problem_arg, &problem);
}

/*
 * Every file whose every piece was read has the manifest's CRC-32C.  Files
 * with a piece in a chunk that could not be read were reported with it.
 */
static uint64_t
report_file_crcs(const SbManifest *m, const SbFileCheck *fc, SbProblemFn on_problem,
				 void *problem_arg)
{
	uint64_t	found = 0;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		SbError		err;

		if (m->entries[i].type != SB_ENTRY_FILE || !sb_file_check_complete(fc, i) ||
			sb_file_check_entry(fc, i, &err))
			continue;
		report_general(err.code, m->entries[i].path, err.message, on_problem, problem_arg);
		found++;
	}
	return found;
}

/* A manifest no stripe vouched for is a problem, whatever else is found. */
static uint64_t
report_unauthenticated(const SbArchive *a, SbProblemFn on_problem, void *problem_arg)
{
	SbError		err;

	if (a->authenticated)
		return 0;
	sb_error_set(&err, SB_ENOTFOUND,
				 "manifest \"%s\" of backup \"%s\" cannot be authenticated: no stripe that records its SHA-256 was found",
				 a->manifest_path, a->manifest->name);
	report_general(err.code, NULL, err.message, on_problem, problem_arg);
	return 1;
}

/* A problem in an older backup of a chain: said so, whatever it is. */
typedef struct InParent
{
	const SbArchive *newest;
	const SbArchive *link;
	SbProblemFn on_problem;
	void	   *problem_arg;
} InParent;

static void
report_in_parent(void *arg, const SbProblem *problem)
{
	const InParent *in = arg;
	SbProblem	p = *problem;
	char		message[2048];

	snprintf(message, sizeof(message), "in backup \"%s\", which backup \"%s\" needs: %s",
			 in->link->manifest->name, in->newest->manifest->name, problem->message);
	p.message = message;
	if (in->on_problem != NULL)
		in->on_problem(in->problem_arg, &p);
}

/*
 * With redundancy, each stripe the archive found lost is a problem, which
 * the redundancy makes up for while no more than M are lost.
 */
static uint64_t
report_lost(const SbArchive *a, SbProblemFn on_problem, void *problem_arg)
{
	const SbManifest *m = a->manifest;
	SbProblem	problem;
	char		message[1024];
	uint64_t	found = 0;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
	{
		if (a->lost_why[i] == NULL)
			continue;
		snprintf(message, sizeof(message),
				 "stripe %u of %u (\"%s\", destination \"%s\") is lost: %.400s; its chunks are %s from the other stripes",
				 i + 1, m->nstripes, a->stripe_paths[i], m->stripes[i].destination, a->lost_why[i],
				 a->nlost <= m->redundancy.parity ? "recovered" : "NOT all recoverable");
		memset(&problem, 0, sizeof(problem));
		problem.stripe = i + 1;
		problem.chunk = -1;
		problem.code = SB_ECORRUPT;
		problem.message = message;
		problem.recovered = a->nlost <= m->redundancy.parity;
		if (on_problem != NULL)
			on_problem(problem_arg, &problem);
		found++;
	}
	return found;
}

/* What verify_one passes on, and tallies into the archive: damaged stripes, problems not made up for. */
typedef struct Tally
{
	SbArchive  *a;
	SbProblemFn on_problem;
	void	   *problem_arg;
} Tally;

static void
tally_problem(void *arg, const SbProblem *problem)
{
	Tally	   *t = arg;

	if (problem->stripe > 0)
		t->a->damaged[problem->stripe - 1] = true;
	if (!problem->recovered && (problem->stripe > 0 || problem->chunk >= 0 || problem->file != NULL))
		t->a->unrecovered++;
	if (t->on_problem != NULL)
		t->on_problem(t->problem_arg, problem);
}

static bool verify_one(SbArchive *a, const SbReadOptions *options, SbProblemFn on_problem,
					   void *problem_arg, uint64_t *problems, SbError *err);

/*
 * A chain: each backup as a backup on its own, and that together they
 * hold every byte of every file of the newest.
 */
bool
sb_archive_verify(SbArchive *a, const SbReadOptions *options,
				  SbProblemFn on_problem, void *problem_arg,
				  uint64_t *problems, SbError *err)
{
	InParent	in = {a, NULL, on_problem, problem_arg};
	SbChain		chain;
	SbError		broken;
	SbArchive  *link;
	bool		ok = (a->manifest->streamed != NULL || sb_archive_check_entries(a, err)) &&
		verify_one(a, options, on_problem, problem_arg, problems, err);

	for (link = a->parent; ok && link != NULL; link = link->parent)
	{
		uint64_t	more = 0;

		in.link = link;
		ok = verify_one(link, options, report_in_parent, &in, &more, err);
		*problems += more;
	}
	if (ok && a->parent != NULL)
	{
		if (sb_chain_build(a, &chain, &broken))
			sb_chain_free(&chain);
		else
		{
			report_general(broken.code, NULL, broken.message, on_problem, problem_arg);
			(*problems)++;
		}
	}
	return ok;
}

static bool
verify_one(SbArchive *a, const SbReadOptions *options,
		   SbProblemFn on_problem, void *problem_arg,
		   uint64_t *problems, SbError *err)
{
	SbReadPipelineConfig config;
	SbFileCheck fc;
	Tally		tally = {a, on_problem, problem_arg};
	uint64_t	found;
	bool		ok;

	memset(a->damaged, 0, sizeof(a->damaged));
	a->unrecovered = 0;
	on_problem = tally_problem;
	problem_arg = &tally;
	found = sb_archive_report_copies(a, on_problem, problem_arg) +
		report_unauthenticated(a, on_problem, problem_arg) +
		report_lost(a, on_problem, problem_arg);

	*problems = 0;
	memset(&fc, 0, sizeof(fc));
	if (a->manifest->streamed == NULL && !sb_file_check_init(&fc, a->manifest, err))
		return false;
	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = options;
	config.what = "verify";
	config.collect_problems = true;
	config.on_problem = on_problem;
	config.problem_arg = problem_arg;
	/* each file's CRC-32C: checked as it leaves the window, or from the table after */
	config.windowed = a->manifest->streamed != NULL;
	config.file_check = config.windowed ? NULL : &fc;
	ok = sb_read_pipeline_run(&config, problems, err);
	if (ok && !config.windowed)
		found += report_file_crcs(a->manifest, &fc, on_problem, problem_arg);
	if (ok)
	{
		/* the pipeline reads parity only to recover: damaged parity is found here */
		uint64_t	parity = sb_verify_parity(a, on_problem, problem_arg, err);

		ok = parity != UINT64_MAX;
		found += ok ? parity : 0;
	}
	sb_file_check_free(&fc);
	*problems += found;
	return ok;
}
