/*
 * manifest_tally.c
 *		A manifest read to plan only: each entry, as the stream reader parses
 *		it, is checked on its own and counted (by kind, bytes, and the stripes
 *		its data lies in), then dropped.  Planning a backup of a million files
 *		so holds no file table, only the chunk map.
 *
 * The stripe of a chunk comes from the members the writer puts before the
 * entries (the stripes and their chunk ranges): read once the entries begin,
 * as a manifest of their own (the layout).  A manifest written otherwise is
 * read whole instead (manifest_stream.c keeps its entries).
 */
#include <stdlib.h>

#include "manifest/manifest_tally.h"
#include "util/fsutil.h"

bool
sb_manifest_tally_begin(SbManifest *m, SbManifest *layout, SbError *err)
{
	m->tally = sb_alloc(sizeof(SbEntryTally), err);
	if (m->tally == NULL)
		return false;
	m->tally->layout = layout;
	return true;
}

/* The stripes chunks FIRST..LAST lie in, a bit each. */
static uint64_t
stripes_of_chunks(const SbManifest *layout, uint64_t first, uint64_t last)
{
	uint64_t	mask = 0;
	uint64_t	chunk = first;

	while (chunk <= last)
	{
		uint32_t	r = sb_manifest_chunk_owner(layout, chunk);
		const SbChunkOwner *o;

		if (r >= layout->nchunk_map)
			break;				/* past the stream: refused by the caller */
		o = &layout->chunk_map[r];
		mask |= UINT64_C(1) << o->stripe;
		chunk = o->last + 1;
	}
	return mask;
}

bool
sb_manifest_tally_entry(SbManifest *m, const SbEntry *e, SbError *err)
{
	SbEntryTally *t = m->tally;
	const SbManifest *layout = t->layout;
	uint64_t	mask;
	uint32_t	s;

	if (e->type == SB_ENTRY_DIR)
		t->directories++;
	else if (e->type == SB_ENTRY_SYMLINK)
		t->symlinks++;
	if (e->type != SB_ENTRY_FILE)
		return true;
	t->files++;
	t->logical_bytes += e->size;
	if (e->stream_length == 0)
		return true;
	/* in stream order, end to end, as the whole table is checked (manifest.c) */
	if (e->stream_offset != t->data_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: \"%s\" starts at stream offset %llu, expected %llu", e->path,
							(unsigned long long) e->stream_offset,
							(unsigned long long) t->data_bytes);
	if (e->stream_length > layout->stream_bytes - e->stream_offset)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the data of \"%s\" lies past the end of the stream", e->path);
	t->data_bytes += e->stream_length;
	mask = stripes_of_chunks(layout, e->stream_offset / layout->chunk_size,
							 (e->stream_offset + e->stream_length - 1) / layout->chunk_size);
	for (s = 0; s < layout->nstripes; s++)
		if (mask & (UINT64_C(1) << s))
			t->stripe_files[s]++;
	return true;
}

/* Do A and B put every chunk in the same stripe, in a stream of the same size? */
static bool
same_layout(const SbManifest *a, const SbManifest *b)
{
	uint32_t	r;

	if (a->chunk_size != b->chunk_size || a->stream_bytes != b->stream_bytes ||
		a->nstripes != b->nstripes || a->nchunk_map != b->nchunk_map)
		return false;
	for (r = 0; r < a->nchunk_map; r++)
		if (a->chunk_map[r].first != b->chunk_map[r].first ||
			a->chunk_map[r].last != b->chunk_map[r].last ||
			a->chunk_map[r].stripe != b->chunk_map[r].stripe)
			return false;
	return true;
}

bool
sb_manifest_tally_finish(SbManifest *m, SbError *err)
{
	SbEntryTally *t = m->tally;
	bool		same = same_layout(t->layout, m);

	sb_manifest_free(t->layout);
	t->layout = NULL;
	if (!same)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the stripes read before the entries are not the manifest's");
	if (t->data_bytes != m->stream_bytes)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest: the files hold %llu bytes of data, the stream %llu",
							(unsigned long long) t->data_bytes,
							(unsigned long long) m->stream_bytes);
	return true;
}

void
sb_manifest_tally_free(SbEntryTally *t)
{
	if (t == NULL)
		return;
	sb_manifest_free(t->layout);
	free(t);
}
