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
#include "entry_lookup.h"
#include "entry_spool.h"

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
 * The parent in FOLDER, if it is the one REF names (opened as CHILD says
 * its parents are); NULL (noted in T) if not.
 */
static SbArchive *
try_folder(const char *folder, const SbParentRef *ref, const SbArchive *child, Tried *t)
{
	SbEntryKeep keep = child->parents_keep;
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
	p = sb_archive_open_link(folder, child->key, keep, child->spool_dir, &err);
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

/* The bytes of ITEMS below LIMIT. */
static uint64_t
length_below(const SbExtent *items, uint32_t n, uint64_t limit)
{
	uint64_t	total = 0;
	uint32_t	i;

	for (i = 0; i < n && items[i].offset < limit; i++)
	{
		uint64_t	end = items[i].offset + items[i].length;

		total += (end < limit ? end : limit) - items[i].offset;
	}
	return total;
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

/*
 * Newest entry I (E), stored as changed blocks: down the chain, each older
 * backup's file gives what it stored below the newest length, until one
 * stored it whole; together they must hold every byte.
 */
static bool
trace_file(SbChain *chain, const SbEntry *e, size_t i, SbError *err)
{
	Extents		covered = {NULL, 0, 0};
	bool		ok = unite(&covered, e->extents, e->nextents, err);
	uint32_t	k;

	for (k = 1; ok && k < chain->nlinks; k++)
	{
		const SbManifest *m = chain->links[k].archive->manifest;
		SbEntry		older;
		bool		found;
		const SbExtent *items;
		SbExtent	whole;
		uint32_t	n;
		uint64_t	gap;

		if (!sb_entry_lookup_find(chain->links[k].lookup, e->path, &older, &found, err))
		{
			ok = false;
			break;
		}
		if (!found || older.type != SB_ENTRY_FILE)
		{
			ok = sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\" is stored as changed blocks, but backup \"%s\", which holds the rest, has no such file",
							  e->path, m->name);
			break;
		}
		data_of(&older, &items, &n, &whole);
		chain->expected[i] += length_below(items, n, e->size);
		chain->depth[i] = (uint16_t) k;
		chain->links[k].gives = true;
		if (older.incremental)
		{
			ok = unite(&covered, older.extents, older.nextents, err);
			continue;
		}
		gap = first_gap(&covered, older.size, e->size);
		if (gap < e->size)
			ok = sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\": byte %" PRIu64 " is in no backup of the chain (backup \"%s\" stored it whole, %" PRIu64 " bytes long)",
							  e->path, gap, m->name, older.size);
		free(covered.items);
		return ok;
	}
	free(covered.items);
	return ok && sb_error_set(err, SB_ECORRUPT,
							  "file \"%s\" is stored as changed blocks down to the end of the chain",
							  e->path);
}

/* The newest manifest's entries, walked in order (sb_manifest_each_entry). */
typedef struct Tracing
{
	SbChain    *chain;
	size_t		ordinal;		/* of the entry being traced */
} Tracing;

static bool
trace_one(void *arg, const SbEntry *e, SbError *err)
{
	Tracing    *tr = arg;
	size_t		i = tr->ordinal++;

	return e->type != SB_ENTRY_FILE || !e->incremental || trace_file(tr->chain, e, i, err);
}

/* M's entries, whether in its table or its spool. */
static size_t
entry_count(const SbManifest *m)
{
	return m->streamed != NULL ? (size_t) sb_entry_spool_count(m->streamed) : m->nentries;
}

bool
sb_chain_build(SbArchive *newest, SbChain *chain, SbError *err)
{
	size_t		n = entry_count(newest->manifest) + 1;
	Tracing		tr = {chain, 0};
	SbArchive  *a;
	uint32_t	k;
	bool		ok;

	memset(chain, 0, sizeof(*chain));
	if (!sb_archive_check_entries(newest, err))
		return false;
	for (a = newest; a != NULL; a = a->parent)
		chain->nlinks++;
	chain->links = sb_alloc(chain->nlinks * sizeof(SbChainLink), err);
	chain->depth = chain->links ? sb_alloc(n * sizeof(uint16_t), err) : NULL;
	chain->expected = chain->depth ? sb_alloc(n * sizeof(uint64_t), err) : NULL;
	chain->written = chain->expected ? sb_alloc(n * sizeof(uint64_t), err) : NULL;
	ok = chain->written != NULL;
	for (a = newest, k = 0; ok && a != NULL; a = a->parent, k++)
	{
		chain->links[k].archive = a;
		ok = (chain->links[k].lookup = sb_entry_lookup_new(a->manifest, err)) != NULL;
	}
	ok = ok && sb_manifest_each_entry(newest->manifest, trace_one, &tr, err);
	/* the older links' own lookups served the tracing alone */
	for (k = 1; chain->links != NULL && k < chain->nlinks; k++)
	{
		sb_entry_lookup_free(chain->links[k].lookup);
		chain->links[k].lookup = NULL;
	}
	if (!ok)
		sb_chain_free(chain);
	return ok;
}

void
sb_chain_free(SbChain *chain)
{
	uint32_t	k;

	for (k = 0; chain->links != NULL && k < chain->nlinks; k++)
		sb_entry_lookup_free(chain->links[k].lookup);
	free(chain->links);
	free(chain->depth);
	free(chain->expected);
	free((void *) chain->written);
	memset(chain, 0, sizeof(*chain));
}

bool
sb_chain_receiver(SbChain *chain, uint32_t k, const char *path, size_t *into, uint64_t *limit,
				  SbError *err)
{
	SbEntry		e;

	*into = SIZE_MAX;
	*limit = 0;
	if (!sb_entry_lookup_at(chain->links[0].lookup, path, &e, into, err))
		return false;
	if (*into != SIZE_MAX && chain->depth[*into] >= k)
		*limit = e.size;
	else
		*into = SIZE_MAX;
	return true;
}

bool
sb_chain_check_written(const SbChain *chain, SbError *err)
{
	size_t		n = entry_count(chain->links[0].archive->manifest);
	size_t		i;
	SbEntry		e;

	for (i = 0; i < n; i++)
		if (atomic_load(&chain->written[i]) != chain->expected[i])
		{
			if (!sb_entry_lookup_ordinal(chain->links[0].lookup, i, &e, err))
				return false;
			return sb_error_set(err, SB_ECORRUPT,
								"file \"%s\": the older backups of the chain wrote %" PRIu64 " of its bytes, not %" PRIu64,
								e.path, (uint64_t) atomic_load(&chain->written[i]),
								chain->expected[i]);
		}
	return true;
}
