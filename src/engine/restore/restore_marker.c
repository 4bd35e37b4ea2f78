/*
 * restore_marker.c
 *		Telling a restore that a crash cut short from anything else.
 *
 * The marker file holds two lines: the caller's words for the restore
 * (the extension: its restore id and the cluster's system identifier), and
 * "created" or "existing", whether the restore made the directory itself.
 * It is fsynced, with the directory, before anything else is written
 * there, so a directory holding a restore's files holds its marker too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stripebackup/sb_archive.h"
#include "util/fsutil.h"
#include "restore/restore_marker.h"

#define MARKER_MAX 4096

bool
sb_restore_marker_write(int dirfd, const char *path, const char *marker, const char *state,
						SbError *err)
{
	char		text[MARKER_MAX];
	int			len = snprintf(text, sizeof(text), "%s\n%s\n", marker, state);
	int			fd;
	bool		ok;

	if (len < 0 || (size_t) len >= sizeof(text) || strchr(marker, '\n') != NULL)
		return sb_error_set(err, SB_EINVAL, "restore marker \"%s\" is not one short line", marker);
	fd = openat(dirfd, SB_RESTORE_MARKER_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				0600);
	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s/%s\"", path,
								  SB_RESTORE_MARKER_FILE);
	ok = sb_write_all(fd, text, (size_t) len, SB_RESTORE_MARKER_FILE, err);
	if (ok && fsync(fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s/%s\"", path,
								SB_RESTORE_MARKER_FILE);
	close(fd);
	if (ok && fsync(dirfd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s\"", path);
	return ok;
}

bool
sb_restore_marker_remove(int dirfd, const char *path, SbError *err)
{
	if (unlinkat(dirfd, SB_RESTORE_MARKER_FILE, 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s/%s\"", path,
								  SB_RESTORE_MARKER_FILE);
	return true;
}

/* Read DIRFD's marker into TEXT; false if there is none, or it is not a plain file. */
static bool
read_marker(int dirfd, char *text, size_t len)
{
	int			fd = openat(dirfd, SB_RESTORE_MARKER_FILE, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	SbError		ignored;
	ssize_t		n;

	if (fd < 0)
		return false;
	n = sb_pread_upto(fd, text, len - 1, 0, SB_RESTORE_MARKER_FILE, &ignored);
	close(fd);
	if (n < 0)
		return false;
	text[n] = '\0';
	return true;
}

/* Is TEXT the marker of restore MARKER?  *STATE: what it says of the directory. */
static bool
marker_matches(const char *text, const char *marker, const char **state)
{
	static const char *const states[] = {SB_MARKER_CREATED, SB_MARKER_EXISTING, SB_MARKER_DELTA};
	size_t		len = strlen(marker);
	size_t		i;

	if (strncmp(text, marker, len) != 0 || text[len] != '\n')
		return false;
	for (i = 0; i < sizeof(states) / sizeof(states[0]); i++)
		if (strncmp(text + len + 1, states[i], strlen(states[i])) == 0 &&
			strcmp(text + len + 1 + strlen(states[i]), "\n") == 0)
		{
			*state = states[i];
			return true;
		}
	return false;
}

bool
sb_restore_remove_incomplete(const char *dir, const char *marker, SbIncompleteRestore *found,
							 SbError *err)
{
	char		text[MARKER_MAX];
	int			dirfd;
	const char *state = NULL;

	memset(found, 0, sizeof(*found));
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
	{
		/* Not there, or a link or a file where the restore would have made a directory. */
		found->exists = errno != ENOENT;
		if (errno == ENOENT || errno == ELOOP || errno == ENOTDIR)
			return true;
		return sb_error_set_errno(err, errno, "could not open \"%s\"", dir);
	}
	found->exists = true;
	found->ours = read_marker(dirfd, text, sizeof(text)) && marker_matches(text, marker, &state);
	if (found->ours && strcmp(state, SB_MARKER_DELTA) == 0)
	{
		/* a copy being refreshed: it stays (it cannot start without its guard file) */
		found->delta = true;
		if (!sb_restore_marker_remove(dirfd, dir, err))
		{
			close(dirfd);
			return false;
		}
	}
	close(dirfd);
	if (!found->ours || found->delta)
		return true;
	if (!sb_remove_contents(dir, err))
		return false;
	if (strcmp(state, SB_MARKER_CREATED) == 0 && rmdir(dir) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s\"", dir);
	found->removed = true;
	return true;
}
