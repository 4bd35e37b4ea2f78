/*
 * folder.c
 *		Removing one backup folder, DEST/NAME, and only what that backup
 *		wrote there (retention, and clean-up after a crash).
 *
 * The destination and the folder are opened with O_NOFOLLOW|O_DIRECTORY,
 * every entry is opened and checked through the folder's descriptor, and
 * removed with unlinkat() through it: a link swapped in anywhere cannot
 * send a removal elsewhere.  An entry is this backup's only if it proves
 * it: the manifest by its backup_uuid, the manifest's temporary file by the
 * backup_uuid among its first bytes, a stripe by the uuid in its header, a
 * kept backup's label (keep.json) by the backup_uuid it holds.
 * Anything else keeps the whole folder: a caller that cannot tell what a
 * file is must not remove it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_keep.h"
#include "stripebackup/sb_policy.h"
#include "format/checksum.h"
#include "backup/folder_internal.h"
#include "format/format.h"
#include "util/fsutil.h"
#include "store/store.h"

/* The manifest's temporary file names its backup among its first bytes. */
#define TEMP_PREFIX_BYTES 256

/* One entry of the folder, as checked. */
typedef struct Entry
{
	char	   *name;
	struct stat st;				/* from the descriptor it was checked through */
	bool		ours;
	char		why[512];		/* when not ours */
} Entry;

void
sb_folder_set_verdict(SbFolderRemoval *r, SbFolderVerdict verdict, const char *fmt,...)
{
	va_list		ap;

	r->verdict = verdict;
	va_start(ap, fmt);
	vsnprintf(r->detail, sizeof(r->detail), fmt, ap);
	va_end(ap);
}

void
sb_folder_uuid_hex(const uint8_t uuid[16], char hex[33])
{
	sb_hex_encode(uuid, 16, hex);
}

/* ---------- what an entry is ---------- */

/* Read LEN bytes at the start of FD; false (E->why set) if it holds fewer. */
static bool
read_start(int fd, Entry *e, void *buf, size_t len)
{
	SbError		err;
	ssize_t		n = sb_pread_upto(fd, buf, len, 0, e->name, &err);

	if (n < 0)
		snprintf(e->why, sizeof(e->why), "%.400s", err.message);
	else if ((size_t) n < len)
		snprintf(e->why, sizeof(e->why), "\"%s\" holds %zd bytes, too few to be what its name says",
				 e->name, n);
	return n >= 0 && (size_t) n == len;
}

/* Reads a manifest through the descriptor it was checked through. */
typedef struct FdText
{
	int			fd;
	uint64_t	offset;
	const char *name;
} FdText;

static ssize_t
read_fd_text(void *arg, char *buf, size_t len, SbError *err)
{
	FdText	   *t = arg;
	ssize_t		n = sb_pread_upto(t->fd, buf, len, t->offset, t->name, err);

	if (n > 0)
		t->offset += (uint64_t) n;
	return n;
}

static void
check_manifest(int fd, Entry *e, const char *uuid_hex)
{
	FdText		text = {fd, 0, e->name};

	e->ours = sb_folder_manifest_names(read_fd_text, &text, uuid_hex);
	if (!e->ours)
		snprintf(e->why, sizeof(e->why), "\"%s\" is not the manifest of backup %s", e->name, uuid_hex);
}

/* The temporary manifest is JSON being written; only its first keys are sure to be there. */
static void
check_temp_manifest(int fd, Entry *e, const char *uuid_hex)
{
	char		start[TEMP_PREFIX_BYTES + 1];
	size_t		len = (size_t) e->st.st_size < TEMP_PREFIX_BYTES ? (size_t) e->st.st_size : TEMP_PREFIX_BYTES;
	const char *p;

	if (!read_start(fd, e, start, len))
		return;
	start[len] = '\0';
	p = strstr(start, "\"backup_uuid\"");
	if (p != NULL)
	{
		p += strlen("\"backup_uuid\"");
		p += strspn(p, " \t\n");
		p += *p == ':' ? 1 : 0;
		p += strspn(p, " \t\n");
		e->ours = p[0] == '"' && strncmp(p + 1, uuid_hex, 32) == 0 && p[33] == '"';
	}
	if (!e->ours)
		snprintf(e->why, sizeof(e->why), "\"%s\" does not begin as a manifest of backup %s",
				 e->name, uuid_hex);
}

static void
check_stripe(int fd, Entry *e, uint32_t number, const uint8_t uuid[16], const char *uuid_hex)
{
	uint8_t		raw[SB_STRIPE_HEADER_SIZE];
	SbStripeHeader h;
	SbError		err;

	if (!read_start(fd, e, raw, sizeof(raw)))
		return;
	if (!sb_format_decode_header(raw, &h, &err))
		snprintf(e->why, sizeof(e->why), "\"%s\" has no stripe header: %.200s", e->name, err.message);
	else if (memcmp(h.uuid, uuid, 16) != 0 || h.number != number)
		snprintf(e->why, sizeof(e->why), "\"%s\" is not stripe %u of backup %s", e->name,
				 number, uuid_hex);
	else
		e->ours = true;
}

/* A kept backup's label (keep.json, written by stripe_keep) names its backup in its JSON. */
static void
check_keep_label(int fd, Entry *e, const char *uuid_hex)
{
	char	   *text;

	if (e->st.st_size > SB_KEEP_LABEL_MAX_BYTES)
	{
		snprintf(e->why, sizeof(e->why), "\"%s\" is too large to be a backup's label", e->name);
		return;
	}
	if ((text = malloc((size_t) e->st.st_size + 1)) == NULL)
	{
		snprintf(e->why, sizeof(e->why), "out of memory reading \"%s\"", e->name);
		return;
	}
	if (read_start(fd, e, text, (size_t) e->st.st_size))
	{
		e->ours = sb_keep_label_names(text, (size_t) e->st.st_size, uuid_hex);
		if (!e->ours)
			snprintf(e->why, sizeof(e->why), "\"%s\" is not the label of backup %s", e->name, uuid_hex);
	}
	free(text);
}

/* Is E one of the files the backup UUID wrote?  Opened, never followed, through FOLDER. */
static void
check_entry(int folder, Entry *e, const uint8_t uuid[16])
{
	char		uuid_hex[33];
	uint32_t	number;
	int			fd;

	sb_folder_uuid_hex(uuid, uuid_hex);
	/* O_NONBLOCK: a FIFO planted here must not hang the check. */
	fd = openat(folder, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
	{
		snprintf(e->why, sizeof(e->why), "\"%s\" %s", e->name,
				 errno == ELOOP ? "is a symbolic link" : strerror(errno));
		return;
	}
	if (fstat(fd, &e->st) != 0)
		snprintf(e->why, sizeof(e->why), "\"%s\" cannot be examined: %s", e->name, strerror(errno));
	else if (!S_ISREG(e->st.st_mode))
		snprintf(e->why, sizeof(e->why), "\"%s\" is %s", e->name,
				 S_ISDIR(e->st.st_mode) ? "a directory" : "not a regular file");
	else if (strcmp(e->name, SB_MANIFEST_FILE) == 0)
		check_manifest(fd, e, uuid_hex);
	else if (strcmp(e->name, SB_MANIFEST_TEMP_FILE) == 0)
		check_temp_manifest(fd, e, uuid_hex);
	else if (sb_policy_parse_stripe_file_name(e->name, &number))
		check_stripe(fd, e, number, uuid, uuid_hex);
	else if (strcmp(e->name, SB_KEEP_LABEL_FILE) == 0)
		check_keep_label(fd, e, uuid_hex);
	else
		snprintf(e->why, sizeof(e->why), "\"%s\" is not a file stripebackup writes", e->name);
	close(fd);
}

/* ---------- listing ---------- */

static int
compare_entries(const void *a, const void *b)
{
	return strcmp(((const Entry *) a)->name, ((const Entry *) b)->name);
}

static void
free_entries(Entry *entries, size_t n)
{
	size_t		i;

	for (i = 0; i < n; i++)
		free(entries[i].name);
	free(entries);
}

/* The entries of FOLDER (not closed), sorted by name so the first foreign one is always the same. */
static bool
list_entries(int folder, const char *path, Entry **out, size_t *n, SbError *err)
{
	int			fd = dup(folder);
	DIR		   *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	size_t		cap = 0;
	bool		ok = true;

	*out = NULL;
	*n = 0;
	if (dir == NULL)
	{
		if (fd >= 0)
			close(fd);
		return sb_error_set_errno(err, errno, "could not list \"%s\"", path);
	}
	while (ok && (errno = 0, de = readdir(dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		ok = sb_grow((void **) out, &cap, *n, sizeof(Entry), err);
		if (ok)
		{
			memset(&(*out)[*n], 0, sizeof(Entry));
			ok = ((*out)[*n].name = sb_strdup(de->d_name, err)) != NULL;
		}
		if (ok)
			(*n)++;
	}
	if (ok && errno != 0)
		ok = sb_error_set_errno(err, errno, "could not list \"%s\"", path);
	closedir(dir);
	if (ok && *n > 1)
		qsort(*out, *n, sizeof(Entry), compare_entries);
	return ok;
}

/* ---------- removal ---------- */

/* Unlink E through FOLDER, if it is still the file that was checked. */
static bool
remove_entry(int folder, const char *path, const Entry *e, SbFolderRemoval *r, SbError *err)
{
	struct stat now;

	if (fstatat(folder, e->name, &now, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s/%s\"", path, e->name);
	if (now.st_dev != e->st.st_dev || now.st_ino != e->st.st_ino)
		return sb_error_set(err, SB_EIO, "\"%s/%s\" was replaced while its folder was being removed",
							path, e->name);
	if (unlinkat(folder, e->name, 0) != 0)
		return sb_error_set_errno(err, errno, "could not remove \"%s/%s\"", path, e->name);
	r->files++;
	r->bytes += (uint64_t) e->st.st_size;
	return true;
}

/*
 * The manifest goes first: a folder that lost some files must no longer
 * look like a complete backup, should the removal stop half-way.
 */
static bool
remove_entries(int folder, const char *path, const Entry *entries, size_t n,
			   SbFolderRemoval *r, SbError *err)
{
	size_t		i;

	for (i = 0; i < n; i++)
		if (strcmp(entries[i].name, SB_MANIFEST_FILE) == 0 &&
			!remove_entry(folder, path, &entries[i], r, err))
			return false;
	for (i = 0; i < n; i++)
		if (strcmp(entries[i].name, SB_MANIFEST_FILE) != 0 &&
			!remove_entry(folder, path, &entries[i], r, err))
			return false;
	return true;
}

/* Check every entry of FOLDER; remove them all, and the folder, unless one is foreign or DRY_RUN. */
static bool
clear_folder(int dest, int folder, const char *path, const char *name, const uint8_t uuid[16],
			 bool dry_run, SbFolderRemoval *r, SbError *err)
{
	Entry	   *entries;
	size_t		n,
				i;
	bool		ok;

	if (!list_entries(folder, path, &entries, &n, err))
	{
		free_entries(entries, n);
		return false;
	}
	for (i = 0; i < n; i++)
	{
		check_entry(folder, &entries[i], uuid);
		if (!entries[i].ours)
		{
			r->files = r->bytes = 0;
			sb_folder_set_verdict(r, SB_FOLDER_FOREIGN, "in backup folder \"%s\": %s; nothing was removed",
						path, entries[i].why);
			free_entries(entries, n);
			return true;
		}
		r->files++;
		r->bytes += (uint64_t) entries[i].st.st_size;
	}
	sb_folder_set_verdict(r, SB_FOLDER_REMOVED, "%s", "");
	if (dry_run)
		ok = true;
	else
	{
		r->files = r->bytes = 0;
		ok = remove_entries(folder, path, entries, n, r, err);
		if (ok && unlinkat(dest, name, AT_REMOVEDIR) != 0)
			ok = sb_error_set_errno(err, errno, "could not remove the folder \"%s\"", path);
	}
	free_entries(entries, n);
	return ok;
}

/* Why a directory could not be opened without following a link: a link, or something else. */
static bool
classify_unopened(int at, const char *name, const char *path, bool is_destination,
				  SbFolderRemoval *r, SbError *err)
{
	struct stat st;
	int			saved = errno;

	if (saved == ENOENT)
	{
		if (is_destination)
			sb_folder_set_verdict(r, SB_FOLDER_DESTINATION_MISSING,
						"destination \"%s\" does not exist (is its device mounted?); nothing was removed", path);
		else
			sb_folder_set_verdict(r, SB_FOLDER_ABSENT, "%s", "");
		return true;
	}
	if (saved != ELOOP && saved != ENOTDIR)
		return sb_error_set_errno(err, saved, "could not open \"%s\"", path);
	if (fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
		sb_folder_set_verdict(r, is_destination ? SB_FOLDER_DESTINATION_LINK : SB_FOLDER_LINK,
					"%s \"%s\" is a symbolic link; nothing was removed",
					is_destination ? "destination" : "backup folder", path);
	else
		sb_folder_set_verdict(r, SB_FOLDER_FOREIGN, "\"%s\" is not a directory; nothing was removed", path);
	return true;
}

static bool
name_is_plain(const char *name)
{
	return name[0] != '\0' && strchr(name, '/') == NULL && strcmp(name, ".") != 0 &&
		strcmp(name, "..") != 0;
}

bool
sb_backup_folder_remove(const char *destination, const SbS3Settings *s3, const char *name,
						const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r, SbError *err)
{
	const int	flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
	char	   *path;
	int			dest,
				folder;
	bool		ok;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	if (!name_is_plain(name))
		return sb_error_set(err, SB_EINVAL, "backup folder name \"%s\" is not a plain name", name);
	/* A store whose folders are not descriptors (a bucket) is judged through its own operations. */
	if (!(sb_store_features_of(destination) & SB_STORE_DESCRIPTORS))
		return sb_backup_folder_remove_store(destination, s3, name, uuid, dry_run, r, err);
	if ((dest = open(destination, flags)) < 0)
		return classify_unopened(AT_FDCWD, destination, destination, true, r, err);
	if ((path = sb_path_join(destination, name, err)) == NULL)
	{
		close(dest);
		return false;
	}
	if ((folder = openat(dest, name, flags)) < 0)
		ok = classify_unopened(dest, name, path, false, r, err);
	else
	{
		ok = clear_folder(dest, folder, path, name, uuid, dry_run, r, err);
		close(folder);
	}
	free(path);
	close(dest);
	return ok;
}
