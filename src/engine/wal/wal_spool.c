/*
 * wal_spool.c
 *		Segments fetched ahead of recovery into a spool folder.
 *
 * The spool holds copies of archived files exactly as the archive stores
 * them, so a spool copy is checked exactly as an archived one is (seal,
 * version, cluster, name, every hash, the length) when recovery asks for
 * it; a copy that fails is removed and the archive read instead.  A spool
 * is a cache: nothing in it is fsynced, since a copy a crash damaged fails
 * its checks.  Files of segments before the one asked for are stale
 * (recovery has gone past them) and removed; so is each copy once used.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "wal/wal_spool.h"

bool
sb_wal_spool_open(SbWalSpool *s, const char *path, const SbWalDests *dests, SbError *err)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->sysid = dests->system_identifier;
	s->key = dests->key;
	if (path == NULL)
		return true;
	snprintf(s->path, sizeof(s->path), "%s", path);
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return sb_error_set_errno(err, errno, "could not create the spool folder \"%s\"", path);
	s->fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->fd < 0)
		return sb_error_set_errno(err, errno, "could not open the spool folder \"%s\"", path);
	return true;
}

void
sb_wal_spool_close(SbWalSpool *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Remove spool file FILE if it is a regular file (never what a link points to). */
static void
remove_file(SbWalSpool *s, const char *file)
{
	struct stat st;

	if (fstatat(s->fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) &&
		unlinkat(s->fd, file, 0) == 0)
		__atomic_fetch_add(&s->removed, 1, __ATOMIC_RELAXED);
}

static void
remove_copy(SbWalSpool *s, const char *name)
{
	char		file[SB_WAL_FILE_NAME_MAX];

	sb_wal_file_name(name, file);
	remove_file(s, file);
}

bool
sb_wal_spool_has(SbWalSpool *s, const char *name, SbWalInfo *info)
{
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFolder folder;
	SbWalFileIn in;
	SbWalHeader h;
	SbError		ignored;
	bool		good;

	if (s->fd < 0)
		return false;
	sb_wal_file_name(name, file);
	if (!sb_wal_folder_local(&folder, s->fd, s->path, &ignored))
		return false;
	if (!sb_wal_folder_open_file(&folder, file, &in, &ignored))
	{
		sb_wal_folder_close(&folder);
		return false;
	}
	good = sb_wal_file_read_header(&in.store, s->key, &h, NULL, &ignored) &&
		sb_wal_header_is(&h, s->sysid, name, &ignored);
	sb_wal_file_in_close(&in);
	sb_wal_folder_close(&folder);
	if (good)
		sb_wal_header_info(&h, info);
	else
		remove_copy(s, name);
	return good;
}

bool
sb_wal_spool_serve(SbWalSpool *s, SbWalWorker *w, const char *name, SbWalOut *out,
				   SbWalHeader *h, SbError *err)
{
	SbWalFolder folder;
	bool		ok;

	if (!sb_wal_folder_local(&folder, s->fd, s->path, err))
		return false;
	ok = sb_wal_read_copy(w, &folder, name, s->sysid, sb_wal_out_write, out, h, err);
	sb_wal_folder_close(&folder);
	if (!ok)
		remove_copy(s, name);
	return ok;
}

void
sb_wal_spool_served(SbWalSpool *s, const char *name)
{
	remove_copy(s, name);
}

/* Remove the spool's files (copies and temporary files) of segments before ASKED. */
static void
remove_stale(SbWalSpool *s, const SbWalName *asked)
{
	int			fd = dup(s->fd);
	DIR		   *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (dir == NULL)
	{
		if (fd >= 0)
			close(fd);
		return;
	}
	rewinddir(dir);
	while ((de = readdir(dir)) != NULL)
	{
		char		name[SB_WAL_NAME_MAX + 1];
		SbWalName	parsed;
		bool		temp;

		if (sb_wal_parse_file_name(de->d_name, name, &parsed, &temp) &&
			sb_wal_kind_is_segment(parsed.kind) && sb_wal_position_before(&parsed, asked))
			remove_file(s, de->d_name);
	}
	closedir(dir);
}

void
sb_wal_spool_plan(SbWalSpool *s, const SbWalInfo *info, uint32_t prefetch)
{
	uint32_t	size = (uint32_t) info->raw_bytes;
	uint64_t	segno;
	uint32_t	k;

	s->nplanned = 0;
	if (s->fd < 0 || info->parsed.kind != SB_WAL_SEGMENT || !sb_wal_segment_size_valid(info->raw_bytes))
		return;
	remove_stale(s, &info->parsed);
	segno = sb_wal_segment_number(&info->parsed, size);
	for (k = 1; k <= prefetch && k <= SB_WAL_MAX_PREFETCH; k++)
	{
		char		next[SB_WAL_NAME_MAX + 1];
		char		file[SB_WAL_FILE_NAME_MAX];
		struct stat st;

		sb_wal_segment_name(info->parsed.timeline, segno + k, size, next);
		sb_wal_file_name(next, file);
		if (fstatat(s->fd, file, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		snprintf(s->planned[s->nplanned++], SB_WAL_NAME_MAX + 1, "%s", next);
	}
}

/*
 * Copy the stored bytes of archived file FD (header H read) into OUT,
 * checking the payload's hash: a sealed one has none to check, and its tag
 * is checked when the copy is served.
 */
static bool
copy_stored_bytes(SbWalWorker *w, SbStoreFile *f, const SbWalHeader *h, SbWalOut *out,
				  SbError *err)
{
	uint64_t	total = SB_WAL_HEADER_SIZE + h->stored_len;
	uint64_t	offset;
	uint64_t	hash;

	/* The first piece holds the header whole: prefetched files are segments, pieces of 1 MB or more. */
	sb_hash_stream_reset(w->stored_hash);
	for (offset = 0; offset < total;)
	{
		size_t		n = total - offset < w->piece ? (size_t) (total - offset) : w->piece;
		ssize_t		got = sb_store_pread(f, w->in, n, offset, err);

		if (got < 0)
			return false;
		if ((size_t) got != n)
			return sb_error_set(err, SB_ECORRUPT, "\"%s\" ends early", f->path);
		if (offset >= SB_WAL_HEADER_SIZE)
			sb_hash_stream_update(w->stored_hash, w->in, n);
		else
			sb_hash_stream_update(w->stored_hash, w->in + SB_WAL_HEADER_SIZE, n - SB_WAL_HEADER_SIZE);
		if (!sb_wal_out_write(out, w->in, n, err))
			return false;
		offset += n;
	}
	hash = sb_hash_stream_digest(w->stored_hash);
	if (!h->sealed && hash != h->stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\": payload checksum mismatch", f->path);
	return true;
}

/* An SbWalCopyFn: archived file NAME copied as it is stored into the SbWalOut ARG, its header and payload hash checked. */
static bool
copy_as_stored(void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name,
			   uint64_t sysid, SbWalHeader *h, SbError *err)
{
	SbWalOut   *out = arg;
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFileIn in;
	bool		ok;

	sb_wal_file_name(name, file);
	if (!sb_wal_out_restart(out, err) || !sb_wal_folder_open_file(folder, file, &in, err))
		return false;
	ok = sb_wal_file_read_header(&in.store, w->key, h, NULL, err) && sb_wal_header_is(h, sysid, name, err) &&
		copy_stored_bytes(w, &in.store, h, out, err);
	sb_wal_file_in_close(&in);
	return ok;
}

void
sb_wal_spool_fetch(SbWalSpool *s, SbWalWorker *w, const SbWalDests *dests, size_t i)
{
	const char *name = s->planned[i];
	char		file[SB_WAL_FILE_NAME_MAX];
	char		temp[SB_WAL_FILE_NAME_MAX + 48];
	SbWalFound	found;
	SbWalHeader h;
	SbWalOut	out;
	SbError		err;
	uint32_t	used;

	if (!sb_wal_find(dests, name, &found, &err))
		return;
	sb_wal_file_name(name, file);
	snprintf(temp, sizeof(temp), "%s" SB_WAL_TEMP_INFIX "%ld.%zu", file, (long) getpid(), i);
	if (!sb_wal_out_begin(&out, s->fd, s->path, file, temp, false, &err))
		return;
	if (sb_wal_read_found(w, dests, &found, name, copy_as_stored, &out, &used, &h, &err) &&
		sb_wal_out_commit(&out, &err))
		__atomic_fetch_add(&s->fetched, 1, __ATOMIC_RELAXED);
	else
		sb_wal_out_abandon(&out);
}
