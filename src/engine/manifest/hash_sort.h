/*
 * hash_sort.h
 *		Sorting 128-bit hashes in place.
 *
 * The library's qsort takes a copy of the array to merge into: for the
 * hashes of a million paths (path_set.c), 16 MB more, the largest
 * allocation a restore would make.  This one is an introsort: quicksort,
 * heapsort past a depth of 2 log n, insertion sort for short runs.
 */
#ifndef SB_HASH_SORT_H
#define SB_HASH_SORT_H

#include <stddef.h>
#include <stdint.h>

typedef struct SbHash128
{
	uint64_t	high;
	uint64_t	low;
} SbHash128;

/* -1, 0 or 1 as hash A sorts before, with or after hash B (by HIGH, then LOW): for bsearch. */
extern int	sb_hash128_compare(const void *a, const void *b);

/* K[0..N) in ascending order (by HIGH, then LOW). */
extern void sb_sort_hash128(SbHash128 *k, size_t n);

/* The same with quicksort at most DEPTH levels deep (0: heapsort at once), for the tests. */
extern void sb_sort_hash128_depth(SbHash128 *k, size_t n, int depth);

#endif							/* SB_HASH_SORT_H */
