/*
 * test_backup_redundancy.c
 *		A backup with redundancy (docs/FORMAT.md section 10) written by the
 *		engine, its stripes read back raw: every group's members on stripes
 *		of their own, and every parity record equal to the parity of its
 *		group's records recomputed here (the proof that the writer's parity
 *		is right); the backup verifies and restores with every stripe there.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format/checksum.h"
#include "format/format.h"
#include "format/parity.h"
#include "harness.h"
#include "tests.h"

/* One record of a stripe, as read raw. */
typedef struct Record
{
	const uint8_t *bytes;		/* header and payload */
	uint32_t	len;
	uint32_t	stripe;			/* 0-based */
} Record;

typedef struct Stripes
{
	uint8_t    *files[TH_MAX_DESTS];
	Record	   *data;			/* by chunk id */
	Record	   *parity;			/* by parity id */
	uint64_t	nparity;
} Stripes;

/* Every record of stripe S (FILE, LEN bytes) into its slot by kind and id. */
static bool
index_stripe(Stripes *st, uint32_t s, const uint8_t *file, size_t len, uint64_t chunks)
{
	SbTrailer	t;
	SbError		err;
	uint64_t	i;

	if (len < SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE ||
		!sb_format_decode_trailer(file + len - SB_TRAILER_SIZE, &t, &err))
		return false;
	for (i = 0; i < t.chunk_count; i++)
	{
		SbIndexEntry e;
		Record	   *r;

		sb_format_decode_index_entry(file + t.index_offset + i * SB_INDEX_ENTRY_SIZE, &e);
		if (e.kind == SB_CHUNK_KIND_DATA ? e.chunk_id >= chunks : e.chunk_id >= st->nparity)
			return false;
		r = e.kind == SB_CHUNK_KIND_DATA ? &st->data[e.chunk_id] : &st->parity[e.chunk_id];
		if (r->bytes != NULL)
			return false;		/* twice */
		r->bytes = file + e.offset;
		r->len = SB_CHUNK_HEADER_SIZE + e.stored_len;
		r->stripe = s;
	}
	return true;
}

/*
 * Every group of M's backup: members on distinct stripes where the layout
 * says, each parity record's header as 10.2 says and its payload the parity
 * of the group's data records, recomputed.  How many groups check.
 */
static uint64_t
check_groups(const SbManifest *m, Stripes *st)
{
	SbParityLayout l;
	SbParityCoder coder;
	SbError		err;
	uint64_t	groups;
	uint64_t	g,
				good = 0;
	size_t		max = SB_CHUNK_HEADER_SIZE + 2 * m->chunk_size + 64;
	uint8_t    *want[SB_PARITY_MAX];
	uint32_t	p;

	if (!sb_parity_layout_init(&l, m->nstripes, m->redundancy.parity, m->redundancy.run, &err) ||
		!sb_parity_coder_init(&coder, &l, &err))
		return 0;
	groups = sb_parity_groups(&l, m->total_chunks);
	for (p = 0; p < l.parity; p++)
		want[p] = malloc(max);
	for (g = 0; g < groups; g++)
	{
		bool		used[TH_MAX_DESTS] = {false};
		uint32_t	longest = 0;
		bool		right = true;
		uint32_t	j;
		uint64_t	id;

		for (p = 0; p < l.parity; p++)
			memset(want[p], 0, max);
		for (j = 0; j < l.data; j++)
		{
			const Record *r;

			if (!sb_parity_member_chunk(&l, g, j, m->total_chunks, &id))
				continue;
			r = &st->data[id];
			right = right && r->bytes != NULL && !used[r->stripe] &&
				r->stripe == sb_parity_stripe(&l, g, j);
			if (!right)
				break;
			used[r->stripe] = true;
			longest = r->len > longest ? r->len : longest;
			sb_parity_add(&coder, j, r->bytes, r->len, want);
		}
		for (p = 0; right && p < l.parity; p++)
		{
			const Record *r = &st->parity[sb_parity_id(&l, g, p)];
			SbChunkHeader h;

			right = r->bytes != NULL && !used[r->stripe] &&
				r->stripe == sb_parity_stripe(&l, g, l.data + p) &&
				sb_format_decode_chunk(r->bytes, &h, &err) && h.kind == SB_CHUNK_KIND_PARITY &&
				h.codec == 0 && h.cipher == 0 && h.raw_len == longest && h.stored_len == longest &&
				h.stored_hash == sb_hash64(r->bytes + SB_CHUNK_HEADER_SIZE, longest) &&
				h.raw_hash == h.stored_hash &&
				memcmp(r->bytes + SB_CHUNK_HEADER_SIZE, want[p], longest) == 0;
			if (right)
				used[r->stripe] = true;
		}
		if (right)
			good++;
		else if (good == g)
			diag("group %llu: its members or parity are not right", (unsigned long long) g);
	}
	for (p = 0; p < l.parity; p++)
		free(want[p]);
	sb_parity_coder_free(&coder);
	return good;
}

static void
check_backup(ThFixture *f, const SbManifest *m, const char *what)
{
	Stripes		st;
	uint64_t	parity_chunks = 0;
	uint64_t	groups;
	SbParityLayout l;
	SbError		err;
	bool		indexed = true;
	uint32_t	s;

	memset(&st, 0, sizeof(st));
	ok(sb_parity_layout_init(&l, m->nstripes, m->redundancy.parity, m->redundancy.run, &err),
	   "%s: the manifest has a layout", what);
	groups = sb_parity_groups(&l, m->total_chunks);
	for (s = 0; s < m->nstripes; s++)
		parity_chunks += m->stripes[s].parity_chunks;
	is_int(parity_chunks, groups * l.parity, "%s: %llu groups, %u parity records each", what,
		   (unsigned long long) groups, l.parity);
	st.nparity = parity_chunks;
	st.data = calloc(m->total_chunks + 1, sizeof(Record));
	st.parity = calloc(parity_chunks + 1, sizeof(Record));
	for (s = 0; s < m->nstripes; s++)
	{
		char		path[PATH_MAX];
		size_t		len;

		st.files[s] = th_read_file(th_stripe_path(f, s + 1, "bk", path), &len);
		indexed = indexed && st.files[s] != NULL &&
			index_stripe(&st, s, st.files[s], len, m->total_chunks);
	}
	ok(indexed, "%s: every stripe's records read, none twice", what);
	if (indexed)
		is_int(check_groups(m, &st), groups,
			   "%s: every group's members on stripes of their own, its parity records its parity", what);
	for (s = 0; s < m->nstripes; s++)
		free(st.files[s]);
	free(st.data);
	free(st.parity);
}

/* A tree of several blocks of groups, a short last block, files of every size. */
static void
make_tree(const ThFixture *f)
{
	char		path[PATH_MAX];
	int			i;

	th_write_pattern(th_path(path, "%s/big", f->src), 3 * 1024 * 1024 + 12345, 1, true, 0644);
	th_write_pattern(th_path(path, "%s/random", f->src), 2 * 1024 * 1024 + 777, 2, false, 0644);
	for (i = 0; i < 20; i++)
		th_write_pattern(th_path(path, "%s/small%d", f->src, i), (size_t) i * 1000 + 1, (uint32_t) i, i % 2, 0644);
}

static void
redundant_backup(uint32_t ndests, uint32_t redundancy, SbCodec codec, bool encrypted)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	SbKey		key;
	char		what[96];
	char		location[PATH_MAX];

	snprintf(what, sizeof(what), "redundancy %u over %u, %s%s", redundancy, ndests,
			 sb_codec_name(codec), encrypted ? ", encrypted" : "");
	th_fixture(&f, "redundancy", ndests);
	make_tree(&f);
	th_options(&o, f.dests, ndests, "bk");
	o.codec = codec;
	o.redundancy = redundancy;
	o.balance = SB_BALANCE_ADAPTIVE;	/* redundancy places by count whatever the balance */
	if (encrypted)
	{
		memset(&key, 0, sizeof(key));
		memset(key.secret, 'k', 48);
		key.len = 48;
		o.encryption_key = &key;
	}
	if (!ok(th_backup_tree(&o, f.src, &m, &err), "%s: backup succeeds", what))
		th_diag_error("backup", &err);
	else
	{
		ok(m->version_major == 3 && m->version_minor == 1 && m->redundancy.parity == redundancy &&
		   m->redundancy.data == ndests - redundancy && m->parity_bytes > 0,
		   "%s: manifest 3.1 records the redundancy", what);
		check_backup(&f, m, what);
		if (!encrypted)
		{
			th_location(&f, 0, "bk", location);
			is_int(th_verify(location), 0, "%s: verify finds no problem", what);
			ok(th_restore(location, f.target, &err) && th_trees_equal(f.src, f.target, 0),
			   "%s: restored tree equals the source", what);
		}
	}
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_backup_redundancy_parity(void)
{
	redundant_backup(3, 1, SB_CODEC_NONE, false);
	redundant_backup(4, 1, SB_CODEC_ZSTD, false);
	redundant_backup(5, 2, SB_CODEC_ZSTD, false);
	redundant_backup(3, 1, SB_CODEC_ZSTD, true);
}

/* Bad redundancy refused before anything is written, the message naming the value. */
void
test_backup_redundancy_refused(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;

	th_fixture(&f, "redundancy-refused", 3);
	th_options(&o, f.dests, 3, "bk");
	o.redundancy = 3;
	ok(!sb_backup_check_options(&o, &err), "redundancy 3 over 3 destinations refused");
	like(err.message, "redundancy 3 needs at least 4 destinations (the backup has 3)",
		 "the message says what is needed");
	o.redundancy = 9;
	ok(sb_backup_begin(&o, &err) == NULL, "redundancy 9 refused");
	like(err.message, "redundancy 9 is out of range (1 to 8)", "the message names the value");
	is_int(th_count_entries(f.dest[0]), 0, "nothing written");
	th_fixture_done(&f);
}
