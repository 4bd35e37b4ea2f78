/*
 * wal_dest.c
 *		The folders of a WAL archive in one destination, DEST/wal/<sysid>/,
 *		and the names of the files in them.  A folder is a store
 *		(store/store.h): whatever keeps it is the store's driver's, which
 *		follows no link below the destination and makes a folder it made
 *		durable before anything is put in it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "wal/wal_internal.h"

void
sb_wal_sysid_text(uint64_t sysid, char out[21])
{
	snprintf(out, 21, "%" PRIu64, sysid);
}


/*
 * Enter NAME below *AT (made first with CREATE), in place of *AT; PATH
 * follows, as far as it got (a message names the folder that is missing).
 */
static bool
step_into(SbStore **at, const char *name, bool create, char *path, SbError *err)
{
	SbStore    *sub;
	size_t		used = strlen(path);
	bool		ok;

	if (snprintf(path + used, PATH_MAX - used, "/%s", name) >= (int) (PATH_MAX - used))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", path, name);
	ok = sb_store_enter(*at, name, create, &sub, err);
	sb_store_free(*at);
	*at = sub;
	return ok;
}

bool
sb_wal_folder_open(const char *dest, const SbS3Settings *s3, uint64_t sysid, bool create, SbWalFolder *f,
				   SbError *err)
{
	char		sysid_text[21];
	/* the names of messages about a WAL archive's destinations */
	const SbStoreOptions store_options = {
		.s3 = s3,
		.what = "WAL archive destination",
		.owner = "the WAL archive",
	};
	SbStore    *at;

	sb_wal_folder_none(f, dest);
	if (snprintf(f->path, sizeof(f->path), "%s", dest) >= (int) sizeof(f->path))
		return sb_error_set(err, SB_EINVAL, "destination path too long: \"%s\"", dest);
	if ((at = sb_store_new(dest, &store_options, err)) == NULL)
		return false;
	sb_wal_sysid_text(sysid, sysid_text);
	if (!step_into(&at, SB_WAL_FOLDER, create, f->path, err) ||
		(at != NULL && !step_into(&at, sysid_text, create, f->path, err)))
	{
		sb_store_free(at);
		return false;
	}
	f->store = at;
	f->absent = at == NULL;
	if (at != NULL)
		snprintf(f->path, sizeof(f->path), "%s", sb_store_path(at));
	f->fd = at != NULL ? sb_store_fd(at) : -1;
	return true;
}

void
sb_wal_folder_close(SbWalFolder *f)
{
	sb_store_free(f->store);
	f->store = NULL;
	f->fd = -1;
}

void
sb_wal_folder_none(SbWalFolder *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	f->fd = -1;
	f->absent = true;
	snprintf(f->path, sizeof(f->path), "%s", path);
}

bool
sb_wal_folder_local(SbWalFolder *f, int fd, const char *path, SbError *err)
{
	sb_wal_folder_none(f, path);
	if ((f->store = sb_store_new_fd(fd, f->path, err)) == NULL)
		return false;
	f->fd = fd;
	f->absent = false;
	return true;
}

unsigned
sb_wal_folder_features(const SbWalFolder *f)
{
	return f->store != NULL ? sb_store_features(f->store) : 0;
}

/* What an operation on a folder that was not opened says: as a closed descriptor would. */
static bool
not_open(SbError *err, const char *what, const char *path)
{
	return sb_error_set_errno(err, EBADF, "could not %s \"%s\"", what, path);
}

bool
sb_wal_folder_sync(SbWalFolder *f, SbError *err)
{
	if (f->store == NULL)
		return not_open(err, "fsync folder", f->path);
	return sb_store_sync(f->store, err);
}

bool
sb_wal_folder_list(SbWalFolder *f, SbWalEntryFn fn, void *arg, SbError *err)
{
	if (f->store == NULL)
		return not_open(err, "list", f->path);
	return sb_store_list(f->store, fn, arg, err);
}

bool
sb_wal_folder_open_file(SbWalFolder *f, const char *file, SbWalFileIn *in, SbError *err)
{
	if (f->store != NULL)
		return sb_store_open_in(f->store, file, &in->store, in->path, sizeof(in->path), err);
	memset(in, 0, sizeof(*in));
	in->store.fd = -1;
	in->store.path = in->path;
	snprintf(in->path, sizeof(in->path), "%s/%s", f->path, file);
	return not_open(err, "open", in->path);
}

void
sb_wal_file_in_close(SbWalFileIn *in)
{
	sb_store_close(&in->store);
}

bool
sb_wal_folder_stamp(SbWalFolder *f, const char *file, SbWalStamp *stamp)
{
	memset(stamp, 0, sizeof(*stamp));
	return f->store != NULL && sb_store_stamp(f->store, file, stamp);
}

bool
sb_wal_stamps_equal(const SbWalStamp *a, const SbWalStamp *b)
{
	return sb_store_stamps_equal(a, b);
}

bool
sb_wal_folder_remove(SbWalFolder *f, const char *file, const SbWalStamp *expected, SbError *err)
{
	char		path[SB_WAL_PATH_MAX];

	if (f->store != NULL)
		return sb_store_remove(f->store, file, expected, err);
	snprintf(path, sizeof(path), "%s/%s", f->path, file);
	return not_open(err, "stat", path);
}

bool
sb_wal_folder_put(SbWalFolder *f, const char *file, const void *data, size_t len, bool replace,
				  SbError *err)
{
	char		path[SB_WAL_PATH_MAX];

	if (f->store != NULL)
		return sb_store_put(f->store, file, data, len, replace, err);
	snprintf(path, sizeof(path), "%s/%s", f->path, file);
	return not_open(err, "write", path);
}

void
sb_wal_file_name(const char *name, char *out)
{
	snprintf(out, SB_WAL_FILE_NAME_MAX, "%s" SB_WAL_SUFFIX, name);
}

/* Is TAIL the rest of a temporary file's name after "<name>.sbw": ".tmp.<pid>.<n>"? */
static bool
is_temp_tail(const char *tail)
{
	size_t		pid_digits;

	if (strncmp(tail, SB_WAL_TEMP_INFIX, strlen(SB_WAL_TEMP_INFIX)) != 0)
		return false;
	tail += strlen(SB_WAL_TEMP_INFIX);
	pid_digits = strspn(tail, "0123456789");
	if (pid_digits == 0 || tail[pid_digits] != '.')
		return false;
	tail += pid_digits + 1;
	return tail[0] != '\0' && strspn(tail, "0123456789") == strlen(tail);
}

bool
sb_wal_parse_file_name(const char *entry, char name[SB_WAL_NAME_MAX + 1], SbWalName *parsed,
					   bool *temp)
{
	const char *suffix = strstr(entry, SB_WAL_SUFFIX);
	size_t		len = suffix ? (size_t) (suffix - entry) : 0;
	SbError		ignored;

	if (suffix == NULL || len == 0 || len > SB_WAL_NAME_MAX)
		return false;
	memcpy(name, entry, len);
	name[len] = '\0';
	if (!sb_wal_name_parse(name, parsed, &ignored))
		return false;
	suffix += strlen(SB_WAL_SUFFIX);
	*temp = suffix[0] != '\0';
	return !*temp || is_temp_tail(suffix);
}

bool
sb_wal_check_dests(const SbWalDests *dests, SbError *err)
{
	uint32_t	i;

	if (dests->count == 0 || dests->count > SB_MAX_STRIPES)
		return sb_error_set(err, SB_EINVAL, "%u WAL archive destinations given; between 1 and %d are allowed",
							dests->count, SB_MAX_STRIPES);
	for (i = 0; i < dests->count; i++)
		if (dests->paths[i] == NULL || dests->paths[i][0] == '\0')
			return sb_error_set(err, SB_EINVAL, "WAL archive destination %u is an empty path", i + 1);
	return true;
}
