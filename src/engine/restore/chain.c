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

#include "restore/chain.h"
#include "util/fsutil.h"
#include "manifest/entry_lookup.h"
#include "manifest/entry_spool.h"

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
	p = sb_archive_open_parent(folder, child, &err);
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
 * What the older backups traced so far stored of the newest files still
 * open (incremental in each of them): by the newest's ordinal, ascending,
 * their extents united.  Only files that stored something are listed, so
 * this follows the blocks that changed, not the number of files.
 */
typedef struct Stored
{
	size_t		ordinal;
	Extents		x;
} Stored;

typedef struct StoredList
{
	Stored	   *items;
	size_t		n;
	size_t		cap;
} StoredList;

static void
free_stored(StoredList *l)
{
	size_t		i;

	for (i = 0; i < l->n; i++)
		free(l->items[i].x.items);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static bool
add_stored(StoredList *l, size_t ordinal, const SbExtent *items, uint32_t n, SbError *err)
{
	Stored	   *s;

	if (!sb_grow((void **) &l->items, &l->cap, l->n, sizeof(Stored), err))
		return false;
	s = &l->items[l->n++];
	s->ordinal = ordinal;
	memset(&s->x, 0, sizeof(s->x));
	return unite(&s->x, items, n, err);
}

/* The extents listed for ORDINAL in L, or NULL. */
static const Stored *
find_stored(const StoredList *l, size_t ordinal)
{
	size_t		lo = 0,
				hi = l->n;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;

		if (l->items[mid].ordinal < ordinal)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < l->n && l->items[lo].ordinal == ordinal ? &l->items[lo] : NULL;
}

static int
compare_stored(const void *a, const void *b)
{
	size_t		x = ((const Stored *) a)->ordinal,
				y = ((const Stored *) b)->ordinal;

	return x < y ? -1 : x > y;
}

/* One older backup traced: link K, against what the newer ones stored (BEFORE). */
typedef struct Pass
{
	SbChain    *chain;
	uint32_t	k;
	const StoredList *before;
	StoredList	found;			/* what link K stored of the files it leaves open */
} Pass;

/*
 * Newest file E (ordinal I) is stored whole by link K as OLDER: every byte
 * of it the newer backups did not store must lie within OLDER's length.
 */
static bool
check_covered(const Pass *p, const SbEntry *e, const Stored *s, const SbEntry *older, SbError *err)
{
	Extents		covered = {NULL, 0, 0};
	uint64_t	gap;
	bool		ok = unite(&covered, e->extents, e->nextents, err) &&
		(s == NULL || unite(&covered, s->x.items, s->x.n, err));

	gap = ok ? first_gap(&covered, older->size, e->size) : e->size;
	free(covered.items);
	if (ok && gap < e->size)
		return sb_error_set(err, SB_ECORRUPT,
							"file \"%s\": byte %" PRIu64 " is in no backup of the chain (backup \"%s\" stored it whole, %" PRIu64 " bytes long)",
							e->path, gap, p->chain->links[p->k].archive->manifest->name, older->size);
	return ok;
}

/* Does E's data lie in one chunk of CHUNK_SIZE bytes (one piece)? */
static bool
in_one_chunk(const SbEntry *e, uint32_t chunk_size)
{
	return e->stream_length > 0 &&
		e->stream_offset / chunk_size == (e->stream_offset + e->stream_length - 1) / chunk_size;
}

/* Link K's entry OLDER: if the newest file of its path is still open, what it gives it. */
static bool
trace_entry(void *arg, const SbEntry *older, SbError *err)
{
	Pass	   *p = arg;
	SbChain    *chain = p->chain;
	SbEntry		e;
	size_t		i;
	const SbExtent *items;
	SbExtent	whole;
	uint32_t	n;
	const Stored *stored;

	if (!sb_entry_lookup_at(chain->newest, older->path, &e, &i, err))
		return false;
	if (i == SIZE_MAX || !chain->open[i])
		return true;
	if (older->type != SB_ENTRY_FILE)
		return sb_error_set(err, SB_ECORRUPT,
							"file \"%s\" is stored as changed blocks, but backup \"%s\", which holds the rest, has no such file",
							e.path, chain->links[p->k].archive->manifest->name);
	data_of(older, &items, &n, &whole);
	chain->expected += length_below(items, n, e.size);
	chain->depth[i] = (uint16_t) p->k;
	chain->links[p->k].gives = true;
	if (older->incremental)
		return older->nextents == 0 || add_stored(&p->found, i, older->extents, older->nextents, err);
	chain->open[i] = false;
	stored = find_stored(p->before, i);
	if (stored == NULL && e.nextents == 0 && e.size > 0 && !older->sparse &&
		in_one_chunk(older, chain->links[p->k].archive->manifest->chunk_size))
		chain->depth[i] |= SB_CHAIN_WHOLE;
	return check_covered(p, &e, stored, older, err);
}

/* After link K: a file still open it did not list is missing from it. */
static bool
check_listed(SbChain *chain, uint32_t k, size_t n, SbError *err)
{
	SbEntry		e;
	size_t		i;

	for (i = 0; i < n; i++)
		if (chain->open[i] && chain->depth[i] < k)
		{
			if (!sb_entry_lookup_ordinal(chain->newest, i, &e, err))
				return false;
			return k < chain->nlinks ?
				sb_error_set(err, SB_ECORRUPT,
							 "file \"%s\" is stored as changed blocks, but backup \"%s\", which holds the rest, has no such file",
							 e.path, chain->links[k].archive->manifest->name) :
				sb_error_set(err, SB_ECORRUPT,
							 "file \"%s\" is stored as changed blocks down to the end of the chain", e.path);
		}
	return true;
}

/* BEFORE united with what link K found of the files still open (sorted first). */
static bool
carry_over(const SbChain *chain, StoredList *before, StoredList *found, SbError *err)
{
	StoredList	next = {NULL, 0, 0};
	size_t		a = 0,
				b = 0;
	bool		ok = true;

	if (found->n > 1)
		qsort(found->items, found->n, sizeof(Stored), compare_stored);
	while (ok && (a < before->n || b < found->n))
	{
		bool		take_a = b >= found->n ||
			(a < before->n && before->items[a].ordinal <= found->items[b].ordinal);
		Stored	   *s = take_a ? &before->items[a++] : &found->items[b++];
		size_t		last = next.n;

		if (!chain->open[s->ordinal])
			continue;
		if (last > 0 && next.items[last - 1].ordinal == s->ordinal)
			ok = unite(&next.items[last - 1].x, s->x.items, s->x.n, err);
		else
			ok = add_stored(&next, s->ordinal, s->x.items, s->x.n, err);
	}
	free_stored(before);
	free_stored(found);
	*before = next;
	return ok;
}

/* The newest's entries, walked in order: which are incremental files, to be traced. */
typedef struct Opening
{
	SbChain    *chain;
	size_t		ordinal;
} Opening;

static bool
open_entry(void *arg, const SbEntry *e, SbError *err)
{
	Opening    *o = arg;

	(void) err;
	o->chain->open[o->ordinal++] = e->type == SB_ENTRY_FILE && e->incremental;
	return true;
}

/* M's entries, whether in its table or its spool. */
static size_t
entry_count(const SbManifest *m)
{
	return m->streamed != NULL ? (size_t) sb_entry_spool_count(m->streamed) : m->nentries;
}

/*
 * Each older backup in turn, newest first, its entries read in order: each
 * gives the newest files of its paths still open what it stored below their
 * length, until one stored the file whole; together they must hold every
 * byte.  One pass a backup, the newest's lookup alone in memory (and what
 * the passes stored of the files still open), however long the chain.
 */
static bool
trace_chain(SbChain *chain, size_t n, SbError *err)
{
	Opening		o = {chain, 0};
	StoredList	before = {NULL, 0, 0};
	uint32_t	k;
	bool		ok = sb_manifest_each_entry(chain->links[0].archive->manifest, open_entry, &o, err);

	for (k = 1; ok && k < chain->nlinks; k++)
	{
		Pass		p = {chain, k, &before, {NULL, 0, 0}};

		ok = sb_manifest_each_entry(chain->links[k].archive->manifest, trace_entry, &p, err) &&
			check_listed(chain, k, n, err) && carry_over(chain, &before, &p.found, err);
		free_stored(&p.found);
	}
	free_stored(&before);
	return ok && check_listed(chain, chain->nlinks, n, err);
}

bool
sb_chain_build(SbArchive *newest, SbChain *chain, SbError *err)
{
	size_t		n = entry_count(newest->manifest);
	SbArchive  *a;
	uint32_t	k;
	bool		ok;

	memset(chain, 0, sizeof(*chain));
	if (!sb_archive_check_entries(newest, err))
		return false;
	for (a = newest; a != NULL; a = a->parent)
		chain->nlinks++;
	chain->links = sb_alloc(chain->nlinks * sizeof(SbChainLink), err);
	chain->depth = chain->links ? sb_alloc((n + 1) * sizeof(uint16_t), err) : NULL;
	chain->open = chain->depth ? sb_alloc(n + 1, err) : NULL;
	ok = chain->open != NULL;
	for (a = newest, k = 0; ok && a != NULL; a = a->parent, k++)
		chain->links[k].archive = a;
	ok = ok && (chain->newest = sb_entry_lookup_new(newest->manifest, err)) != NULL &&
		trace_chain(chain, n, err);
	free(chain->open);			/* the tracing's alone */
	chain->open = NULL;
	if (!ok)
		sb_chain_free(chain);
	return ok;
}

void
sb_chain_free(SbChain *chain)
{
	sb_entry_lookup_free(chain->newest);
	free(chain->links);
	free(chain->depth);
	free(chain->open);
	memset(chain, 0, sizeof(*chain));
}

bool
sb_chain_receiver(SbChain *chain, uint32_t k, const char *path, SbChainReceiver *r, SbError *err)
{
	SbEntry		e;

	memset(r, 0, sizeof(*r));
	r->into = SIZE_MAX;
	if (!sb_entry_lookup_at(chain->newest, path, &e, &r->into, err))
		return false;
	if (r->into == SIZE_MAX || sb_chain_depth(chain, r->into) < k)
	{
		r->into = SIZE_MAX;
		return true;
	}
	r->limit = e.size;
	r->mode = e.mode;
	r->mtime = e.mtime;
	return true;
}

bool
sb_chain_check_written(const SbChain *chain, SbError *err)
{
	uint64_t	written = atomic_load(&chain->written);

	if (written != chain->expected)
		return sb_error_set(err, SB_ECORRUPT,
							"the older backups of the chain wrote %" PRIu64 " bytes of the restored files, not %" PRIu64,
							written, chain->expected);
	return true;
}
