/*
 * test_delta_frames.c
 *		A delta restore of a compressed backup (stripes 2.1, chunks in
 *		frames: format/frames.h, restore/delta_frames.c): pages changed here
 *		and there in a copy cost only the frames that hold them, read from
 *		the stripe, and the pages written; a damaged frame is never taken
 *		for the chunk's bytes.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/format.h"
#include "format/frames.h"
#include "restore/stripe_reader.h"
#include "harness.h"
#include "tests.h"

#define GUARD "global/pg_control"
#define PAGE 8192
#define MB (1024 * 1024)

/* Change page PAGENO of the copy's relation file. */
static bool
change_page(const ThFixture *f, uint32_t pageno, uint32_t seed)
{
	char		path[PATH_MAX];
	int			fd = open(th_path(path, "%s/base/1/rel", f->target), O_WRONLY);
	bool		done = fd >= 0 && th_pwrite_pattern(fd, (uint64_t) pageno * PAGE, PAGE, seed);

	if (fd >= 0)
		close(fd);
	return done;
}

/* The backup's table read whole, or its entries streamed (the compare's other path). */
static bool streamed;

/* The backup's frames: 0 for the default (stripebackup.frame_size). */
static uint32_t frame_size;

static bool
delta_restore(const ThFixture *f, SbRestoreStats *stats, SbError *err)
{
	return th_delta_restore(f, "full", streamed, stats, err);
}

/* Offset in stripe file PATH (of M) of chunk 0's payload, its frame table; 0 if it is not found. */
static uint64_t
first_table(const SbManifest *m, const char *path)
{
	SbStripeReader r;
	SbError		err;
	uint64_t	at = 0;
	uint64_t	k;

	if (!sb_stripe_open(&r, m, 0, path, NULL, &err))
		return 0;
	/* records are in the order the workers finished them, not by chunk */
	for (k = 0; k < r.nentries; k++)
		if (r.entries[k].chunk_id == 0)
			at = r.entries[k].offset + SB_CHUNK_HEADER_SIZE;
	sb_stripe_close(&r);
	return at;
}

static void
delta_frames_case(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbRestoreStats stats;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	uint64_t	table;
	bool		done;

	th_begin(streamed ? "delta restore: a compressed backup's chunks are read by the frames that differ (streamed)" :
			 frame_size ? "delta restore: a compressed backup's chunks in 16 kB frames, the frames that differ read" :
			 "delta restore: a compressed backup's chunks are read by the frames that differ");
	th_fixture(&f, "delta-frames", 1);
	ok(th_mkdir(th_path(path, "%s/base", f.src), 0700) && th_mkdir(th_path(path, "%s/base/1", f.src), 0700) &&
	   th_write_pattern(th_path(path, "%s/base/1/rel", f.src), 3 * MB, 1, true, 0600) &&
	   th_mkdir(th_path(path, "%s/global", f.src), 0700) &&
	   th_write_pattern(th_path(path, "%s/" GUARD, f.src), PAGE, 2, true, 0600),
	   "a source: a relation of 3 MB, and a guard");
	th_options(&o, f.dests, f.ndests, "full");
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = MB;
	o.frame_size = frame_size;
	ok(th_backup_tree(&o, f.src, &m, &err), "its backup, compressed, in 1 MB chunks");
	ok(th_restore(th_location(&f, 0, "full", location), f.target, &err), "restored once");
	ok(change_page(&f, 5, 11) && change_page(&f, 200, 12) && change_page(&f, 300, 13),
	   "a page of each of its chunks changed in the copy (and with them its time)");

	done = delta_restore(&f, &stats, &err);
	if (!ok(done, "the delta restore completes"))
		th_diag_error("delta", &err);
	ok(th_trees_equal(f.src, f.target, 0), "the copy is the backup's tree again, byte for byte");
	is_int((long long) stats.delta_patched, 3 * MB, "the three chunks of the changed file were read in part");
	ok(m && stats.delta_patch_read > 0 && stats.delta_patch_read * 4 < m->stripes[0].stored_bytes,
	   "by their frames that differ: %llu of %llu stored bytes read",
	   (unsigned long long) stats.delta_patch_read, (unsigned long long) (m ? m->stripes[0].stored_bytes : 0));
	is_int((long long) stats.delta_written, 4 * PAGE, "written: the three pages and the guard");

	/* a damaged frame, where the copy differs: not taken, the chunk read whole, the damage found */
	th_stripe_path(&f, 1, "full", path);
	table = m ? first_table(m, path) : 0;
	ok(table > 0, "the first chunk's frame table is in the stripe");
	ok(change_page(&f, 0, 14), "the first chunk's first page changed (in its first frame)");
	ok(th_flip_byte(path, table + sb_frame_table_len(MB / (frame_size ? frame_size : SB_FRAME_SIZE)) + 40, 0x10),
	   "a byte of its first frame flipped");
	ok(!delta_restore(&f, &stats, &err) && err.code == SB_ECORRUPT,
	   "the delta restore fails on the damage (%s)", err.message);
	ok(!th_exists(th_path(location, "%s/" GUARD, f.target)), "and the copy is left without its guard");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_delta_frames(void)
{
	streamed = false;
	delta_frames_case();
	streamed = true;
	delta_frames_case();
	streamed = false;
	frame_size = SB_FRAME_SIZE_LEAST;	/* a table larger than the default's */
	delta_frames_case();
	frame_size = 0;
}
