/*
 * test_page_cache.c
 *		Direct I/O reads what the page cache already holds through the cache,
 *		and everything else with O_DIRECT: a backup leaves the cache as it
 *		found it, cached files staying cached and the others not brought in.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "harness.h"
#include "util/page_cache.h"
#include "tests.h"

#define FILE_SIZE (4 * 1024 * 1024)

/* Drop PATH from the page cache; false when this file system keeps it (tmpfs). */
static bool
evict(const char *path)
{
	int			fd = open(path, O_RDONLY);
	bool		gone;

	if (fd < 0)
		return false;
	(void) fsync(fd);
	(void) posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	gone = !sb_range_cached(fd, 0, 4096);
	close(fd);
	return gone;
}

/* Read PATH through the cache; true when it is then all cached. */
static bool
warm(const char *path)
{
	size_t		len;
	uint8_t    *data = th_read_file(path, &len);
	int			fd = open(path, O_RDONLY);
	bool		cached = fd >= 0 && sb_range_cached(fd, 0, len);

	free(data);
	if (fd >= 0)
		close(fd);
	return cached;
}

/* How many 4 kB pages of PATH are in the cache. */
static int
pages_cached(const char *path)
{
	int			fd = open(path, O_RDONLY);
	off_t		size = fd >= 0 ? lseek(fd, 0, SEEK_END) : 0;
	int			n = 0;

	for (off_t at = 0; fd >= 0 && at < size; at += 4096)
		n += sb_range_cached(fd, (uint64_t) at, 4096);
	if (fd >= 0)
		close(fd);
	return n;
}

/* 1: PATH is all cached, 0: it is not, -1: the two ways of asking disagree. */
static int
cached_state(const char *path)
{
	int			fd = open(path, O_RDONLY);
	int			state = -1;

	if (fd >= 0 && sb_range_cached(fd, 0, FILE_SIZE) == sb_range_cached_by_mincore(fd, 0, FILE_SIZE))
		state = sb_range_cached(fd, 0, FILE_SIZE);
	if (fd >= 0)
		close(fd);
	return state;
}

void
test_page_cache_direct_reads(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		hot[PATH_MAX];
	char		cold[PATH_MAX];
	char		small_hot[PATH_MAX];
	char		small_cold[PATH_MAX];
	char		location[PATH_MAX];
	char		stripe1[PATH_MAX];
	char		stripe2[PATH_MAX];
	bool		done;

	th_fixture(&f, "pagecache", 2);
	th_write_pattern(th_path(hot, "%s/hot", f.src), FILE_SIZE, 1, false, 0600);
	th_write_pattern(th_path(cold, "%s/cold", f.src), FILE_SIZE, 2, false, 0600);
	/* small files: read whole by the backup's file runs, not by its reader */
	th_write_pattern(th_path(small_hot, "%s/small-hot", f.src), 8192, 3, false, 0600);
	th_write_pattern(th_path(small_cold, "%s/small-cold", f.src), 12288, 4, false, 0600);
	ok(warm(hot) && warm(small_hot), "files just read are all in the page cache");
	if (!evict(cold) || !evict(small_cold))
	{
		diag("this file system keeps files in the page cache (tmpfs): nothing more to check");
		th_fixture_done(&f);
		return;
	}
	is_int(cached_state(cold), 0, "a file dropped from the cache is not");

	th_options(&o, f.dests, 2, "bk");
	o.direct_io = true;
	o.chunk_size = 1024 * 1024;
	done = th_backup_tree(&o, f.src, &m, &err);
	if (!ok(done, "a backup with direct I/O succeeds"))
		th_diag_error("backup", &err);
	sb_manifest_free(m);
	is_int(cached_state(cold), 0, "the file that was not cached is still not: read with O_DIRECT");
	is_int(cached_state(hot), 1, "the cached file is still cached: read through the cache, not dropped");
	is_int(pages_cached(small_cold), 0, "the small file that was not cached is not: dropped once read");
	is_int(pages_cached(small_hot), 2, "the small cached file is still cached");

	/* A verify or restore reads each stripe once: O_DIRECT unless it is cached. */
	th_path(stripe1, "%s/stripe-1.sbs", th_location(&f, 0, "bk", location));
	th_path(stripe2, "%s/stripe-2.sbs", th_location(&f, 1, "bk", location));
	ok(evict(stripe1) && evict(stripe2), "the stripes are not in the cache");
	is_int(th_verify(location), 0, "the backup verifies");
	/* its header, index and trailer are read through the cache: a page or two at each end */
	ok(pages_cached(stripe1) <= 8 && pages_cached(stripe2) <= 8,
	   "the verify brought no chunk of either stripe into the cache, read with O_DIRECT (%d and %d pages cached)",
	   pages_cached(stripe1), pages_cached(stripe2));
	ok(warm(stripe2), "stripe 2 read, so cached");
	th_location(&f, 0, "bk", location);
	done = th_restore(location, f.target, &err);
	if (!ok(done, "the backup restores"))
		th_diag_error("restore", &err);
	ok(done && th_trees_equal(f.src, f.target, 0), "both files come back whole");
	ok(pages_cached(stripe1) <= 8 && warm(stripe2),
	   "stripe 1 still out of the cache, stripe 2 still in it (read through the cache)");
	th_fixture_done(&f);
}
