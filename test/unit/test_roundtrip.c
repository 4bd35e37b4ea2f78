/*
 * test_roundtrip.c
 *		Back up a tree, restore it, and compare: empty files, one-chunk files,
 *		a sparse file beyond 4 GiB, ten thousand small files, modes, times
 *		and links, names that are not UTF-8.  Empty files, one-chunk files
 *		and modes and links run once per store driver (drivers.h): backed up
 *		to local folders, then to prefixes of a bucket, and read back from
 *		there by verify and restore.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drivers.h"
#include "harness.h"
#include "tests.h"

#define GiB (UINT64_C(1) << 30)
#define MiB (UINT64_C(1) << 20)

/* Every file entry's CRC-32C matches the source file's content. */
static bool
crcs_match(const SbManifest *m, const char *src)
{
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];
		char		path[PATH_MAX];
		uint8_t    *data;
		size_t		len;
		uint32_t	crc;

		if (e->type != SB_ENTRY_FILE)
			continue;
		data = th_read_file(th_path(path, "%s/%s", src, e->path), &len);
		if (data == NULL)
			return false;
		crc = th_crc32c(data, len);
		free(data);
		if (crc != e->crc32c || len != e->size)
		{
			diag("%s: crc32c %08x size %zu, manifest says %08x size %llu", e->path, crc, len,
				 e->crc32c, (unsigned long long) e->size);
			return false;
		}
	}
	return true;
}

static uint64_t
sum_stripe_chunks(const SbManifest *m)
{
	uint64_t	sum = 0;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
		sum += m->stripes[i].chunks;
	return sum;
}

/* Restore from destination I into the fixture's target and compare with the source. */
static void
restore_and_compare(ThFixture *f, uint32_t i, const char *name, int flags, const char *what)
{
	char		location[PATH_MAX];
	SbError		err;
	bool		restored;
	double		t0 = th_now(),
				t1,
				t2;

	th_location(f, i, name, location);
	is_int(th_verify(location), 0, "%s: verify finds no problem", what);
	t1 = th_now();
	restored = th_restore(location, f->target, &err);
	if (!ok(restored, "%s: restore succeeds", what))
		th_diag_error("restore", &err);
	t2 = th_now();
	ok(restored && th_trees_equal(f->src, f->target, flags),
	   "%s: restored tree equals the source", what);
	if (th_now() - t0 > 1.0)
		diag("%s: verify %.2f s, restore %.2f s, compare %.2f s", what, t1 - t0, t2 - t1,
			 th_now() - t2);
}

/* 1a. Empty files: from disk and from memory, both codecs. */
static void
roundtrip_empty_file(const ThDriver *d, void *arg)
{
	static const SbCodec codecs[] = {SB_CODEC_NONE, SB_CODEC_ZSTD};
	int			c;

	for (c = 0; c < 2; c++)
	{
		ThFixture	f;
		SbBackupOptions o;
		SbManifest *m = NULL;
		SbError		err;
		const SbEntry *e;
		char		what[64];
		char		path[PATH_MAX];
		struct stat st;
		SbBackup   *b;
		bool		done;

		snprintf(what, sizeof(what), "empty file, codec %s", sb_codec_name(codecs[c]));
		th_fixture(&f, "empty", 2);
		th_driver_dests(d, &f, c == 0 ? "empty-none" : "empty-zstd");
		th_write_file(th_path(path, "%s/empty", f.src), "", 0, 0644);
		th_options(&o, f.dests, 2, "bk");
		o.codec = codecs[c];
		done = th_backup_tree(&o, f.src, &m, &err);
		if (!ok(done, "%s: backup succeeds", what))
			th_diag_error("backup", &err);
		e = th_find_entry(m, "empty");
		ok(e != NULL && e->type == SB_ENTRY_FILE && e->size == 0 && e->stream_length == 0,
		   "%s: manifest lists it with size 0", what);
		ok(e != NULL && e->crc32c == th_crc32c(NULL, 0), "%s: its crc32c is that of nothing",
		   what);
		ok(m != NULL && m->total_chunks == 0 && m->stream_bytes == 0 && sum_stripe_chunks(m) == 0,
		   "%s: no chunks", what);
		ok(m != NULL && m->nstripes == 2 &&
		   m->stripes[0].file_bytes == SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE &&
		   th_dest_size(th_stripe_path(&f, 2, "bk", path)) == SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE,
		   "%s: each stripe is a header and a trailer", what);
		restore_and_compare(&f, 1, "bk", TH_CMP_MTIME, what);
		ok(stat(th_path(path, "%s/empty", f.target), &st) == 0 && S_ISREG(st.st_mode) &&
		   st.st_size == 0 && (st.st_mode & 07777) == 0644,
		   "%s: restored as an empty regular file, mode 0644", what);
		sb_manifest_free(m);

		/* The same from memory, next to a non-empty file. */
		th_rmtree(f.target);
		o.name = "bk2";
		b = sb_backup_begin(&o, &err);
		done = b != NULL &&
			sb_backup_add_dir(b, ".", 0755, 1600000000, &err) &&
			sb_backup_add_data(b, "a-empty", "", 0, 0600, 1600000001, &err) &&
			sb_backup_add_data(b, "b-data", "xyz", 3, 0600, 1600000002, &err) &&
			sb_backup_add_data(b, "c-empty", "", 0, 0640, 1600000003, &err);
		if (b != NULL && !done)
			sb_backup_abort(b);
		done = done && sb_backup_finish(b, NULL, &err);
		if (!ok(done, "%s: backup from memory succeeds", what))
			th_diag_error("backup", &err);
		done = done && th_restore(th_location(&f, 0, "bk2", path), f.target, &err);
		if (!ok(done, "%s: restore of the memory backup succeeds", what))
			th_diag_error("restore", &err);
		ok(stat(th_path(path, "%s/a-empty", f.target), &st) == 0 && st.st_size == 0 &&
		   (st.st_mode & 07777) == 0600 && st.st_mtime == 1600000001 &&
		   stat(th_path(path, "%s/c-empty", f.target), &st) == 0 && st.st_size == 0 &&
		   (st.st_mode & 07777) == 0640 && st.st_mtime == 1600000003,
		   "%s: empty files from memory restored with their modes and times", what);
		{
			size_t		len = 0;
			uint8_t    *data = th_read_file(th_path(path, "%s/b-data", f.target), &len);

			ok(data != NULL && len == 3 && memcmp(data, "xyz", 3) == 0,
			   "%s: the file between them holds its 3 bytes", what);
			free(data);
		}
		th_fixture_done(&f);
	}
}

void
test_roundtrip_empty_file(void)
{
	th_each_driver(roundtrip_empty_file, NULL);
}

/* 1b. A file of exactly one chunk (and one byte more), both codecs, both kinds of data. */
static void
roundtrip_one_chunk(const ThDriver *d, void *arg)
{
	static const SbCodec codecs[] = {SB_CODEC_NONE, SB_CODEC_ZSTD};
	const uint32_t cs = 64 * 1024;
	int			c,
				text,
				extra;

	for (c = 0; c < 2; c++)
		for (text = 0; text < 2; text++)
			for (extra = 0; extra < 2; extra++)
			{
				ThFixture	f;
				SbBackupOptions o;
				SbManifest *m = NULL;
				SbError		err;
				const SbEntry *e;
				char		what[96];
				char		path[PATH_MAX];
				uint64_t	size = cs + (uint64_t) extra;
				bool		done;
				char		tag[64];

				snprintf(what, sizeof(what), "%s file of %llu bytes (chunk %u), codec %s",
						 text ? "text" : "random", (unsigned long long) size, cs,
						 sb_codec_name(codecs[c]));
				th_fixture(&f, "onechunk", 2);
				snprintf(tag, sizeof(tag), "onechunk-%d%d%d", c, text, extra);
				th_driver_dests(d, &f, tag);
				th_write_pattern(th_path(path, "%s/one", f.src), size, 7 + c, text, 0640);
				th_options(&o, f.dests, 2, "bk");
				o.codec = codecs[c];
				o.level = 1;
				o.chunk_size = cs;
				done = th_backup_tree(&o, f.src, &m, &err);
				if (!ok(done, "%s: backup succeeds", what))
					th_diag_error("backup", &err);
				e = th_find_entry(m, "one");
				ok(e != NULL && e->size == size && e->stream_length == size && !e->sparse &&
				   e->stream_offset == 0, "%s: one entry holding all its bytes", what);
				is_int(m ? m->total_chunks : 0, 1 + extra, "%s: chunk count", what);
				ok(m != NULL && sum_stripe_chunks(m) == m->total_chunks &&
				   m->stream_bytes == size, "%s: stripes hold every chunk", what);
				ok(m != NULL && crcs_match(m, f.src), "%s: manifest crc32c is right", what);
				if (m != NULL && codecs[c] == SB_CODEC_ZSTD && text)
					ok(m->stored_bytes < m->stream_bytes / 2,
					   "%s: text is stored compressed (%llu of %llu bytes)", what,
					   (unsigned long long) m->stored_bytes,
					   (unsigned long long) m->stream_bytes);
				else if (m != NULL)
					is_int(m->stored_bytes, m->stream_bytes,
						   "%s: stored as is (compression did not help or was off)", what);
				restore_and_compare(&f, extra, "bk", TH_CMP_MTIME, what);
				sb_manifest_free(m);
				th_fixture_done(&f);
			}
}

void
test_roundtrip_one_chunk(void)
{
	th_each_driver(roundtrip_one_chunk, NULL);
}

/* 2. A 5 GiB sparse file with data at 0, near 2 GiB and at the very end. */
/*
 * A file of 1 MiB with a hole in its middle and 4 MiB allocated past its end
 * (fallocate, keeping the size): its blocks cover its size, so the backup
 * does not look for holes.  False if the file system cannot make one.
 */
static bool
make_hole_with_blocks_past_end(const char *path)
{
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	struct stat st;
	bool		made = fd >= 0 && th_pwrite_pattern(fd, 0, 100000, 7) &&
		th_pwrite_pattern(fd, MiB - 100000, 100000, 8) &&
		fallocate(fd, FALLOC_FL_KEEP_SIZE, MiB, 4 * MiB) == 0 && fsync(fd) == 0 &&
		fstat(fd, &st) == 0 && (uint64_t) st.st_blocks * 512 >= (uint64_t) st.st_size;

	if (fd >= 0)
		close(fd);
	if (!made)
		diag("no file with blocks past its end here: that case is not tried");
	return made;
}

void
test_roundtrip_sparse_5g(void)
{
	static const struct
	{
		uint64_t	offset;
		uint64_t	length;
	}			pieces[] = {
		{0, 2 * MiB},
		{2 * GiB + 12345, MiB + 777},
		{5 * GiB - 3 * MiB - 99, 3 * MiB + 99},
	};
	const uint64_t size = 5 * GiB;
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	const SbEntry *e;
	char		path[PATH_MAX];
	struct stat st;
	int			fd;
	size_t		i;
	bool		done;
	bool		same;
	bool		prealloc;
	double		weights[] = {1, 2};

	th_fixture(&f, "sparse", 2);
	fd = open(th_path(path, "%s/big", f.src), O_WRONLY | O_CREAT | O_TRUNC, 0640);
	done = fd >= 0 && ftruncate(fd, (off_t) size) == 0;
	for (i = 0; done && i < 3; i++)
		done = th_pwrite_pattern(fd, pieces[i].offset, pieces[i].length, 100 + (uint32_t) i);
	/* Allocated blocks show in st_blocks once written back. */
	if (fd >= 0 && (fsync(fd) != 0 || close(fd) != 0))
		done = false;
	/* A file with a hole at its end only, and plain files after the big one. */
	fd = open(th_path(path, "%s/tail-hole", f.src), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	done = done && fd >= 0 && th_pwrite_pattern(fd, 0, 100000, 5) &&
		ftruncate(fd, 10 * MiB) == 0;
	if (fd >= 0)
		close(fd);
	done = done && th_write_pattern(th_path(path, "%s/z-after", f.src), 300000, 6, true, 0644);
	prealloc = make_hole_with_blocks_past_end(th_path(path, "%s/prealloc-hole", f.src));
	done = done && stat(th_path(path, "%s/big", f.src), &st) == 0;
	if (!ok(done && (uint64_t) st.st_blocks * 512 < 64 * MiB,
			"the source file is sparse (%lld bytes allocated)",
			done ? (long long) st.st_blocks * 512 : -1LL))
	{
		th_fixture_done(&f);
		return;
	}

	th_options(&o, f.dests, 2, "bk");
	o.weights = weights;
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = 1024 * 1024;
	done = th_backup_tree(&o, f.src, &m, &err);
	if (!ok(done, "backup of the sparse file succeeds"))
		th_diag_error("backup", &err);
	e = th_find_entry(m, "big");
	ok(e != NULL && e->size == size && e->sparse && e->nextents >= 3 &&
	   e->stream_length >= 6 * MiB && e->stream_length < 16 * MiB,
	   "manifest: 5 GiB, sparse, only its data in the stream (%llu bytes in %u extents)",
	   e ? (unsigned long long) e->stream_length : 0ULL, e ? e->nextents : 0);
	e = th_find_entry(m, "tail-hole");
	ok(e != NULL && e->size == 10 * MiB && e->sparse && e->stream_length < MiB,
	   "manifest: the file with a trailing hole is sparse");
	e = th_find_entry(m, "z-after");
	ok(e != NULL && !e->sparse && e->stream_length == 300000, "manifest: the plain file is whole");
	ok(m != NULL && m->stream_bytes < 20 * MiB, "the stream holds data, not holes");
	e = th_find_entry(m, "prealloc-hole");
	if (prealloc)
		ok(e != NULL && !e->sparse && e->stream_length == MiB,
		   "manifest: a hole in a file with blocks allocated past its end is read as zeros, not looked for");

	done = done && th_restore(th_location(&f, 0, "bk", path), f.target, &err);
	if (!ok(done, "restore of the sparse file succeeds"))
		th_diag_error("restore", &err);
	ok(stat(th_path(path, "%s/big", f.target), &st) == 0 && (uint64_t) st.st_size == size,
	   "restored size is 5 GiB");
	ok((uint64_t) st.st_blocks * 512 < 64 * MiB,
	   "restored file is still sparse (%lld bytes allocated)", (long long) st.st_blocks * 512);
	fd = open(path, O_RDONLY);
	for (i = 0; i < 3; i++)
	{
		uint8_t    *want = malloc(pieces[i].length);
		uint8_t    *got = malloc(pieces[i].length);

		th_fill(want, pieces[i].length, 100 + (uint32_t) i, false);
		same = fd >= 0 && want != NULL && got != NULL &&
			pread(fd, got, pieces[i].length, (off_t) pieces[i].offset) == (ssize_t) pieces[i].length &&
			memcmp(want, got, pieces[i].length) == 0;
		ok(same, "data at offset %llu restored", (unsigned long long) pieces[i].offset);
		free(want);
		free(got);
	}
	{
		static const uint64_t holes[] = {3 * MiB, GiB, 2 * GiB + 12344, 4 * GiB, 5 * GiB - 3 * MiB - 100};
		uint8_t		byte = 1;

		same = fd >= 0;
		for (i = 0; same && i < sizeof(holes) / sizeof(holes[0]); i++)
			same = pread(fd, &byte, 1, (off_t) holes[i]) == 1 && byte == 0;
		ok(same, "holes read as zeros");
	}
	if (fd >= 0)
		close(fd);
	ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME),
	   "restored tree equals the source");
	ok(stat(th_path(path, "%s/tail-hole", f.target), &st) == 0 && st.st_size == 10 * MiB &&
	   (uint64_t) st.st_blocks * 512 < 2 * MiB, "the trailing hole is restored as a hole");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

typedef struct StopTick
{
	int			calls;
	uint64_t	total;			/* raw_bytes_total the tick saw */
	uint32_t	nstripes;
} StopTick;

static bool
stop_restore(void *arg, const SbProgress *progress)
{
	StopTick   *s = arg;

	s->calls++;
	s->total = progress->raw_bytes_total;
	s->nstripes = progress->nstripes;
	return false;
}

/*
 * A restore whose tick says stop (its reading takes well over the 100 ms to
 * the first tick here): canceled, and the new target removed.
 */
static void
cancel_restore(ThFixture *f, const SbManifest *m, const char *name)
{
	char		location[PATH_MAX];
	SbError		err;
	SbArchive  *a = sb_archive_open(th_location(f, 0, name, location), &err);
	SbRestoreOptions ro;
	StopTick	stop = {0, 0, 0};
	bool		done;

	memset(&ro, 0, sizeof(ro));
	ro.target = f->target;
	ro.read.workers = 1;
	ro.read.tick = stop_restore;
	ro.read.tick_arg = &stop;
	done = a != NULL && sb_archive_restore(a, &ro, &err);
	ok(!done && stop.calls == 1 && err.code == SB_ECANCELED,
	   "a restore whose tick says stop is canceled (%d tick)", stop.calls);
	ok(m != NULL && stop.total == m->stream_bytes && stop.nstripes == m->nstripes,
	   "the tick saw the restore's total and its stripes");
	ok(!th_exists(f->target), "the canceled restore removed its target");
	sb_archive_close(a);
}

/* 3. Ten thousand small files, 4 KiB chunks, so chunks hold many files and files span chunks. */
/*
 * The backup NAME in F opened for its members only (SB_KEEP_HEAD): the
 * members of WHOLE, no entry, refused by restore; then an entry's text
 * changed in every manifest copy is found by the hash all the same.
 */
static void
head_only(ThFixture *f, const char *name, const SbArchive *whole)
{
	char		location[PATH_MAX];
	char		target[PATH_MAX];
	char		path[PATH_MAX];
	SbArchive  *head;
	SbRestoreOptions ro;
	SbError		err;
	const SbManifest *h;
	const SbManifest *w = whole ? whole->manifest : NULL;
	uint32_t	i;
	bool		flipped = true;

	th_location(f, 0, name, location);
	head = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_HEAD}, &err);
	if (head == NULL)
		th_diag_error("open for the members", &err);
	h = head ? head->manifest : NULL;
	ok(h != NULL && head->authenticated && h->head_only && h->tally == NULL && h->nentries == 0,
	   "opened for its members only: authenticated, no entry read");
	ok(h != NULL && w != NULL && strcmp(h->name, w->name) == 0 && h->nstripes == w->nstripes &&
	   h->total_chunks == w->total_chunks && h->stream_bytes == w->stream_bytes &&
	   h->chunk_size == w->chunk_size && h->codec == w->codec &&
	   memcmp(h->json_sha256, w->json_sha256, 32) == 0, "its members and hash are the whole manifest's");
	memset(&ro, 0, sizeof(ro));
	ro.target = th_path(target, "%s-head", f->target);
	ok(head != NULL && !sb_archive_restore(head, &ro, &err) && err.code == SB_EINVAL &&
	   access(target, F_OK) != 0, "restore refuses it, writing nothing (%s)", err.message);
	sb_archive_close(head);
	/* a byte of the last entry's text (the manifest ends "}]}\n") */
	for (i = 0; i < f->ndests; i++)
	{
		struct stat st;

		th_path(path, "%s/%s/" SB_MANIFEST_FILE, f->dests[i], name);
		flipped = flipped && stat(path, &st) == 0 && th_flip_byte(path, (uint64_t) st.st_size - 12, 0x01);
	}
	head = flipped ? sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_HEAD}, &err) : NULL;
	ok(flipped && (head == NULL || !head->authenticated),
	   "an entry changed in every copy: not authenticated (%s)", head ? "opened" : err.message);
	sb_archive_close(head);
}

/*
 * The backup in F's first destination opened to plan only: the same plan as
 * opened whole, no file table, and verify and restore refuse it.
 */
static void
plan_only(ThFixture *f, const char *name)
{
	char		location[PATH_MAX];
	char		target[PATH_MAX];
	SbArchive  *whole;
	SbArchive  *counted;
	SbPlan		expected,
				plan;
	SbRestoreOptions ro;
	SbReadOptions read;
	SbError		err;
	uint64_t	problems = 0;
	uint32_t	s;
	bool		same;

	th_location(f, 0, name, location);
	whole = sb_archive_open(location, &err);
	counted = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS}, &err);
	if (counted == NULL)
		th_diag_error("open to plan", &err);
	ok(counted != NULL && counted->authenticated && counted->manifest->tally != NULL &&
	   counted->manifest->nentries == 0, "opened to plan only: authenticated, no file table");
	same = whole != NULL && counted != NULL && sb_archive_plan(whole, &expected, &err) &&
		sb_archive_plan(counted, &plan, &err) && plan.files == expected.files &&
		plan.directories == expected.directories && plan.logical_bytes == expected.logical_bytes;
	for (s = 0; same && s < plan.nstripes; s++)
		same = plan.stripes[s].files == expected.stripes[s].files && plan.stripes[s].present;
	ok(same, "its plan is the one from the whole file table, stripe by stripe");
	memset(&read, 0, sizeof(read));
	ok(counted != NULL && !sb_archive_verify(counted, &read, NULL, NULL, &problems, &err) &&
	   err.code == SB_EINVAL, "verify refuses it (%s)", err.message);
	memset(&ro, 0, sizeof(ro));
	ro.target = th_path(target, "%s-plan", f->target);
	ok(counted != NULL && !sb_archive_restore(counted, &ro, &err) && err.code == SB_EINVAL &&
	   access(target, F_OK) != 0, "restore refuses it, writing nothing (%s)", err.message);
	sb_archive_close(counted);
	counted = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS, .alone = true}, &err);
	ok(counted != NULL && counted->manifest->tally != NULL && sb_archive_plan(counted, &plan, &err) &&
	   plan.files == expected.files, "opened alone to plan (show, report): the same, no file table");
	sb_archive_close(counted);
	head_only(f, name, whole);
	sb_archive_close(whole);
}

void
test_roundtrip_many_files(void)
{
	static const size_t sizes[] = {0, 1, 7, 100, 4095, 4096, 4097, 8192, 10000, 12289,
	511, 3000, 0, 65536, 20000, 2};
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	double		weights[] = {1, 1, 2};
	int			d,
				i,
				n = 0;
	bool		done = true;
	uint64_t	total = 0;
	double		t0 = th_now();

	th_fixture(&f, "many", 3);
	for (d = 0; done && d < 100; d++)
	{
		done = th_mkdir(th_path(path, "%s/d%02d", f.src, d), 0755);
		for (i = 0; done && i < 100; i++, n++)
		{
			size_t		size = sizes[(size_t) (n * 7 + d) % (sizeof(sizes) / sizeof(sizes[0]))];

			th_path(path, "%s/d%02d/f%03d", f.src, d, i);
			done = th_write_pattern(path, size, (uint32_t) n, n % 3 != 0, 0644);
			total += size;
		}
	}
	ok(done && n == 10000, "10000 files written (%llu bytes) in %.2f s",
	   (unsigned long long) total, th_now() - t0);
	t0 = th_now();

	th_options(&o, f.dests, 3, "bk");
	o.weights = weights;
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = 4096;
	done = done && th_backup_tree(&o, f.src, &m, &err);
	if (!ok(done, "backup of 10000 files succeeds (%.2f s)", th_now() - t0))
		th_diag_error("backup", &err);
	is_int(m ? m->nentries : 0, 10000 + 100 + 1, "manifest lists every file and directory");
	is_int(m ? m->stream_bytes : 0, total, "the stream holds every byte");
	is_int(m ? m->total_chunks : 0, (total + 4095) / 4096, "chunk count");
	ok(m != NULL && crcs_match(m, f.src), "every file's crc32c is right");
	t0 = th_now();
	cancel_restore(&f, m, "bk");
	diag("canceled restore: %.2f s", th_now() - t0);
	restore_and_compare(&f, 2, "bk", TH_CMP_MTIME, "10000 files");
	plan_only(&f, "bk");
	sb_manifest_free(m);
	t0 = th_now();
	th_fixture_done(&f);
	diag("removal of the test's folders: %.2f s", th_now() - t0);
}

typedef struct TreeItem
{
	const char *path;
	char		type;			/* 'd' directory, 'f' file, 'l' link */
	mode_t		mode;
	const char *target;			/* link target */
	size_t		size;			/* file size */
} TreeItem;

/* Every item of the restored tree in F's target: its type, mode (within 0755) and mtime. */
static void
check_tree_items(const ThFixture *f, const TreeItem *items, size_t nitems, const char *what)
{
	char		path[PATH_MAX];
	struct stat st;
	size_t		i;

	for (i = 0; i < nitems; i++)
	{
		mode_t		mode = items[i].mode & 0755;
		bool		same;

		th_path(path, "%s/%s", f->target, items[i].path);
		same = lstat(path, &st) == 0 && st.st_mtime == 1500000000 + (time_t) (i + 1) * 86400;
		if (items[i].type == 'd')
			same = same && S_ISDIR(st.st_mode) && (st.st_mode & 07777) == mode;
		else if (items[i].type == 'f')
			same = same && S_ISREG(st.st_mode) && (st.st_mode & 07777) == mode &&
				(size_t) st.st_size == items[i].size;
		else
		{
			char		target[PATH_MAX];
			ssize_t		len = readlink(path, target, sizeof(target) - 1);

			same = same && S_ISLNK(st.st_mode) && len >= 0 &&
				(size_t) len == strlen(items[i].target) &&
				memcmp(target, items[i].target, (size_t) len) == 0;
		}
		ok(same, "%s: %s restored with its type, mode %04o and mtime", what, items[i].path,
		   (unsigned) mode);
	}
}

/* 4. Nested folders, modes, tablespace links, and every mtime. */
static void
roundtrip_modes_and_links(const ThDriver *d, void *arg)
{
	static const TreeItem items[] = {
		{"a", 'd', 0700, NULL, 0},
		{"a/b", 'd', 0750, NULL, 0},
		{"a/b/c", 'd', 0755, NULL, 0},
		{"a/b/c/deep.txt", 'f', 0640, NULL, 5000},
		{"a/readonly", 'f', 0400, NULL, 70000},
		{"a/secret", 'f', 0600, NULL, 10},
		{"empty-dir", 'd', 0750, NULL, 0},
		{"pg_tblspc", 'd', 0700, NULL, 0},
		{"pg_tblspc/16385", 'l', 0, "/nonexistent/sbunit/target", 0},
		{"pg_tblspc/16386", 'l', 0, "/srv/ts with spaces", 0},
		{"plain", 'f', 0644, NULL, 0},
		{"run.sh", 'f', 0755, NULL, 123},
		{"shared", 'd', 01777, NULL, 0},
		{"shared/setuid", 'f', 06777, NULL, 1},
		{"shared/x", 'f', 0604, NULL, 1},
	};
	const size_t nitems = sizeof(items) / sizeof(items[0]);
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	struct stat st;
	mode_t		old_umask;
	size_t		i;
	bool		done = true;

	th_fixture(&f, "modes", 2);
	th_driver_dests(d, &f, "modes");
	for (i = 0; done && i < nitems; i++)
	{
		th_path(path, "%s/%s", f.src, items[i].path);
		if (items[i].type == 'd')
			done = th_mkdir(path, items[i].mode);
		else if (items[i].type == 'f')
			done = th_write_pattern(path, items[i].size, (uint32_t) i, false, items[i].mode);
		else
			done = symlink(items[i].target, path) == 0;
	}
	/* Distinct times, children before their folders. */
	for (i = nitems; done && i > 0; i--)
		done = th_set_mtime(th_path(path, "%s/%s", f.src, items[i - 1].path),
							1500000000 + (int64_t) i * 86400);
	done = done && chmod(f.src, 0750) == 0 && th_set_mtime(f.src, 1400000000);
	ok(done, "source tree created");

	th_options(&o, f.dests, 2, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = 16384;
	done = done && th_backup_tree(&o, f.src, &m, &err);
	if (!ok(done, "backup succeeds"))
		th_diag_error("backup", &err);
	ok(th_find_entry(m, "shared") != NULL && th_find_entry(m, "shared")->mode == 0755 &&
	   th_find_entry(m, "shared/setuid") != NULL && th_find_entry(m, "shared/setuid")->mode == 0755,
	   "modes beyond 0755 are recorded within it: 01777 and 06777 as 0755");
	/* What the restore must give back is the source within 0755. */
	chmod(th_path(path, "%s/shared/setuid", f.src), 0755);
	chmod(th_path(path, "%s/shared", f.src), 0755);
	restore_and_compare(&f, 0, "bk", TH_CMP_MTIME, "modes and links");
	check_tree_items(&f, items, nitems, "umask 022");
	ok(stat(f.target, &st) == 0 && (st.st_mode & 07777) == 0750 && st.st_mtime == 1400000000,
	   "the target itself takes the root's mode and mtime");

	/*
	 * Under a umask that masks most of these modes (as PostgreSQL's 0077),
	 * the files written whole are created 0600 and given their mode after.
	 */
	th_rmtree(f.target);
	old_umask = umask(077);
	restore_and_compare(&f, 0, "bk", TH_CMP_MTIME, "modes under umask 077");
	umask(old_umask);
	check_tree_items(&f, items, nitems, "umask 077");
	ok(!th_exists("/nonexistent/sbunit"), "the dangling link was not followed");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_roundtrip_modes_and_links(void)
{
	th_each_driver(roundtrip_modes_and_links, NULL);
}

/* Links a data directory does not hold are refused, naming the rule. */
void
test_roundtrip_links_refused(void)
{
	static const struct
	{
		const char *path;
		const char *target;
	}			links[] = {
		{"link-up", ".."}, {"pg_tblspc/16385", "relative/ts"}, {"pg_tblspc/abc", "/srv/ts"},
		{"pg_tblspc/16385/inner", "/srv/ts"}, {"pg_wal", "/srv/wal"},
	};
	ThFixture	f;
	SbBackupOptions o;
	SbBackup   *b;
	SbError		err;
	size_t		i;
	bool		done;

	th_fixture(&f, "links", 1);
	th_options(&o, f.dests, 1, "bk");
	b = sb_backup_begin(&o, &err);
	done = b != NULL && sb_backup_add_dir(b, ".", 0700, 1, &err);
	for (i = 0; done && i < sizeof(links) / sizeof(links[0]); i++)
	{
		ok(!sb_backup_add_symlink(b, links[i].path, links[i].target, 1, &err) &&
		   err.code == SB_EINVAL, "a link at %s to %s is refused", links[i].path, links[i].target);
		like(err.message, "links only at pg_tblspc/<oid>", "the error says where links may be");
	}
	done = done && sb_backup_add_symlink(b, "pg_tblspc/16385", "/srv/ts", 1, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	if (!ok(done, "a tablespace link is taken and the backup completes"))
		th_diag_error("backup", &err);
	th_fixture_done(&f);
}

/* Names that are not valid UTF-8, and a control character, through a real backup. */
void
test_roundtrip_non_utf8_names(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	char		path[PATH_MAX];
	size_t		len;
	uint8_t    *text;
	bool		done;

	th_fixture(&f, "names", 1);
	done = th_write_pattern(th_path(path, "%s/caf\xe9", f.src), 5000, 1, false, 0644) &&
		th_mkdir(th_path(path, "%s/\xff\xfe-dir", f.src), 0755) &&
		th_write_pattern(th_path(path, "%s/\xff\xfe-dir/tab\tand\x01", f.src), 10, 2, true, 0600) &&
		th_write_pattern(th_path(path, "%s/\xc3\xa9t\xc3\xa9", f.src), 10, 3, true, 0600) &&
		th_mkdir(th_path(path, "%s/pg_tblspc", f.src), 0700) &&
		symlink("/srv/caf\xe9", th_path(path, "%s/pg_tblspc/16385", f.src)) == 0;
	ok(done, "source tree with odd names created");
	th_options(&o, f.dests, 1, "bk");
	done = done && th_backup_tree(&o, f.src, NULL, &err);
	if (!ok(done, "backup succeeds"))
		th_diag_error("backup", &err);
	text = th_read_file(th_path(path, "%s/bk/manifest.json", f.dest[0]), &len);
	like((char *) text, "\"encoded_path\"", "manifest.json encodes the odd names");
	like((char *) text, "\"encoded_target\"", "manifest.json encodes the odd link target");
	like((char *) text, "\"path\":\"\xc3\xa9t\xc3\xa9\"", "a valid UTF-8 name stays plain");
	free(text);
	restore_and_compare(&f, 0, "bk", TH_CMP_MTIME, "odd names");
	th_fixture_done(&f);
}

/* All stripes and a manifest copied into one folder, the destinations gone. */
void
test_roundtrip_gathered_folder(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	char		gathered[PATH_MAX];
	char		from[PATH_MAX];
	char		to[PATH_MAX];
	uint32_t	s;
	int			i;
	bool		done = true;

	th_fixture(&f, "gather", 3);
	for (i = 0; done && i < 10; i++)
		done = th_write_pattern(th_path(from, "%s/f%d", f.src, i), (size_t) i * 20000, (uint32_t) i,
								false, 0644);
	th_options(&o, f.dests, 3, "bk");
	o.chunk_size = 8192;
	done = done && th_backup_tree(&o, f.src, NULL, &err);
	if (!ok(done, "backup over three destinations succeeds"))
		th_diag_error("backup", &err);
	th_path(gathered, "%s/gathered", f.root);
	done = done && th_mkdir(gathered, 0755) &&
		rename(th_path(from, "%s/bk/manifest.json", f.dest[1]),
			   th_path(to, "%s/manifest.json", gathered)) == 0;
	for (s = 1; done && s <= 3; s++)
		done = rename(th_stripe_path(&f, s, "bk", from),
					  th_path(to, "%s/stripe-%u.sbs", gathered, s)) == 0;
	for (s = 0; s < 3; s++)
		th_rmtree(th_location(&f, s, "bk", from));
	ok(done, "manifest and stripes gathered into one folder, backup folders removed");

	a = sb_archive_open(gathered, &err);
	ok(a != NULL && sb_archive_plan(a, &plan, &err) && plan.stripes[0].present &&
	   plan.stripes[1].present && plan.stripes[2].present &&
	   strncmp(plan.stripes[2].path, gathered, strlen(gathered)) == 0,
	   "every stripe is found next to the manifest");
	sb_archive_close(a);
	done = th_restore(gathered, f.target, &err);
	if (!ok(done, "restore from the gathered folder succeeds"))
		th_diag_error("restore", &err);
	ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME), "restored tree equals the source");
	th_fixture_done(&f);
}

/* Back up LEN bytes from memory as three files, then restore and check them. */
static void
memory_roundtrip(const SbBackupOptions *o, const SbReadOptions *ro, const char *location,
				 const char *target, size_t len, const char *what)
{
	uint8_t    *data = malloc(len);
	SbBackup   *b;
	SbError		err;
	SbArchive  *a = NULL;
	SbRestoreOptions rst;
	char		path[PATH_MAX];
	size_t		cut1 = len / 3 + 1,
				cut2 = 2 * (len / 3) + 5;
	bool		done;

	b = sb_backup_begin(o, &err);
	if (data != NULL)
		th_fill(data, len, 77, true);
	done = b != NULL && data != NULL &&
		sb_backup_add_dir(b, ".", 0755, 1600000000, &err) &&
		sb_backup_add_data(b, "a", data, cut1, 0644, 1600000001, &err) &&
		sb_backup_add_data(b, "b", data + cut1, cut2 - cut1, 0644, 1600000002, &err) &&
		sb_backup_add_data(b, "c", data + cut2, len - cut2, 0644, 1600000003, &err);
	if (b != NULL && !done)
		sb_backup_abort(b);
	done = done && sb_backup_finish(b, NULL, &err);
	if (!ok(done, "%s: backup succeeds", what))
		th_diag_error("backup", &err);
	a = done ? sb_archive_open(location, &err) : NULL;
	memset(&rst, 0, sizeof(rst));
	rst.target = target;
	rst.read = *ro;
	done = a != NULL && sb_archive_restore(a, &rst, &err);
	if (!ok(done, "%s: restore succeeds", what))
		th_diag_error("restore", &err);
	sb_archive_close(a);
	{
		size_t		la = 0,
					lb = 0,
					lc = 0;
		uint8_t    *pa = th_read_file(th_path(path, "%s/a", target), &la);
		uint8_t    *pb = th_read_file(th_path(path, "%s/b", target), &lb);
		uint8_t    *pc = th_read_file(th_path(path, "%s/c", target), &lc);

		ok(done && data != NULL && pa && pb && pc && la == cut1 && lb == cut2 - cut1 &&
		   lc == len - cut2 && memcmp(pa, data, la) == 0 && memcmp(pb, data + cut1, lb) == 0 &&
		   memcmp(pc, data + cut2, lc) == 0, "%s: restored files hold the data", what);
		free(pa);
		free(pb);
		free(pc);
	}
	free(data);
}

/* The smallest pipelines (two buffers, one worker), the largest chunk, 64 stripes. */
void
test_roundtrip_pipeline_limits(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbReadOptions ro;
	SbError		err;
	SbArchive  *a;
	char		location[PATH_MAX];
	char		dirs[SB_MAX_STRIPES][PATH_MAX];
	const char *dests[SB_MAX_STRIPES];
	int			balance;
	uint32_t	s;

	for (balance = 0; balance < 2; balance++)
	{
		char		what[64];

		snprintf(what, sizeof(what), "two buffers, one worker, %s",
				 balance ? "adaptive" : "weighted");
		th_fixture(&f, "small", 3);
		th_options(&o, f.dests, 3, "bk");
		o.balance = balance ? SB_BALANCE_ADAPTIVE : SB_BALANCE_WEIGHTED;
		o.codec = SB_CODEC_ZSTD;
		o.level = 1;
		o.chunk_size = 4096;
		o.buffer_count = 2;
		o.workers = 1;
		memset(&ro, 0, sizeof(ro));
		ro.workers = 1;
		ro.buffer_count = 2;
		memory_roundtrip(&o, &ro, th_location(&f, 2, "bk", location), f.target, 4000 * 1024,
						 what);
		th_fixture_done(&f);
	}

	th_fixture(&f, "bigchunk", 2);
	th_options(&o, f.dests, 2, "bk");
	o.chunk_size = SB_MAX_CHUNK_SIZE;
	o.buffer_count = 2;
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	memset(&ro, 0, sizeof(ro));
	ro.buffer_count = 2;
	memory_roundtrip(&o, &ro, th_location(&f, 1, "bk", location), f.target,
					 SB_MAX_CHUNK_SIZE + 1, "64 MiB chunks");
	a = sb_archive_open(location, &err);
	ok(a != NULL && a->manifest->total_chunks == 2 && a->manifest->stripes[0].chunks == 1,
	   "64 MiB chunks: one full chunk and one of a single byte");
	sb_archive_close(a);
	th_fixture_done(&f);

	th_fixture(&f, "stripes64", 0);
	for (s = 0; s < SB_MAX_STRIPES; s++)
	{
		th_mkdir(th_path(dirs[s], "%s/dest%02u", f.root, s + 1), 0755);
		dests[s] = dirs[s];
	}
	th_options(&o, dests, SB_MAX_STRIPES, "bk");
	o.chunk_size = 4096;
	memset(&ro, 0, sizeof(ro));
	memory_roundtrip(&o, &ro, th_path(location, "%s/bk", dirs[40]), f.target, 640 * 4096 - 10,
					 "64 stripes");
	a = sb_archive_open(location, &err);
	for (s = 0; a != NULL && s < SB_MAX_STRIPES; s++)
		if (a->manifest->stripes[s].chunks != 10)
			break;
	ok(a != NULL && s == SB_MAX_STRIPES, "64 stripes: 10 chunks in each");
	sb_archive_close(a);
	th_fixture_done(&f);
}

/* An SbEntryHook that counts what it sees and fails at entry FAIL_AT (0: never). */
typedef struct EntryCount
{
	size_t		entries;
	size_t		files;
	size_t		fail_at;
} EntryCount;

static bool
count_entry(void *arg, const SbEntry *e, SbError *err)
{
	EntryCount *c = arg;

	c->entries++;
	c->files += e->type == SB_ENTRY_FILE;
	if (c->entries == c->fail_at)
		return sb_error_set(err, SB_EIO, "the hook failed at \"%s\"", e->path);
	return true;
}

/* A hook's failure fails the backup with its error, and leaves no backup. */
static void
hook_failure(ThFixture *f, const SbBackupOptions *like)
{
	SbBackupOptions o = *like;
	EntryCount	count = {0, 0, 10};
	SbError		err;
	char		location[PATH_MAX];
	bool		done;

	o.name = "hooked";
	o.hooks.entry_arg = &count;
	done = th_backup_tree(&o, f->src, NULL, &err);
	ok(!done && strstr(err.message, "the hook failed at") != NULL,
	   "an entry hook's failure fails the backup with its error: %s", err.message);
	is_int((long) count.entries, 10, "no entry is recorded after the hook failed");
	th_location(f, 0, "hooked", location);
	ok(access(location, F_OK) != 0, "the failed backup left no folder");
}

/*
 * A backup that keeps no entry table (SbBackupOptions.spill_dir, what
 * `stripebackup create` and the server's worker do): its manifest, made
 * from the file the entries went to, lists every entry; the backup verifies
 * and restores whole.  An entry hook sees every entry as it is recorded.
 */
void
test_roundtrip_spilled(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbManifest *back;
	SbError		err;
	EntryCount	count = {0, 0, 0};
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	int			d,
				i,
				fd;
	bool		done = true;

	th_fixture(&f, "spilled", 2);
	for (d = 0; done && d < 20; d++)
	{
		done = th_mkdir(th_path(path, "%s/d%02d", f.src, d), 0750);
		for (i = 0; done && i < 50; i++)
			done = th_write_pattern(th_path(path, "%s/d%02d/f%02d", f.src, d, i),
									(size_t) ((d * 50 + i) * 37 % 9000), (uint32_t) i, i % 2 == 0,
									0640);
	}
	fd = open(th_path(path, "%s/sparse", f.src), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	done = done && fd >= 0 && th_pwrite_pattern(fd, 3 * 1024 * 1024, 5000, 9) &&
		ftruncate(fd, 8 * 1024 * 1024) == 0;
	if (fd >= 0)
		close(fd);
	th_options(&o, f.dests, 2, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = 64 * 1024;
	o.spill_dir = f.dests[0];
	o.hooks.entry = count_entry;
	o.hooks.entry_arg = &count;
	done = done && th_backup_tree(&o, f.src, &m, &err);
	if (!ok(done, "a backup that spills its entries succeeds"))
		th_diag_error("backup", &err);
	ok(m != NULL && m->nentries == 0 && m->spill != NULL, "it kept no entry table");
	th_location(&f, 0, "bk", location);
	back = sb_manifest_load(location, &err);
	ok(back != NULL && back->nentries == 1 + 20 + 20 * 50 + 1,
	   "its manifest lists every entry (%zu)", back ? back->nentries : 0);
	ok(back != NULL && count.entries == back->nentries && count.files == 20 * 50 + 1,
	   "the entry hook saw every entry (%zu) and file (%zu)", count.entries, count.files);
	ok(m != NULL && back != NULL && sb_manifest_file_count(m) == 20 * 50 + 1 &&
	   sb_manifest_file_count(back) == 20 * 50 + 1,
	   "the spilled table and the one read back count the same files");
	ok(th_count_entries(f.dests[0]) == 1, "nothing but the backup folder is left in the destination");
	is_int(th_verify(location), 0, "it verifies");
	done = th_restore(location, f.target, &err);
	if (!ok(done, "it restores"))
		th_diag_error("restore", &err);
	ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME), "the restored tree is the source");
	hook_failure(&f, &o);
	sb_manifest_free(back);
	sb_manifest_free(m);
	th_fixture_done(&f);
}
