/*
 * page_cache.c
 *		Page-cache residency of a file range: cachestat(2) where the kernel
 *		has it (Linux 6.5), else mincore(2) over a mapping of the range (a
 *		mapping that is never touched faults nothing in).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/page_cache.h"

/* The kernel's ABI (include/uapi/linux/mman.h); older headers lack it. */
#define SB_NR_CACHESTAT 451

typedef struct SbCachestatRange
{
	uint64_t	off;
	uint64_t	len;
} SbCachestatRange;

typedef struct SbCachestat
{
	uint64_t	nr_cache;
	uint64_t	nr_dirty;
	uint64_t	nr_writeback;
	uint64_t	nr_evicted;
	uint64_t	nr_recently_evicted;
} SbCachestat;

/* Set once cachestat(2) said ENOSYS: mincore from then on. */
static atomic_bool no_cachestat;

static uint64_t
page_size(void)
{
	return (uint64_t) sysconf(_SC_PAGESIZE);
}

/* 1: all cached, 0: not all, -1: cachestat(2) is not there. */
static int
cached_by_cachestat(int fd, uint64_t first, uint64_t pages)
{
	SbCachestatRange range = {first * page_size(), pages * page_size()};
	SbCachestat cs;

	if (syscall(SB_NR_CACHESTAT, fd, &range, &cs, 0) == 0)
		return cs.nr_cache >= pages;
	if (errno != ENOSYS)
		return 0;
	atomic_store(&no_cachestat, true);
	return -1;
}

static bool
pages_cached_by_mincore(int fd, uint64_t first, uint64_t pages)
{
	size_t		len = (size_t) (pages * page_size());
	void	   *map = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, (off_t) (first * page_size()));
	unsigned char *vec;
	bool		all = false;
	uint64_t	i;

	if (map == MAP_FAILED)
		return false;
	vec = malloc(pages);
	if (vec != NULL && mincore(map, len, vec) == 0)
	{
		all = true;
		for (i = 0; i < pages && all; i++)
			all = (vec[i] & 1) != 0;
	}
	free(vec);
	munmap(map, len);
	return all;
}

/* The pages that hold LEN bytes at OFFSET: the first, and how many. */
static uint64_t
page_span(uint64_t offset, size_t len, uint64_t *first)
{
	*first = offset / page_size();
	return (offset + len + page_size() - 1) / page_size() - *first;
}

bool
sb_range_cached(int fd, uint64_t offset, size_t len)
{
	uint64_t	first;
	uint64_t	pages = page_span(offset, len, &first);
	int			r;

	if (len == 0)
		return true;
	if (!atomic_load(&no_cachestat) && (r = cached_by_cachestat(fd, first, pages)) >= 0)
		return r == 1;
	return pages_cached_by_mincore(fd, first, pages);
}

bool
sb_range_cached_by_mincore(int fd, uint64_t offset, size_t len)
{
	uint64_t	first;
	uint64_t	pages = page_span(offset, len, &first);

	return len == 0 || pages_cached_by_mincore(fd, first, pages);
}
