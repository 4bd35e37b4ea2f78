/*
 * manifest_pieces.c
 *		Every piece of file data of a backup, in chunk order, one at a time:
 *		from the file table, or from the spool of a manifest read
 *		SB_KEEP_STREAMED, so that listing a million files' pieces holds one
 *		entry at a time.
 *
 * The files' data lies end to end in the stream, in the order of the
 * entries, and chunks cut the stream in order: walking the files in order
 * and cutting each at chunk boundaries (and, for a sparse file, at the ends
 * of its extents) gives the pieces in chunk order, the same pieces the
 * per-chunk iterator (sb_piece_iter_next) gives.
 */
#include "stripebackup/sb_manifest.h"
#include "manifest/entry_spool.h"

/* E's pieces (entry ORDINAL), each to FN. */
static bool
file_pieces(const SbManifest *m, const SbEntry *e, size_t ordinal, SbPieceRowFn fn, void *arg,
			SbError *err)
{
	uint64_t	rel = 0;
	uint32_t	extent = 0;
	uint64_t	extent_base = 0;

	while (rel < e->stream_length)
	{
		uint64_t	pos = e->stream_offset + rel;
		SbPieceRow	row;
		uint64_t	extent_left,
					chunk_left;

		row.chunk = pos / m->chunk_size;
		row.chunk_offset = pos % m->chunk_size;
		row.stripe = sb_manifest_chunk_stripe(m, row.chunk);
		row.path = e->path;
		row.file_size = e->size;
		row.ordinal = ordinal;
		sb_entry_locate(e, rel, &extent, &extent_base, &row.file_offset, &extent_left);
		chunk_left = m->chunk_size - row.chunk_offset;
		row.length = e->stream_length - rel;
		if (row.length > chunk_left)
			row.length = chunk_left;
		if (row.length > extent_left)
			row.length = extent_left;
		if (!fn(arg, &row, err))
			return false;
		rel += row.length;
	}
	return true;
}

bool
sb_manifest_each_entry(const SbManifest *m, SbEntryFn fn, void *arg, SbError *err)
{
	SbEntry		e;
	bool		end = false;
	size_t		i;

	sb_error_clear(err);
	if (m->streamed == NULL)
	{
		for (i = 0; i < m->nentries; i++)
			if (!fn(arg, &m->entries[i], err))
				return false;
		return true;
	}
	if (!sb_entry_spool_rewind(m->streamed, err))
		return false;
	while (sb_entry_spool_next(m->streamed, &e, &end, err))
		if (!fn(arg, &e, err))
			return false;
	return end;
}

/* What each_piece walks with: the manifest, and the caller's function. */
typedef struct PieceWalk
{
	const SbManifest *m;
	SbPieceRowFn fn;
	void	   *arg;
	size_t		ordinal;		/* of the entry next */
} PieceWalk;

static bool
entry_pieces(void *arg, const SbEntry *e, SbError *err)
{
	PieceWalk  *w = arg;
	size_t		ordinal = w->ordinal++;

	return e->type != SB_ENTRY_FILE || e->stream_length == 0 ||
		file_pieces(w->m, e, ordinal, w->fn, w->arg, err);
}

bool
sb_manifest_each_piece(const SbManifest *m, SbPieceRowFn fn, void *arg, SbError *err)
{
	PieceWalk	w = {m, fn, arg, 0};

	/* the files with data in stream order: the table's data_entries, the spool's own order */
	return sb_manifest_each_entry(m, entry_pieces, &w, err);
}
