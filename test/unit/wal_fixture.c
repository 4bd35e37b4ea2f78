/*
 * wal_fixture.c
 *		The WAL archive tests' shared folders and helpers.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wal_fixture.h"

void
th_wal_fixture(ThWal *w, const char *tag, uint32_t ndests)
{
	char		real[PATH_MAX];
	uint32_t	i;

	memset(w, 0, sizeof(*w));
	th_fixture(&w->f, tag, ndests);
	/* Real paths: what the syscall log reads back from /proc. */
	if (realpath(w->f.root, real) != NULL)
	{
		snprintf(w->f.root, sizeof(w->f.root), "%s", real);
		th_path(w->f.src, "%s/src", real);
		th_path(w->f.target, "%s/restore", real);
	}
	for (i = 0; i < ndests; i++)
		th_path(w->f.dest[i], "%s/d%u", w->f.root, i + 1);
	w->dests.paths = w->f.dests;
	w->dests.count = ndests;
	w->dests.system_identifier = TH_WAL_SYSID;
}

void
th_wal_fixture_on(ThWal *w, const ThDriver *d, const char *tag, uint32_t ndests)
{
	th_wal_fixture(w, tag, ndests);
	th_driver_dests(d, &w->f, tag);
}

void
th_wal_fixture_done(ThWal *w)
{
	th_fixture_done(&w->f);
}

void
th_wal_options(SbWalArchiveOptions *o, const ThWal *w)
{
	memset(o, 0, sizeof(*o));
	o->destinations = w->f.dests;
	o->ndestinations = w->f.ndests;
	o->system_identifier = TH_WAL_SYSID;
	o->balance = SB_BALANCE_WEIGHTED;
	o->codec = SB_CODEC_ZSTD;
	o->level = 1;
	o->workers = 2;
	o->segment_size = TH_WAL_SEGMENT;
}

const char *
th_wal_name(uint32_t timeline, uint64_t segno)
{
	static char names[4][SB_WAL_NAME_MAX + 1];
	static int	next;
	char	   *out = names[next++ % 4];

	sb_wal_segment_name(timeline, segno, TH_WAL_SEGMENT, out);
	return out;
}

char *
th_wal_source(const ThWal *w, const char *name, size_t size, uint32_t seed, bool compressible,
			  char *path)
{
	th_path(path, "%s/%s", w->f.src, name);
	if (!th_write_pattern(path, size, seed, compressible, 0600))
		diag("could not write %s", path);
	return path;
}

char *
th_wal_text_source(const ThWal *w, const char *name, const char *text, char *path)
{
	th_path(path, "%s/%s", w->f.src, name);
	if (!th_write_file(path, text, strlen(text), 0600))
		diag("could not write %s", path);
	return path;
}

char *
th_wal_folder(const ThWal *w, uint32_t i, char *out)
{
	return th_path(out, "%s/wal/%llu", w->f.dest[i], (unsigned long long) TH_WAL_SYSID);
}

char *
th_wal_archived(const ThWal *w, uint32_t i, const char *name, char *out)
{
	return th_path(out, "%s/wal/%llu/%s.sbw", w->f.dest[i], (unsigned long long) TH_WAL_SYSID, name);
}

bool
th_wal_push_one(const SbWalArchiveOptions *o, const ThWal *w, const char *name, SbWalPushResult *r)
{
	char		path[PATH_MAX];
	SbError		err;
	SbWalArchive *a = sb_wal_archive_open(o, &err);
	bool		done;

	if (a == NULL)
	{
		th_diag_error("opening the WAL archive", &err);
		r->archived = false;
		r->error = err;
		return false;
	}
	done = sb_wal_push(a, name, th_path(path, "%s/%s", w->f.src, name), r);
	if (!done)
		th_diag_error("push", &r->error);
	sb_wal_archive_close(a);
	return done;
}

bool
th_wal_archive(const ThWal *w, const char *name)
{
	SbWalArchiveOptions o;
	SbWalPushResult r;

	th_wal_options(&o, w);
	return th_wal_push_one(&o, w, name, &r);
}

bool
th_wal_archive_text(const ThWal *w, const char *name, const char *text)
{
	char		path[PATH_MAX];

	th_wal_text_source(w, name, text, path);
	return th_wal_archive(w, name);
}

bool
th_wal_get_equal(const ThWal *w, const char *name, SbError *err)
{
	return th_wal_get_equal_from(w, &w->dests, name, err);
}

void
th_wal_key(SbKey *key, char fill)
{
	memset(key, 0, sizeof(*key));
	memset(key->secret, fill, 48);
	key->len = 48;
}

bool
th_wal_get_equal_from(const ThWal *w, const SbWalDests *dests, const char *name, SbError *err)
{
	SbWalGetOptions o = {.dests = *dests};
	SbWalGetResult r;
	char		source[PATH_MAX];
	char		target[PATH_MAX];

	th_path(source, "%s/%s", w->f.src, name);
	th_path(target, "%s/restored-%s", w->f.root, name);
	if (!sb_wal_get(&o, name, target, &r, err))
		return false;
	if (!th_files_equal(source, target))
		return sb_error_set(err, SB_ECORRUPT, "%s restored differs from %s", target, source);
	return true;
}

int
th_wal_holder(const ThWal *w, const char *name)
{
	char		path[PATH_MAX];
	int			holder = -1;
	uint32_t	i;

	for (i = 0; i < w->f.ndests; i++)
		if (th_dest_exists(th_wal_archived(w, i, name, path)))
			holder = holder == -1 ? (int) i : -2;
	return holder;
}
