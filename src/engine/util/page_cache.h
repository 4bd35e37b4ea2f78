/*
 * page_cache.h
 *		Is a range of a file in the page cache?  Asked without reading it,
 *		so that asking neither blocks nor brings pages in.
 */
#ifndef SB_PAGE_CACHE_H
#define SB_PAGE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * True when every page of LEN bytes at OFFSET of FD is cached (then a
 * buffered read of it is a copy from memory and changes nothing in the
 * cache); false when any is not, or when it cannot be told.
 */
extern bool sb_range_cached(int fd, uint64_t offset, size_t len);

/* The same, always asked with mincore(2): what kernels before 6.5 get. */
extern bool sb_range_cached_by_mincore(int fd, uint64_t offset, size_t len);

#endif							/* SB_PAGE_CACHE_H */
