/*
 * policy_delta.c
 *		Where a delta restore may write (sb_policy.h): a stopped copy of the
 *		backup's own database system, or nothing yet.  A delta restore
 *		removes whatever the backup does not have, so a target that is
 *		anything else (another cluster's data directory, a running one, a
 *		folder of other files) is refused before anything is touched.
 *
 * pg_control is read at the offset of the system identifier, the first
 * field in every layout of it; no PostgreSQL code is linked here.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "util/fsutil.h"

bool
sb_policy_check_delta_dir(const char *path, const char *what, SbError *err)
{
	SbDirState	state;

	if (sb_policy_check_empty_or_absent(path, what, &state, err))
		return true;
	if (err->code != SB_EEXIST)
		return false;
	sb_error_clear(err);
	if (access(path, W_OK | X_OK) != 0)
		return sb_error_set_errno(err, errno, "%s \"%s\" is not writable", what, path);
	return true;
}

/* The system identifier in TARGET's global/pg_control; false if it has none. */
static bool
control_system(const char *target, uint64_t *sysid)
{
	char		path[PATH_MAX];
	int			fd;
	ssize_t		n;

	snprintf(path, sizeof(path), "%s/global/pg_control", target);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = pread(fd, sysid, sizeof(*sysid), 0);
	close(fd);
	return n == (ssize_t) sizeof(*sysid);
}

static bool
has_file(const char *dir, const char *name)
{
	char		path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A directory that holds something: a stopped copy of SYSTEM_IDENTIFIER's cluster? */
static bool
check_copy(const char *target, const char *system_identifier, SbError *err)
{
	uint64_t	want;
	uint64_t	have;
	long		pid;

	if (sb_policy_postmaster_state(target, &pid) == SB_POSTMASTER_RUNNING)
		return sb_error_set(err, SB_EINVAL, "a server runs on the restore target \"%s\" "
							"(postmaster.pid names process %ld): stop it before a delta restore",
							target, pid);
	if (!sb_policy_parse_uint64(system_identifier, &want, err))
		return false;
	if (control_system(target, &have))
		return have == want ||
			sb_error_set(err, SB_EINVAL, "the restore target \"%s\" holds a data directory of another "
						 "database system (%" PRIu64 "; the backup is of %" PRIu64 "): a delta restore "
						 "refreshes a copy of the same cluster only", target, have, want);
	if (has_file(target, "PG_VERSION"))
		return true;			/* a copy a delta restore cut short left without pg_control */
	return sb_error_set(err, SB_EINVAL, "the restore target \"%s\" is not empty and is not a PostgreSQL "
						"data directory (no global/pg_control, no PG_VERSION): a delta restore "
						"refreshes a copy of the same cluster only", target);
}

bool
sb_policy_check_delta_target(const char *target, const char *system_identifier, SbError *err)
{
	bool		exists,
				empty;

	if (!sb_policy_check_delta_dir(target, "restore target", err))
		return false;
	if (!sb_dir_is_empty(target, &exists, &empty, err))
		return false;
	return !exists || empty || check_copy(target, system_identifier, err);
}
