/*
 * restore_owner.c
 *		A command restore run as root hands the files it wrote to the user
 *		the copy's server will run as: the owner of the target's parent
 *		folder (a DBA restoring into /srv/pg, owned by postgres, means
 *		postgres), or --owner USER; it refuses when that would be root,
 *		since PostgreSQL refuses to start a data directory it does not own.
 *		The files are written as root and handed over at the end (lchown,
 *		links themselves), then synced: the engine's reader and writer
 *		threads run with the process's credentials, and dropping them
 *		before reading could leave root-only backup or key files unread.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "restore_owner.h"

void
cli_owner_existing_top(const char *path, char *top)
{
	struct stat st;
	char	   *slash;

	snprintf(top, PATH_MAX, "%s", path);
	while (lstat(top, &st) != 0 && (slash = strrchr(top, '/')) != NULL)
	{
		if (slash == top)
		{
			strcpy(top, "/");
			return;
		}
		*slash = '\0';
	}
}

/* --owner USER: its uid and primary group; SB_EINVAL for a user that does not exist. */
static bool
named_owner(const char *owner, CliOwner *o, SbError *err)
{
	struct passwd *pw = getpwnam(owner);

	if (pw == NULL)
		return sb_error_set(err, SB_EINVAL, "--owner \"%s\": there is no such user", owner);
	o->uid = pw->pw_uid;
	o->gid = pw->pw_gid;
	snprintf(o->name, sizeof(o->name), "%s", pw->pw_name);
	o->from[0] = '\0';
	return true;
}

/* The owner of the nearest folder there above TARGET: its user, with that user's group. */
static bool
folder_owner(const char *target, CliOwner *o, SbError *err)
{
	char		parent[PATH_MAX];
	char	   *slash;
	struct stat st;
	struct passwd *pw;

	snprintf(parent, sizeof(parent), "%s", target);
	slash = strrchr(parent, '/');
	if (slash != NULL)
		*(slash == parent ? slash + 1 : slash) = '\0';
	cli_owner_existing_top(parent, o->from);
	if (stat(o->from, &st) != 0)
		return sb_error_set_errno(err, errno, "cannot tell who owns \"%s\"", o->from);
	pw = getpwuid(st.st_uid);
	o->uid = st.st_uid;
	o->gid = pw != NULL ? pw->pw_gid : st.st_gid;
	if (pw != NULL)
		snprintf(o->name, sizeof(o->name), "%s", pw->pw_name);
	else
		snprintf(o->name, sizeof(o->name), "%u", (unsigned) st.st_uid);
	return true;
}

bool
cli_owner_choose(const char *owner, const char *target, CliOwner *o, SbError *err)
{
	memset(o, 0, sizeof(*o));
	if (geteuid() != 0)
	{
		if (owner == NULL)
			return true;
		if (!named_owner(owner, o, err))
			return false;
		if (o->uid != geteuid())
			return sb_error_set(err, SB_EINVAL, "--owner \"%s\" needs root: files of this user's restore "
								"belong to this user (uid %u)", owner, (unsigned) geteuid());
		memset(o, 0, sizeof(*o));
		return true;
	}
	if (owner != NULL ? !named_owner(owner, o, err) : !folder_owner(target, o, err))
		return false;
	if (o->uid == 0 && owner != NULL)
		return sb_error_set(err, SB_EINVAL, "--owner \"%s\": PostgreSQL does not run as root; name the "
							"user the copy's server runs as", owner);
	if (o->uid == 0)
		return sb_error_set(err, SB_EINVAL, "running as root, the restored files would belong to root, "
							"the owner of \"%s\", and PostgreSQL does not run as root: give --owner USER "
							"(the user the copy's server runs as), or restore as that user", o->from);
	o->active = true;
	return true;
}

/* nftw's callback cannot take an argument: the owner of the walk under way. */
static const CliOwner *walking;
static int	walk_errno;
static char walk_failed[PATH_MAX];

static int
hand_over(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) flag;
	(void) ftw;
	if (lchown(path, walking->uid, walking->gid) == 0)
		return 0;
	walk_errno = errno;
	snprintf(walk_failed, sizeof(walk_failed), "%s", path);
	return 1;
}

/* PLACE's tree, then each folder above it up to (not including) TOP, the nearest one there before. */
static bool
hand_over_place(const CliOwner *o, const char *place, const char *top, SbError *err)
{
	char		dir[PATH_MAX];
	char	   *slash;

	walking = o;
	if (nftw(place, hand_over, 32, FTW_PHYS) != 0)
		return sb_error_set_errno(err, walk_errno ? walk_errno : errno, "cannot hand \"%s\" over to %s",
								  walk_errno ? walk_failed : place, o->name);
	snprintf(dir, sizeof(dir), "%s", place);
	while (strcmp(dir, top) != 0 && strncmp(dir, top, strlen(top)) == 0 &&
		   (slash = strrchr(dir, '/')) != NULL && slash != dir)
	{
		*slash = '\0';
		if (strcmp(dir, top) == 0)
			break;
		if (lchown(dir, o->uid, o->gid) != 0)
			return sb_error_set_errno(err, errno, "cannot hand \"%s\" over to %s", dir, o->name);
	}
	return true;
}

/* The ownership is part of what the restore leaves: synced as its files were. */
static bool
sync_place(const char *place, SbError *err)
{
	int			fd = open(place, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	bool		ok = fd >= 0 && syncfs(fd) == 0;

	if (!ok)
		sb_error_set_errno(err, errno, "could not sync the file system of \"%s\"", place);
	if (fd >= 0)
		close(fd);
	return ok;
}

bool
cli_owner_apply(const CliOwner *o, const char *target, const SbRelocation *relocs, uint32_t n,
				char (*tops)[PATH_MAX], SbError *err)
{
	uint32_t	i;

	if (!o->active)
		return true;
	if (!hand_over_place(o, target, tops[0], err) || !sync_place(target, err))
		return false;
	for (i = 0; i < n; i++)
		if (!hand_over_place(o, relocs[i].to, tops[i + 1], err) || !sync_place(relocs[i].to, err))
			return false;
	return true;
}
