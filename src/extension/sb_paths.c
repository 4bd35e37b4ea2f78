/*
 * sb_paths.c
 *		Keeping backups and restores out of the running cluster.
 */
#include "postgres.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "miscadmin.h"
#include "storage/fd.h"

#include "fsutil.h"
#include "sb_paths.h"

/* Is A the same as B or inside it?  Both canonical. */
static bool
path_within(const char *a, const char *b)
{
	size_t		len = strlen(b);

	return strncmp(a, b, len) == 0 && (a[len] == '\0' || a[len] == '/' || strcmp(b, "/") == 0);
}

/*
 * PATH made canonical: its longest existing prefix resolved (links
 * followed), the components that do not exist yet appended as they are.
 */
static bool
resolve(const char *path, char *resolved)
{
	char		prefix[MAXPGPATH];
	char		real_prefix[PATH_MAX];
	char	   *slash;

	if (strlcpy(prefix, path, sizeof(prefix)) >= sizeof(prefix))
		return false;
	while (realpath(prefix[0] ? prefix : "/", real_prefix) == NULL)
	{
		if (errno != ENOENT || (slash = strrchr(prefix, '/')) == NULL)
			return false;
		*slash = '\0';
	}
	snprintf(resolved, PATH_MAX, "%s%s", strcmp(real_prefix, "/") == 0 ? "" : real_prefix,
			 path + strlen(prefix));
	return true;
}

/* Refuse PATH (resolved as RESOLVED) inside DIR. */
static void
check_outside(const char *path, const char *resolved, const char *dir, const char *dir_what,
			  const char *what)
{
	char		real_dir[PATH_MAX];

	if (realpath(dir, real_dir) != NULL && path_within(resolved, real_dir))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is inside %s \"%s\"", what, path, dir_what, dir),
				 errhint("Backups and restores must be written outside the running cluster.")));
}

void
sb_check_outside_cluster(const char *path, const char *what)
{
	char		resolved[PATH_MAX];
	DIR		   *dir;
	struct dirent *de;

	if (path[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is not an absolute path", what, path)));
	if (!resolve(path, resolved))
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


/* An absent directory is made in its parent, which must exist and be writable. */
static void
check_creatable(const char *path, const char *what)
{
	char		parent[MAXPGPATH];
	char	   *slash;

	strlcpy(parent, path, sizeof(parent));
	slash = strrchr(parent, '/');
	if (slash == NULL)
		return;
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (access(parent, W_OK | X_OK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("%s \"%s\" cannot be created in \"%s\": %m", what, path, parent)));
}

/* A restore writes only into an empty or new directory it can write to. */
static void
check_empty_or_absent(const char *path, const char *what)
{
	SbError		err;
	bool		exists,
				empty;

	if (!sb_dir_is_empty(path, &exists, &empty, &err))
	{
		errno = err.sys_errno;
		ereport(ERROR,
				(errcode_for_file_access(), errmsg("%s \"%s\" is not usable: %m", what, path)));
	}
	if (!exists)
	{
		check_creatable(path, what);
		return;
	}
	if (!empty)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_FILE),
				 errmsg("%s \"%s\" is not empty", what, path),
				 errhint("Restore into an empty or new directory; map each tablespace in use "
						 "with tablespace_mapping => ARRAY['OLD=NEW'].")));
	if (access(path, W_OK | X_OK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(), errmsg("%s \"%s\" is not writable: %m", what, path)));
}

/* Do A and B (canonical as far as they exist) overlap, one inside the other? */
static bool
overlap(const char *a, const char *b)
{
	char		ra[PATH_MAX],
				rb[PATH_MAX];

	if (!resolve(a, ra) || !resolve(b, rb))
		return strcmp(a, b) == 0;
	return path_within(ra, rb) || path_within(rb, ra);
}

void
sb_check_restore_directories(const char *const *dirs, const char *const *whats, int n)
{
	int			i,
				j;

	for (i = 0; i < n; i++)
	{
		sb_check_outside_cluster(dirs[i], whats[i]);
		for (j = 0; j < i; j++)
			if (overlap(dirs[i], dirs[j]))
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("%s \"%s\" and %s \"%s\" overlap: one is inside the other",
								whats[j], dirs[j], whats[i], dirs[i]),
						 errhint("Map each tablespace to a directory of its own, outside the restore target.")));
	}
	for (i = 0; i < n; i++)
		check_empty_or_absent(dirs[i], whats[i]);
}
