/*
 * wal_get.c
 *		Restoring one archived WAL file where recovery wants it
 *		(restore_command's %p), with the next segments fetched ahead.
 *
 * Recovery asks for one file at a time and waits for each; the archive
 * spreads consecutive segments over several devices.  So with prefetch,
 * the file asked for and the next K segments of its timeline are read at
 * once, from every destination in parallel, the next ones into a spool
 * folder as the archived files they are; the following calls find them
 * there and check them exactly as they would a copy in the archive
 * (wal_spool.c).
 *
 * The target is written under a temporary name beside it and renamed:
 * recovery never sees a partial file, and a copy that fails a check is
 * never renamed into place.  It is not fsynced: PostgreSQL reads it at
 * once, makes durable what it keeps (KeepFileRestoredFromArchive), and
 * after a crash asks for the file again.  An fsync per segment would cost
 * recovery more than anything else a get does.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/parallel.h"
#include "wal/wal_internal.h"
#include "wal/wal_spool.h"

#define MAX_FETCHERS 8

/* ---------- the target ---------- */

bool
sb_wal_out_begin(SbWalOut *o, int dirfd, const char *dir_path, const char *name,
				 const char *temp_name, bool durable, SbError *err)
{
	memset(o, 0, sizeof(*o));
	o->dirfd = dirfd;
	o->durable = durable;
	snprintf(o->name, sizeof(o->name), "%s", name);
	snprintf(o->temp, sizeof(o->temp), "%s", temp_name);
	snprintf(o->path, sizeof(o->path), "%s/%s", dir_path, temp_name);
	o->fd = openat(dirfd, temp_name, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (o->fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s\"", o->path);
	return true;
}

bool
sb_wal_out_write(void *arg, const void *data, size_t len, SbError *err)
{
	SbWalOut   *o = arg;

	if (!sb_pwrite_all(o->fd, data, len, o->written, o->path, err))
		return false;
	o->written += len;
	return true;
}

bool
sb_wal_out_commit(SbWalOut *o, SbError *err)
{
	bool		ok = true;

	if (o->durable && fsync(o->fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s\"", o->path);
	close(o->fd);
	o->fd = -1;
	if (ok && renameat(o->dirfd, o->temp, o->dirfd, o->name) != 0)
		ok = sb_error_set_errno(err, errno, "could not rename \"%s\" to \"%s\"", o->path, o->name);
	if (!ok)
	{
		unlinkat(o->dirfd, o->temp, 0);
		return false;
	}
	if (o->durable && fsync(o->dirfd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync the folder of \"%s\"", o->name);
	return true;
}

void
sb_wal_out_abandon(SbWalOut *o)
{
	if (o->fd >= 0)
		close(o->fd);
	o->fd = -1;
	unlinkat(o->dirfd, o->temp, 0);
}

/* The folder of TARGET_PATH, opened, and its last component; SB_EINVAL for a path ending in "/". */
static bool
open_target_folder(const char *target_path, int *dirfd, char *dir, char *base, SbError *err)
{
	const char *slash = strrchr(target_path, '/');
	size_t		dir_len = slash == NULL ? 0 : (size_t) (slash - target_path);
	const char *last = slash == NULL ? target_path : slash + 1;

	if (last[0] == '\0' || strcmp(last, ".") == 0 || strcmp(last, "..") == 0 ||
		strlen(last) > NAME_MAX - 32 || dir_len >= PATH_MAX)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a file path to restore to", target_path);
	if (slash == NULL)
		snprintf(dir, PATH_MAX, ".");
	else if (dir_len == 0)
		snprintf(dir, PATH_MAX, "/");
	else
		snprintf(dir, PATH_MAX, "%.*s", (int) dir_len, target_path);
	snprintf(base, NAME_MAX + 1, "%s", last);
	*dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*dirfd < 0)
		return sb_error_set_errno(err, errno, "could not open the folder \"%s\" to restore into", dir);
	return true;
}

/* ---------- reading one copy into an output ---------- */

bool
sb_wal_read_copy(SbWalWorker *w, SbWalFolder *folder, const char *name, uint64_t sysid,
				 SbCodecSink sink, void *arg, SbWalHeader *h, SbError *err)
{
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFileIn in;
	bool		ok;

	sb_wal_file_name(name, file);
	if (!sb_wal_folder_open_file(folder, file, &in, err))
	{
		if (err->code == SB_ENOTFOUND)
			sb_error_set(err, SB_ENOTFOUND, "\"%s\" is gone", in.path);
		return false;
	}
	ok = sb_wal_file_read(w, &in.store, sysid, name, h, sink, arg, err);
	sb_wal_file_in_close(&in);
	return ok;
}

bool
sb_wal_copy_to_out(void *arg, SbWalWorker *w, SbWalFolder *folder, const char *name,
				   uint64_t sysid, SbWalHeader *h, SbError *err)
{
	SbWalOut   *out = arg;

	return sb_wal_out_restart(out, err) &&
		sb_wal_read_copy(w, folder, name, sysid, sb_wal_out_write, out, h, err);
}

/* Take NAME from destination D of DESTS with COPY. */
static bool
read_from_destination(SbWalWorker *w, const SbWalDests *dests, uint32_t d, const char *name,
					  SbWalCopyFn copy, void *arg, SbWalHeader *h, SbError *err)
{
	SbWalFolder folder;
	bool		ok;

	if (!sb_wal_folder_open(dests->paths[d], dests->s3, dests->system_identifier, false, &folder, err))
		return false;
	if (folder.absent)
		return sb_error_set(err, SB_ENOTFOUND, "WAL archive destination \"%s\" holds it no more",
							dests->paths[d]);
	ok = copy(arg, w, &folder, name, dests->system_identifier, h, err);
	sb_wal_folder_close(&folder);
	return ok;
}

bool
sb_wal_read_found(SbWalWorker *w, const SbWalDests *dests, const SbWalFound *found, const char *name,
				  SbWalCopyFn copy, void *arg, uint32_t *used, SbWalHeader *h, SbError *err)
{
	SbError		first;
	bool		tried = false;
	uint32_t	d;

	sb_error_set(&first, SB_ENOTFOUND, "no WAL archive destination holds \"%s\"", name);
	for (d = 0; d < dests->count; d++)
	{
		if ((found->holders & ((uint64_t) 1 << d)) == 0)
			continue;
		if (read_from_destination(w, dests, d, name, copy, arg, h, err))
		{
			*used = d;
			return true;
		}
		if (!tried)
			first = *err;
		tried = true;
	}
	*err = first;
	return false;
}

bool
sb_wal_out_restart(SbWalOut *o, SbError *err)
{
	if (ftruncate(o->fd, 0) != 0)
		return sb_error_set_errno(err, errno, "could not truncate \"%s\"", o->path);
	o->written = 0;
	return true;
}

/* ---------- sb_wal_get ---------- */

/* What a get needs through its tasks: the file asked for is task 0, prefetches follow. */
typedef struct GetRun
{
	const SbWalGetOptions *o;
	const char *name;
	SbWalInfo	info;			/* of the file asked for, from the copy to read */
	SbWalWorker *workers;
	uint32_t	nworkers;
	SbWalSpool	spool;
	SbWalOut	target;
	bool		target_open;
	int			target_dirfd;
	SbWalFound	found;			/* where the archive holds it (not from the spool) */
	bool		from_spool;
	bool		ok;
	uint32_t	destination;
	SbError		err;
} GetRun;

/* Task 0: the file asked for, from the spool if it is there and good, else the archive. */
static void
fetch_asked(GetRun *g, SbWalWorker *w)
{
	SbWalHeader h;

	if (g->from_spool)
	{
		g->ok = sb_wal_spool_serve(&g->spool, w, g->name, &g->target, &h, &g->err);
		if (g->ok)
			return;
		/* The spool's copy is bad or gone: the archive's is what counts. */
		g->from_spool = false;
		if (!sb_wal_find(&g->o->dests, g->name, &g->found, &g->err))
			return;
	}
	g->ok = sb_wal_read_found(w, &g->o->dests, &g->found, g->name, sb_wal_copy_to_out, &g->target,
							  &g->destination, &h, &g->err);
}

static void
get_task(void *arg, size_t task, uint32_t slot)
{
	GetRun	   *g = arg;

	if (task == 0)
		fetch_asked(g, &g->workers[slot]);
	else
		sb_wal_spool_fetch(&g->spool, &g->workers[slot], &g->o->dests, task - 1);
}

/* Where the file asked for is: a spool copy whose header is good, else the archive. */
static bool
locate_asked(GetRun *g, SbError *err)
{
	g->from_spool = sb_wal_spool_has(&g->spool, g->name, &g->info);
	if (g->from_spool)
		return true;
	if (!sb_wal_find(&g->o->dests, g->name, &g->found, err))
		return false;
	g->info = g->found.info;
	return true;
}

static bool
make_workers(GetRun *g, uint32_t n, SbError *err)
{
	uint32_t	piece = sb_wal_piece_size(g->info.raw_bytes < SB_WAL_PIECE_SIZE ?
										  (uint32_t) g->info.raw_bytes : SB_WAL_PIECE_SIZE);
	uint32_t	i;

	if ((g->workers = sb_alloc(n * sizeof(SbWalWorker), err)) == NULL)
		return false;
	for (i = 0; i < n; i++, g->nworkers++)
		if (!sb_wal_worker_init(&g->workers[i], SB_CODEC_ZSTD, 1, piece, g->o->dests.key, err))
			return false;
	return true;
}

static void
free_run(GetRun *g)
{
	uint32_t	i;

	for (i = 0; i < g->nworkers; i++)
		sb_wal_worker_free(&g->workers[i]);
	free(g->workers);
	if (g->target_open)
		sb_wal_out_abandon(&g->target);
	if (g->target_dirfd >= 0)
		close(g->target_dirfd);
	sb_wal_spool_close(&g->spool);
}

/* Open the target's temporary file: "<target>.stripebackup.tmp", beside it. */
static bool
open_target(GetRun *g, const char *target_path, SbError *err)
{
	char		dir[PATH_MAX];
	char		base[NAME_MAX + 1];
	char		temp[NAME_MAX + 1];

	if (!open_target_folder(target_path, &g->target_dirfd, dir, base, err))
		return false;
	snprintf(temp, sizeof(temp), "%.*s.stripebackup.tmp", NAME_MAX - 32, base);
	if (!sb_wal_out_begin(&g->target, g->target_dirfd, dir, base, temp, false, err))
		return false;
	g->target_open = true;
	return true;
}

/* Fetch the file and the prefetches at once; then the file must be there, checked, and put in place. */
static bool
run_get(GetRun *g, const char *target_path, SbWalGetResult *r, SbError *err)
{
	uint32_t	workers;

	if (!locate_asked(g, err) || !open_target(g, target_path, err))
		return false;
	sb_wal_spool_plan(&g->spool, &g->info, g->o->prefetch);
	workers = g->o->workers ? g->o->workers : g->spool.nplanned + 1;
	workers = workers > MAX_FETCHERS ? MAX_FETCHERS : workers;
	if (workers > g->spool.nplanned + 1)
		workers = g->spool.nplanned + 1;
	if (!make_workers(g, workers, err))
		return false;
	sb_parallel_run(g->spool.nplanned + 1, workers, get_task, g);
	if (!g->ok)
		return (*err = g->err, false);
	g->target_open = false;
	if (!sb_wal_out_commit(&g->target, err))
		return false;
	if (g->from_spool)
		sb_wal_spool_served(&g->spool, g->name);
	r->from_spool = g->from_spool;
	r->destination = g->destination;
	return true;
}

bool
sb_wal_get(const SbWalGetOptions *o, const char *name, const char *target_path,
		   SbWalGetResult *r, SbError *err)
{
	GetRun		g = {.o = o, .name = name, .target_dirfd = -1};
	SbWalName	parsed;
	bool		ok;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	if (!sb_wal_check_dests(&o->dests, err) || !sb_wal_name_parse(name, &parsed, err))
		return false;
	if (o->prefetch > 0 && o->spool == NULL)
		return sb_error_set(err, SB_EINVAL, "prefetching needs a spool folder");
	if (o->prefetch > SB_WAL_MAX_PREFETCH)
		return sb_error_set(err, SB_EINVAL, "prefetch of %u segments; at most %d", o->prefetch,
							SB_WAL_MAX_PREFETCH);
	ok = sb_wal_spool_open(&g.spool, o->spool, &o->dests, err) &&
		run_get(&g, target_path, r, err);
	r->info = g.info;
	r->unreachable = g.found.unreachable;
	r->prefetched = g.spool.fetched;
	r->spool_removed = g.spool.removed;
	free_run(&g);
	if (!ok && strstr(err->message, name) == NULL)
		sb_wal_error_about(err, "restore", name);
	return ok;
}
