/*
 * verify.c
 *		Verifying an archive without restoring it: the restore's read pipeline
 *		with nothing written, reporting every problem instead of stopping at
 *		the first (in the spirit of SQL Server's RESTORE VERIFYONLY).
 */
#include <string.h>

#include "read_pipeline.h"

bool
sb_archive_verify(SbArchive *a, const SbReadOptions *options,
				  SbProblemFn on_problem, void *problem_arg,
				  uint64_t *problems, SbError *err)
{
	SbReadPipelineConfig config;

	memset(&config, 0, sizeof(config));
	config.archive = a;
	config.options = options;
	config.what = "verify";
	config.collect_problems = true;
	config.on_problem = on_problem;
	config.problem_arg = problem_arg;
	return sb_read_pipeline_run(&config, problems, err);
}
