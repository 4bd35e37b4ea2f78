/*
 * hash_sort.c
 *		Sorting 128-bit hashes in place (see hash_sort.h).
 */
#include <stdbool.h>

#include "manifest/hash_sort.h"

static bool
key_less(const SbHash128 *a, const SbHash128 *b)
{
	return a->high < b->high || (a->high == b->high && a->low < b->low);
}

int
sb_hash128_compare(const void *a, const void *b)
{
	const SbHash128 *x = a;
	const SbHash128 *y = b;

	return key_less(x, y) ? -1 : key_less(y, x);
}

static void
swap_keys(SbHash128 *a, SbHash128 *b)
{
	SbHash128			t = *a;

	*a = *b;
	*b = t;
}

/* Move K[ROOT] down the heap K[0..N) to where it belongs. */
static void
sift_down(SbHash128 *k, size_t root, size_t n)
{
	size_t		child;

	while ((child = 2 * root + 1) < n)
	{
		if (child + 1 < n && key_less(&k[child], &k[child + 1]))
			child++;
		if (!key_less(&k[root], &k[child]))
			return;
		swap_keys(&k[root], &k[child]);
		root = child;
	}
}

/* Heapsort of K[0..N): the fallback that bounds the sort below at n log n. */
static void
heap_sort(SbHash128 *k, size_t n)
{
	size_t		i;

	for (i = n / 2; i-- > 0;)
		sift_down(k, i, n);
	for (i = n; i-- > 1;)
	{
		swap_keys(&k[0], &k[i]);
		sift_down(k, 0, i);
	}
}

/* Quicksort down to DEPTH levels, then heapsort; insertion sort for short runs. */
void
sb_sort_hash128_depth(SbHash128 *k, size_t n, int depth)
{
	while (n > 16)
	{
		SbHash128			pivot;
		size_t		i = 0,
					j = n - 1;

		if (depth-- == 0)
		{
			heap_sort(k, n);
			return;
		}
		/* the median of the first, middle and last as pivot, moved out of the way */
		if (key_less(&k[n / 2], &k[0]))
			swap_keys(&k[n / 2], &k[0]);
		if (key_less(&k[n - 1], &k[0]))
			swap_keys(&k[n - 1], &k[0]);
		if (key_less(&k[n - 1], &k[n / 2]))
			swap_keys(&k[n - 1], &k[n / 2]);
		pivot = k[n / 2];
		for (;;)
		{
			while (key_less(&k[i], &pivot))
				i++;
			while (key_less(&pivot, &k[j]))
				j--;
			if (i >= j)
				break;
			swap_keys(&k[i++], &k[j--]);
		}
		/* the smaller side first, the larger in the loop: the stack stays log n deep */
		if (j + 1 < n - j - 1)
		{
			sb_sort_hash128_depth(k, j + 1, depth);
			k += j + 1;
			n -= j + 1;
		}
		else
		{
			sb_sort_hash128_depth(k + j + 1, n - j - 1, depth);
			n = j + 1;
		}
	}
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && key_less(&k[b], &k[b - 1]); b--)
			swap_keys(&k[b], &k[b - 1]);
}

static int
depth_for(size_t n)
{
	int			depth = 0;

	while (n > 1)
	{
		n >>= 1;
		depth += 2;
	}
	return depth;
}


void
sb_sort_hash128(SbHash128 *k, size_t n)
{
	sb_sort_hash128_depth(k, n, depth_for(n));
}
