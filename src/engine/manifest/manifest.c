/*
 * manifest.c
 *		The in-memory manifest: entries, stripes, consistency checks, and the
 *		mapping from chunks to the file pieces they hold.
 *
 * sb_manifest_index() is the gate every reader passes: a manifest read from
 * disk is untrusted until it has checked paths, extents, stream offsets,
 * that every chunk lives in exactly one stripe, that the stripes' byte counts
 * are those of the chunks they hold, and that it says only what a
 * PostgreSQL data directory can hold (modes within 0755, links only to
 * tablespaces), and that every timeline can be charted.  The writer passes
 * the same gate before it publishes.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_manifest.h"
#include "util/arena.h"
#include "crypto/crypto.h"
#include "format/format.h"
#include "util/fsutil.h"
#include "manifest/entry_spool.h"
#include "manifest/manifest_tally.h"
#include "manifest/manifest_redundancy.h"
#include "manifest/path_set.h"

static bool check_extents(const SbEntry *e, SbError *err);
static bool check_entry_kind(const SbEntry *e, SbError *err);
static bool file_stamp_is_valid(const char *id);

SbManifest *
sb_manifest_new(void)
{
	SbManifest *m = calloc(1, sizeof(SbManifest));

	if (m != NULL)
	{
		m->version_major = SB_MANIFEST_MAJOR;
		m->version_minor = SB_MANIFEST_MINOR;
	}
	return m;
}

void
sb_parent_ref_free(SbParentRef *ref)
{
	uint32_t	i;

	if (ref == NULL)
		return;
	for (i = 0; i < ref->ndestinations; i++)
		free(ref->destinations[i]);
	free(ref->destinations);
	free(ref->name);
	free(ref);
}

static bool
has_destination(const SbParentRef *ref, const char *dest)
{
	uint32_t	i;

	for (i = 0; i < ref->ndestinations; i++)
		if (strcmp(ref->destinations[i], dest) == 0)
			return true;
	return false;
}

SbParentRef *
sb_parent_ref_of(const SbManifest *parent, SbError *err)
{
	SbParentRef *ref = sb_alloc(sizeof(SbParentRef), err);
	uint32_t	i;

	if (ref == NULL)
		return NULL;
	memcpy(ref->uuid, parent->uuid, sizeof(ref->uuid));
	memcpy(ref->manifest_sha256, parent->json_sha256, sizeof(ref->manifest_sha256));
	ref->manifest_length = parent->json_length;
	ref->name = sb_strdup(parent->name, err);
	ref->destinations = sb_alloc((parent->nstripes + 1) * sizeof(char *), err);
	if (ref->name == NULL || ref->destinations == NULL)
	{
		sb_parent_ref_free(ref);
		return NULL;
	}
	for (i = 0; i < parent->nstripes; i++)
	{
		const char *dest = parent->stripes[i].destination;

		if (has_destination(ref, dest))
			continue;
		if ((ref->destinations[ref->ndestinations] = sb_strdup(dest, err)) == NULL)
		{
			sb_parent_ref_free(ref);
			return NULL;
		}
		ref->ndestinations++;
	}
	return ref;
}

void
sb_manifest_free(SbManifest *m)
{
	size_t		i;

	if (m == NULL)
		return;
	sb_arena_free(m->arena);
	for (i = 0; i < m->nstripes; i++)
	{
		free(m->stripes[i].destination);
		free(m->stripes[i].file_name);
		free(m->stripes[i].ranges);
		free(m->stripes[i].parity_ranges);
		free(m->stripes[i].timeline);
	}
	free(m->entries);
	free(m->stripes);
	free(m->name);
	free(m->label);
	free(m->tool);
	free(m->started_at);
	free(m->finished_at);
	free(m->metadata_json);
	sb_parent_ref_free(m->parent);
	free(m->chunk_map);
	free(m->data_entries);
	sb_manifest_tally_free(m->tally);
	sb_entry_spool_free(m->streamed);
	sb_path_set_free(m->paths);
	sb_manifest_spill_free(m->spill);
	if (m->cipher != NULL)
		sb_cipher_clear(m->cipher);
	free(m->cipher);
	free(m);
}

bool
sb_path_is_safe(const char *path, bool allow_root)
{
	const char *p = path;

	if (allow_root && strcmp(path, ".") == 0)
		return true;
	if (*p == '\0' || *p == '/')
		return false;
	while (*p != '\0')
	{
		const char *end = strchr(p, '/');
		size_t		len = end ? (size_t) (end - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') ||
			(len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		if (end == NULL)
			break;
		p = end + 1;
		if (*p == '\0')
			return false;		/* trailing slash */
	}
	return strlen(path) < 4096;
}

bool
sb_link_is_allowed(const char *path, const char *target)
{
	const char *oid = path + strlen("pg_tblspc/");
	size_t		len;

	if (strncmp(path, "pg_tblspc/", strlen("pg_tblspc/")) != 0)
		return false;
	len = strlen(oid);
	/* An OID: 1 to 10 digits. */
	if (len == 0 || len > 10 || strspn(oid, "0123456789") != len)
		return false;
	return target != NULL && target[0] == '/' && strlen(target) < 4096;
}

/* A copy of S in M's arena (NULL stays NULL); false when memory runs out. */
static bool
keep_string(SbManifest *m, char **s, SbError *err)
{
	return *s == NULL || (*s = sb_arena_strdup(&m->arena, *s, err)) != NULL;
}

/* Check E's file stamps as the table's check would, and leave them out. */
static bool
drop_stamps(SbEntry *e, SbError *err)
{
	if ((e->file_id != NULL && !file_stamp_is_valid(e->file_id)) ||
		(e->file_times != NULL && !file_stamp_is_valid(e->file_times)))
		return sb_error_set(err, SB_ECORRUPT, "manifest: bad file_id or file_times of \"%s\"", e->path);
	e->file_id = e->file_times = NULL;
	return true;
}

bool
sb_manifest_add_entry(SbManifest *m, const SbEntry *e, SbError *err)
{
	SbEntry		copy = *e;

	if (!sb_path_is_safe(e->path, e->type == SB_ENTRY_DIR))
		return sb_error_set(err, SB_EINVAL, "unsafe path in archive: \"%s\"", e->path);
	if (m->streamed != NULL)
		return (e->type != SB_ENTRY_FILE || check_extents(e, err)) && check_entry_kind(e, err) &&
			sb_manifest_tally_entry(m, e, err) && sb_path_set_add(m->paths, e, err) &&
			sb_entry_spool_add(m->streamed, e, err);
	if (m->tally != NULL)
		return (e->type != SB_ENTRY_FILE || check_extents(e, err)) &&
			sb_manifest_tally_entry(m, e, err);
	if (m->spill != NULL)
		return (e->type != SB_ENTRY_FILE || check_extents(e, err)) &&
			sb_manifest_spill_entry(m, e, err);
	if (m->no_stamps && !drop_stamps(&copy, err))
		return false;
	copy.extents = NULL;
	if (e->nextents > 0 &&
		(copy.extents = sb_arena_alloc(&m->arena, e->nextents * sizeof(SbExtent), err)) != NULL)
		memcpy(copy.extents, e->extents, e->nextents * sizeof(SbExtent));
	if ((e->nextents > 0 && copy.extents == NULL) || !keep_string(m, &copy.path, err) ||
		!keep_string(m, &copy.link_target, err) || !keep_string(m, &copy.file_id, err) ||
		!keep_string(m, &copy.file_times, err) ||
		!sb_grow((void **) &m->entries, &m->entries_cap, m->nentries, sizeof(SbEntry), err))
		return false;
	m->entries[m->nentries++] = copy;
	return true;
}

/* Check a file's extents: sorted, inside the file, and adding up. */
static bool
check_extents(const SbEntry *e, SbError *err)
{
	uint64_t	end = 0;
	uint64_t	total = 0;
	uint32_t	i;

	if (!e->sparse)
		total = e->size;
	for (i = 0; i < e->nextents; i++)
	{
		const SbExtent *x = &e->extents[i];

		if (x->length == 0 || x->offset < end || x->offset + x->length > e->size ||
			x->offset + x->length < x->offset)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: bad extent %u of \"%s\"", i, e->path);
		end = x->offset + x->length;
		total += x->length;
	}
	if (total != e->stream_length)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: extents of \"%s\" hold %" PRIu64 " bytes, stream length says %" PRIu64,
							e->path, total, e->stream_length);
	return true;
}

/* A file_id or file_times, as a writer writes them: digits, colons and dots. */
static bool
file_stamp_is_valid(const char *id)
{
	size_t		len = strlen(id);

	return len > 0 && len <= SB_FILE_ID_MAX && strspn(id, "0123456789:.") == len;
}

/* Modes a data directory can hold; links only where tablespaces are. */
static bool
check_entry_kind(const SbEntry *e, SbError *err)
{
	if (e->type == SB_ENTRY_SYMLINK)
	{
		if (!sb_link_is_allowed(e->path, e->link_target))
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: symlink \"%s\" -> \"%s\": a data directory holds links only at pg_tblspc/<oid>, to an absolute path",
								e->path, e->link_target ? e->link_target : "");
		if (e->mode != SB_SYMLINK_MODE)
			return sb_error_set(err, SB_ECORRUPT, "manifest: symlink \"%s\" has mode %04o, not %04o",
								e->path, e->mode, SB_SYMLINK_MODE);
		return true;
	}
	if (e->file_id != NULL && !file_stamp_is_valid(e->file_id))
		return sb_error_set(err, SB_ECORRUPT, "manifest: bad file_id of \"%s\"", e->path);
	if (e->file_times != NULL && !file_stamp_is_valid(e->file_times))
		return sb_error_set(err, SB_ECORRUPT, "manifest: bad file_times of \"%s\"", e->path);
	if (e->incremental && (e->type != SB_ENTRY_FILE || !e->sparse))
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: \"%s\" is marked incremental without its extents", e->path);
	if ((e->mode & ~(uint32_t) SB_ALLOWED_MODE_BITS) != 0)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: \"%s\" has mode %04o; a data directory holds nothing beyond %04o (no setuid, setgid or sticky bit, no write for group or others)",
							e->path, e->mode, SB_ALLOWED_MODE_BITS);
	return true;
}

/* Only a backup with a parent holds files of changed blocks, and it says which parent. */
static bool
check_entry_kinds(const SbManifest *m, SbError *err)
{
	size_t		i;

	if ((m->type == SB_BACKUP_FULL) != (m->parent == NULL))
		return sb_error_set(err, SB_ECORRUPT, "manifest: a %s backup %s a parent",
							sb_backup_type_name(m->type),
							m->parent ? "may not name" : "must name");
	for (i = 0; i < m->nentries; i++)
	{
		if (!check_entry_kind(&m->entries[i], err))
			return false;
		if (m->entries[i].incremental && m->parent == NULL)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: \"%s\" is marked incremental in a backup with no parent",
								m->entries[i].path);
	}
	return true;
}

/* Check that file data is laid out end to end and collect data entries. */
static bool
index_stream(SbManifest *m, SbError *err)
{
	uint64_t	pos = 0;
	size_t		i;

	free(m->data_entries);
	m->ndata_entries = 0;
	m->data_entries = sb_alloc(m->nentries * sizeof(size_t), err);
	if (m->data_entries == NULL)
		return false;
	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];

		if (e->type != SB_ENTRY_FILE)
			continue;
		if (!check_extents(e, err))
			return false;
		if (e->stream_length == 0)
			continue;
		if (e->stream_offset != pos)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: \"%s\" starts at stream offset %" PRIu64 ", expected %" PRIu64,
								e->path, e->stream_offset, pos);
		pos += e->stream_length;
		m->data_entries[m->ndata_entries++] = i;
	}
	if (pos != m->stream_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: files hold %" PRIu64 " bytes, header says %" PRIu64,
							pos, m->stream_bytes);
	return true;
}

static int
compare_paths(const void *a, const void *b)
{
	const SbEntry *const *x = a;
	const SbEntry *const *y = b;

	return strcmp((*x)->path, (*y)->path);
}

/* Find PATH among sorted entries. */
static const SbEntry *
find_sorted(const SbEntry **sorted, size_t n, const char *path)
{
	SbEntry		key;
	const SbEntry *keyp = &key;
	const SbEntry **hit;

	key.path = (char *) path;
	hit = bsearch(&keyp, sorted, n, sizeof(SbEntry *), compare_paths);
	return hit ? *hit : NULL;
}

/* Every parent of PATH that the archive lists must be a directory. */
static bool
check_parents(const SbEntry **sorted, size_t n, const char *path, SbError *err)
{
	char		buf[4096];
	char	   *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	for (slash = strchr(buf, '/'); slash != NULL; slash = strchr(slash + 1, '/'))
	{
		const SbEntry *parent;

		*slash = '\0';
		parent = find_sorted(sorted, n, buf);
		if (parent != NULL && parent->type != SB_ENTRY_DIR)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: \"%s\" lies under \"%s\", which is not a directory",
								path, buf);
		*slash = '/';
	}
	return true;
}

/* Paths: safe, unique, and never under a symlink or file of the archive. */
static bool
check_paths(const SbManifest *m, SbError *err)
{
	const SbEntry **sorted;
	size_t		i;
	bool		ok = true;

	sorted = sb_alloc(m->nentries * sizeof(SbEntry *), err);
	if (sorted == NULL)
		return false;
	for (i = 0; i < m->nentries && ok; i++)
	{
		const SbEntry *e = &m->entries[i];

		sorted[i] = e;
		if (!sb_path_is_safe(e->path, e->type == SB_ENTRY_DIR))
			ok = sb_error_set(err, SB_ECORRUPT,
							  "manifest: unsafe path \"%s\" (absolute, empty or with \"..\")",
							  e->path);
	}
	if (ok)
		qsort(sorted, m->nentries, sizeof(SbEntry *), compare_paths);
	for (i = 1; i < m->nentries && ok; i++)
		if (strcmp(sorted[i - 1]->path, sorted[i]->path) == 0)
			ok = sb_error_set(err, SB_ECORRUPT, "manifest: \"%s\" is listed twice",
							  sorted[i]->path);
	for (i = 0; i < m->nentries && ok; i++)
		ok = check_parents(sorted, m->nentries, sorted[i]->path, err);
	free(sorted);
	return ok;
}

/* A stripe's ranges: sane, and adding up to the chunks it says it holds. */
static bool
check_stripe_ranges(const SbManifest *m, uint32_t s, SbError *err)
{
	const SbStripeInfo *st = &m->stripes[s];
	uint64_t	count = 0;
	uint32_t	r;

	if (st->number != s + 1)
		return sb_error_set(err, SB_ECORRUPT, "manifest: stripe %u listed as number %u",
							s + 1, st->number);
	for (r = 0; r < st->nranges; r++)
	{
		const SbChunkRange *rg = &st->ranges[r];

		if (rg->first > rg->last || rg->last >= m->total_chunks)
			return sb_error_set(err, SB_ECORRUPT, "manifest: stripe %u has a bad chunk range", s + 1);
		count += rg->last - rg->first + 1;
	}
	if (count != st->chunks)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u lists %" PRIu64 " chunks in ranges, %" PRIu64 " in total",
							s + 1, count, st->chunks);
	return true;
}

static int
compare_owners(const void *a, const void *b)
{
	const SbChunkOwner *x = a;
	const SbChunkOwner *y = b;

	return x->first < y->first ? -1 : x->first > y->first;
}

/*
 * Every chunk must be in exactly one stripe: the ranges of all stripes,
 * sorted, must tile 0..total_chunks-1.  Memory follows the number of ranges,
 * not of chunks, so a manifest cannot make a reader allocate for chunks it
 * only claims to have.
 */
static bool
index_chunks(SbManifest *m, SbError *err)
{
	uint64_t	expected = (m->stream_bytes + m->chunk_size - 1) / m->chunk_size;
	uint64_t	next = 0;
	uint32_t	n = 0;
	uint32_t	s,
				r;

	if (m->total_chunks != expected)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: %" PRIu64 " chunks listed, %" PRIu64 " expected",
							m->total_chunks, expected);
	for (s = 0; s < m->nstripes; s++)
	{
		if (!check_stripe_ranges(m, s, err))
			return false;
		n += m->stripes[s].nranges;
	}
	free(m->chunk_map);
	m->chunk_map = sb_alloc((n ? n : 1) * sizeof(SbChunkOwner), err);
	if (m->chunk_map == NULL)
		return false;
	m->nchunk_map = 0;
	for (s = 0; s < m->nstripes; s++)
		for (r = 0; r < m->stripes[s].nranges; r++)
		{
			SbChunkOwner *o = &m->chunk_map[m->nchunk_map++];

			o->first = m->stripes[s].ranges[r].first;
			o->last = m->stripes[s].ranges[r].last;
			o->stripe = s;
		}
	qsort(m->chunk_map, m->nchunk_map, sizeof(SbChunkOwner), compare_owners);
	for (r = 0; r < m->nchunk_map; r++)
	{
		const SbChunkOwner *o = &m->chunk_map[r];

		if (o->first < next)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: chunk %" PRIu64 " is in stripes %u and %u",
								o->first, m->chunk_map[r - 1].stripe + 1, o->stripe + 1);
		if (o->first > next)
			break;
		next = o->last + 1;
	}
	if (next != m->total_chunks)
		return sb_error_set(err, SB_ECORRUPT, "manifest: chunk %" PRIu64 " is in no stripe", next);
	return true;
}

uint32_t
sb_manifest_chunk_owner(const SbManifest *m, uint64_t chunk_id)
{
	uint32_t	lo = 0,
				hi = m->nchunk_map;

	while (lo < hi)
	{
		uint32_t	mid = lo + (hi - lo) / 2;

		if (m->chunk_map[mid].last < chunk_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < m->nchunk_map && m->chunk_map[lo].first <= chunk_id)
		return lo;
	return m->nchunk_map;
}

uint32_t
sb_manifest_chunk_stripe(const SbManifest *m, uint64_t chunk_id)
{
	uint32_t	r = sb_manifest_chunk_owner(m, chunk_id);

	return r < m->nchunk_map ? m->chunk_map[r].stripe : UINT32_MAX;
}

/* Stream bytes that the chunks FIRST..LAST hold (the last chunk may be short). */
static uint64_t
range_bytes(const SbManifest *m, const SbChunkRange *r)
{
	uint64_t	end = (r->last + 1) * m->chunk_size;

	return (end < m->stream_bytes ? end : m->stream_bytes) - r->first * m->chunk_size;
}

/*
 * A stripe's bytes: raw bytes those of the chunks its ranges hold, stored
 * bytes no more than raw (and equal without compression), and a file size
 * that is exactly header, chunk records, index and trailer.  So a manifest
 * cannot claim data that no chunk carries.
 */
static bool
check_stripe_bytes(const SbManifest *m, const SbStripeInfo *st, SbError *err)
{
	uint64_t	raw = 0;
	uint64_t	file_bytes;
	uint64_t	seals;
	uint32_t	r;

	for (r = 0; r < st->nranges; r++)
		raw += range_bytes(m, &st->ranges[r]);
	if (st->raw_bytes != raw)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u says it holds %" PRIu64 " bytes of data, its chunks hold %" PRIu64,
							st->number, st->raw_bytes, raw);
	/* an encrypted backup's chunks each carry a seal besides what the codec gave */
	seals = m->encrypted ? st->chunks * SB_CRYPTO_OVERHEAD : 0;
	if (st->stored_bytes < seals || st->stored_bytes - seals > st->raw_bytes ||
		(m->codec == SB_CODEC_NONE && st->stored_bytes - seals != st->raw_bytes))
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u stores %" PRIu64 " bytes for %" PRIu64 " bytes of data",
							st->number, st->stored_bytes, st->raw_bytes);
	/* parity records (3.1) are records too: a header, an index entry, their payload */
	file_bytes = SB_STRIPE_HEADER_SIZE +
		(st->chunks + st->parity_chunks) * (SB_CHUNK_HEADER_SIZE + SB_INDEX_ENTRY_SIZE) +
		st->stored_bytes + st->parity_bytes + SB_TRAILER_SIZE;
	if (st->file_bytes != file_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u is %" PRIu64 " bytes long, its %" PRIu64 " chunks and %" PRIu64 " parity records make %" PRIu64,
							st->number, st->file_bytes, st->chunks, st->parity_chunks, file_bytes);
	return true;
}

/* Every stripe's bytes, and the totals they add up to. */
static bool
check_bytes(const SbManifest *m, SbError *err)
{
	uint64_t	raw = 0;
	uint64_t	stored = 0;
	uint32_t	s;

	for (s = 0; s < m->nstripes; s++)
	{
		if (!check_stripe_bytes(m, &m->stripes[s], err))
			return false;
		raw += m->stripes[s].raw_bytes;
		stored += m->stripes[s].stored_bytes;
	}
	if (raw != m->stream_bytes || stored != m->stored_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the stripes hold %" PRIu64 " bytes stored as %" PRIu64 ", the header says %" PRIu64 " stored as %" PRIu64,
							raw, stored, m->stream_bytes, m->stored_bytes);
	return true;
}

/*
 * A stripe's timeline, when it has one: figures a positive, bounded interval
 * apart, not too many of them, never decreasing, the last the stripe's
 * stored bytes.  So a chart of it shows no negative or impossible rate.
 */
static bool
check_timeline(const SbStripeInfo *st, SbError *err)
{
	uint32_t	i;

	if (st->ntimeline == 0)
		return true;
	if (!isfinite(st->timeline_interval) || st->timeline_interval <= 0 ||
		st->timeline_interval > SB_TIMELINE_MAX_INTERVAL)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u has a timeline interval of %g seconds (more than 0, at most %g)",
							st->number, st->timeline_interval, SB_TIMELINE_MAX_INTERVAL);
	if (st->ntimeline > SB_TIMELINE_MAX_FIGURES)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: stripe %u has a timeline of %u figures (at most %d)",
							st->number, st->ntimeline, SB_TIMELINE_MAX_FIGURES);
	for (i = 1; i < st->ntimeline; i++)
		if (st->timeline[i] < st->timeline[i - 1])
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: the timeline of stripe %u goes back at figure %u",
								st->number, i + 1);
	if (st->timeline[st->ntimeline - 1] != st->stored_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the timeline of stripe %u ends at %" PRIu64 " bytes, the stripe stores %" PRIu64,
							st->number, st->timeline[st->ntimeline - 1], st->stored_bytes);
	return true;
}

static bool
check_timelines(const SbManifest *m, SbError *err)
{
	uint32_t	s;

	for (s = 0; s < m->nstripes; s++)
		if (!check_timeline(&m->stripes[s], err))
			return false;
	return true;
}

double
sb_stripe_timeline_seconds(const SbStripeInfo *s, uint32_t i)
{
	double		end_of_interval = (i + 1) * s->timeline_interval;

	if (i + 1 < s->ntimeline || s->finished_after <= i * s->timeline_interval)
		return end_of_interval;
	return s->finished_after;
}

static bool
check_sizes(const SbManifest *m, SbError *err)
{
	if (m->chunk_size < SB_MIN_CHUNK_SIZE || m->chunk_size > SB_MAX_CHUNK_SIZE)
		return sb_error_set(err, SB_ECORRUPT, "manifest: chunk size %u out of range",
							m->chunk_size);
	if (m->nstripes == 0 || m->nstripes > SB_MAX_STRIPES)
		return sb_error_set(err, SB_ECORRUPT, "manifest: %u stripes", m->nstripes);
	return true;
}

bool
sb_manifest_index_layout(SbManifest *m, SbError *err)
{
	return check_sizes(m, err) && index_chunks(m, err) && sb_manifest_check_redundancy(m, err) &&
		check_bytes(m, err) && check_timelines(m, err);
}

/*
 * The checks of the whole table, for entries kept in a spool: the kinds and
 * paths, each entry read back once against the hashes of every path.
 */
static bool
check_streamed(SbManifest *m, SbError *err)
{
	SbEntry		e;
	bool		end = false;

	if ((m->type == SB_BACKUP_FULL) != (m->parent == NULL))
		return sb_error_set(err, SB_ECORRUPT, "manifest: a %s backup %s a parent",
							sb_backup_type_name(m->type),
							m->parent ? "may not name" : "must name");
	sb_path_set_finish(m->paths);
	if (!sb_entry_spool_rewind(m->streamed, err))
		return false;
	while (sb_entry_spool_next(m->streamed, &e, &end, err))
	{
		if (e.incremental && m->parent == NULL)
			return sb_error_set(err, SB_ECORRUPT,
								"manifest: \"%s\" is marked incremental in a backup with no parent",
								e.path);
		if (!sb_path_set_check_parents(m->paths, &e, err))
			return false;
	}
	if (!end)
		return false;
	sb_path_set_free(m->paths);
	m->paths = NULL;
	return true;
}

bool
sb_manifest_index(SbManifest *m, SbError *err)
{
	if (m->head_only)
		return sb_manifest_index_layout(m, err);
	if (m->tally != NULL)
		return sb_manifest_index_layout(m, err) && sb_manifest_tally_finish(m, err) &&
			(m->streamed == NULL || check_streamed(m, err));
	return check_sizes(m, err) && check_paths(m, err) && check_entry_kinds(m, err) &&
		index_stream(m, err) && index_chunks(m, err) && sb_manifest_check_redundancy(m, err) &&
		check_bytes(m, err) && check_timelines(m, err);
}

uint32_t
sb_manifest_chunk_length(const SbManifest *m, uint64_t chunk_id)
{
	uint64_t	start = chunk_id * m->chunk_size;
	uint64_t	left = m->stream_bytes - start;

	return (uint32_t) (left < m->chunk_size ? left : m->chunk_size);
}

size_t
sb_manifest_data_entry_at(const SbManifest *m, uint64_t pos)
{
	size_t		lo = 0,
				hi = m->ndata_entries;

	while (lo < hi)
	{
		size_t		mid = lo + (hi - lo) / 2;
		const SbEntry *e = &m->entries[m->data_entries[mid]];

		if (e->stream_offset + e->stream_length <= pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void
sb_piece_iter_init(SbPieceIter *it, const SbManifest *m, uint64_t chunk_id)
{
	it->manifest = m;
	it->chunk_start = chunk_id * m->chunk_size;
	it->pos = it->chunk_start;
	it->end = it->chunk_start + sb_manifest_chunk_length(m, chunk_id);
	it->data_index = sb_manifest_data_entry_at(m, it->pos);
	it->extent = 0;
	it->extent_base = 0;
}

void
sb_entry_locate(const SbEntry *e, uint64_t rel, uint32_t *extent, uint64_t *extent_base,
				uint64_t *file_offset, uint64_t *extent_left)
{
	if (!e->sparse)
	{
		*file_offset = rel;
		*extent_left = e->size - rel;
		return;
	}
	while (rel >= *extent_base + e->extents[*extent].length)
	{
		*extent_base += e->extents[*extent].length;
		(*extent)++;
	}
	*file_offset = e->extents[*extent].offset + (rel - *extent_base);
	*extent_left = e->extents[*extent].length - (rel - *extent_base);
}

bool
sb_piece_iter_next(SbPieceIter *it, SbPiece *piece)
{
	const SbManifest *m = it->manifest;
	const SbEntry *e;
	uint64_t	rel,
				file_offset,
				extent_left,
				len;

	if (it->pos >= it->end || it->data_index >= m->ndata_entries)
		return false;
	e = &m->entries[m->data_entries[it->data_index]];
	rel = it->pos - e->stream_offset;
	sb_entry_locate(e, rel, &it->extent, &it->extent_base, &file_offset, &extent_left);
	len = extent_left;
	if (len > it->end - it->pos)
		len = it->end - it->pos;
	piece->entry = m->data_entries[it->data_index];
	piece->file_offset = file_offset;
	piece->length = len;
	piece->chunk_offset = it->pos - it->chunk_start;
	it->pos += len;
	if (it->pos >= e->stream_offset + e->stream_length)
	{
		it->data_index++;
		it->extent = 0;
		it->extent_base = 0;
	}
	return true;
}

void
sb_manifest_describe_chunk(const SbManifest *m, uint64_t chunk_id, char *buf, size_t buflen)
{
	SbPieceIter it;
	SbPiece		piece;
	size_t		used = 0;
	int			shown = 0;
	int			more = 0;

	buf[0] = '\0';
	if (m->data_entries == NULL || chunk_id >= m->total_chunks)
		return;
	sb_piece_iter_init(&it, m, chunk_id);
	while (sb_piece_iter_next(&it, &piece))
	{
		if (shown == 3)
		{
			more++;
			continue;
		}
		used += (size_t) snprintf(buf + used, buflen > used ? buflen - used : 0,
								  "%s\"%s\" bytes %" PRIu64 "-%" PRIu64, shown ? ", " : "",
								  m->entries[piece.entry].path, piece.file_offset,
								  piece.file_offset + piece.length - 1);
		shown++;
	}
	if (more > 0 && used < buflen)
		snprintf(buf + used, buflen - used, " and %d more file(s)", more);
}

const char *
sb_codec_name(SbCodec codec)
{
	return codec == SB_CODEC_ZSTD ? "zstd" : "none";
}

bool
sb_codec_parse(const char *name, SbCodec *codec)
{
	if (strcmp(name, "zstd") == 0)
		*codec = SB_CODEC_ZSTD;
	else if (strcmp(name, "none") == 0)
		*codec = SB_CODEC_NONE;
	else
		return false;
	return true;
}

const char *
sb_balance_name(SbBalance balance)
{
	return balance == SB_BALANCE_WEIGHTED ? "weighted" : "adaptive";
}

bool
sb_balance_parse(const char *name, SbBalance *balance)
{
	if (strcmp(name, "weighted") == 0)
		*balance = SB_BALANCE_WEIGHTED;
	else if (strcmp(name, "adaptive") == 0)
		*balance = SB_BALANCE_ADAPTIVE;
	else
		return false;
	return true;
}

const char *
sb_backup_type_name(SbBackupType type)
{
	return type == SB_BACKUP_DIFF ? "diff" : type == SB_BACKUP_INCR ? "incr" : "full";
}

bool
sb_backup_type_parse(const char *name, SbBackupType *type)
{
	if (strcmp(name, "full") == 0)
		*type = SB_BACKUP_FULL;
	else if (strcmp(name, "diff") == 0)
		*type = SB_BACKUP_DIFF;
	else if (strcmp(name, "incr") == 0)
		*type = SB_BACKUP_INCR;
	else
		return false;
	return true;
}

void
sb_stripe_file_name(uint32_t number, char *buf, size_t buflen)
{
	snprintf(buf, buflen, "stripe-%u.sbs", number);
}
