/*
 * test_degraded_read.c
 *		Restores of a backup with redundancy with stripes lost, through the
 *		group assembler (group_assembler.h): each destination lost in turn,
 *		two over five, a lost stripe beside a damaged one (the fallback), a
 *		window of two files (th_restore restores that way too), verify.
 *		Both run once per store driver (drivers.h): stripes in local
 *		folders, then in prefixes of a bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers.h"
#include "harness.h"
#include "tests.h"

/* Several blocks of groups (16 kB chunks), a short last block, files of every size. */
static void
make_tree(const ThFixture *f)
{
	char		path[PATH_MAX];
	int			i;

	th_write_pattern(th_path(path, "%s/big", f->src), 3 * 1024 * 1024 + 12345, 1, true, 0644);
	th_write_pattern(th_path(path, "%s/random", f->src), 1024 * 1024 + 777, 2, false, 0644);
	for (i = 0; i < 40; i++)
		th_write_pattern(th_path(path, "%s/small%d", f->src, i), (size_t) i * 997 + 1, (uint32_t) i, i % 2, 0644);
}

static bool
backup(const ThDriver *d, ThFixture *f, uint32_t ndests, uint32_t redundancy, const char *tag)
{
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	bool		done;

	th_fixture(f, tag, ndests);
	th_driver_dests(d, f, tag);
	make_tree(f);
	th_options(&o, f->dests, ndests, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.chunk_size = 16 * 1024;
	o.redundancy = redundancy;
	done = th_backup_tree(&o, f->src, &m, &err);
	if (!done)
		th_diag_error("backup", &err);
	sb_manifest_free(m);
	return done;
}

/* Stripe NUMBER moved away (LOST) or back. */
static void
lose(const ThFixture *f, uint32_t number, bool lost)
{
	char		path[PATH_MAX];
	char		away[PATH_MAX];

	th_stripe_path(f, number, "bk", path);
	th_path(away, "%s.away", path);
	if (!(lost ? th_dest_move(path, away) : th_dest_move(away, path)))
		th_diag("could not move stripe %u", number);
}

/* Restore and verify with what is lost now: the tree restored, verify finds PROBLEMS (each made up for). */
static void
restores(const ThFixture *f, const char *what, long problems)
{
	char		location[PATH_MAX];
	SbError		err;

	th_location(f, 0, "bk", location);
	th_rmtree(f->target);
	if (!ok(th_restore(location, f->target, &err) && th_trees_equal(f->src, f->target, 0),
			"%s: the restored tree equals the source", what))
		th_diag_error("restore", &err);
	is_int(th_verify(location), problems, "%s: verify finds each problem", what);
}

static void
degraded_read_each_lost(const ThDriver *d, void *arg)
{
	ThFixture	f;
	char		what[64];
	uint32_t	i;

	if (!ok(backup(d, &f, 4, 1, "degraded-each"), "1 over 4: backup succeeds"))
		return th_fixture_done(&f);
	/*
	 * In a bucket the first and the last only: which stripe is lost is the
	 * group assembler's arithmetic, the same whatever the driver; what the
	 * driver changes (an absent object, the rest read by ranges) each shows.
	 */
	for (i = 1; i <= 4; i += d->s3 ? 3 : 1)
	{
		snprintf(what, sizeof(what), "1 over 4, stripe %u lost", i);
		lose(&f, i, true);
		restores(&f, what, 1);
		lose(&f, i, false);
	}
	th_fixture_done(&f);
}

void
test_degraded_read_each_lost(void)
{
	th_each_driver(degraded_read_each_lost, NULL);
}

static void
degraded_read_two_over_five(const ThDriver *d, void *arg)
{
	ThFixture	f;
	char		path[PATH_MAX];

	if (!ok(backup(d, &f, 5, 2, "degraded-two"), "2 over 5: backup succeeds"))
		return th_fixture_done(&f);
	lose(&f, 3, true);
	restores(&f, "2 over 5, stripe 3 lost", 1);
	lose(&f, 5, true);
	restores(&f, "2 over 5, stripes 3 and 5 lost", 2);
	lose(&f, 5, false);
	/* a damaged record beside the lost stripe: its group falls back to reading through handles */
	th_stripe_path(&f, 2, "bk", path);
	ok(th_dest_flip_byte(path, 64 + 48 + 100, 0x40) && th_dest_flip_byte(path, 300000, 0x40),
	   "two bytes of stripe 2 flipped");
	restores(&f, "2 over 5, stripe 3 lost and stripe 2 damaged", 3);
	th_fixture_done(&f);
}

void
test_degraded_read_two_over_five(void)
{
	th_each_driver(degraded_read_two_over_five, NULL);
}
