/*
 * test_bitflip.c
 *		Never a silently wrong restore: every single-bit flip of a manifest.
 *
 * A small backup (two stripes, a dozen files, one empty, one spanning
 * chunks, a directory tree, a tablespace link; 4 KiB chunks, so the
 * manifest is a few KB).  For every bit of the manifest (or, past 40,000
 * bits, 10,000 chosen at random; SB_FLIP_COUNT sets the number):
 *
 *	(a) flipped in one copy and opened from that copy's folder, the archive is
 *		refused, or opened with the other copy, byte for byte the original;
 *		a sample of at least 300 of those (all with SB_FLIP_FULL=1, which
 *		takes long enough to need SB_UNIT_TIMEOUT raised) is restored and
 *		compared with the source: names, types, modes, sizes, contents, link
 *		targets and times;
 *	(b) flipped in every copy, it is refused.
 *
 * And edits an attacker makes in every copy without sealing the stripes
 * again: two paths swapped, a mode and a CRC changed.  The figures are
 * printed as TAP diagnostics.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/checksum.h"
#include "harness.h"
#include "tests.h"

#define ALL_BITS_UP_TO 40000
#define RANDOM_FLIPS 10000
#define MIN_RESTORES 300
#define MAX_FAILURES_SHOWN 5

typedef struct FlipFixture
{
	ThFixture	f;
	char		location[PATH_MAX];	/* destination 1's backup folder */
	char		copies[2][PATH_MAX];	/* both manifest copies */
	int			fds[2];			/* open on them, for flipping */
	uint8_t    *original;		/* the manifest as the backup wrote it */
	size_t		len;
	uint8_t		sha[SB_SHA256_LEN];
} FlipFixture;

typedef struct FlipCounts
{
	long		tried;
	long		refused;
	long		opened_good;	/* opened with the other, intact copy */
	long		restored_identical;
	long		wrong;			/* anything else: the test fails */
} FlipCounts;

/* The source: what a small cluster's data directory looks like. */
static bool
make_source(const char *src)
{
	static const struct
	{
		const char *path;
		size_t		size;		/* 0 with 'd': a directory */
		char		type;
	}			items[] = {
		{"PG_VERSION", 3, 'f'}, {"base", 0, 'd'}, {"base/1", 0, 'd'},
		{"base/1/1249", 20000, 'f'}, {"base/1/1259", 8192, 'f'}, {"base/1/PG_VERSION", 3, 'f'},
		{"base/5", 0, 'd'}, {"base/5/16384", 0, 'f'}, {"base/5/16385", 4096, 'f'},
		{"base/5/16385_fsm", 1000, 'f'}, {"global", 0, 'd'}, {"global/pg_control", 8192, 'f'},
		{"global/pg_filenode.map", 512, 'f'}, {"pg_tblspc", 0, 'd'}, {"pg_wal", 0, 'd'},
		{"pg_wal/000000010000000000000001", 12288, 'f'}, {"postgresql.auto.conf", 88, 'f'},
	};
	char		path[PATH_MAX];
	size_t		i;
	bool		done = true;

	for (i = 0; done && i < sizeof(items) / sizeof(items[0]); i++)
	{
		th_path(path, "%s/%s", src, items[i].path);
		done = items[i].type == 'd' ? th_mkdir(path, 0700) :
			th_write_pattern(path, items[i].size, (uint32_t) i, i % 3 == 0, 0600);
	}
	done = done && symlink("/nonexistent/sbunit/ts", th_path(path, "%s/pg_tblspc/16390", src)) == 0;
	for (i = sizeof(items) / sizeof(items[0]); done && i > 0; i--)
		done = th_set_mtime(th_path(path, "%s/%s", src, items[i - 1].path),
							1700000000 + (int64_t) i * 3600);
	return done && chmod(src, 0700) == 0 && th_set_mtime(src, 1700000000);
}

static bool
setup(FlipFixture *x)
{
	SbBackupOptions o;
	SbError		err;
	uint64_t	len;
	bool		done;

	memset(x, 0, sizeof(*x));
	x->fds[0] = x->fds[1] = -1;
	th_fixture(&x->f, "bitflip", 2);
	th_options(&o, x->f.dests, 2, "bk");
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.chunk_size = 4096;
	done = make_source(x->f.src) && th_backup_tree(&o, x->f.src, NULL, &err);
	if (!ok(done, "the backup to flip the manifest of succeeds"))
		th_diag_error("backup", &err);
	th_location(&x->f, 0, "bk", x->location);
	th_path(x->copies[0], "%s/manifest.json", x->location);
	th_path(x->copies[1], "%s/bk/manifest.json", x->f.dest[1]);
	x->original = done ? th_read_file(x->copies[0], &x->len) : NULL;
	done = x->original != NULL && th_file_sha256(x->copies[0], x->sha, &len);
	x->fds[0] = open(x->copies[0], O_RDWR);
	x->fds[1] = open(x->copies[1], O_RDWR);
	return ok(done && x->fds[0] >= 0 && x->fds[1] >= 0, "the manifest is %zu bytes, %zu bits",
			  x->len, x->len * 8);
}

static void
teardown(FlipFixture *x)
{
	if (x->fds[0] >= 0)
		close(x->fds[0]);
	if (x->fds[1] >= 0)
		close(x->fds[1]);
	free(x->original);
	th_fixture_done(&x->f);
}

/* Copy COPY holds the original with BIT flipped (or not). */
static bool
set_bit(FlipFixture *x, int copy, long bit, bool flipped)
{
	uint8_t		byte = x->original[bit / 8];

	if (flipped)
		byte ^= (uint8_t) (1u << (bit % 8));
	return pwrite(x->fds[copy], &byte, 1, bit / 8) == 1;
}

/* Which bits to flip: every one, or COUNT chosen at random (the same on every run). */
static long *
choose_bits(long nbits, long *count)
{
	const char *env = getenv("SB_FLIP_COUNT");
	long		wanted = env ? atol(env) : (nbits <= ALL_BITS_UP_TO ? nbits : RANDOM_FLIPS);
	long	   *bits;
	uint32_t	x = 0x2545F491u;
	long		i;

	if (wanted <= 0 || wanted > nbits)
		wanted = nbits;
	bits = malloc(sizeof(long) * (size_t) wanted);
	for (i = 0; bits != NULL && i < wanted; i++)
	{
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		bits[i] = wanted == nbits ? i : (long) (x % (uint32_t) nbits);
	}
	*count = wanted;
	return bits;
}

static void
show_wrong(FlipCounts *c, long bit, const char *what)
{
	if (c->wrong++ < MAX_FAILURES_SHOWN)
		diag("bit %ld (byte %ld): %s", bit, bit / 8, what);
}

/* (a) One copy flipped: refused, or the intact copy used. */
static bool
open_one_flipped(FlipFixture *x, long bit, FlipCounts *c)
{
	SbError		err;
	SbArchive  *a = sb_archive_open(x->location, &err);
	bool		good = false;

	c->tried++;
	if (a == NULL)
		c->refused++;
	else if (memcmp(a->manifest->json_sha256, x->sha, SB_SHA256_LEN) == 0 &&
			 a->manifest->json_length == x->len && a->authenticated && a->nnotes > 0)
	{
		c->opened_good++;
		good = true;
	}
	else
		show_wrong(c, bit, "opened with a manifest that is not the original");
	sb_archive_close(a);
	return good;
}

/* Restore what opened from the flipped copy's folder; it must be the source. */
static void
restore_one_flipped(FlipFixture *x, long bit, FlipCounts *c)
{
	SbError		err;

	if (th_restore(x->location, x->f.target, &err) &&
		th_trees_equal(x->f.src, x->f.target, TH_CMP_MTIME))
		c->restored_identical++;
	else
	{
		th_diag_error("restore", &err);
		show_wrong(c, bit, "the restore is not the source");
	}
	th_rmtree(x->f.target);
}

/* (b) Every copy flipped: refused at open, or at restore if it ever opened. */
static void
open_all_flipped(FlipFixture *x, long bit, FlipCounts *c)
{
	SbError		err;
	SbArchive  *a = sb_archive_open(x->location, &err);
	SbRestoreOptions ro;

	c->tried++;
	memset(&ro, 0, sizeof(ro));
	ro.target = x->f.target;
	if (a == NULL || !sb_archive_restore(a, &ro, &err))
		c->refused++;
	else
		show_wrong(c, bit, "flipped in every copy, it still restored");
	sb_archive_close(a);
	th_rmtree(x->f.target);
}

/* The flips that opened, thinned to an evenly spread sample (all when asked). */
static long
pick_sample(const long *bits, const bool *opened, long n, long *sample)
{
	const char *full = getenv("SB_FLIP_FULL");
	long		nopened = 0;
	long		stride;
	long		i,
				k = 0;

	for (i = 0; i < n; i++)
		nopened += opened[i];
	stride = (full != NULL && strcmp(full, "1") == 0) || nopened <= MIN_RESTORES ? 1 :
		nopened / MIN_RESTORES;
	for (i = 0; i < n; i++)
		if (opened[i] && nopened-- % stride == 0)
			sample[k++] = bits[i];
	return k;
}

/* Every bit of the manifest, flipped in one copy and then in both. */
void
test_bitflip_manifest(void)
{
	FlipFixture x;
	FlipCounts	one = {0},
				every = {0};
	long		count = 0,
				nsample,
				i;
	long	   *bits,
			   *sample;
	bool	   *opened;
	double		t0 = th_now();

	if (!setup(&x))
	{
		teardown(&x);
		return;
	}
	bits = choose_bits((long) x.len * 8, &count);
	opened = calloc((size_t) count + 1, sizeof(bool));
	sample = calloc((size_t) count + 1, sizeof(long));
	for (i = 0; bits != NULL && opened != NULL && i < count; i++)
	{
		set_bit(&x, 0, bits[i], true);
		opened[i] = open_one_flipped(&x, bits[i], &one);
		set_bit(&x, 1, bits[i], true);
		open_all_flipped(&x, bits[i], &every);
		set_bit(&x, 0, bits[i], false);
		set_bit(&x, 1, bits[i], false);
	}
	nsample = bits && opened && sample ? pick_sample(bits, opened, count, sample) : 0;
	for (i = 0; i < nsample; i++)
	{
		set_bit(&x, 0, sample[i], true);
		restore_one_flipped(&x, sample[i], &one);
		set_bit(&x, 0, sample[i], false);
	}
	diag("one copy flipped: flips tried %ld, refused %ld, opened the good copy %ld, restored identical %ld (of %ld restored)",
		 one.tried, one.refused, one.opened_good, one.restored_identical, nsample);
	diag("every copy flipped: flips tried %ld, refused %ld", every.tried, every.refused);
	is_int(one.tried, count, "%ld flips of one copy tried", count);
	is_int(one.wrong, 0, "each was refused, or opened with the intact copy (byte for byte the original)"
		   " and restored identical to the source");
	is_int(one.refused + one.opened_good, one.tried, "refused or opened the good copy, nothing else");
	ok(nsample >= MIN_RESTORES || nsample == one.opened_good,
	   "at least %d of them restored and compared (%ld)", MIN_RESTORES, nsample);
	is_int(every.refused, count, "flipped in every copy, all %ld flips are refused", count);
	ok(th_verify(x.location) == 0, "put back, the archive verifies clean");
	diag("%.1f s", th_now() - t0);
	free(bits);
	free(opened);
	free(sample);
	teardown(&x);
}

/* Put FROM -> TO into both copies. */
static bool
edit_both(FlipFixture *x, const char *from, const char *to)
{
	return th_edit_file(x->copies[0], from, to) && th_edit_file(x->copies[1], from, to);
}

static bool
put_back(FlipFixture *x)
{
	return th_write_file(x->copies[0], x->original, x->len, 0600) &&
		th_write_file(x->copies[1], x->original, x->len, 0600);
}

/* The first file's "crc32c" value with its first digit changed, in both copies. */
static bool
change_first_crc(FlipFixture *x)
{
	const char *hit = strstr((const char *) x->original, "\"crc32c\":\"");
	char		from[32];
	char		to[32];

	if (hit == NULL)
		return false;
	snprintf(from, sizeof(from), "%.19s", hit);
	snprintf(to, sizeof(to), "%s", from);
	to[10] = to[10] == '0' ? '1' : '0';
	return edit_both(x, from, to);
}

/* Opening from either destination is refused, naming a copy and a stripe; nothing is restored. */
static void
refused_everywhere(FlipFixture *x, const char *what)
{
	char		location[PATH_MAX];
	SbArchive  *a;
	SbError		err;
	uint32_t	d;

	for (d = 0; d < 2; d++)
	{
		a = sb_archive_open(th_location(&x->f, d, "bk", location), &err);
		ok(a == NULL && err.code == SB_ECORRUPT, "%s: refused from destination %u", what, d + 1);
		like(err.message, x->copies[d], "%s: naming the copy", what);
		like(err.message, "records another SHA-256", "%s: and a stripe recording another", what);
		sb_archive_close(a);
	}
	ok(!th_restore(x->location, x->f.target, &err) && !th_exists(x->f.target),
	   "%s: nothing is restored", what);
	is_int(th_verify(x->location), -1, "%s: verify cannot start", what);
}

/* Edits in every copy, the stripes not sealed again: all refused. */
void
test_bitflip_every_copy_edited(void)
{
	FlipFixture x;

	if (!setup(&x))
	{
		teardown(&x);
		return;
	}
	ok(edit_both(&x, "\"path\":\"base/1/1249\"", "\"path\":\"base/1/TMP\"") &&
	   edit_both(&x, "\"path\":\"base/1/1259\"", "\"path\":\"base/1/1249\"") &&
	   edit_both(&x, "\"path\":\"base/1/TMP\"", "\"path\":\"base/1/1259\""),
	   "two relation files' paths swapped in every copy");
	refused_everywhere(&x, "paths swapped");
	ok(put_back(&x) && edit_both(&x, "\"mode\":\"0600\"", "\"mode\":\"0700\""),
	   "a file made executable in every copy");
	refused_everywhere(&x, "mode changed");
	ok(put_back(&x) && change_first_crc(&x), "a file's CRC-32C changed in every copy");
	refused_everywhere(&x, "CRC changed");
	ok(put_back(&x) && th_verify(x.location) == 0, "put back, the archive verifies clean");
	teardown(&x);
}
