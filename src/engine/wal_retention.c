/*
 * wal_retention.c
 *		Removing the archived WAL that no backup needs any more: every
 *		segment before a given one, as pg_archivecleanup does (whatever the
 *		timeline: only the log and segment fields are compared), but never
 *		a timeline history file, which stays needed to follow timelines.
 *
 * A file goes only if it proves it is this archive's: a ".sbw" whose header
 * is valid, of this system identifier and of its own name, or a temporary
 * file a crash left whose provisional header says the same.  Every file is
 * opened through the folder's descriptor without following a link, checked,
 * and removed by unlinkat() only if it is still the file that was checked.
 * A user's file, a link, anything unproven is kept and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fsutil.h"
#include "wal_internal.h"

typedef struct Cleaner
{
	const SbWalDests *dests;
	SbWalName	before;
	bool		dry_run;
	SbWalRemoval *r;
} Cleaner;

static void
note(SbWalRemoval *r, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* Add a note to what DETAIL says, after a "; " (as much as fits). */
static void
note(SbWalRemoval *r, const char *fmt,...)
{
	size_t		used = strlen(r->detail);
	va_list		ap;

	if (used > 0 && used + 2 < sizeof(r->detail))
		used += (size_t) snprintf(r->detail + used, sizeof(r->detail) - used, "; ");
	if (used + 1 >= sizeof(r->detail))
		return;
	va_start(ap, fmt);
	vsnprintf(r->detail + used, sizeof(r->detail) - used, fmt, ap);
	va_end(ap);
}

/* Does the file open at FD prove it is NAME of this archive?  WHY says what it lacks otherwise. */
static bool
proves_ours(const Cleaner *c, int fd, const char *path, const char *name, bool temp, SbError *why)
{
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbWalHeader h;
	ssize_t		n;

	if (!temp)
		return sb_wal_file_read_header(fd, path, &h, why) &&
			sb_wal_header_is(&h, c->dests->system_identifier, name, why);
	n = sb_pread_upto(fd, raw, sizeof(raw), 0, path, why);
	if (n >= 0 && (size_t) n < sizeof(raw))
		return sb_error_set(why, SB_ECORRUPT, "\"%s\" holds no header", path);
	return n >= 0 && sb_wal_header_decode_sealed(raw, &h, why) &&
		sb_wal_header_is(&h, c->dests->system_identifier, name, why);
}

/* Unlink FILE through DIRFD if it is still the file checked (ST). */
static bool
remove_checked(const Cleaner *c, int dirfd, const char *file, const char *path, const struct stat *st,
			   SbError *err)
{
	struct stat now;

	if (fstatat(dirfd, file, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", path);
	if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		return sb_error_set(err, SB_EIO, "\"%s\" was replaced while it was being removed", path);
	if (unlinkat(dirfd, file, 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s\"", path);
	return true;
}

/* One file of the folder, before the cutoff: removed if it proves it is ours, else kept and said. */
static bool
clean_file(const Cleaner *c, int dirfd, const char *dir_path, const char *file, const char *name,
		   bool temp, SbError *err)
{
	char		path[SB_WAL_PATH_MAX];
	struct stat st;
	SbError		why;
	int			fd;
	bool		ours = false;

	snprintf(path, sizeof(path), "%s/%s", dir_path, file);
	if ((fd = sb_wal_open_file(dirfd, file)) < 0)
	{
		if (errno == ENOENT)
			return true;
		sb_error_set(&why, SB_EIO, "\"%s\" %s", path, errno == ELOOP ? "is a symbolic link" : strerror(errno));
	}
	else
	{
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
			sb_error_set(&why, SB_EIO, "\"%s\" is not a regular file", path);
		else
			ours = proves_ours(c, fd, path, name, temp, &why);
		close(fd);
	}
	if (!ours)
	{
		/* The first is enough to say what to look at; the count says how many. */
		if (c->r->kept++ == 0)
			note(c->r, "kept %s", why.message);
		return true;
	}
	if (!c->dry_run && !remove_checked(c, dirfd, file, path, &st, err))
		return false;
	c->r->files++;
	c->r->bytes += (uint64_t) st.st_size;
	return true;
}

/* Is ENTRY a file of a segment, partial segment or backup history before the cutoff? */
static bool
before_cutoff(const Cleaner *c, const char *entry, char name[SB_WAL_NAME_MAX + 1], bool *temp)
{
	SbWalName	parsed;

	return sb_wal_parse_file_name(entry, name, &parsed, temp) && parsed.kind != SB_WAL_HISTORY &&
		sb_wal_position_before(&parsed, &c->before);
}

static bool
clean_folder(const Cleaner *c, int dirfd, const char *dir_path, SbError *err)
{
	int			fd = dup(dirfd);
	DIR		   *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	uint64_t	removed_before = c->r->files;
	bool		ok = true;

	if (dir == NULL)
	{
		if (fd >= 0)
			close(fd);
		return sb_error_set_errno(err, errno, "could not list \"%s\"", dir_path);
	}
	while (ok && (de = readdir(dir)) != NULL)
	{
		char		name[SB_WAL_NAME_MAX + 1];
		bool		temp;

		if (before_cutoff(c, de->d_name, name, &temp))
			ok = clean_file(c, dirfd, dir_path, de->d_name, name, temp, err);
	}
	closedir(dir);
	/* The removals last too: a retention that said it freed space has freed it. */
	if (ok && !c->dry_run && c->r->files > removed_before && fsync(dirfd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync folder \"%s\"", dir_path);
	return ok;
}

static bool
clean_destination(const Cleaner *c, uint32_t d, SbError *err)
{
	char		dir_path[PATH_MAX];
	SbError		why;
	int			dirfd;
	bool		ok;

	if (!sb_wal_dir_open_read(c->dests->paths[d], c->dests->system_identifier, &dirfd, dir_path, &why))
	{
		note(c->r, "nothing removed: %s", why.message);
		return true;
	}
	if (dirfd < 0)
		return true;
	ok = clean_folder(c, dirfd, dir_path, err);
	close(dirfd);
	return ok;
}

bool
sb_wal_remove_before(const SbWalDests *dests, const char *before, bool dry_run, SbWalRemoval *r,
					 SbError *err)
{
	Cleaner		c = {.dests = dests, .dry_run = dry_run, .r = r};
	uint32_t	d;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	if (!sb_wal_check_dests(dests, err) || !sb_wal_name_parse(before, &c.before, err))
		return false;
	if (c.before.kind == SB_WAL_HISTORY)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is a timeline history file, not a segment to remove WAL before",
							before);
	for (d = 0; d < dests->count; d++)
		if (!clean_destination(&c, d, err))
			return false;
	return true;
}
