/*
 * test_restore_delta.c
 *		A delta restore (SbRestoreOptions.delta, restore_delta.c) into a
 *		target that holds an older copy: the result is the backup's tree,
 *		byte for byte, whatever the copy had (files changed, cut, grown,
 *		removed, added; a folder where a file was and the reverse; a link
 *		planted inside, never followed), only the chunks that differ are
 *		read; the guard file comes last; a failed delta leaves the copy
 *		without its guard; a chain is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

#define GUARD "global/pg_control"

/* The source: a big file of many chunks, small files, a guard, folders. */
static bool
make_source(const ThFixture *f)
{
	char		path[PATH_MAX];

	return th_mkdir(th_path(path, "%s/base", f->src), 0700) &&
		th_mkdir(th_path(path, "%s/base/1", f->src), 0700) &&
		th_mkdir(th_path(path, "%s/global", f->src), 0700) &&
		th_write_pattern(th_path(path, "%s/base/1/big", f->src), 40 * 65536 + 123, 1, false, 0600) &&
		th_write_pattern(th_path(path, "%s/base/1/small", f->src), 3000, 2, true, 0600) &&
		th_write_pattern(th_path(path, "%s/base/1/shrinks", f->src), 200000, 3, false, 0600) &&
		th_write_pattern(th_path(path, "%s/base/1/grows", f->src), 100000, 4, false, 0600) &&
		th_write_pattern(th_path(path, "%s/base/1/dir-in-copy", f->src), 5000, 5, true, 0600) &&
		th_mkdir(th_path(path, "%s/base/1/file-in-copy", f->src), 0700) &&
		th_write_pattern(th_path(path, "%s/" GUARD, f->src), 8192, 6, true, 0600);
}

/* What a day's changes and a careless hand did to the restored copy. */
static bool
age_copy(const ThFixture *f, const char *outside)
{
	char		path[PATH_MAX];
	char		planted[PATH_MAX];
	char		second[PATH_MAX];
	int			fd = open(th_path(path, "%s/base/1/big", f->target), O_WRONLY);
	bool		done = fd >= 0 && th_pwrite_pattern(fd, 7 * 65536 + 100, 5000, 77);

	if (fd >= 0)
		close(fd);
	return done &&
		truncate(th_path(path, "%s/base/1/shrinks", f->target), 100) == 0 &&
		truncate(th_path(path, "%s/base/1/grows", f->target), 300000) == 0 &&
		unlink(th_path(path, "%s/base/1/small", f->target)) == 0 &&
		th_write_pattern(th_path(path, "%s/base/1/extra", f->target), 9000, 8, true, 0600) &&
		th_mkdir(th_path(path, "%s/base/2", f->target), 0700) &&
		th_write_pattern(th_path(path, "%s/base/2/dropped", f->target), 9000, 9, true, 0600) &&
		unlink(th_path(path, "%s/base/1/dir-in-copy", f->target)) == 0 &&
		th_mkdir(path, 0700) &&
		th_write_pattern(th_path(path, "%s/base/1/dir-in-copy/x", f->target), 10, 1, true, 0600) &&
		rmdir(th_path(path, "%s/base/1/file-in-copy", f->target)) == 0 &&
		th_write_pattern(path, 10, 1, true, 0600) &&
		symlink(outside, th_path(planted, "%s/base/planted", f->target)) == 0 &&
		link(th_path(path, "%s/base/1/shrinks", f->target), th_path(second, "%s/linked", outside)) == 0;
}

/* How delta_restore opens the backup: its table whole, or streamed (a window of 2 files). */
static bool streamed_delta;

static bool
delta_restore(const ThFixture *f, const char *name, SbRestoreStats *stats, SbError *err)
{
	return th_delta_restore(f, name, streamed_delta, stats, err);
}

/* The estimate of a delta restore into TARGET, the backup at LOCATION streamed, is WANT? */
static bool
streamed_estimate_is(const char *location, const char *target, const SbDeltaEstimate *want)
{
	char		spool[PATH_MAX];
	SbError		err;
	SbArchive  *a;
	SbDeltaEstimate e;
	bool		same;

	th_tempdir(spool, "delta-estimate");
	a = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED, .spool_dir = spool}, &err);
	same = a != NULL && a->manifest->streamed != NULL && a->manifest->nentries == 0 &&
		sb_delta_estimate(a->manifest, target, NULL, 0, &e, &err) &&
		memcmp(&e, want, sizeof(e)) == 0;
	if (a == NULL)
		th_diag_error("open streamed", &err);
	sb_archive_close(a);
	th_rmtree(spool);
	return same;
}

static void
delta_restore_case(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbRestoreStats stats;
	SbManifest *m = NULL;
	SbError		err;
	char		outside[PATH_MAX];
	char		path[PATH_MAX];
	char		location[PATH_MAX];
	SbDeltaEstimate e;
	bool		done_estimate;
	bool		done;

	th_begin(streamed_delta ? "delta restore: a stale copy refreshed, only what differs read (the backup streamed)" :
			 "delta restore: a stale copy refreshed, only what differs read (its table read whole)");
	th_fixture(&f, "delta", 2);
	ok(make_source(&f), "a source tree");
	th_options(&o, f.dests, f.ndests, "full");
	o.detect_holes = false;
	if (streamed_delta)
		o.chunk_size = 8192;	/* hundreds of chunks: compared in several batches */
	ok(th_backup_tree(&o, f.src, &m, &err), "its backup");
	th_location(&f, 0, "full", location);
	ok(th_restore(location, f.target, &err), "restored once");
	th_path(outside, "%s/outside", f.root);
	ok(th_mkdir(outside, 0700) && th_write_pattern(th_path(path, "%s/keep", outside), 100, 1, true, 0600),
	   "a folder outside the copy");
	ok(age_copy(&f, outside), "the copy aged: changed, cut, grown, removed, added, retyped, a link planted");
	/* a change that kept the file's time (within its second, or a careless copy): compared first */
	ok(m && th_set_mtime(th_path(path, "%s/base/1/big", f.target), th_find_entry(m, "base/1/big")->mtime),
	   "the changed big file keeps the backup's time");

	done_estimate = m && sb_delta_estimate(m, f.target, NULL, 0, &e, &err);
	ok(done_estimate && e.files_new == 2 && e.files_differ >= 2 && e.files_same + e.files_differ == 4,
	   "the estimate, from sizes and times: files cut or grown expected to differ, 2 not there");
	ok(done_estimate && e.compare_first + e.stripe_read[0] + e.stripe_read[1] == m->stream_bytes &&
	   e.compare_first > 0 && e.compare_first <= e.bytes_same && e.stripe_read[0] > 0 && e.stripe_read[1] > 0,
	   "every chunk is either compared first (%llu bytes) or read from its stripe",
	   (unsigned long long) e.compare_first);
	ok(done_estimate && streamed_estimate_is(location, f.target, &e),
	   "the same estimate from the backup's entries streamed (no file table)");
	done = delta_restore(&f, "full", &stats, &err);
	if (!ok(done, "the delta restore completes"))
		th_diag_error("delta", &err);
	ok(th_trees_equal(f.src, f.target, 0), "the copy is the backup's tree again, byte for byte");
	ok(th_exists(th_path(path, "%s/keep", outside)), "nothing outside the copy was touched");
	{
		struct stat st;

		ok(stat(th_path(path, "%s/linked", outside), &st) == 0 && st.st_size == 100,
		   "not even a file that had a second name in the copy (it was replaced, not written through)");
	}
	ok(!th_exists(th_path(path, "%s/" GUARD ".stripebackup-delta", f.target)),
	   "the guard's temporary name is gone");
	ok(m && stats.delta_compared > stats.delta_held && stats.delta_compared < m->stream_bytes,
	   "the chunks of files with the backup's size and time were compared (%llu bytes), not those of others",
	   (unsigned long long) stats.delta_compared);
	/* the estimate counts the guard's chunk (8 kB chunks: the guard's alone), which is always written */
	ok(stats.delta_compared <= e.compare_first &&
	   e.compare_first - stats.delta_compared <= (streamed_delta ? 8192 : 0) &&
	   stats.delta_compare_seconds > 0,
	   "as the estimate said, and the time it took is measured");
	ok(m && stats.delta_held > m->stream_bytes / 2 && stats.delta_held < m->stream_bytes,
	   "most of it was held by the copy, and not read (%llu of %llu bytes)",
	   (unsigned long long) stats.delta_held, (unsigned long long) (m ? m->stream_bytes : 0));
	ok(stats.delta_removed >= 6, "what the backup lacks was removed (%llu entries)",
	   (unsigned long long) stats.delta_removed);
	ok(m && stats.delta_written > 0 && stats.delta_written < m->stream_bytes - stats.delta_held,
	   "of the chunks read, only the blocks that differ were written (%llu bytes)",
	   (unsigned long long) stats.delta_written);

	done = delta_restore(&f, "full", &stats, &err);
	ok(done && m && stats.delta_held + 65536 >= m->stream_bytes && stats.delta_held < m->stream_bytes &&
	   stats.delta_removed == 1,
	   "again: everything held but the guard's chunk, written again (%llu of %llu bytes held, %llu removed)",
	   (unsigned long long) stats.delta_held, (unsigned long long) (m ? m->stream_bytes : 0),
	   (unsigned long long) stats.delta_removed);

	th_rmtree(f.target);
	ok(delta_restore(&f, "full", &stats, &err) && th_trees_equal(f.src, f.target, 0) &&
	   stats.delta_held == 0, "into an absent target: a whole restore");

	/* damage a chunk the copy does not hold: the delta fails and the copy cannot start */
	ok(truncate(th_path(path, "%s/base/1/big", f.target), 1000) == 0, "the copy's big file cut");
	ok(th_flip_byte(th_stripe_path(&f, 1, "full", path), 4096, 0x01) &&
	   th_flip_byte(th_stripe_path(&f, 2, "full", path), 4096, 0x01), "a byte of each stripe flipped");
	ok(!delta_restore(&f, "full", &stats, &err), "the delta restore fails");
	ok(!th_exists(th_path(path, "%s/" GUARD, f.target)) &&
	   !th_exists(th_path(path, "%s/" GUARD ".stripebackup-delta", f.target)),
	   "the copy is left without its guard file: it cannot start");
	ok(th_exists(th_path(path, "%s/base/1/grows", f.target)), "and the rest of the copy is still there");
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/* The case above with the backup's table read whole, then with it streamed. */
void
test_delta_restore(void)
{
	streamed_delta = false;
	delta_restore_case();
	streamed_delta = true;
	delta_restore_case();
	streamed_delta = false;
}

/*
 * A page changed in the copy costs a page written, wherever the chunk
 * boundaries cut its file: a small file packed first puts every later piece
 * of the big one off the pages' grid.
 */
static void
delta_writes_pages_case(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbRestoreStats stats;
	SbError		err;
	char		path[PATH_MAX];
	int			fd;
	bool		done;

	th_begin(streamed_delta ? "delta restore: a changed page is written as one page (the backup streamed)" :
			 "delta restore: a changed page is written as one page (its table read whole)");
	th_fixture(&f, "delta-pages", 1);
	ok(th_mkdir(th_path(path, "%s/base", f.src), 0700) &&
	   th_write_pattern(th_path(path, "%s/base/a", f.src), 3000, 1, false, 0600) &&
	   th_write_pattern(th_path(path, "%s/base/b", f.src), 40 * 8192, 2, false, 0600) &&
	   th_mkdir(th_path(path, "%s/global", f.src), 0700) &&
	   th_write_pattern(th_path(path, "%s/" GUARD, f.src), 8192, 3, false, 0600),
	   "a source: a small file, then one of 40 pages");
	th_options(&o, f.dests, f.ndests, "full");
	o.workers = 1;				/* packed in order: the small file's 3,000 bytes first */
	ok(th_backup_tree(&o, f.src, NULL, &err) && th_restore(th_location(&f, 0, "full", path), f.target, &err),
	   "backed up and restored");
	fd = open(th_path(path, "%s/base/b", f.target), O_WRONLY);
	ok(fd >= 0 && th_pwrite_pattern(fd, 20 * 8192, 8192, 99), "page 20 of the copy's big file changed");
	if (fd >= 0)
		close(fd);
	done = delta_restore(&f, "full", &stats, &err);
	if (!ok(done, "the delta restore completes"))
		th_diag_error("delta", &err);
	ok(th_trees_equal(f.src, f.target, 0), "the copy is the backup's tree again");
	is_int((long long) stats.delta_written, 2 * 8192,
		   "written: that page and the guard, nothing else");
	th_fixture_done(&f);
}

void
test_delta_writes_pages(void)
{
	streamed_delta = false;
	delta_writes_pages_case();
	streamed_delta = true;
	delta_writes_pages_case();
	streamed_delta = false;
}

/*
 * A plain restore's time from the stripes' read speeds: from restores, or
 * before any from stripe_calibrate, said per stripe and for the whole.
 */
void
test_plan_estimate(void)
{
	static const double speeds[2] = {100, 50};
	static const SbEstimateFrom mixed[2] = {SB_ESTIMATE_RESTORE, SB_ESTIMATE_CALIBRATION};
	static const SbEstimateFrom measured[2] = {SB_ESTIMATE_RESTORE, SB_ESTIMATE_RESTORE};
	static const double one_unknown[2] = {100, 0};
	const SbRestoreCosts restored = {0.001, 1e-9, 0, 1, 0};
	const SbRestoreCosts sampled_slow_cpu = {0.001, 1e-9, 2e-8, 2, 0};	/* 400 MB x 20 ns / 2: 4 s */
	const SbRestoreCosts sampled_fast_cpu = {0.001, 1e-9, 1e-9, 2, 0};	/* 0.2 s: under the slowest stripe */
	const SbRestoreCosts cpu_only = {-1, -1, 2e-8, 2, 0};
	const SbRestoreCosts slow_device = {0.001, 0, 1e-9, 2, 1.25e-8};	/* 400 MB x 12.5 ns: 5 s */
	SbPlan		plan;

	th_begin("plan: a restore's time from read speeds, and where they came from");
	memset(&plan, 0, sizeof(plan));
	plan.nstripes = 2;
	plan.files = 1000;
	plan.raw_bytes = 400000000;
	plan.stripes[0].stored_bytes = 200000000;	/* 2 s at 100 MB/s */
	plan.stripes[1].stored_bytes = 150000000;	/* 3 s at 50 MB/s */
	sb_plan_estimate(&plan, speeds, measured, &restored);
	ok(plan.estimated_seconds > 4.3999 && plan.estimated_seconds < 4.4001 &&
	   plan.estimate_from == SB_ESTIMATE_RESTORE,
	   "measured by restores: the slowest stripe and the fixed parts (%.4f s), from restores",
	   plan.estimated_seconds);
	sb_plan_estimate(&plan, speeds, mixed, NULL);
	ok(plan.estimated_seconds > 2.9999 && plan.estimated_seconds < 3.0001 && plan.fixed_seconds < 0,
	   "one stripe calibrated, no restore yet: the slowest stripe alone, fixed parts unknown (%.4f s)",
	   plan.estimated_seconds);
	is_str(sb_estimate_from_name(plan.stripes[1].estimate_from), "calibration",
		   "the calibrated stripe says so");
	is_str(sb_estimate_from_name(plan.stripes[0].estimate_from), "restore", "the other its restore");
	is_str(sb_estimate_from_name(plan.estimate_from), "calibration", "and the whole, calibration");
	sb_plan_estimate(&plan, speeds, mixed, &sampled_slow_cpu);
	ok(plan.estimated_seconds > 5.3999 && plan.estimated_seconds < 5.4001 &&
	   plan.stripes[1].estimated_seconds > 2.9999 && plan.stripes[1].estimated_seconds < 3.0001,
	   "a sample's CPU per byte over its CPUs slower than the stripes: that, plus the fixed parts "
	   "(%.4f s); each stripe still its read (%.4f s)", plan.estimated_seconds,
	   plan.stripes[1].estimated_seconds);
	sb_plan_estimate(&plan, speeds, mixed, &sampled_fast_cpu);
	ok(plan.estimated_seconds > 4.3999 && plan.estimated_seconds < 4.4001,
	   "faster than the slowest stripe: the stripe (%.4f s)", plan.estimated_seconds);
	sb_plan_estimate(&plan, speeds, mixed, &slow_device);
	ok(plan.estimated_seconds > 5.9999 && plan.estimated_seconds < 6.0001,
	   "a device that writes slower than the stripes read and the CPUs decode: its time, plus "
	   "the files (%.4f s)", plan.estimated_seconds);
	sb_plan_estimate(&plan, speeds, mixed, &cpu_only);
	ok(plan.estimated_seconds > 3.9999 && plan.estimated_seconds < 4.0001 && plan.fixed_seconds < 0,
	   "the CPU known, not the fixed parts: those left out (%.4f s)", plan.estimated_seconds);
	sb_plan_estimate(&plan, one_unknown, mixed, &restored);
	ok(plan.estimated_seconds < 0 && plan.estimate_from == SB_ESTIMATE_NONE &&
	   plan.stripes[1].estimated_seconds < 0 && sb_estimate_from_name(plan.stripes[1].estimate_from) == NULL,
	   "a stripe that holds data without a speed: no estimate");
	plan.stripes[1].stored_bytes = 0;
	sb_plan_estimate(&plan, one_unknown, mixed, &restored);
	ok(plan.estimated_seconds > 3.3999 && plan.estimated_seconds < 3.4001,
	   "unless it holds nothing (%.4f s)", plan.estimated_seconds);
	sb_plan_estimate(&plan, NULL, NULL, NULL);
	ok(plan.estimated_seconds < 0, "no speeds at all: no estimate");
}

/*
 * A restore of a sample of the backup, opened to plan as stripe_restore_plan
 * does, measures the costs a calibration leaves out, in a folder of its own
 * that it removes; a stripe it cannot read fails it, and the folder goes too.
 */
void
test_restore_sample(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbArchive  *a;
	SbReadOptions ro;
	SbRestoreSample sample;
	SbError		err;
	char		location[PATH_MAX];
	char		scratch[PATH_MAX];
	char		path[PATH_MAX];
	uint32_t	i;
	bool		done;

	th_begin("restore sample: what a restore costs here, measured on part of the backup");
	th_fixture(&f, "sample", 2);
	for (i = 0; i < 40; i++)
		th_write_pattern(th_path(path, "%s/file%02u", f.src, i), 100000 + 1000 * i, i, true, 0600);
	th_options(&o, f.dests, f.ndests, "sampled");
	o.codec = SB_CODEC_ZSTD;
	ok(th_backup_tree(&o, f.src, &m, &err), "a backup of 40 files, zstd");
	th_location(&f, 0, "sampled", location);
	th_path(scratch, "%s/scratch", f.root);
	th_mkdir(scratch, 0700);
	memset(&ro, 0, sizeof(ro));
	ro.workers = 2;
	a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS}, &err);
	done = a != NULL && sb_restore_sample(a, &ro, scratch, true, &sample, &err);
	if (!ok(done, "the sample restores"))
		th_diag_error("sample", &err);
	ok(done && sample.chunks == m->total_chunks && sample.raw_bytes == m->stream_bytes,
	   "a backup smaller than the sample is sampled whole: %llu chunks, %llu bytes",
	   (unsigned long long) sample.chunks, (unsigned long long) sample.raw_bytes);
	ok(done && sample.costs.cpu_per_byte > 0 && sample.costs.write_per_byte > 0 &&
	   sample.costs.finish_per_byte >= 0 &&
	   sample.costs.setup_per_file > 0 && sample.costs.cpus >= 1 && sample.costs.cpus <= 2 &&
	   sample.files == 1024,
	   "it measured CPU (%.2f ns a byte, over %u CPUs), the device's writing (%.2f ns a byte) "
	   "and the final sync's (%.2f ns a byte), and %u files (%.1f us each)",
	   sample.costs.cpu_per_byte * 1e9, sample.costs.cpus, sample.costs.write_per_byte * 1e9,
	   sample.costs.finish_per_byte * 1e9, sample.files, sample.costs.setup_per_file * 1e6);
	ok(done && sample.synced_files, "its files' share of the final sync counted, as asked");
	is_int(th_count_entries(scratch), 0, "and left nothing behind");
	done = a != NULL && sb_restore_sample(a, &ro, scratch, false, &sample, &err);
	ok(done && !sample.synced_files && sample.costs.setup_per_file > 0 &&
	   sample.costs.finish_per_byte == 0 && th_count_entries(scratch) == 0,
	   "not asked to sync the file system, it does not, and says so (%.1f us a file, nothing "
	   "at the end)", sample.costs.setup_per_file * 1e6);
	sb_archive_close(a);

	ok(unlink(th_stripe_path(&f, 2, "sampled", path)) == 0, "stripe 2 removed");
	a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS}, &err);
	done = a != NULL && sb_restore_sample(a, &ro, scratch, true, &sample, &err);
	ok(!done && err.code == SB_ENOTFOUND && strstr(err.message, "stripe 2 of 2") != NULL,
	   "a stripe missing fails the sample, naming it: %s", err.message);
	is_int(th_count_entries(scratch), 0, "and it leaves nothing behind either");
	sb_archive_close(a);
	th_path(path, "%s/none/deeper", f.root);
	a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS}, &err);
	ok(a != NULL && !sb_restore_sample(a, &ro, path, false, &sample, &err) && strstr(err.message, path) != NULL,
	   "a folder that is not there: %s", err.message);
	sb_archive_close(a);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

/* The delta restore's time from a plan: compare, the slowest stripe's share, the fixed parts. */
void
test_delta_plan_seconds(void)
{
	SbPlan		plan;
	SbDeltaEstimate e;
	double		t;

	th_begin("delta plan: the time of a delta restore, from the plan's figures");
	memset(&plan, 0, sizeof(plan));
	memset(&e, 0, sizeof(e));
	plan.nstripes = 2;
	plan.files = 10;
	plan.stripes[0].raw_bytes = plan.stripes[1].raw_bytes = 100000000;
	plan.stripes[0].estimated_seconds = 10;
	plan.stripes[1].estimated_seconds = 20;
	plan.fixed_seconds = 2;
	plan.estimated_seconds = 22;
	e.compare_first = 100000000;
	e.stripe_read[0] = 80000000;	/* 8 s of stripe 0's 10 */
	e.stripe_read[1] = 30000000;	/* 6 s of stripe 1's 20 */
	e.bytes_differ = 10000000;
	t = sb_delta_plan_seconds(&plan, &e, false, 100, 0.01, 1e-9);
	ok(t > 9.1099 && t < 9.1101, "0.1 s to create, 1 s to compare, 8 s to read, 0.01 s to finish: %.4f", t);
	ok(sb_delta_plan_seconds(&plan, &e, false, 0, 0.01, 1e-9) < 0,
	   "unknown while no delta restore measured how fast a copy is compared");
	ok(sb_delta_plan_seconds(&plan, &e, false, 100, -1, -1) < 0, "unknown without the fixed costs");
	plan.estimated_seconds = -1;
	ok(sb_delta_plan_seconds(&plan, &e, false, 100, 0.01, 1e-9) < 0, "unknown without the stripes' speeds");
	plan.estimated_seconds = 22;
	t = sb_delta_plan_seconds(&plan, &e, true, 0, 0.01, 1e-9);
	ok(t > 20.1099 && t < 20.1101, "a chain: every link read as a plain restore reads it (%.4f)", t);
	e.compare_first = 0;
	ok(sb_delta_plan_seconds(&plan, &e, false, 0, 0.01, 1e-9) > 0, "nothing to compare: no compare speed needed");
}
