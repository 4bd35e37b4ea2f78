/*
 * sb_paths.c
 *		Keeping backups and restores out of the running cluster.
 */
#include "postgres.h"

#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "miscadmin.h"
#include "storage/fd.h"

#include "sb_paths.h"
#include "stripebackup/sb_policy.h"

/* Refuse PATH (resolved as RESOLVED) inside DIR. */
static void
check_outside(const char *path, const char *resolved, const char *dir, const char *dir_what,
			  const char *what)
{
	char		real_dir[PATH_MAX];

	if (realpath(dir, real_dir) != NULL && sb_policy_canonical_within(resolved, real_dir))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is inside %s \"%s\"", what, path, dir_what, dir),
				 errhint("Backups and restores must be written outside the running cluster.")));
}

void
sbx_check_outside_cluster(const char *path, const char *what)
{
	char		resolved[PATH_MAX];
	SbError		err;
	DIR		   *dir;
	struct dirent *de;

	if (path[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is not an absolute path", what, path)));
	if (!sb_policy_canonical_path(path, resolved, &err))
		return;					/* the engine says why it is unusable */
	check_outside(path, resolved, DataDir, "the data directory", what);
	dir = AllocateDir("pg_tblspc");
	while ((de = ReadDir(dir, "pg_tblspc")) != NULL)
	{
		char		link[MAXPGPATH];

		if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(link, sizeof(link), "pg_tblspc/%s", de->d_name);
		check_outside(path, resolved, link, "tablespace", what);
	}
	FreeDir(dir);
}

const char *
sbx_restore_sample_folder(const char *target)
{
	struct stat st;
	char	   *parent;

	sbx_check_outside_cluster(target, "target_directory");
	if (stat(target, &st) == 0)
	{
		if (!S_ISDIR(st.st_mode))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("target_directory \"%s\" is not a directory", target)));
		return target;
	}
	if (errno != ENOENT)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not look at target_directory \"%s\": %m", target)));
	parent = pstrdup(target);
	get_parent_directory(parent);
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("target_directory \"%s\" cannot be made: its folder \"%s\" is not a directory",
						target, parent),
				 errhint("A restore makes its target, not the folders above it.")));
	return parent;
}
