/*
 * chain.c
 *		Finding the backups a differential or incremental backup completes,
 *		and what each of them writes in a restore (chain.h).
 *
 * A child's manifest names its parent by uuid and by the SHA-256 of the
 * parent's manifest: a parent is taken only if its own stripes authenticate
 * that very manifest, so a backup of the same name, an older copy or an
 * edited manifest cannot stand in for it.  It is looked for beside the
 * child (backups of one destination sit side by side, and folders copied
 * together stay so), then in the backup folder of each destination the
 * parent was written to.
 */
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chain.h"
#include "fsutil.h"
#include "path_index.h"

/* ---------- finding the parents ---------- */

static void
hex_of(const uint8_t *bytes, size_t len, char *out)
{
	size_t		i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", bytes[i]);
}

/* Is P exactly the backup REF names?  If not, WHY says what it is. */
static bool
is_named_parent(const SbArchive *p, const SbParentRef *ref, char *why, size_t len)
{
	if (memcmp(p->manifest->uuid, ref->uuid, sizeof(ref->uuid)) != 0)
		snprintf(why, len, "it holds another backup, \"%s\"", p->manifest->name);
	else if (!p->authenticated)
		snprintf(why, len, "no stripe of it was found to authenticate its manifest");
	else if (memcmp(p->manifest->json_sha256, ref->manifest_sha256, 32) != 0 ||
			 p->manifest->json_length != ref->manifest_length)
		snprintf(why, len, "its manifest is not the one the child backup recorded (another SHA-256)");
	else
		return true;
	return false;
}

/* What was tried, for the error if nothing fits. */
typedef struct Tried
{
	char		text[2048];
	size_t		used;
	uint32_t	count;
} Tried;

static void
note_tried(Tried *t, const char *folder, const char *why)
{
	if (t->used < sizeof(t->text))
		t->used += (size_t) snprintf(t->text + t->used, sizeof(t->text) - t->used, "%s\"%s\" (%s)",
									 t->count ? ", " : "", folder, why);
	t->count++;
}

/*
 * The parent in FOLDER, if it is the one REF names (opened as CHILD is, but
 * for members alone when CHILD's files are to be looked up: a new backup
 * reads its parent's files, never those of the parent's parents); NULL
 * (noted in T) if not.
 */
static SbArchive *
try_folder(const char *folder, const SbParentRef *ref, const SbArchive *child, Tried *t)
{
	SbEntryKeep keep = child->keep == SB_KEEP_LOOKUP ? SB_KEEP_HEAD : child->keep;
	char		manifest[PATH_MAX];
	char		why[512];
	SbArchive  *p;
	SbError		err;

	snprintf(manifest, sizeof(manifest), "%s/%s", folder, SB_MANIFEST_FILE);
	if (access(manifest, F_OK) != 0)
	{
		note_tried(t, folder, "no manifest there");
		return NULL;
	}
	p = sb_archive_open_link(folder, child->key, keep, &err);
	if (p == NULL)
	{
		note_tried(t, folder, err.message);
		return NULL;
	}
	if (is_named_parent(p, ref, why, sizeof(why)))
		return p;
	note_tried(t, folder, why);
	sb_archive_close(p);
	return NULL;
}

/* Beside the child first, then in each destination the parent was written to. */
static SbArchive *
find_parent(const SbArchive *child, Tried *t)
{
	const SbParentRef *ref = child->manifest->parent;
	char		beside[PATH_MAX];
	char		folder[PATH_MAX];
	SbArchive  *p;
	uint32_t	i;

	snprintf(beside, sizeof(beside), "%s", child->location);
	snprintf(folder, sizeof(folder), "%s/%s", dirname(beside), ref->name);
	if ((p = try_folder(folder, ref, child, t)) != NULL)
		return p;
	for (i = 0; i < ref->ndestinations; i++)
	{
		char		other[PATH_MAX];

		snprintf(other, sizeof(other), "%s/%s", ref->destinations[i], ref->name);
		if (strcmp(other, folder) != 0 && (p = try_folder(other, ref, child, t)) != NULL)
			return p;
	}
	return NULL;
}

bool
sb_archive_open_parents(SbArchive *a, SbError *err)
{
	SbArchive  *child = a;
	uint32_t	links = 1;

	while (child->manifest->parent != NULL)
	{
		const SbParentRef *ref = child->manifest->parent;
		Tried		tried;
		char		uuid[33];

		memset(&tried, 0, sizeof(tried));
		if (++links > SB_MAX_CHAIN)
			return sb_error_set(err, SB_ECORRUPT,
								"backup \"%s\" depends on more than %d backups", a->manifest->name,
								SB_MAX_CHAIN);
		child->parent = find_parent(child, &tried);
		if (child->parent == NULL)
		{
			hex_of(ref->uuid, sizeof(ref->uuid), uuid);
			return sb_error_set(err, SB_ENOTFOUND,
								"backup \"%s\" is %s backup of \"%s\" (uuid %s), which it needs and which was not found: %s",
								child->manifest->name,
								child->manifest->type == SB_BACKUP_DIFF ? "a differential" : "an incremental",
								ref->name, uuid, tried.text);
		}
		child = child->parent;
	}
	return true;
}

/* ---------- what each link writes ---------- */

/* A growable list of extents, ascending and apart. */
typedef struct Extents
{
	SbExtent   *items;
	size_t		n;
	size_t		cap;
} Extents;

static bool
push(Extents *x, uint64_t offset, uint64_t end, SbError *err)
{
	if (end <= offset)
		return true;
	if (x->n > 0 && x->items[x->n - 1].offset + x->items[x->n - 1].length >= offset)
	{
		SbExtent   *last = &x->items[x->n - 1];

		if (end > last->offset + last->length)
			last->length = end - last->offset;
		return true;
	}
	if (!sb_grow((void **) &x->items, &x->cap, x->n, sizeof(SbExtent), err))
		return false;
	x->items[x->n].offset = offset;
	x->items[x->n].length = end - offset;
	x->n++;
	return true;
}

/* The data regions of E: its extents, or all of it. */
static void
data_of(const SbEntry *e, const SbExtent **items, uint32_t *n, SbExtent *whole)
{
	whole->offset = 0;
	whole->length = e->size;
	*items = e->sparse ? e->extents : whole;
	*n = e->sparse ? e->nextents : (e->size > 0 ? 1 : 0);
}

/* OUT = ITEMS below LIMIT. */
static bool
clip(const SbExtent *items, uint32_t n, uint64_t limit, Extents *out, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < n && items[i].offset < limit; i++)
	{
		uint64_t	end = items[i].offset + items[i].length;

		if (!push(out, items[i].offset, end < limit ? end : limit, err))
			return false;
	}
	return true;
}

/* COVERED = COVERED united with ITEMS. */
static bool
unite(Extents *covered, const SbExtent *items, uint32_t n, SbError *err)
{
	Extents		merged = {NULL, 0, 0};
	size_t		a = 0;
	uint32_t	b = 0;
	bool		ok = true;

	while (ok && (a < covered->n || b < n))
	{
		const SbExtent *next = b >= n || (a < covered->n && covered->items[a].offset < items[b].offset)
			? &covered->items[a++] : &items[b++];

		ok = push(&merged, next->offset, next->offset + next->length, err);
	}
	free(covered->items);
	*covered = merged;
	return ok;
}

/* The first byte below SIZE that COVERED and [0, BASE_SIZE) leave out, or SIZE. */
static uint64_t
first_gap(const Extents *covered, uint64_t base_size, uint64_t size)
{
	uint64_t	pos = base_size;
	size_t		i;

	for (i = 0; i < covered->n && pos < size; i++)
	{
		if (covered->items[i].offset > pos)
			break;
		if (covered->items[i].offset + covered->items[i].length > pos)
			pos = covered->items[i].offset + covered->items[i].length;
	}
	return pos < size ? pos : size;
}

static bool
alloc_link(SbChainLink *l, SbArchive *a, SbError *err)
{
	size_t		n = a->manifest->nentries + 1;
	size_t		i;

	l->archive = a;
	l->final_of = sb_alloc(n * sizeof(size_t), err);
	l->owned = l->final_of ? sb_alloc(n * sizeof(SbExtent *), err) : NULL;
	l->nowned = l->owned ? sb_alloc(n * sizeof(uint32_t), err) : NULL;
	if (l->nowned == NULL)
		return false;
	for (i = 0; i < n; i++)
		l->final_of[i] = SIZE_MAX;
	return true;
}

/* Link K's entry J gives OWNED to the newest entry I. */
static void
give(SbChain *chain, uint32_t k, size_t j, size_t i, Extents *owned)
{
	SbChainLink *l = &chain->links[k];
	size_t		x;

	l->final_of[j] = i;
	l->gives = true;
	l->owned[j] = owned->items;
	l->nowned[j] = (uint32_t) owned->n;
	for (x = 0; x < owned->n; x++)
		chain->expected[i] += owned->items[x].length;
	owned->items = NULL;
}

/*
 * Newest entry I, stored as changed blocks: down the chain, each older
 * backup's file gives what it stored below the newest length, until one
 * stored it whole; together they must hold every byte.
 */
static bool
trace_file(SbChain *chain, const SbPathIndex *indexes, size_t i, SbError *err)
{
	const SbEntry *e = &chain->links[0].archive->manifest->entries[i];
	Extents		covered = {NULL, 0, 0};
	bool		ok = unite(&covered, e->extents, e->nextents, err);
	uint32_t	k;

	for (k = 1; ok && k < chain->nlinks; k++)
	{
		const SbManifest *m = chain->links[k].archive->manifest;
		size_t		j = sb_path_index_find(&indexes[k], e->path);
		const SbEntry *older = j == SIZE_MAX ? NULL : &m->entries[j];
		Extents		owned = {NULL, 0, 0};
		const SbExtent *items;
		SbExtent	whole;
		uint32_t	n;
		uint64_t	gap;

		if (older == NULL || older->type != SB_ENTRY_FILE)
		{
			ok = sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\" is stored as changed blocks, but backup \"%s\", which holds the rest, has no such file",
							  e->path, m->name);
			break;
		}
		data_of(older, &items, &n, &whole);
		ok = clip(items, n, e->size, &owned, err);
		if (ok)
			give(chain, k, j, i, &owned);
		free(owned.items);
		if (!ok || older->incremental)
		{
			ok = ok && unite(&covered, older->extents, older->nextents, err);
			continue;
		}
		gap = first_gap(&covered, older->size, e->size);
		if (gap < e->size)
			ok = sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\": byte %" PRIu64 " is in no backup of the chain (backup \"%s\" stored it whole, %" PRIu64 " bytes long)",
							  e->path, gap, m->name, older->size);
		free(covered.items);
		return ok;
	}
	free(covered.items);
	return ok && sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\" is stored as changed blocks down to the end of the chain",
							  e->path);
}

bool
sb_chain_build(SbArchive *newest, SbChain *chain, SbError *err)
{
	const SbManifest *m = newest->manifest;
	SbPathIndex *indexes = NULL;
	SbArchive  *a;
	uint32_t	k;
	size_t		i;
	bool		ok = true;

	memset(chain, 0, sizeof(*chain));
	if (!sb_archive_check_entries(newest, err))
		return false;
	for (a = newest; a != NULL; a = a->parent)
		chain->nlinks++;
	chain->links = sb_alloc(chain->nlinks * sizeof(SbChainLink), err);
	indexes = chain->links ? sb_alloc(chain->nlinks * sizeof(SbPathIndex), err) : NULL;
	chain->expected = indexes ? sb_alloc((m->nentries + 1) * sizeof(uint64_t), err) : NULL;
	chain->written = chain->expected ? sb_alloc((m->nentries + 1) * sizeof(uint64_t), err) : NULL;
	ok = chain->written != NULL;
	for (a = newest, k = 0; ok && a != NULL; a = a->parent, k++)
		ok = alloc_link(&chain->links[k], a, err) &&
			sb_path_index_build(&indexes[k], a->manifest, err);
	for (i = 0; ok && i < m->nentries; i++)
		if (m->entries[i].type == SB_ENTRY_FILE && m->entries[i].incremental)
			ok = trace_file(chain, indexes, i, err);
	for (k = 0; indexes != NULL && k < chain->nlinks; k++)
		sb_path_index_free(&indexes[k]);
	free(indexes);
	if (!ok)
		sb_chain_free(chain);
	return ok;
}

void
sb_chain_free(SbChain *chain)
{
	uint32_t	k;
	size_t		j;

	for (k = 0; chain->links != NULL && k < chain->nlinks; k++)
	{
		SbChainLink *l = &chain->links[k];

		for (j = 0; l->owned != NULL && j < l->archive->manifest->nentries; j++)
			free(l->owned[j]);
		free(l->owned);
		free(l->nowned);
		free(l->final_of);
	}
	free(chain->links);
	free(chain->expected);
	free((void *) chain->written);
	memset(chain, 0, sizeof(*chain));
}

bool
sb_chain_check_written(const SbChain *chain, SbError *err)
{
	const SbManifest *m = chain->links[0].archive->manifest;
	size_t		i;

	for (i = 0; i < m->nentries; i++)
		if (atomic_load(&chain->written[i]) != chain->expected[i])
			return sb_error_set(err, SB_ECORRUPT,
								"file \"%s\": the older backups of the chain wrote %" PRIu64 " of its bytes, not %" PRIu64,
								m->entries[i].path, (uint64_t) atomic_load(&chain->written[i]),
								chain->expected[i]);
	return true;
}
