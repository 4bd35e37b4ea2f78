/*
 * verify.c
 *		Verifying an archive without restoring it: the restore's read pipeline
 *		with nothing written, reporting every problem instead of stopping at
 *		the first (in the spirit of SQL Server's RESTORE VERIFYONLY).  Besides
 *		every chunk, verify checks every manifest copy it can find against
 *		the one the stripes vouch for, and reports a manifest that no stripe
 *		could authenticate.
 */
#include <string.h>

#include "archive_auth.h"
#include "read_pipeline.h"

/* A manifest no stripe vouched for is a problem, whatever else is found. */
static uint64_t
report_unauthenticated(const SbArchive *a, SbProblemFn on_problem, void *problem_arg)
{
	SbProblem	problem;
	SbError		err;

	if (a->authenticated)
		return 0;
	sb_error_set(&err, SB_ENOTFOUND,
				 "manifest \"%s\" of backup \"%s\" cannot be authenticated: no stripe that records its SHA-256 was found",
				 a->manifest_path, a->manifest->name);
	memset(&problem, 0, sizeof(problem));
	problem.chunk = -1;
	problem.code = err.code;
	problem.message = err.message;
	if (on_problem != NULL)
		on_problem(problem_arg, &problem);
	return 1;
}

bool
sb_archive_verify(SbArchive *a, const SbReadOptions *options,
				  SbProblemFn on_problem, void *problem_arg,
				  uint64_t *problems, SbError *err)
{
	SbReadPipelineConfig config;
	uint64_t	found = sb_archive_report_copies(a, on_problem, problem_arg) +
		report_unauthenticated(a, on_problem, problem_arg);
	bool		ok;

	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = options;
	config.what = "verify";
	config.collect_problems = true;
	config.on_problem = on_problem;
	config.problem_arg = problem_arg;
	ok = sb_read_pipeline_run(&config, problems, err);
	*problems += found;
	return ok;
}
