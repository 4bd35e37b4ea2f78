/*
 * test_scheduler.c
 *		How chunks are spread over stripes: in weighted mode each stripe takes
 *		its share of the chunks to within one chunk; in adaptive mode every
 *		chunk still lands in exactly one stripe.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

#define CHUNK 4096

/* Back up a few in-memory files holding about NCHUNKS chunks, then the source tree. */
static bool
backup_data(const SbBackupOptions *o, uint64_t nchunks, SbManifest **m, SbError *err)
{
	SbBackup   *b = sb_backup_begin(o, err);
	size_t		len = (size_t) nchunks * CHUNK - 1000;
	uint8_t    *data = malloc(len);
	bool		ok;

	if (b == NULL || data == NULL)
	{
		free(data);
		if (b != NULL)
			sb_backup_abort(b);
		return false;
	}
	th_fill(data, len, 42, false);
	/* Three files whose boundaries fall inside chunks. */
	ok = sb_backup_add_dir(b, ".", 0755, 1600000000, err) &&
		sb_backup_add_data(b, "first", data, len / 3 + 17, 0644, 1600000001, err) &&
		sb_backup_add_data(b, "second", data + len / 3 + 17, len / 3, 0644, 1600000002, err) &&
		sb_backup_add_data(b, "third", data + 2 * (len / 3) + 17, len - 2 * (len / 3) - 17,
						   0644, 1600000003, err);
	free(data);
	if (!ok)
	{
		sb_backup_abort(b);
		return false;
	}
	return sb_backup_finish(b, m, err);
}

/*
 * Which stripe (0-based) holds each chunk, from the stripe files' own indexes;
 * false if a chunk is in none or in two, or an index cannot be read.
 */
static bool
chunk_owners_from_files(const ThFixture *f, const SbManifest *m, uint8_t *owner)
{
	uint32_t	s;
	uint64_t	c;
	bool		ok = true;

	memset(owner, 0xFF, m->total_chunks);
	for (s = 0; ok && s < m->nstripes; s++)
	{
		char		path[PATH_MAX];
		SbTrailer	t;
		SbIndexEntry *entries;
		uint64_t	n,
					i;

		ok = th_read_index(th_stripe_path(f, s + 1, m->name, path), &t, &entries, &n);
		if (ok && n != m->stripes[s].chunks)
		{
			diag("stripe %u: %llu chunks in its index, %llu in the manifest", s + 1,
				 (unsigned long long) n, (unsigned long long) m->stripes[s].chunks);
			ok = false;
		}
		for (i = 0; ok && i < n; i++)
		{
			c = entries[i].chunk_id;
			if (c >= m->total_chunks || owner[c] != 0xFF)
			{
				diag("chunk %llu listed again in stripe %u", (unsigned long long) c, s + 1);
				ok = false;
			}
			else
				owner[c] = (uint8_t) s;
		}
		free(entries);
	}
	for (c = 0; ok && c < m->total_chunks; c++)
		if (owner[c] == 0xFF)
		{
			diag("chunk %llu is in no stripe file", (unsigned long long) c);
			ok = false;
		}
	return ok;
}

/* Every chunk in exactly one stripe, by the manifest's ranges, and counts that agree. */
static bool
ranges_cover_once(const SbManifest *m, uint8_t *owner)
{
	uint32_t	s,
				r;
	uint64_t	c;

	memset(owner, 0xFF, m->total_chunks);
	for (s = 0; s < m->nstripes; s++)
	{
		uint64_t	count = 0;

		for (r = 0; r < m->stripes[s].nranges; r++)
			for (c = m->stripes[s].ranges[r].first; c <= m->stripes[s].ranges[r].last; c++)
			{
				if (c >= m->total_chunks || owner[c] != 0xFF)
					return false;
				owner[c] = (uint8_t) s;
				count++;
			}
		if (count != m->stripes[s].chunks)
			return false;
	}
	for (c = 0; c < m->total_chunks; c++)
		if (owner[c] == 0xFF)
			return false;
	return true;
}

/* 5. Weighted mode: 1:1, 1:3, 1:2:5 and no weights at all. */
void
test_weights_weighted(void)
{
	static const struct
	{
		uint32_t	n;
		double		w[3];
		bool		null_weights;
	}			cases[] = {
		{2, {1, 1, 0}, false},
		{2, {1, 3, 0}, false},
		{3, {1, 2, 5}, false},
		{3, {0.25, 0.5, 1.25}, false},
		{3, {1, 1, 1}, true},
	};
	size_t		k;

	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
	{
		ThFixture	f;
		SbBackupOptions o;
		SbManifest *m = NULL;
		SbArchive  *a = NULL;
		SbPlan		plan;
		SbError		err;
		char		what[64];
		char		location[PATH_MAX];
		uint8_t    *owner = NULL;
		double		wsum = 0;
		uint32_t	s;
		bool		done;

		if (cases[k].n == 3)
			snprintf(what, sizeof(what), "weights %g:%g:%g%s", cases[k].w[0], cases[k].w[1],
					 cases[k].w[2], cases[k].null_weights ? " (none given)" : "");
		else
			snprintf(what, sizeof(what), "weights %g:%g", cases[k].w[0], cases[k].w[1]);
		th_fixture(&f, "weights", cases[k].n);
		th_options(&o, f.dests, cases[k].n, "bk");
		o.weights = cases[k].null_weights ? NULL : cases[k].w;
		o.balance = SB_BALANCE_WEIGHTED;
		o.chunk_size = CHUNK;
		done = backup_data(&o, 1001, &m, &err);
		if (!ok(done, "%s: backup succeeds", what))
		{
			th_diag_error("backup", &err);
			th_fixture_done(&f);
			continue;
		}
		is_int(m->total_chunks, 1001, "%s: 1001 chunks", what);
		for (s = 0; s < cases[k].n; s++)
			wsum += cases[k].w[s];
		for (s = 0; s < cases[k].n; s++)
		{
			double		expected = (double) m->total_chunks * cases[k].w[s] / wsum;

			ok(fabs((double) m->stripes[s].chunks - expected) <= 1.0,
			   "%s: stripe %u holds %llu chunks, share %.2f", what, s + 1,
			   (unsigned long long) m->stripes[s].chunks, expected);
			ok(m->stripes[s].weight == (cases[k].null_weights ? 1.0 : cases[k].w[s]),
			   "%s: stripe %u records its weight", what, s + 1);
		}

		owner = malloc(m->total_chunks);
		ok(owner != NULL && ranges_cover_once(m, owner),
		   "%s: manifest ranges put every chunk in exactly one stripe", what);
		/* The scheduler keeps every stripe within one chunk of its share at every point. */
		if (owner != NULL)
		{
			uint64_t	count[3] = {0, 0, 0};
			uint64_t	c;
			bool		close_enough = true;

			for (c = 0; c < m->total_chunks && close_enough; c++)
			{
				count[owner[c]]++;
				for (s = 0; s < cases[k].n; s++)
					if (fabs((double) count[s] - (double) (c + 1) * cases[k].w[s] / wsum) > 1.0)
					{
						diag("after %llu chunks stripe %u holds %llu", (unsigned long long) c + 1,
							 s + 1, (unsigned long long) count[s]);
						close_enough = false;
					}
			}
			ok(close_enough, "%s: every prefix of the stream is spread by the weights", what);
			ok(chunk_owners_from_files(&f, m, owner),
			   "%s: the stripe files' indexes hold every chunk once", what);
		}

		a = sb_archive_open(th_location(&f, cases[k].n - 1, "bk", location), &err);
		done = a != NULL && sb_archive_plan(a, &plan, &err);
		if (!ok(done, "%s: plan succeeds", what))
			th_diag_error("plan", &err);
		ok(done && plan.nstripes == cases[k].n && plan.chunks == m->total_chunks &&
		   plan.files == 3 && plan.directories == 1 && plan.raw_bytes == m->stream_bytes,
		   "%s: plan totals", what);
		for (s = 0; done && s < cases[k].n; s++)
			ok(plan.stripes[s].chunks == m->stripes[s].chunks && plan.stripes[s].present &&
			   plan.stripes[s].files > 0 && plan.stripes[s].number == s + 1,
			   "%s: plan of stripe %u agrees with the manifest", what, s + 1);
		sb_archive_close(a);

		/* And the data comes back. */
		done = th_restore(location, f.target, &err);
		if (!ok(done, "%s: restore succeeds", what))
			th_diag_error("restore", &err);
		{
			char		path[PATH_MAX];
			size_t		len1 = 0,
						len2 = 0,
						len3 = 0;
			uint8_t    *p1 = th_read_file(th_path(path, "%s/first", f.target), &len1);
			uint8_t    *p2 = th_read_file(th_path(path, "%s/second", f.target), &len2);
			uint8_t    *p3 = th_read_file(th_path(path, "%s/third", f.target), &len3);
			size_t		len = len1 + len2 + len3;
			uint8_t    *want = malloc(len + 1);
			bool		same = p1 && p2 && p3 && want && len == 1001 * CHUNK - 1000;

			if (same)
			{
				th_fill(want, len, 42, false);
				same = memcmp(p1, want, len1) == 0 && memcmp(p2, want + len1, len2) == 0 &&
					memcmp(p3, want + len1 + len2, len3) == 0;
			}
			ok(same, "%s: restored files hold the data", what);
			free(p1);
			free(p2);
			free(p3);
			free(want);
		}
		free(owner);
		sb_manifest_free(m);
		th_fixture_done(&f);
	}
}

/* 6. Adaptive mode with three destinations. */
void
test_weights_adaptive(void)
{
	static const SbCodec codecs[] = {SB_CODEC_NONE, SB_CODEC_ZSTD};
	int			c;

	for (c = 0; c < 2; c++)
	{
		ThFixture	f;
		SbBackupOptions o;
		SbManifest *m = NULL;
		SbError		err;
		char		path[PATH_MAX];
		char		what[64];
		uint8_t    *owner;
		uint64_t	sum = 0;
		uint32_t	s;
		int			i;
		bool		done = true;

		snprintf(what, sizeof(what), "adaptive, codec %s", sb_codec_name(codecs[c]));
		th_fixture(&f, "adaptive", 3);
		for (i = 0; done && i < 40; i++)
			done = th_write_pattern(th_path(path, "%s/file%02d", f.src, i),
									(size_t) (i * 7919 + 50000), (uint32_t) i, i % 2, 0640);
		th_options(&o, f.dests, 3, "bk");
		o.balance = SB_BALANCE_ADAPTIVE;
		o.codec = codecs[c];
		o.level = 1;
		o.chunk_size = 8192;
		o.buffer_count = 8;
		done = done && th_backup_tree(&o, f.src, &m, &err);
		if (!ok(done, "%s: backup succeeds", what))
		{
			th_diag_error("backup", &err);
			th_fixture_done(&f);
			continue;
		}
		for (s = 0; s < m->nstripes; s++)
			sum += m->stripes[s].chunks;
		ok(m->nstripes == 3 && m->balance == SB_BALANCE_ADAPTIVE, "%s: three stripes, adaptive",
		   what);
		is_int(sum, m->total_chunks, "%s: stripe chunk counts add up to %llu", what,
			   (unsigned long long) m->total_chunks);
		owner = malloc(m->total_chunks);
		ok(owner != NULL && ranges_cover_once(m, owner),
		   "%s: manifest ranges put every chunk in exactly one stripe", what);
		ok(owner != NULL && chunk_owners_from_files(&f, m, owner),
		   "%s: the stripe files' indexes hold every chunk exactly once", what);
		free(owner);
		is_int(th_verify(th_location(&f, 1, "bk", path)), 0, "%s: verify finds no problem", what);
		done = th_restore(path, f.target, &err);
		if (!ok(done, "%s: restore succeeds", what))
			th_diag_error("restore", &err);
		ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME),
		   "%s: restored tree equals the source", what);
		sb_manifest_free(m);
		th_fixture_done(&f);
	}
}
