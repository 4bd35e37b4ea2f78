/*
 * path_index.c
 *		Entries by path: open addressing on the XXH3 hash of the path.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "util/fsutil.h"
#include "manifest/path_index.h"

static size_t
first_slot(const SbPathIndex *ix, const char *path)
{
	return (size_t) (sb_hash64(path, strlen(path)) & (ix->nslots - 1));
}

bool
sb_path_index_build(SbPathIndex *ix, const SbManifest *m, SbError *err)
{
	size_t		n = 16;
	size_t		i;

	while (n < 2 * m->nentries)
		n *= 2;
	ix->manifest = m;
	ix->nslots = n;
	ix->slots = sb_alloc(n * sizeof(size_t), err);
	if (ix->slots == NULL)
		return false;
	for (i = 0; i < m->nentries; i++)
	{
		size_t		s = first_slot(ix, m->entries[i].path);

		while (ix->slots[s] != 0)
			s = (s + 1) & (n - 1);
		ix->slots[s] = i + 1;
	}
	return true;
}

void
sb_path_index_free(SbPathIndex *ix)
{
	free(ix->slots);
	ix->slots = NULL;
	ix->nslots = 0;
}

size_t
sb_path_index_find(const SbPathIndex *ix, const char *path)
{
	size_t		s;

	for (s = first_slot(ix, path); ix->slots[s] != 0; s = (s + 1) & (ix->nslots - 1))
	{
		size_t		i = ix->slots[s] - 1;

		if (strcmp(ix->manifest->entries[i].path, path) == 0)
			return i;
	}
	return SIZE_MAX;
}
