/*
 * policy.c
 *		Where a restore may write: canonical paths and containment, empty or
 *		absent directories, running clusters, tablespace mappings; and the
 *		names of the files a backup folder holds.
 *
 * The command and the extension both call these, so a target one of them
 * refuses the other refuses too, with the same words.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "util/fsutil.h"

/* ---------- canonical paths ---------- */

/* Append component NAME to canonical OUT, applying "." and ".." to the text. */
static bool
append_component(char *out, const char *name, size_t len)
{
	size_t		used = strlen(out);

	if (len == 0 || (len == 1 && name[0] == '.'))
		return true;
	if (len == 2 && name[0] == '.' && name[1] == '.')
	{
		char	   *slash = strrchr(out, '/');

		if (slash != NULL)
			*(slash == out ? slash + 1 : slash) = '\0';
		return true;
	}
	if (used + 1 + len >= PATH_MAX)
		return false;
	if (strcmp(out, "/") != 0)
		out[used++] = '/';
	memcpy(out + used, name, len);
	out[used + len] = '\0';
	return true;
}

/* Append the '/'-separated components of TAIL to canonical OUT. */
static bool
append_tail(char *out, const char *tail)
{
	while (*tail != '\0')
	{
		size_t		len = strcspn(tail, "/");

		if (!append_component(out, tail, len))
			return false;
		tail += len;
		tail += strspn(tail, "/");
	}
	return true;
}

/* PATH as an absolute path (from the working directory when relative). */
static bool
make_absolute(const char *path, char *out, SbError *err)
{
	char		cwd[PATH_MAX];

	if (path[0] == '\0')
		return sb_error_set(err, SB_EINVAL, "an empty path was given");
	if (path[0] == '/')
	{
		if (strlen(path) >= PATH_MAX)
			return sb_error_set(err, SB_EINVAL, "path \"%s\" is too long", path);
		strcpy(out, path);
		return true;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return sb_error_set_errno(err, errno, "could not find the working directory for \"%s\"", path);
	if ((size_t) snprintf(out, PATH_MAX, "%s/%s", cwd, path) >= PATH_MAX)
		return sb_error_set(err, SB_EINVAL, "path \"%s\" is too long", path);
	return true;
}

bool
sb_policy_canonical_path(const char *path, char *resolved, SbError *err)
{
	char		head[PATH_MAX];
	size_t		split;

	if (!make_absolute(path, head, err))
		return false;
	/* Shorten HEAD until it exists; what was cut off is applied as text. */
	split = strlen(head);
	for (;;)
	{
		char		saved = head[split];

		head[split] = '\0';
		if (realpath(split == 0 ? "/" : head, resolved) != NULL)
		{
			head[split] = saved;
			break;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return sb_error_set_errno(err, errno, "could not resolve \"%s\"", path);
		head[split] = saved;
		while (split > 0 && head[split - 1] != '/')
			split--;
		while (split > 0 && head[split - 1] == '/')
			split--;
	}
	if (!append_tail(resolved, head + split))
		return sb_error_set(err, SB_EINVAL, "path \"%s\" is too long", path);
	return true;
}

bool
sb_policy_canonical_within(const char *a, const char *b)
{
	size_t		len = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, len) == 0 && (a[len] == '\0' || a[len] == '/');
}

bool
sb_policy_path_within(const char *path, const char *dir, bool *within, SbError *err)
{
	char		a[PATH_MAX];
	char		b[PATH_MAX];

	if (!sb_policy_canonical_path(path, a, err) || !sb_policy_canonical_path(dir, b, err))
		return false;
	*within = sb_policy_canonical_within(a, b);
	return true;
}

/* ---------- empty or absent ---------- */

/* The folder an absent PATH would be created in ("/" for "/x"). */
static void
parent_of(const char *path, char *parent)
{
	char	   *slash;

	snprintf(parent, PATH_MAX, "%s", path);
	for (slash = parent + strlen(parent); slash > parent + 1 && slash[-1] == '/'; slash--)
		slash[-1] = '\0';
	slash = strrchr(parent, '/');
	if (slash == NULL)
		strcpy(parent, ".");
	else
		*(slash == parent ? slash + 1 : slash) = '\0';
}

/*
 * An absent PATH is made with its missing ancestors (as pg_basebackup makes
 * them) in the nearest one there, which must be a directory, writable.
 */
static bool
check_creatable(const char *path, const char *what, SbError *err)
{
	char		parent[PATH_MAX];
	char		child[PATH_MAX];
	struct stat st;

	parent_of(path, parent);
	while (stat(parent, &st) != 0 && errno == ENOENT && strcmp(parent, "/") != 0 &&
		   strcmp(parent, ".") != 0)
	{
		snprintf(child, sizeof(child), "%s", parent);
		parent_of(child, parent);
	}
	if (stat(parent, &st) == 0 && !S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" cannot be created: \"%s\" is not a directory",
							what, path, parent);
	if (access(parent, W_OK | X_OK) != 0)
		return sb_error_set_errno(err, errno, "%s \"%s\" cannot be created in \"%s\"",
								  what, path, parent);
	return true;
}

bool
sb_policy_check_empty_or_absent(const char *path, const char *what, SbDirState *state,
								SbError *err)
{
	bool		exists,
				empty;

	if (!sb_dir_is_empty(path, &exists, &empty, err))
	{
		if (err->sys_errno == ENOTDIR)
			return sb_error_set(err, SB_EINVAL, "%s \"%s\" is not a directory", what, path);
		return sb_error_set_errno(err, err->sys_errno, "%s \"%s\" is not usable", what, path);
	}
	if (!exists)
	{
		*state = SB_DIR_ABSENT;
		return check_creatable(path, what, err);
	}
	if (!empty)
		return sb_error_set(err, SB_EEXIST,
							"%s \"%s\" is not empty; restore only into an empty or new directory",
							what, path);
	if (access(path, W_OK | X_OK) != 0)
		return sb_error_set_errno(err, errno, "%s \"%s\" is not writable", what, path);
	*state = SB_DIR_EMPTY;
	return true;
}

/* ---------- running clusters ---------- */

SbPostmasterState
sb_policy_postmaster_state(const char *data_dir, long *pid)
{
	char		path[PATH_MAX];
	FILE	   *f;

	*pid = 0;
	snprintf(path, sizeof(path), "%s/postmaster.pid", data_dir);
	f = fopen(path, "r");
	if (f == NULL)
		return SB_POSTMASTER_NONE;
	if (fscanf(f, "%ld", pid) != 1 || *pid <= 0)
		*pid = 0;
	fclose(f);
	/* EPERM: alive, but another user's (the server's, seen by the command). */
	if (*pid > 0 && (kill((pid_t) *pid, 0) == 0 || errno == EPERM))
		return SB_POSTMASTER_RUNNING;
	return SB_POSTMASTER_STALE;
}

/* Is DIR the data directory of a running cluster? */
static bool
is_running_data_dir(const char *dir, long *pid)
{
	char		version[PATH_MAX];
	struct stat st;

	if ((size_t) snprintf(version, sizeof(version), "%s/PG_VERSION",
						  strcmp(dir, "/") == 0 ? "" : dir) >= sizeof(version))
		return false;
	return stat(version, &st) == 0 && S_ISREG(st.st_mode) &&
		sb_policy_postmaster_state(dir, pid) == SB_POSTMASTER_RUNNING;
}

bool
sb_policy_find_running_cluster(const char *path, SbRunningCluster *cluster, SbError *err)
{
	char		dir[PATH_MAX];

	memset(cluster, 0, sizeof(*cluster));
	if (!sb_policy_canonical_path(path, dir, err))
		return false;
	for (;;)
	{
		char	   *slash;

		if (is_running_data_dir(dir, &cluster->pid))
		{
			cluster->found = true;
			snprintf(cluster->data_dir, sizeof(cluster->data_dir), "%s", dir);
			return true;
		}
		if (strcmp(dir, "/") == 0)
			return true;
		slash = strrchr(dir, '/');
		*(slash == dir ? slash + 1 : slash) = '\0';
	}
}

/* ---------- restore places ---------- */

/* One directory a restore writes: the target or a relocation's. */
typedef struct Place
{
	const char *path;
	const char *what;
	char		canonical[PATH_MAX];
} Place;

/* One more character C of the path OUT (LEN so far, SB_MAPPING_PATH_MAX bytes): false when it is full. */
static bool
put_mapping_char(char *out, size_t *len, char c)
{
	if (*len + 1 >= SB_MAPPING_PATH_MAX)
		return false;
	out[(*len)++] = c;
	out[*len] = '\0';
	return true;
}

bool
sb_policy_parse_mapping(const char *mapping, const char *spelling, SbMapping *m, SbError *err)
{
	char	   *out = m->old_path;
	size_t		len = 0;
	const char *c;

	m->old_path[0] = m->new_path[0] = '\0';
	for (c = mapping; *c != '\0'; c++)
	{
		if (*c == '=' && out == m->new_path)
			return sb_error_set(err, SB_EINVAL, "%s \"%s\" has more than one \"=\" (write \"\\=\" for "
								"an \"=\" in a path)", spelling, mapping);
		if (*c == '=')
		{
			out = m->new_path;
			len = 0;
			continue;
		}
		if (*c == '\\' && c[1] == '=')
			c++;				/* "\=": a literal "=" */
		if (!put_mapping_char(out, &len, *c))
			return sb_error_set(err, SB_EINVAL, "%s \"%.200s...\" is too long", spelling, mapping);
	}
	if (out != m->new_path || m->old_path[0] != '/' || m->new_path[0] != '/')
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is not of the form OLD=NEW with OLD and NEW "
							"absolute paths (\"\\=\" for an \"=\" in either)", spelling, mapping);
	return true;
}

static bool
check_mapping_target(const char *mapping, const char *spelling, const char *new_path, const char *target,
					 SbError *err)
{
	char		to[PATH_MAX];
	char		root[PATH_MAX];

	if (!sb_policy_canonical_path(new_path, to, err) ||
		!sb_policy_canonical_path(target, root, err))
		return false;
	if (sb_policy_canonical_within(to, root))
		return sb_error_set(err, SB_EINVAL,
							"%s \"%s\" puts a tablespace %s the restore target \"%s\"",
							spelling, mapping, strcmp(to, root) == 0 ? "at" : "inside", target);
	return true;
}

bool
sb_policy_check_mappings(const char *const *mappings, uint32_t nmappings, const char *target,
						 const char *spelling, SbError *err)
{
	SbMapping  *read = nmappings > 0 ? sb_alloc(nmappings * sizeof(SbMapping), err) : NULL;
	bool		ok = nmappings == 0 || read != NULL;
	uint32_t	i,
				j;

	for (i = 0; ok && i < nmappings; i++)
	{
		ok = sb_policy_parse_mapping(mappings[i], spelling, &read[i], err);
		for (j = 0; ok && j < i; j++)
			if (strcmp(read[j].old_path, read[i].old_path) == 0)
				ok = sb_error_set(err, SB_EINVAL, "%s \"%s\" maps \"%s\" again (\"%s\" did already)",
								  spelling, mappings[i], read[i].old_path, mappings[j]);
		ok = ok && check_mapping_target(mappings[i], spelling, read[i].new_path, target, err);
	}
	free(read);
	return ok;
}

/* Neither of two places may be the other or inside it: one would write into the other. */
static bool
check_apart(const Place *a, const Place *b, SbError *err)
{
	if (strcmp(a->canonical, b->canonical) == 0)
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is the same directory as %s \"%s\"",
							b->what, b->path, a->what, a->path);
	if (sb_policy_canonical_within(b->canonical, a->canonical))
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is inside %s \"%s\"",
							b->what, b->path, a->what, a->path);
	if (sb_policy_canonical_within(a->canonical, b->canonical))
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is inside %s \"%s\"",
							a->what, a->path, b->what, b->path);
	return true;
}

static bool
check_outside_running_cluster(const Place *p, SbError *err)
{
	SbRunningCluster cluster;

	if (!sb_policy_find_running_cluster(p->path, &cluster, err))
		return false;
	if (cluster.found)
		return sb_error_set(err, SB_EINVAL,
							"%s \"%s\" is inside the data directory \"%s\" of a running PostgreSQL server (postmaster.pid names process %ld)",
							p->what, p->path, cluster.data_dir, cluster.pid);
	return true;
}

/* Place I: the target (0) or relocation I - 1; absolute, made canonical. */
static bool
make_place(Place *p, uint32_t i, const char *target, const SbRelocation *relocs, SbError *err)
{
	const SbRelocation *r = i > 0 ? &relocs[i - 1] : NULL;

	p->path = r ? r->to : target;
	p->what = !r ? "restore target" : r->what ? r->what : "relocation target";
	if (p->path[0] != '/')
		return sb_error_set(err, SB_EINVAL, "%s \"%s\" is not an absolute path", p->what, p->path);
	return sb_policy_canonical_path(p->path, p->canonical, err);
}

/*
 * Place I for a restore into an empty or absent directory, or (DELTA_SYSID
 * not NULL) for a delta restore: the target a stopped copy of that system,
 * a relocation's directory anything a directory may hold.
 */
static bool
check_writable_place(const Place *p, uint32_t i, const char *delta_sysid, SbError *err)
{
	SbDirState	state;

	if (delta_sysid == NULL)
		return sb_policy_check_empty_or_absent(p->path, p->what, &state, err);
	if (i == 0)
		return sb_policy_check_delta_target(p->path, delta_sysid, err);
	return sb_policy_check_delta_dir(p->path, p->what, err);
}

static bool
check_places(const char *target, const SbRelocation *relocs, uint32_t n, const char *delta_sysid,
			 SbError *err)
{
	Place	   *places = sb_alloc((n + 1) * sizeof(Place), err);
	uint32_t	i,
				j;
	bool		ok = places != NULL;

	for (i = 0; ok && i <= n; i++)
		ok = make_place(&places[i], i, target, relocs, err);
	for (i = 0; ok && i <= n; i++)
		for (j = 0; ok && j < i; j++)
			ok = check_apart(&places[j], &places[i], err);
	for (i = 0; ok && i <= n; i++)
		ok = check_outside_running_cluster(&places[i], err);
	for (i = 0; ok && i <= n; i++)
		ok = check_writable_place(&places[i], i, delta_sysid, err);
	free(places);
	return ok;
}

bool
sb_policy_check_restore_places(const char *target, const SbRelocation *relocs, uint32_t n,
							   SbError *err)
{
	return check_places(target, relocs, n, NULL, err);
}

bool
sb_policy_check_delta_places(const char *target, const SbRelocation *relocs, uint32_t n,
							 const char *system_identifier, SbError *err)
{
	return check_places(target, relocs, n, system_identifier ? system_identifier : "", err);
}

/* ---------- backup folder files ---------- */

bool
sb_policy_parse_stripe_file_name(const char *name, uint32_t *number)
{
	uint32_t	k;

	/* sb_stripe_file_name() is the one spelling: a name is ours if it writes it. */
	for (k = 1; k <= SB_MAX_STRIPES; k++)
	{
		char		expected[32];

		sb_stripe_file_name(k, expected, sizeof(expected));
		if (strcmp(name, expected) == 0)
		{
			*number = k;
			return true;
		}
	}
	return false;
}
