/*
 * test_hash_sort.c
 *		Sorting 128-bit hashes in place (hash_sort.c) gives what qsort gives:
 *		random, sorted, reversed and equal keys, short and long arrays, the
 *		quicksort and the heapsort it falls back to.
 */
#include <stdlib.h>
#include <string.h>

#include "manifest/hash_sort.h"
#include "harness.h"
#include "tests.h"

static int
compare_hashes(const void *a, const void *b)
{
	const SbHash128 *x = a;
	const SbHash128 *y = b;

	if (x->high != y->high)
		return x->high < y->high ? -1 : 1;
	return x->low < y->low ? -1 : x->low > y->low;
}

/* Keys of shape SHAPE: 0 random, 1 sorted, 2 reversed, 3 all equal, 4 few values (same high). */
static void
fill(SbHash128 *k, size_t n, int shape, uint32_t seed)
{
	size_t		i;

	srand(seed);
	for (i = 0; i < n; i++)
	{
		uint64_t	r = ((uint64_t) rand() << 32) ^ (uint64_t) rand();

		k[i].high = shape == 1 ? i : shape == 2 ? n - i : shape == 3 ? 7 : shape == 4 ? 1 : r;
		k[i].low = shape == 4 ? r % 5 : shape == 3 ? 9 : r * 31;
	}
}

void
test_hash_sort(void)
{
	static const size_t sizes[] = {0, 1, 2, 3, 16, 17, 100, 1000, 100000};
	static const char *const shapes[] = {"random", "sorted", "reversed", "all equal", "five values"};
	int			wrong = 0,
				runs = 0;
	size_t		s;
	int			shape,
				depth;

	for (s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
		for (shape = 0; shape < 5; shape++)
			for (depth = 0; depth < 2; depth++)
			{
				size_t		n = sizes[s];
				SbHash128  *k = calloc(n + 1, sizeof(SbHash128));
				SbHash128  *want = calloc(n + 1, sizeof(SbHash128));

				fill(k, n, shape, (uint32_t) (n + 7 * (size_t) shape));
				memcpy(want, k, n * sizeof(SbHash128));
				qsort(want, n, sizeof(SbHash128), compare_hashes);
				if (depth == 0)
					sb_sort_hash128_depth(k, n, 0);
				else
					sb_sort_hash128(k, n);
				runs++;
				if (memcmp(k, want, n * sizeof(SbHash128)) != 0)
				{
					wrong++;
					th_diag("%zu %s keys, %s: not what qsort gives", n, shapes[shape],
							depth == 0 ? "heapsort" : "introsort");
				}
				free(k);
				free(want);
			}
	is_int(wrong, 0, "%d sorts (9 sizes, 5 shapes, introsort and heapsort) give what qsort gives", runs);
}
