/*
 * path_set.c
 *		A manifest's paths checked from their hashes (see path_set.h).
 *
 * The parents of an entry are checked from the nearest listed one up: if
 * it is a directory, its own parents were (or will be) checked as an entry
 * of their own, so one lookup settles most entries, and none when the
 * entry before had the same parent (entries come folder by folder).
 */
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "manifest/hash_sort.h"
#include "manifest/path_set.h"
#include "util/fsutil.h"

typedef SbHash128 Key;

struct SbPathSet
{
	Key		   *all;			/* every path */
	size_t		nall;
	size_t		cap_all;
	Key		   *dirs;			/* the directories' */
	size_t		ndirs;
	size_t		cap_dirs;
	bool		twice;			/* a path is listed twice: */
	Key			twice_key;		/* its key */
	char		checked_parent[4096];	/* the parent of the entry checked last */
};

static Key
key_of(const char *path, size_t len)
{
	XXH128_hash_t h = XXH3_128bits(path, len);
	Key			k = {h.high64, h.low64};

	return k;
}

static bool
same_key(Key a, Key b)
{
	return a.high == b.high && a.low == b.low;
}

SbPathSet *
sb_path_set_new(SbError *err)
{
	return sb_alloc(sizeof(SbPathSet), err);
}

static bool
push(Key **keys, size_t *n, size_t *cap, Key k, SbError *err)
{
	if (!sb_grow((void **) keys, cap, *n, sizeof(Key), err))
		return false;
	(*keys)[(*n)++] = k;
	return true;
}

bool
sb_path_set_add(SbPathSet *set, const SbEntry *e, SbError *err)
{
	Key			k = key_of(e->path, strlen(e->path));

	return push(&set->all, &set->nall, &set->cap_all, k, err) &&
		(e->type != SB_ENTRY_DIR || push(&set->dirs, &set->ndirs, &set->cap_dirs, k, err));
}

void
sb_path_set_finish(SbPathSet *set)
{
	size_t		i;

	sb_sort_hash128(set->all, set->nall);
	sb_sort_hash128(set->dirs, set->ndirs);
	for (i = 1; i < set->nall && !set->twice; i++)
		if (same_key(set->all[i - 1], set->all[i]))
		{
			set->twice = true;
			set->twice_key = set->all[i];
		}
}

static bool
has_key(const Key *keys, size_t n, Key k)
{
	return bsearch(&k, keys, n, sizeof(Key), sb_hash128_compare) != NULL;
}

/* The parents of PATH (LEN bytes before its last slash), nearest first, until a listed one. */
static bool
check_up(const SbPathSet *set, const char *path, size_t len, SbError *err)
{
	while (len > 0)
	{
		Key			k = key_of(path, len);

		if (has_key(set->dirs, set->ndirs, k))
			return true;
		if (has_key(set->all, set->nall, k))
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: \"%s\" lies under \"%.*s\", which is not a directory",
								path, (int) len, path);
		while (len > 0 && path[len - 1] != '/')
			len--;
		if (len > 0)
			len--;				/* the slash */
	}
	return true;
}

bool
sb_path_set_check_parents(SbPathSet *set, const SbEntry *e, SbError *err)
{
	const char *slash = strrchr(e->path, '/');
	size_t		len = slash ? (size_t) (slash - e->path) : 0;

	if (set->twice && same_key(set->twice_key, key_of(e->path, strlen(e->path))))
		return sb_error_set(err, SB_ECORRUPT, "manifest: \"%s\" is listed twice", e->path);
	if (len == 0 || len >= sizeof(set->checked_parent) ||
		(strncmp(set->checked_parent, e->path, len) == 0 && set->checked_parent[len] == '\0'))
		return true;
	if (!check_up(set, e->path, len, err))
		return false;
	memcpy(set->checked_parent, e->path, len);
	set->checked_parent[len] = '\0';
	return true;
}

void
sb_path_set_free(SbPathSet *set)
{
	if (set == NULL)
		return;
	free(set->all);
	free(set->dirs);
	free(set);
}
