/*
 * entry_lookup.c
 *		Entries by path (see entry_lookup.h): the path index over a table in
 *		memory, or over a spool a sorted array of (path hash, ordinal) and
 *		each ordinal's record offset.
 */
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "manifest/entry_lookup.h"
#include "manifest/entry_spool.h"
#include "util/fsutil.h"
#include "manifest/hash_sort.h"
#include "manifest/path_index.h"

struct SbEntryLookup
{
	const SbManifest *manifest;
	SbPathIndex index;			/* the entries in memory: by path */
	SbHash128  *records;		/* the entries in the spool: high the path's
								 * hash, low its ordinal; sorted */
	uint64_t   *offsets;		/* by ordinal: where its record starts */
	size_t		nrecords;
};

/* Every record of M's spool by the hash of its path, sorted. */
static bool
index_spool(SbEntryLookup *l, SbError *err)
{
	SbEntrySpool *spool = l->manifest->streamed;
	uint64_t	n = sb_entry_spool_count(spool);
	SbEntry		e;
	bool		end = false;

	l->records = sb_alloc((n ? n : 1) * sizeof(SbHash128), err);
	l->offsets = l->records ? sb_alloc((n ? n : 1) * sizeof(uint64_t), err) : NULL;
	if (l->offsets == NULL || !sb_entry_spool_rewind(spool, err))
		return false;
	for (;;)
	{
		uint64_t	offset = sb_entry_spool_tell(spool);

		if (!sb_entry_spool_next(spool, &e, &end, err))
			break;
		if (l->nrecords == n)
			return sb_error_set(err, SB_EIO, "the manifest's entries are more than were added");
		l->offsets[l->nrecords] = offset;
		l->records[l->nrecords].high = sb_hash64(e.path, strlen(e.path));
		l->records[l->nrecords].low = l->nrecords;
		l->nrecords++;
	}
	if (!end)
		return false;
	sb_sort_hash128(l->records, l->nrecords);
	return true;
}

SbEntryLookup *
sb_entry_lookup_new(const SbManifest *m, SbError *err)
{
	SbEntryLookup *l = sb_alloc(sizeof(SbEntryLookup), err);
	bool		ok;

	if (l == NULL)
		return NULL;
	l->manifest = m;
	ok = m->streamed != NULL ? index_spool(l, err) : sb_path_index_build(&l->index, m, err);
	if (!ok)
	{
		sb_entry_lookup_free(l);
		return NULL;
	}
	return l;
}

/* The first record whose path hashes to HASH, or NRECORDS. */
static size_t
first_with_hash(const SbEntryLookup *l, uint64_t hash)
{
	size_t		lo = 0;
	size_t		hi = l->nrecords;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (l->records[mid].high < hash)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool
find_in_spool(SbEntryLookup *l, const char *path, SbEntry *e, size_t *ordinal, SbError *err)
{
	uint64_t	hash = sb_hash64(path, strlen(path));
	size_t		i;

	for (i = first_with_hash(l, hash); i < l->nrecords && l->records[i].high == hash; i++)
	{
		if (!sb_entry_spool_read_at(l->manifest->streamed, l->offsets[l->records[i].low], e, err))
			return false;
		if (strcmp(e->path, path) == 0)
		{
			*ordinal = (size_t) l->records[i].low;
			return true;
		}
	}
	return true;
}

bool
sb_entry_lookup_at(SbEntryLookup *l, const char *path, SbEntry *e, size_t *ordinal, SbError *err)
{
	*ordinal = SIZE_MAX;
	if (l->manifest->streamed != NULL)
		return find_in_spool(l, path, e, ordinal, err);
	*ordinal = sb_path_index_find(&l->index, path);
	if (*ordinal != SIZE_MAX)
		*e = l->manifest->entries[*ordinal];
	return true;
}

bool
sb_entry_lookup_find(SbEntryLookup *l, const char *path, SbEntry *e, bool *found, SbError *err)
{
	size_t		ordinal;

	if (!sb_entry_lookup_at(l, path, e, &ordinal, err))
		return false;
	*found = ordinal != SIZE_MAX;
	return true;
}

bool
sb_entry_lookup_ordinal(SbEntryLookup *l, size_t ordinal, SbEntry *e, SbError *err)
{
	if (l->manifest->streamed == NULL)
	{
		if (ordinal >= l->manifest->nentries)
			return sb_error_set(err, SB_EINVAL, "internal error: no entry %zu", ordinal);
		*e = l->manifest->entries[ordinal];
		return true;
	}
	if (ordinal >= l->nrecords)
		return sb_error_set(err, SB_EINVAL, "internal error: no entry %zu", ordinal);
	return sb_entry_spool_read_at(l->manifest->streamed, l->offsets[ordinal], e, err);
}

void
sb_entry_lookup_free(SbEntryLookup *l)
{
	if (l == NULL)
		return;
	sb_path_index_free(&l->index);
	free(l->records);
	free(l->offsets);
	free(l);
}
