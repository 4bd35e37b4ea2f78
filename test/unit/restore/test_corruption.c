/*
 * test_corruption.c
 *		Damaged and hostile archives: a flipped byte in a chunk, a truncated or
 *		missing stripe, unknown format versions, manifest paths that try to
 *		leave the restore target, and a target that is not empty.  Each must
 *		be refused with a message that says what and where.  A flipped
 *		byte, a truncated, missing or foreign stripe run once per store
 *		driver (drivers.h): the backup in local folders, then in prefixes of
 *		a bucket, read back by restore, verify and the plan.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include "drivers.h"
#include "harness.h"
#include "tests.h"

/* A tree of 30 files, about 600 kB, backed up in 4 KiB chunks over NDESTS stripes. */
static SbManifest *
make_backup(ThFixture *f, uint32_t ndests, SbCodec codec, const char *name)
{
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	int			i;
	bool		done = true;

	th_path(path, "%s/dir", f->src);
	if (!th_exists(path))
	{
		done = th_mkdir(path, 0755);
		for (i = 0; done && i < 30; i++)
			done = th_write_pattern(th_path(path, "%s/%sfile%02d", f->src, i < 15 ? "dir/" : "", i),
									(size_t) (i * 1237 + 15000), (uint32_t) i, i % 2 == 0, 0644);
	}
	th_options(&o, f->dests, ndests, name);
	o.codec = codec;
	o.level = 1;
	o.chunk_size = 4096;
	done = done && th_backup_tree(&o, f->src, &m, &err);
	if (!ok(done, "backup \"%s\" over %u stripes, codec %s, succeeds", name, ndests,
			sb_codec_name(codec)))
		th_diag_error("backup", &err);
	return m;
}

/* The path of the first file whose bytes chunk CHUNK holds. */
static const char *
first_file_of_chunk(const SbManifest *m, uint64_t chunk)
{
	SbPieceIter it;
	SbPiece		piece;

	sb_piece_iter_init(&it, m, chunk);
	if (!sb_piece_iter_next(&it, &piece))
		return NULL;
	return m->entries[piece.entry].path;
}

static bool
restore_opts(const char *location, const char *target, bool keep, SbError *err)
{
	SbArchive  *a = sb_archive_open(location, err);
	SbRestoreOptions ro;
	bool		done;

	if (a == NULL)
		return false;
	memset(&ro, 0, sizeof(ro));
	ro.target = target;
	ro.read.workers = 3;
	ro.keep_on_error = keep;
	done = sb_archive_restore(a, &ro, err);
	sb_archive_close(a);
	return done;
}

/* Verify LOCATION, collecting problems; returns the count (-1 if verify failed). */
static long
verify_collect(const char *location, ThProblems *problems)
{
	return th_verify_collect(location, 3, problems);
}

static const ThProblem *
find_problem(const ThProblems *p, uint32_t stripe, int64_t chunk)
{
	int			i;

	for (i = 0; i < p->n; i++)
		if (p->items[i].stripe == stripe && p->items[i].chunk == chunk)
			return &p->items[i];
	return NULL;
}

/* 7. One flipped byte in a chunk's payload (and one in another chunk's header). */
static void
corruption_flipped_payload(const ThDriver *drv, void *arg)
{
	static const SbCodec codecs[] = {SB_CODEC_NONE, SB_CODEC_ZSTD};
	int			c;

	/* In a bucket zstd only: the codec reads the same bytes whatever the driver fetched them from. */
	for (c = drv->s3 ? 1 : 0; c < 2; c++)
	{
		ThFixture	f;
		SbManifest *m;
		SbTrailer	t;
		SbIndexEntry *entries = NULL;
		uint64_t	n = 0;
		SbIndexEntry bad;
		SbIndexEntry bad2;
		ThProblems	problems;
		const ThProblem *p;
		SbError		err;
		char		stripe[PATH_MAX];
		char		location[PATH_MAX];
		char		chunk_word[64];
		char		chunk_word2[64];
		char		what[64];
		const char *file;
		const char *file2;
		long		count;
		bool		done;

		snprintf(what, sizeof(what), "flipped byte, codec %s", sb_codec_name(codecs[c]));
		th_fixture(&f, "flip", 3);
		th_driver_dests(drv, &f, c == 0 ? "flip-none" : "flip-zstd");
		m = make_backup(&f, 3, codecs[c], "bk");
		if (m == NULL ||
			!ok(th_read_index(th_stripe_path(&f, 2, "bk", stripe), &t, &entries, &n) && n > 4,
				"%s: stripe 2 holds chunks", what))
		{
			free(entries);
			sb_manifest_free(m);
			th_fixture_done(&f);
			continue;
		}
		bad = entries[n / 2];
		bad2 = entries[n / 2 + 1];
		free(entries);
		file = first_file_of_chunk(m, bad.chunk_id);
		file2 = first_file_of_chunk(m, bad2.chunk_id);
		snprintf(chunk_word, sizeof(chunk_word), "chunk %" PRIu64 " ", bad.chunk_id);
		snprintf(chunk_word2, sizeof(chunk_word2), "chunk %" PRIu64 " ", bad2.chunk_id);
		ok(file != NULL && file2 != NULL, "%s: chunks %" PRIu64 " and %" PRIu64 " hold files",
		   what, bad.chunk_id, bad2.chunk_id);
		th_location(&f, 0, "bk", location);
		is_int(th_verify(location), 0, "%s: verify finds no problem before the damage", what);

		ok(th_dest_flip_byte(stripe, bad.offset + SB_CHUNK_HEADER_SIZE + bad.stored_len / 2, 0x20),
		   "%s: flipped a payload byte of chunk %" PRIu64, what, bad.chunk_id);
		count = verify_collect(location, &problems);
		is_int(count, 1, "%s: verify reports one problem", what);
		p = find_problem(&problems, 2, (int64_t) bad.chunk_id);
		ok(p != NULL, "%s: the problem is about stripe 2, chunk %" PRIu64, what, bad.chunk_id);
		if (p != NULL && file != NULL)
		{
			is_int(p->code, SB_ECORRUPT, "%s: problem code is corrupt", what);
			ok(p->file != NULL && strcmp(p->file, file) == 0,
			   "%s: problem names the chunk's first file \"%s\" (got \"%s\")", what, file,
			   p->file ? p->file : "(null)");
			like(p->message, "stripe 2 ", "%s: message names the stripe", what);
			like(p->message, chunk_word, "%s: message names the chunk", what);
			like(p->message, file, "%s: message names the file", what);
			like(p->message, "checksum", "%s: message says checksum", what);
		}
		th_free_problems(&problems);

		/* A failed restore into a new target removes it. */
		done = restore_opts(location, f.target, false, &err);
		ok(!done, "%s: restore fails", what);
		is_int(err.code, SB_ECORRUPT, "%s: restore error is corrupt", what);
		like(err.message, "stripe 2 ", "%s: restore error names the stripe", what);
		like(err.message, chunk_word, "%s: restore error names the chunk", what);
		if (file != NULL)
			like(err.message, file, "%s: restore error names the file", what);
		ok(!th_exists(f.target), "%s: the new target was removed", what);

		/* An existing empty target is emptied again, and kept. */
		th_mkdir(f.target, 0755);
		done = restore_opts(location, f.target, false, &err);
		ok(!done && th_count_entries(f.target) == 0,
		   "%s: a failed restore into an empty folder leaves it empty", what);
		/* keep_on_error leaves the files for inspection. */
		done = restore_opts(location, f.target, true, &err);
		ok(!done && th_count_entries(f.target) > 0,
		   "%s: keep_on_error leaves what was restored", what);
		th_rmtree(f.target);

		/* A second bad chunk, in its header this time: verify reports both. */
		ok(th_dest_flip_byte(stripe, bad2.offset + 10, 0x01), "%s: flipped a header byte of chunk %"
		   PRIu64, what, bad2.chunk_id);
		count = verify_collect(location, &problems);
		is_int(count, 2, "%s: verify reports both problems", what);
		p = find_problem(&problems, 2, (int64_t) bad2.chunk_id);
		ok(p != NULL && p->code == SB_ECORRUPT && p->file != NULL && file2 != NULL &&
		   strcmp(p->file, file2) == 0, "%s: the header problem names stripe, chunk and file",
		   what);
		if (p != NULL)
		{
			like(p->message, chunk_word2, "%s: header problem message names the chunk", what);
			like(p->message, "stripe 2 ", "%s: header problem message names the stripe", what);
		}
		th_free_problems(&problems);
		sb_manifest_free(m);
		th_fixture_done(&f);
	}
}

void
test_corruption_flipped_payload(void)
{
	th_each_driver(corruption_flipped_payload, NULL);
}

/* 8a. A stripe cut short: inside its trailer, inside its chunks, and to almost nothing. */
static void
corruption_truncated_stripe(const ThDriver *d, void *arg)
{
	static const int64_t cuts[] = {-100, 1000, 10};
	size_t		k;

	for (k = 0; k < sizeof(cuts) / sizeof(cuts[0]); k++)
	{
		ThFixture	f;
		SbManifest *m;
		ThProblems	problems;
		const ThProblem *p;
		SbArchive  *a;
		SbPlan		plan;
		SbError		err;
		char		stripe[PATH_MAX];
		char		location[PATH_MAX];
		char		tag[32];
		uint64_t	st_size;
		uint64_t	size;
		bool		done;

		th_fixture(&f, "trunc", 3);
		snprintf(tag, sizeof(tag), "trunc%zu", k);
		th_driver_dests(d, &f, tag);
		m = make_backup(&f, 3, SB_CODEC_NONE, "bk");
		th_stripe_path(&f, 2, "bk", stripe);
		if (m == NULL || (st_size = th_dest_size(stripe)) == 0)
		{
			sb_manifest_free(m);
			th_fixture_done(&f);
			continue;
		}
		size = cuts[k] < 0 ? st_size - (uint64_t) -cuts[k] : (uint64_t) cuts[k];
		ok(th_dest_truncate(stripe, size), "stripe 2 truncated from %llu to %llu bytes",
		   (unsigned long long) st_size, (unsigned long long) size);
		th_location(&f, 0, "bk", location);

		done = th_restore(location, f.target, &err);
		ok(!done, "restore from a truncated stripe fails");
		is_int(err.code, SB_ECORRUPT, "the error is corrupt");
		like(err.message, "stripe 2 ", "the error names stripe 2");
		like(err.message, "truncated", "the error says truncated");
		ok(!th_exists(f.target), "the new target was removed");

		is_int(verify_collect(location, &problems), 1, "verify reports one problem");
		p = find_problem(&problems, 2, -1);
		ok(p != NULL && p->code == SB_ECORRUPT && p->file == NULL,
		   "the problem is about stripe 2 as a whole");
		if (p != NULL)
			like(p->message, "truncated", "the problem says truncated");
		th_free_problems(&problems);

		a = sb_archive_open(location, &err);
		done = a != NULL && sb_archive_plan(a, &plan, &err);
		ok(done && plan.stripes[0].present && !plan.stripes[1].present && plan.stripes[2].present,
		   "plan shows stripe 2 as not present");
		sb_archive_close(a);
		sb_manifest_free(m);
		th_fixture_done(&f);
	}
}

void
test_corruption_truncated_stripe(void)
{
	th_each_driver(corruption_truncated_stripe, NULL);
}

/* 8b. A missing stripe; then found again in another folder. */
static void
corruption_missing_stripe(const ThDriver *d, void *arg)
{
	ThFixture	f;
	SbManifest *m;
	ThProblems	problems;
	const ThProblem *p;
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	SbRestoreOptions ro;
	char		stripe[PATH_MAX];
	char		moved[PATH_MAX];
	char		elsewhere[PATH_MAX];
	char		location[PATH_MAX];
	bool		done;

	th_fixture(&f, "missing", 3);
	th_driver_dests(d, &f, "missing");
	m = make_backup(&f, 3, SB_CODEC_ZSTD, "bk");
	th_stripe_path(&f, 2, "bk", stripe);
	/* Elsewhere on the same driver: a folder beside the destinations, another prefix. */
	if (d->s3)
		th_path(elsewhere, "s3://" TH_S3_BUCKET "/%s/missing/elsewhere", d->prefix);
	else
	{
		th_path(elsewhere, "%s/elsewhere", f.root);
		th_mkdir(elsewhere, 0755);
	}
	th_path(moved, "%s/stripe-2.sbs", elsewhere);
	ok(th_dest_move(stripe, moved), "stripe 2 moved away");
	th_location(&f, 2, "bk", location);

	done = th_restore(location, f.target, &err);
	ok(!done, "restore without stripe 2 fails");
	is_int(err.code, SB_ENOTFOUND, "the error is not-found");
	like(err.message, "stripe 2 ", "the error names stripe 2");
	like(err.message, stripe, "the error names where stripe 2 was looked for");
	ok(!th_exists(f.target), "the new target was removed");

	is_int(verify_collect(location, &problems), 1, "verify reports one problem");
	p = find_problem(&problems, 2, -1);
	ok(p != NULL && p->code == SB_ENOTFOUND, "the problem is stripe 2 not found");
	if (p != NULL)
		like(p->message, "stripe 2 ", "the problem message names stripe 2");
	th_free_problems(&problems);

	a = sb_archive_open(location, &err);
	done = a != NULL && sb_archive_plan(a, &plan, &err);
	ok(done && plan.stripes[0].present && !plan.stripes[1].present && plan.stripes[2].present,
	   "plan shows stripe 2 as not present");

	/* Told where it is now, the restore works. */
	th_path(moved, "%s", elsewhere);
	done = a != NULL && sb_archive_set_stripe_dir(a, 2, moved, &err);
	ok(done, "stripe 2's folder can be given");
	ok(a != NULL && !sb_archive_set_stripe_dir(a, 4, moved, &err) && err.code == SB_EINVAL,
	   "stripe 4 of 3 is refused");
	memset(&ro, 0, sizeof(ro));
	ro.target = f.target;
	done = done && sb_archive_restore(a, &ro, &err);
	if (!ok(done, "restore with stripe 2 found elsewhere succeeds"))
		th_diag_error("restore", &err);
	ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME), "restored tree equals the source");
	sb_archive_close(a);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_corruption_missing_stripe(void)
{
	th_each_driver(corruption_missing_stripe, NULL);
}

static void
put_le64(uint8_t *p, uint64_t v)
{
	int			i;

	for (i = 0; i < 8; i++)
		p[i] = (uint8_t) (v >> (8 * i));
}

/* Rewrite bytes [OFFSET, OFFSET+LEN) of the header of STRIPE, resealing it if asked. */
static bool
patch_header(const char *stripe, size_t offset, const uint8_t *bytes, size_t len, bool reseal)
{
	uint8_t		h[SB_STRIPE_HEADER_SIZE];
	int			fd = open(stripe, O_RDWR);
	bool		done;

	done = fd >= 0 && pread(fd, h, sizeof(h), 0) == sizeof(h);
	if (done)
	{
		memcpy(h + offset, bytes, len);
		if (reseal)
			put_le64(h + SB_STRIPE_HEADER_SIZE - 8, XXH3_64bits(h, SB_STRIPE_HEADER_SIZE - 8));
		done = pwrite(fd, h, sizeof(h), 0) == sizeof(h);
	}
	if (fd >= 0)
		close(fd);
	return done;
}

/*
 * Manifest copies of another major version are refused naming both
 * versions; with one such copy of two, the other is used (and a note says
 * why the first was set aside).
 */
static void
manifest_version_refused(ThFixture *f, const char *version)
{
	char		location[PATH_MAX];
	char		paths[2][PATH_MAX];
	char		edited[64];
	SbArchive  *a;
	SbError		err;
	uint32_t	d;
	bool		done = true;

	snprintf(edited, sizeof(edited), "\"format_version\":\"%s\"", version);
	for (d = 0; d < 2; d++)
		done = done && th_edit_file(th_path(paths[d], "%s/bk/manifest.json", f->dest[d]),
									"\"format_version\":\"3.0\"", edited);
	ok(done, "both manifest copies' format_version set to %s", version);
	a = sb_archive_open(th_location(f, 0, "bk", location), &err);
	ok(a == NULL, "an archive whose manifest is version %s is refused", version);
	is_int(err.code, SB_EVERSION, "the error is version");
	like(err.message, version, "the error names the version %s", version);
	like(err.message, "reads 2.x to 3.x", "and the version this program reads");
	sb_archive_close(a);
	ok(th_edit_file(paths[1], edited, "\"format_version\":\"3.0\""),
	   "destination 2's copy put back");
	a = sb_archive_open(location, &err);
	ok(a != NULL && a->nnotes == 1, "opened from destination 1, destination 2's copy is used");
	if (a != NULL && a->nnotes == 1)
		like(a->notes[0], version, "a note says destination 1's copy is version %s", version);
	sb_archive_close(a);
	ok(th_edit_file(paths[0], edited, "\"format_version\":\"3.0\""),
	   "destination 1's copy put back");
}

/* Stripe 1's header says MAJOR.0, resealed: refused, naming both versions. */
static void
stripe_version_refused(ThFixture *f, const char *stripe, uint8_t major)
{
	const uint8_t version[2] = {major, 0};
	char		location[PATH_MAX];
	char		name[16];
	ThProblems	problems;
	const ThProblem *p;
	SbError		err;
	bool		done;

	snprintf(name, sizeof(name), "%u.%u", major, SB_FORMAT_MINOR);
	th_location(f, 1, "bk", location);
	ok(patch_header(stripe, 8, version, 2, true), "stripe 1 header major set to %u", major);
	done = th_restore(location, f->target, &err);
	ok(!done, "restore with a version %s stripe fails", name);
	is_int(err.code, SB_EVERSION, "the error is version");
	like(err.message, name, "the error names the stripe's version %s", name);
	like(err.message, "reads 2.x)", "and the version this program reads");
	like(err.message, "stripe 1 ", "the error names stripe 1");
	ok(!th_exists(f->target), "the new target was removed");
	is_int(verify_collect(location, &problems), 1, "verify reports one problem");
	p = find_problem(&problems, 1, -1);
	ok(p != NULL && p->code == SB_EVERSION, "the problem is stripe 1's version");
	th_free_problems(&problems);
}

/* 8c. Other format versions, newer and older, in the manifest and in a stripe header. */
void
test_corruption_versions(void)
{
	ThFixture	f;
	SbManifest *m;
	SbError		err;
	char		location[PATH_MAX];
	char		stripe[PATH_MAX];
	uint8_t		original[SB_STRIPE_HEADER_SIZE];
	static const uint8_t major3[2] = {3, 0};
	static const uint8_t odd_size[1] = {0x11};
	int			fd;
	bool		done;

	th_fixture(&f, "version", 2);
	m = make_backup(&f, 2, SB_CODEC_NONE, "bk");
	manifest_version_refused(&f, "4.0");
	manifest_version_refused(&f, "1.0");

	th_stripe_path(&f, 1, "bk", stripe);
	th_location(&f, 1, "bk", location);
	fd = open(stripe, O_RDONLY);
	done = fd >= 0 && pread(fd, original, sizeof(original), 0) == sizeof(original);
	if (fd >= 0)
		close(fd);
	ok(done, "stripe 1's header read");
	stripe_version_refused(&f, stripe, 3);
	stripe_version_refused(&f, stripe, 1);

	/* The same without resealing: still refused. */
	ok(patch_header(stripe, 0, original, sizeof(original), false) &&
	   patch_header(stripe, 8, major3, 2, false), "stripe 1 header major set to 3, seal left");
	done = th_restore(location, f.target, &err);
	ok(!done && (err.code == SB_EVERSION || err.code == SB_ECORRUPT),
	   "restore refuses it [%s] %s", sb_error_code_name(err.code), err.message);

	/* Another header field changed without resealing: the seal catches it. */
	ok(patch_header(stripe, 0, original, sizeof(original), false) &&
	   patch_header(stripe, 40, odd_size, 1, false), "stripe 1 header chunk size changed");
	done = th_restore(location, f.target, &err);
	ok(!done && err.code == SB_ECORRUPT, "restore refuses a header that fails its seal");
	like(err.message, "checksum", "the error says checksum");
	like(err.message, "stripe 1 ", "the error names stripe 1");

	/* Put back, all is well again. */
	ok(patch_header(stripe, 0, original, sizeof(original), false), "stripe 1 header restored");
	is_int(th_verify(location), 0, "verify finds no problem");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/* Write TEXT back as the manifest, then put FROM -> TO into it. */
static bool
edit_manifest(const char *manifest, const char *text, const char *from, const char *to)
{
	return th_write_file(manifest, text, strlen(text), 0600) &&
		th_edit_file(manifest, from, to);
}

/* 8d. Manifest paths that lead outside the target. */
void
test_corruption_unsafe_paths(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbError		err;
	SbArchive  *a;
	char		path[PATH_MAX];
	char		outside[PATH_MAX];
	char		location[PATH_MAX];
	char		manifest[PATH_MAX];
	char		abs_path[PATH_MAX + 32];
	struct stat passwd_before;
	struct stat passwd_after;
	uint8_t    *pristine;
	size_t		len;
	size_t		k;
	bool		done;

	th_fixture(&f, "unsafe", 1);
	stat("/etc/passwd", &passwd_before);
	th_path(outside, "%s/outside", f.root);
	done = th_mkdir(outside, 0755) &&
		th_mkdir(th_path(path, "%s/dir", f.src), 0755) &&
		th_write_pattern(th_path(path, "%s/dir/victim", f.src), 5000, 1, false, 0644) &&
		th_write_pattern(th_path(path, "%s/other", f.src), 100, 2, false, 0644) &&
		th_mkdir(th_path(path, "%s/pg_tblspc", f.src), 0700) &&
		symlink(outside, th_path(path, "%s/pg_tblspc/1", f.src)) == 0;
	th_options(&o, f.dests, 1, "bk");
	o.chunk_size = 4096;
	done = done && th_backup_tree(&o, f.src, NULL, &err);
	if (!ok(done, "backup with a link to a folder outside succeeds"))
		th_diag_error("backup", &err);
	th_location(&f, 0, "bk", location);
	th_path(manifest, "%s/manifest.json", location);
	pristine = th_read_file(manifest, &len);
	snprintf(abs_path, sizeof(abs_path), "\"path\":\"%s/victim\"", outside);

	{
		const struct
		{
			const char *from;
			const char *to;
			const char *what;
			const char *expect;
		}			cases[] = {
			{"\"path\":\"dir/victim\"", "\"path\":\"/etc/passwd\"", "absolute path /etc/passwd",
			"unsafe path"},
			{"\"path\":\"dir/victim\"", abs_path, "absolute path into a folder outside",
			"unsafe path"},
			{"\"path\":\"dir/victim\"", "\"path\":\"../escaped\"", "path ../escaped",
			"unsafe path"},
			{"\"path\":\"dir/victim\"", "\"path\":\"dir/../../escaped\"", "path dir/../../escaped",
			"unsafe path"},
			{"\"path\":\"dir/victim\"", "\"encoded_path\":\"2e2e2f65736361706564\"",
			"hex-encoded path ../escaped", "unsafe path"},
			{"\"path\":\"dir\"", "\"path\":\"..\"", "a folder named ..", "unsafe path"},
			{"\"path\":\"dir/victim\"", "\"path\":\"pg_tblspc/1/victim\"", "a file under a link",
			"not a directory"},
		};

		for (k = 0; pristine != NULL && k < sizeof(cases) / sizeof(cases[0]); k++)
		{
			bool		edited = edit_manifest(manifest, (const char *) pristine, cases[k].from,
											   cases[k].to);

			ok(edited, "%s: manifest edited", cases[k].what);
			a = sb_archive_open(location, &err);
			ok(a == NULL, "%s: archive refused", cases[k].what);
			if (a == NULL)
			{
				is_int(err.code, SB_ECORRUPT, "%s: the error is corrupt", cases[k].what);
				like(err.message, cases[k].expect, "%s: the error says %s", cases[k].what,
					 cases[k].expect);
			}
			else if (k > 0)
			{
				/* Never restore a manifest naming /etc/passwd, even if it opened. */
				SbRestoreOptions ro;

				memset(&ro, 0, sizeof(ro));
				ro.target = f.target;
				sb_archive_restore(a, &ro, &err);
			}
			sb_archive_close(a);
			ok(th_count_entries(outside) == 0 &&
			   !th_exists(th_path(path, "%s/escaped", f.root)) && !th_exists(f.target),
			   "%s: nothing written outside the target, nor the target", cases[k].what);
			th_rmtree(f.target);
		}
	}
	/* The pristine manifest restores, link and all, and still writes nothing outside. */
	done = pristine != NULL && th_write_file(manifest, pristine, len, 0600) &&
		th_restore(location, f.target, &err);
	if (!ok(done, "the unedited archive restores"))
		th_diag_error("restore", &err);
	ok(done && th_trees_equal(f.src, f.target, TH_CMP_MTIME), "restored tree equals the source");
	ok(th_count_entries(outside) == 0, "the folder the link points to is still empty");
	ok(stat("/etc/passwd", &passwd_after) != 0 ||
	   (passwd_after.st_mtime == passwd_before.st_mtime &&
		passwd_after.st_size == passwd_before.st_size &&
		passwd_after.st_ino == passwd_before.st_ino), "/etc/passwd is untouched");
	free(pristine);
	th_fixture_done(&f);
}

/* 8e. A restore target that is not empty, or not a folder. */
void
test_corruption_target_not_empty(void)
{
	ThFixture	f;
	SbManifest *m;
	SbError		err;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	size_t		len = 0;
	uint8_t    *kept;
	bool		done;

	th_fixture(&f, "notempty", 2);
	m = make_backup(&f, 2, SB_CODEC_ZSTD, "bk");
	th_location(&f, 1, "bk", location);
	th_mkdir(f.target, 0755);
	th_write_file(th_path(path, "%s/keep", f.target), "precious", 8, 0600);

	done = th_restore(location, f.target, &err);
	ok(!done, "restore into a folder that is not empty fails");
	is_int(err.code, SB_EEXIST, "the error is exists");
	like(err.message, "not empty", "the error says not empty");
	like(err.message, f.target, "the error names the target");
	kept = th_read_file(path, &len);
	ok(kept != NULL && len == 8 && memcmp(kept, "precious", 8) == 0 &&
	   th_count_entries(f.target) == 1, "the folder's content is untouched");
	free(kept);

	/* A target that is a file. */
	th_rmtree(f.target);
	th_write_file(f.target, "x", 1, 0600);
	done = th_restore(location, f.target, &err);
	ok(!done && err.code != SB_OK, "restore onto a regular file fails [%s] %s",
	   sb_error_code_name(err.code), err.message);
	kept = th_read_file(f.target, &len);
	ok(kept != NULL && len == 1 && kept[0] == 'x', "the file is untouched");
	free(kept);
	unlink(f.target);

	/* A hidden file is content too. */
	th_mkdir(f.target, 0755);
	th_write_file(th_path(path, "%s/.hidden", f.target), "", 0, 0600);
	done = th_restore(location, f.target, &err);
	ok(!done && err.code == SB_EEXIST && th_exists(path),
	   "a folder holding only a hidden file is not empty either");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/* A stripe from another backup of the same name, and a stripe in the wrong place. */
static void
corruption_foreign_stripe(const ThDriver *d, void *arg)
{
	ThFixture	f;
	ThFixture	other;
	SbManifest *m;
	SbManifest *m2;
	ThProblems	problems;
	const ThProblem *p;
	SbError		err;
	char		stripe2[PATH_MAX];
	char		from[PATH_MAX];
	char		location[PATH_MAX];
	size_t		len;
	uint8_t    *saved;
	bool		done;

	th_fixture(&f, "foreign", 3);
	th_fixture(&other, "foreign-other", 3);
	th_driver_dests(d, &f, "foreign");
	th_driver_dests(d, &other, "foreign-other");
	m = make_backup(&f, 3, SB_CODEC_NONE, "bk");
	m2 = make_backup(&other, 3, SB_CODEC_NONE, "bk");
	th_stripe_path(&f, 2, "bk", stripe2);
	saved = th_dest_read(th_stripe_path(&f, 1, "bk", from), &len);
	th_location(&f, 0, "bk", location);

	/* Same name, same layout, another backup. */
	ok(th_dest_move(th_stripe_path(&other, 2, "bk", from), stripe2),
	   "stripe 2 replaced by stripe 2 of another backup");
	done = th_restore(location, f.target, &err);
	ok(!done && err.code == SB_ECORRUPT, "restore refuses it");
	like(err.message, "stripe 2 ", "the error names stripe 2");
	like(err.message, "another backup", "the error says it belongs to another backup");
	ok(!th_exists(f.target), "the new target was removed");
	is_int(verify_collect(location, &problems), 1, "verify reports one problem");
	p = find_problem(&problems, 2, -1);
	ok(p != NULL && p->code == SB_ECORRUPT, "the problem is about stripe 2");
	th_free_problems(&problems);

	/* Stripe 1 of this backup, copied where stripe 2 belongs. */
	ok(saved != NULL && th_dest_write(stripe2, saved, len), "stripe 1 copied over stripe 2");
	done = th_restore(location, f.target, &err);
	ok(!done && err.code == SB_ECORRUPT, "restore refuses it");
	like(err.message, "is stripe 1 of 3, expected stripe 2 of 3", "the error says which is which");
	ok(!th_exists(f.target), "the new target was removed");

	free(saved);
	sb_manifest_free(m);
	sb_manifest_free(m2);
	th_fixture_done(&f);
	th_fixture_done(&other);
}

void
test_corruption_foreign_stripe(void)
{
	th_each_driver(corruption_foreign_stripe, NULL);
}
