/*
 * test_redundancy_restore.c
 *		The read side of redundancy (docs/FORMAT.md section 10.4) through the
 *		public API: backups with redundancy 1 over 4 and 2 over 5 (compressed
 *		or not, encrypted once), each stripe in turn removed, cut short, its
 *		header, trailer or index damaged, a chunk record or a parity record
 *		damaged; then opened and restored (the files byte for byte), verified
 *		(the problems, "restorable ... more may be lost"), planned (the lost
 *		stripe, its share read by the others) and rebuilt
 *		(sb_archive_rebuild_stripe: the records byte for byte as written,
 *		verifying clean, restoring with another stripe gone), and every
 *		refusal.  More lost than the redundancy: refused before anything is
 *		written, the stripes named.  The I/O method is the run's
 *		(STRIPEBACKUP_IO_METHOD: CI runs the unit tests under both).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format/checksum.h"
#include "format/format.h"
#include "format/parity.h"
#include "restore/recover.h"
#include "harness.h"
#include "tests.h"

#define CHUNK 4096

/* A backup with redundancy, and what each stripe file held as written. */
typedef struct Bk
{
	ThFixture	f;
	uint32_t	n;
	uint32_t	m;
	bool		encrypted;
	SbKey		key;
	SbManifest *manifest;
	uint8_t    *stripe[TH_MAX_DESTS];	/* as written */
	size_t		stripe_len[TH_MAX_DESTS];
	char		what[96];
	int			rebuilds;		/* new destinations made so far */
} Bk;

typedef enum Damage
{
	DMG_REMOVED,
	DMG_TRUNCATED,
	DMG_HEADER,
	DMG_TRAILER,
	DMG_INDEX,
	DMG_CHUNK,
	DMG_PARITY,
	DMG_COUNT
} Damage;

static const char *const damage_names[] = {
	"removed", "cut short", "header damaged", "trailer damaged", "index damaged",
	"a chunk record damaged", "a parity record damaged"
};

/* Enough chunks for every stripe to hold parity records: more than N blocks of 16 groups. */
static void
make_tree(const ThFixture *f)
{
	char		path[PATH_MAX];
	int			i;

	th_write_pattern(th_path(path, "%s/text", f->src), 420 * 1024 + 17, 1, true, 0644);
	th_write_pattern(th_path(path, "%s/random", f->src), 330 * 1024 + 5, 2, false, 0600);
	th_mkdir(th_path(path, "%s/dir", f->src), 0755);
	for (i = 0; i < 12; i++)
		th_write_pattern(th_path(path, "%s/dir/small%d", f->src, i), (size_t) i * 701 + 3,
						 (uint32_t) i + 10, i % 2, 0644);
}

static char *
stripe_path(const Bk *b, uint32_t number, char *out)
{
	return th_stripe_path(&b->f, number, "bk", out);
}

/* A location to open the backup from that is not stripe NOT's folder. */
static char *
location(const Bk *b, uint32_t not, char *out)
{
	return th_location(&b->f, not % b->n, "bk", out);
}

static bool
make_backup(Bk *b, uint32_t n, uint32_t m, SbCodec codec, bool encrypted)
{
	SbBackupOptions o;
	SbError		err;
	uint32_t	s;
	char		path[PATH_MAX];

	memset(b, 0, sizeof(*b));
	b->n = n;
	b->m = m;
	b->encrypted = encrypted;
	snprintf(b->what, sizeof(b->what), "%u over %u, %s%s", m, n, sb_codec_name(codec),
			 encrypted ? ", encrypted" : "");
	th_fixture(&b->f, "redundancy-restore", n);
	make_tree(&b->f);
	th_options(&o, b->f.dests, n, "bk");
	o.codec = codec;
	o.redundancy = m;
	o.chunk_size = CHUNK;
	o.workers = 2;
	if (encrypted)
	{
		memset(b->key.secret, 'r', 48);
		b->key.len = 48;
		o.encryption_key = &b->key;
	}
	if (!ok(th_backup_tree(&o, b->f.src, &b->manifest, &err), "%s: backup succeeds", b->what))
	{
		th_diag_error("backup", &err);
		return false;
	}
	for (s = 0; s < n; s++)
	{
		b->stripe[s] = th_read_file(stripe_path(b, s + 1, path), &b->stripe_len[s]);
		if (b->stripe[s] == NULL)
			return ok(false, "%s: stripe %u read", b->what, s + 1);
		if (b->manifest->stripes[s].parity_chunks == 0)
			diag("%s: stripe %u holds no parity record", b->what, s + 1);
	}
	return true;
}

static void
free_backup(Bk *b)
{
	uint32_t	s;

	for (s = 0; s < b->n; s++)
		free(b->stripe[s]);
	sb_manifest_free(b->manifest);
	th_fixture_done(&b->f);
}

/* Stripe NUMBER as written again. */
static void
put_back(const Bk *b, uint32_t number)
{
	char		path[PATH_MAX];

	if (!th_write_file(stripe_path(b, number, path), b->stripe[number - 1],
					   b->stripe_len[number - 1], 0644))
		ok(false, "stripe %u put back", number);
}

/* The first index entry of KIND in stripe NUMBER (as written), or false. */
static bool
first_entry(const Bk *b, uint32_t number, int kind, SbIndexEntry *out)
{
	const uint8_t *file = b->stripe[number - 1];
	size_t		len = b->stripe_len[number - 1];
	SbTrailer	t;
	SbError		err;
	uint64_t	i;

	if (!sb_format_decode_trailer(file + len - SB_TRAILER_SIZE, &t, &err))
		return false;
	for (i = 0; i < t.chunk_count; i++)
	{
		sb_format_decode_index_entry(file + t.index_offset + i * SB_INDEX_ENTRY_SIZE, out);
		if (out->kind == kind)
			return true;
	}
	return false;
}

/* Damage stripe NUMBER as D says; false when it has nothing of that kind to damage. */
static bool
damage(const Bk *b, uint32_t number, Damage d)
{
	const uint8_t *file = b->stripe[number - 1];
	size_t		len = b->stripe_len[number - 1];
	char		path[PATH_MAX];
	SbTrailer	t;
	SbIndexEntry e;
	SbError		err;

	stripe_path(b, number, path);
	switch (d)
	{
		case DMG_REMOVED:
			return unlink(path) == 0;
		case DMG_TRUNCATED:
			return truncate(path, (off_t) len / 2) == 0;
		case DMG_HEADER:
			return th_flip_byte(path, 6, 0x40);
		case DMG_TRAILER:
			return th_flip_byte(path, len - SB_TRAILER_SIZE + 9, 0x01);
		case DMG_INDEX:
			if (!sb_format_decode_trailer(file + len - SB_TRAILER_SIZE, &t, &err))
				return false;
			return th_flip_byte(path, t.index_offset + SB_INDEX_ENTRY_SIZE + 3, 0x10);
		case DMG_CHUNK:
			return first_entry(b, number, SB_CHUNK_KIND_DATA, &e) &&
				th_flip_byte(path, e.offset + SB_CHUNK_HEADER_SIZE + e.stored_len / 2, 0x08);
		case DMG_PARITY:
			return first_entry(b, number, SB_CHUNK_KIND_PARITY, &e) &&
				th_flip_byte(path, e.offset + SB_CHUNK_HEADER_SIZE + e.stored_len / 3, 0x02);
		case DMG_COUNT:
			break;
	}
	return false;
}

static SbArchive *
open_at(const Bk *b, const char *loc, SbError *err)
{
	return sb_archive_open_with(loc, &(SbArchiveOpenOptions){.key = b->encrypted ? &b->key : NULL},
								err);
}

/* Restore A into the fixture's target; the tree equal to the source; the target removed after. */
static bool
restore_equal(const Bk *b, SbArchive *a, SbError *err)
{
	SbRestoreOptions ro;
	bool		done;

	memset(&ro, 0, sizeof(ro));
	ro.target = b->f.target;
	ro.read.workers = 2;
	ro.read.queue_depth = 4;
	done = sb_archive_restore(a, &ro, err) && th_trees_equal(b->f.src, b->f.target, TH_CMP_MTIME);
	th_rmtree(b->f.target);
	return done;
}

/* Verify A: its problems into P; how many (-1 when verify could not run). */
static long
verify_archive(SbArchive *a, ThProblems *p)
{
	SbReadOptions ro;
	SbError		err;
	uint64_t	n = 0;

	memset(p, 0, sizeof(*p));
	memset(&ro, 0, sizeof(ro));
	ro.workers = 2;
	if (!sb_archive_verify(a, &ro, th_collect_problem, p, &n, &err))
	{
		th_diag_error("verify", &err);
		return -1;
	}
	return (long) n;
}

/* Does P hold a problem of STRIPE, made up for as RECOVERED says, its message holding TEXT? */
static bool
has_problem(const ThProblems *p, uint32_t stripe, bool chunk, const char *text)
{
	int			i;

	for (i = 0; i < p->n; i++)
		if (p->items[i].stripe == stripe && (p->items[i].chunk >= 0) == chunk &&
			strstr(p->items[i].message, text) != NULL)
			return true;
	for (i = 0; i < p->n; i++)
		diag("problem: stripe %u chunk %lld: %s", p->items[i].stripe,
			 (long long) p->items[i].chunk, p->items[i].message);
	return false;
}

/*
 * Do the stripe files A and B hold the same records (header and payload,
 * by kind and id), each once, and the same trailer counts?  A rebuilt
 * stripe is the writer's records, not always in its order (DECISIONS.md).
 */
static bool
same_records(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	SbTrailer	ta,
				tb;
	SbError		err;
	uint64_t	i,
				j;

	if (a == NULL || b == NULL || alen != blen || alen < SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE ||
		memcmp(a, b, SB_STRIPE_HEADER_SIZE) != 0 ||
		!sb_format_decode_trailer(a + alen - SB_TRAILER_SIZE, &ta, &err) ||
		!sb_format_decode_trailer(b + blen - SB_TRAILER_SIZE, &tb, &err) ||
		ta.chunk_count != tb.chunk_count || ta.raw_bytes != tb.raw_bytes ||
		ta.stored_bytes != tb.stored_bytes || ta.index_offset != tb.index_offset ||
		memcmp(ta.manifest_sha256, tb.manifest_sha256, 32) != 0)
		return false;
	for (i = 0; i < ta.chunk_count; i++)
	{
		SbIndexEntry ea,
					eb;

		sb_format_decode_index_entry(a + ta.index_offset + i * SB_INDEX_ENTRY_SIZE, &ea);
		for (j = 0; j < tb.chunk_count; j++)
		{
			sb_format_decode_index_entry(b + tb.index_offset + j * SB_INDEX_ENTRY_SIZE, &eb);
			if (eb.kind == ea.kind && eb.chunk_id == ea.chunk_id)
				break;
		}
		if (j == tb.chunk_count || eb.stored_len != ea.stored_len ||
			memcmp(a + ea.offset, b + eb.offset, SB_CHUNK_HEADER_SIZE + ea.stored_len) != 0)
			return false;
	}
	return true;
}

/* A new destination folder for a rebuild, made empty. */
static char *
new_destination(Bk *b, char *out)
{
	th_path(out, "%s/new%d", b->f.root, ++b->rebuilds);
	th_mkdir(out, 0755);
	return out;
}

/*
 * Stripe NUMBER, lost, rebuilt from A into a new destination: byte for byte
 * what the backup wrote, the backup opened from there verifying clean, and
 * restoring with another stripe removed.
 */
static void
check_rebuild(Bk *b, SbArchive *a, uint32_t number, const char *what)
{
	SbRebuildResult r;
	SbError		err;
	char		dest[PATH_MAX];
	char		path[PATH_MAX];
	uint8_t    *bytes;
	size_t		len = 0;
	SbArchive  *again;
	ThProblems	p;
	uint32_t	other = number % b->n + 1;

	new_destination(b, dest);
	if (!ok(sb_archive_rebuild_stripe(a, number, dest, false, &r, &err),
			"%s: stripe %u rebuilt", what, number))
	{
		th_diag_error("rebuild", &err);
		return;
	}
	bytes = th_read_file(r.path, &len);
	ok(r.file_bytes == len && same_records(bytes, len, b->stripe[number - 1], b->stripe_len[number - 1]),
	   "%s: the rebuilt stripe holds the records written, byte for byte (%zu bytes)", what, len);
	free(bytes);
	is_int(r.data_records + r.parity_records,
		   b->manifest->stripes[number - 1].chunks + b->manifest->stripes[number - 1].parity_chunks,
		   "%s: every record of it recovered", what);
	is_str(r.folder, th_path(path, "%s/bk", dest), "%s: its folder is the new destination's", what);

	/* a second time into the same place: refused, the stripe is there */
	ok(!sb_archive_rebuild_stripe(a, number, dest, true, &r, &err) && err.code == SB_EEXIST,
	   "%s: a destination holding the stripe already is refused", what);
	like(err.message, "holds stripe", "%s: the message says it holds it", what);

	again = open_at(b, th_path(path, "%s/bk", dest), &err);
	if (!ok(again != NULL && again->nlost == 0, "%s: the new folder opens, nothing lost", what))
	{
		th_diag_error("open", &err);
		sb_archive_close(again);
		return;
	}
	is_int(verify_archive(again, &p), 0, "%s: the rebuilt backup verifies clean", what);
	th_free_problems(&p);
	sb_archive_close(again);

	/* the rebuilt stripe stands in for the lost one while another is lost */
	unlink(stripe_path(b, other, path));
	again = open_at(b, th_path(path, "%s/bk", dest), &err);
	ok(again != NULL && again->nlost == 1 && again->lost_why[other - 1] != NULL &&
	   restore_equal(b, again, &err),
	   "%s: with stripe %u removed, restored through the rebuilt stripe %u", what, other, number);
	if (again == NULL || err.code != SB_OK)
		th_diag_error("restore", &err);
	sb_archive_close(again);
	put_back(b, other);
}

/* Stripe NUMBER damaged as D says: open, restore, verify, plan, rebuild. */
static void
check_damage(Bk *b, uint32_t number, Damage d)
{
	char		what[160];
	char		loc[PATH_MAX];
	char		line[256];
	char		want[128];
	SbArchive  *a;
	SbError		err;
	SbPlan		plan;
	ThProblems	p;
	long		n;
	bool		lost = d < DMG_CHUNK;
	uint32_t	s;

	snprintf(what, sizeof(what), "%s, stripe %u %s", b->what, number, damage_names[d]);
	if (!damage(b, number, d))
	{
		diag("%s: nothing to damage", what);
		put_back(b, number);
		return;
	}
	a = open_at(b, location(b, number, loc), &err);
	if (!ok(a != NULL, "%s: opens", what))
	{
		th_diag_error("open", &err);
		put_back(b, number);
		return;
	}
	is_int(a->nlost, lost ? 1 : 0, "%s: %s lost at open", what, lost ? "one stripe" : "no stripe");
	ok(lost == (a->lost_why[number - 1] != NULL), "%s: the stripe's state known", what);
	ok(sb_archive_check_lost(a, &err), "%s: enough left to restore", what);
	if (!ok(restore_equal(b, a, &err), "%s: restored byte for byte", what))
		th_diag_error("restore", &err);

	n = verify_archive(a, &p);
	ok(n >= 1, "%s: verify finds a problem (%ld)", what, n);
	ok(has_problem(&p, number, d == DMG_CHUNK,
				   lost ? "is lost" : d == DMG_CHUNK ? "recovered from its parity group" : "parity record"),
	   "%s: the problem names the stripe", what);
	for (int i = 0; i < p.n; i++)
		if (p.items[i].stripe != number)
			ok(false, "%s: a problem of another stripe: %s", what, p.items[i].message);
	th_free_problems(&p);
	ok(a->unrecovered == 0 && (lost || a->damaged[number - 1]),
	   "%s: the stripe counted damaged, every problem made up for", what);
	snprintf(want, sizeof(want), "restorable: 1 of %u destinations lost, %u more may be lost", b->n,
			 b->m - 1);
	ok(sb_archive_describe_redundancy(a, line, sizeof(line)), "%s: restorable", what);
	is_str(line, want, "%s: what more may be lost", what);

	ok(sb_archive_plan(a, &plan, &err), "%s: planned", what);
	ok((plan.stripes[number - 1].lost_why != NULL) == lost &&
	   plan.stripes[number - 1].recoverable == lost,
	   "%s: the plan shows the stripe %s", what, lost ? "lost, recoverable" : "present");
	if (lost)
	{
		double		mbps[SB_MAX_STRIPES];

		for (s = 0; s < b->n; s++)
			mbps[s] = 100;
		sb_plan_estimate(&plan, mbps, NULL, NULL);
		ok(plan.stripes[number - 1].estimated_seconds < 0 &&
		   plan.stripes[number % b->n].recovery_bytes == plan.stripes[number - 1].stored_bytes &&
		   plan.stripes[number % b->n].estimated_seconds > 0 && plan.estimated_seconds > 0,
		   "%s: the estimate leaves it out, the others read its share", what);
		if (d == DMG_REMOVED || d == DMG_INDEX)
			check_rebuild(b, a, number, what);
	}
	else
	{
		/* not lost: refused without force; with it, written again from the others */
		SbRebuildResult r;
		char		dest[PATH_MAX];
		uint8_t    *bytes;
		size_t		len = 0;

		ok(!sb_archive_rebuild_stripe(a, number, new_destination(b, dest), false, &r, &err) &&
		   err.code == SB_EINVAL, "%s: rebuilding a stripe not lost refused", what);
		like(err.message, "is not lost", "%s: the message says so", what);
		if (ok(sb_archive_rebuild_stripe(a, number, dest, true, &r, &err),
			   "%s: forced, rebuilt", what))
		{
			bytes = th_read_file(r.path, &len);
			ok(same_records(bytes, len, b->stripe[number - 1], b->stripe_len[number - 1]),
			   "%s: rebuilt, the records as written, the damage gone", what);
			free(bytes);
		}
		else
			th_diag_error("rebuild", &err);
	}
	sb_archive_close(a);
	put_back(b, number);
}

/* Stripes NUMBERS (NLOST of them, more than the redundancy) removed: refused, each named. */
static void
check_beyond(Bk *b, const uint32_t *numbers, uint32_t nlost)
{
	char		loc[PATH_MAX];
	char		path[PATH_MAX];
	char		line[256];
	char		want[64];
	SbArchive  *a;
	SbError		err;
	SbPlan		plan;
	SbRebuildResult r;
	ThProblems	p;
	uint32_t	i,
				keep = 0;

	for (i = 0; i < nlost; i++)
		unlink(stripe_path(b, numbers[i], path));
	for (keep = 1; keep <= b->n; keep++)
	{
		for (i = 0; i < nlost && numbers[i] != keep; i++)
			;
		if (i == nlost)
			break;
	}
	a = open_at(b, th_location(&b->f, keep - 1, "bk", loc), &err);
	if (!ok(a != NULL && a->nlost == nlost, "%s, %u stripes removed: opens, %u lost", b->what, nlost, nlost))
	{
		th_diag_error("open", &err);
		sb_archive_close(a);
		goto done;
	}
	ok(!sb_archive_check_lost(a, &err) && err.code == SB_ECORRUPT, "%s: beyond the redundancy", b->what);
	for (i = 0; i < nlost; i++)
	{
		snprintf(want, sizeof(want), "stripe %u (", numbers[i]);
		like(err.message, want, "%s: stripe %u named", b->what, numbers[i]);
	}
	ok(!sb_archive_restore(a, &(SbRestoreOptions){.target = b->f.target}, &err) &&
	   err.code == SB_ECORRUPT && !th_exists(b->f.target),
	   "%s: restore refused, nothing written", b->what);
	like(err.message, "cannot be restored", "%s: the message says why", b->what);

	ok(verify_archive(a, &p) >= nlost, "%s: verify reports the lost stripes", b->what);
	ok(p.n >= (int) nlost && a->unrecovered > 0, "%s: problems not made up for", b->what);
	th_free_problems(&p);
	ok(!sb_archive_describe_redundancy(a, line, sizeof(line)), "%s: not restorable", b->what);
	like(line, "NOT restorable", "%s: says so", b->what);

	ok(sb_archive_plan(a, &plan, &err) && plan.stripes[numbers[0] - 1].lost_why != NULL &&
	   !plan.stripes[numbers[0] - 1].recoverable, "%s: the plan shows it lost, not recoverable", b->what);

	ok(!sb_archive_rebuild_stripe(a, numbers[0], b->f.root, false, &r, &err) &&
	   err.code == SB_ECORRUPT, "%s: rebuild refused", b->what);
	like(err.message, "cannot be rebuilt", "%s: the message says why", b->what);
	sb_archive_close(a);
done:
	for (i = 0; i < nlost; i++)
		put_back(b, numbers[i]);
}

/* Every stripe, every damage, then beyond the redundancy. */
static void
check_backup(uint32_t n, uint32_t m, SbCodec codec, bool encrypted, bool every_damage)
{
	Bk			b;
	uint32_t	s;
	uint32_t	beyond[TH_MAX_DESTS];
	int			d;

	if (make_backup(&b, n, m, codec, encrypted))
	{
		for (s = 1; s <= n; s++)
			for (d = 0; d < DMG_COUNT; d++)
				if (every_damage || d == DMG_REMOVED || d == DMG_CHUNK || d == DMG_PARITY || (int) s == d)
					check_damage(&b, s, (Damage) d);
		for (s = 0; s <= m; s++)
			beyond[s] = (s * 2) % n + 1;
		check_beyond(&b, beyond, m + 1);
	}
	free_backup(&b);
}

void
test_redundancy_restore_1_of_4(void)
{
	check_backup(4, 1, SB_CODEC_ZSTD, false, true);
}

void
test_redundancy_restore_2_of_5(void)
{
	check_backup(5, 2, SB_CODEC_NONE, false, true);
}

void
test_redundancy_restore_encrypted(void)
{
	check_backup(4, 1, SB_CODEC_ZSTD, true, false);
}

/* ---------- damage in more than one place, stripes lost after opening ---------- */

/* Open B at the folder of stripe NOT's successor; NULL (a failed assertion) if it does not open. */
static SbArchive *
open_ok(const Bk *b, uint32_t not, const char *what)
{
	char		loc[PATH_MAX];
	SbError		err;
	SbArchive  *a = open_at(b, location(b, not, loc), &err);

	if (!ok(a != NULL, "%s: opens", what))
		th_diag_error("open", &err);
	return a;
}

/* A stripe removed after the archive opened: found lost by its reader, recovered, reported. */
static void
check_lost_after_open(Bk *b)
{
	char		what[160];
	char		path[PATH_MAX];
	SbArchive  *a;
	SbError		err;
	ThProblems	p;

	snprintf(what, sizeof(what), "%s, stripe 2 removed after opening", b->what);
	if ((a = open_ok(b, 2, what)) == NULL)
		return;
	unlink(stripe_path(b, 2, path));
	if (!ok(restore_equal(b, a, &err), "%s: restored byte for byte", what))
		th_diag_error("restore", &err);
	ok(verify_archive(a, &p) >= 1 && has_problem(&p, 2, false, "is lost"),
	   "%s: verify reports it lost", what);
	ok(a->unrecovered == 0 && a->damaged[1], "%s: made up for, the stripe counted", what);
	th_free_problems(&p);
	sb_archive_close(a);
	put_back(b, 2);
}

/*
 * Stripe 1 removed and a record of group 0 damaged on another stripe (a
 * chunk's on stripe 2, or the first parity record of stripe PARITY_STRIPE):
 * with redundancy 1 that group cannot be recovered (the restore fails, naming
 * why; a rebuild fails and leaves nothing); with 2 it can.
 */
static void
check_two_faults(Bk *b, Damage d, uint32_t damaged_stripe)
{
	char		what[200];
	char		path[PATH_MAX];
	char		dest[PATH_MAX];
	char		line[256];
	SbArchive  *a;
	SbError		err;
	SbRebuildResult r;
	ThProblems	p;
	bool		enough = b->m > 1;
	bool		restored;

	snprintf(what, sizeof(what), "%s, stripe 1 removed and stripe %u %s", b->what, damaged_stripe,
			 damage_names[d]);
	unlink(stripe_path(b, 1, path));
	if (!damage(b, damaged_stripe, d) || (a = open_ok(b, 1, what)) == NULL)
	{
		put_back(b, damaged_stripe);
		put_back(b, 1);
		return;
	}
	ok(a->nlost == 1 && sb_archive_check_lost(a, &err), "%s: one stripe lost at open", what);
	restored = restore_equal(b, a, &err);
	ok(restored == enough, "%s: %s", what, enough ? "restored byte for byte" : "the restore fails");
	if (!enough)
		like(err.message, "cannot be recovered", "%s: the message says why", what);
	else if (!restored)
		th_diag_error("restore", &err);
	ok(verify_archive(a, &p) >= 2 && has_problem(&p, 1, false, "is lost"),
	   "%s: verify reports the lost stripe and the damage", what);
	if (d == DMG_CHUNK)
		ok(has_problem(&p, damaged_stripe, true, enough ? "recovered from its parity group" :
					   "could not be recovered from its parity group"),
		   "%s: the damaged chunk %s", what, enough ? "recovered" : "could not be recovered");
	th_free_problems(&p);
	ok(sb_archive_describe_redundancy(a, line, sizeof(line)) == enough,
	   "%s: %s (%s)", what, enough ? "restorable" : "not restorable", line);
	like(line, enough ? "restorable: 2 of 5 destinations lost, 0 more may be lost" : "NOT restorable: 2 of 4",
		 "%s: what is left", what);

	new_destination(b, dest);
	if (enough)
		ok(sb_archive_rebuild_stripe(a, 1, dest, false, &r, &err),
		   "%s: stripe 1 rebuilt from what is left", what);
	else
	{
		ok(!sb_archive_rebuild_stripe(a, 1, dest, false, &r, &err) && err.code == SB_ECORRUPT,
		   "%s: the rebuild fails", what);
		like(err.message, "rebuilding stripe 1", "%s: the message says what failed", what);
		is_int(th_count_entries(dest), 0, "%s: the rebuild left nothing", what);
	}
	sb_archive_close(a);
	put_back(b, damaged_stripe);
	put_back(b, 1);
}

/* A parity record's header damaged: verify says which record, the restore does not mind. */
static void
check_parity_header(Bk *b, uint32_t number)
{
	char		what[160];
	char		path[PATH_MAX];
	SbIndexEntry e;
	SbArchive  *a;
	SbError		err;
	ThProblems	p;

	snprintf(what, sizeof(what), "%s, stripe %u a parity record's header damaged", b->what, number);
	if (!first_entry(b, number, SB_CHUNK_KIND_PARITY, &e) ||
		!th_flip_byte(stripe_path(b, number, path), e.offset + 20, 0x04) ||
		(a = open_ok(b, number, what)) == NULL)
	{
		put_back(b, number);
		return;
	}
	ok(restore_equal(b, a, &err), "%s: restored byte for byte", what);
	ok(verify_archive(a, &p) == 1 && has_problem(&p, number, false, "parity record"),
	   "%s: verify names the record", what);
	th_free_problems(&p);
	sb_archive_close(a);
	put_back(b, number);
}

/* The rebuild's refusals that are not about what is lost, and a folder holding the manifest already. */
static void
check_rebuild_places(Bk *b)
{
	char		what[160];
	char		path[PATH_MAX];
	char		dest[PATH_MAX];
	SbArchive  *a;
	SbError		err;
	SbRebuildResult r;

	snprintf(what, sizeof(what), "%s, rebuild", b->what);
	unlink(stripe_path(b, 1, path));
	if ((a = open_ok(b, 1, what)) == NULL)
	{
		put_back(b, 1);
		return;
	}
	ok(!sb_archive_rebuild_stripe(a, 0, b->f.root, false, &r, &err) && err.code == SB_EINVAL,
	   "%s: stripe 0 refused", what);
	like(err.message, "stripe 0 does not exist", "%s: the message names it", what);
	ok(!sb_archive_rebuild_stripe(a, b->n + 1, b->f.root, false, &r, &err) && err.code == SB_EINVAL,
	   "%s: stripe %u refused", what, b->n + 1);
	like(err.message, "has stripes 1 to", "%s: the message says which there are", what);
	ok(!sb_archive_rebuild_stripe(a, 1, th_path(path, "%s/not-there", b->f.root), false, &r, &err) &&
	   err.code == SB_EINVAL && !th_exists(path), "%s: a new destination that is not there refused", what);

	/* a folder holding another manifest: replaced by the authenticated bytes */
	new_destination(b, dest);
	th_mkdir(th_path(path, "%s/bk", dest), 0755);
	th_write_file(th_path(path, "%s/bk/manifest.json", dest), "{}", 2, 0644);
	ok(sb_archive_rebuild_stripe(a, 1, dest, false, &r, &err), "%s: stripe 1 rebuilt beside a foreign manifest",
	   what);
	sb_archive_close(a);
	put_back(b, 1);

	/* then stripe 2, lost, into the same folder: the manifest there is the one already */
	unlink(stripe_path(b, 2, path));
	a = open_at(b, th_path(path, "%s/bk", dest), &err);
	ok(a != NULL && a->nlost == 1 && a->lost_why[1] != NULL, "%s: opened from the rebuilt folder, stripe 2 lost",
	   what);
	if (a != NULL)
	{
		ThProblems	p;

		ok(sb_archive_rebuild_stripe(a, 2, dest, false, &r, &err), "%s: stripe 2 rebuilt beside stripe 1",
		   what);
		sb_archive_close(a);
		a = open_at(b, th_path(path, "%s/bk", dest), &err);
		ok(a != NULL && a->nlost == 0 && verify_archive(a, &p) == 0,
		   "%s: the folder with both rebuilt stripes verifies clean", what);
		th_free_problems(&p);
		sb_archive_close(a);
	}
	put_back(b, 2);

	/* a stripe's folder named again: surveyed again, lost or not */
	a = open_ok(b, 1, what);
	if (a != NULL)
	{
		ok(sb_archive_set_stripe_dir(a, 3, b->f.root, &err) && a->nlost == 1 && a->lost_why[2] != NULL,
		   "%s: stripe 3 looked for where it is not: lost", what);
		ok(sb_archive_set_stripe_dir(a, 3, th_location(&b->f, 2, "bk", path), &err) && a->nlost == 0 &&
		   a->lost_why[2] == NULL, "%s: and where it is: found again", what);
		sb_archive_close(a);
	}
}

void
test_redundancy_restore_faults(void)
{
	Bk			b;

	if (make_backup(&b, 4, 1, SB_CODEC_ZSTD, false))
	{
		check_lost_after_open(&b);
		check_two_faults(&b, DMG_CHUNK, 2);
		check_two_faults(&b, DMG_PARITY, 4);
		check_parity_header(&b, 4);
		check_rebuild_places(&b);
	}
	free_backup(&b);
	if (make_backup(&b, 5, 2, SB_CODEC_NONE, false))
	{
		check_lost_after_open(&b);
		check_two_faults(&b, DMG_CHUNK, 2);
		check_two_faults(&b, DMG_PARITY, 4);
	}
	free_backup(&b);
}

/* ---------- index entries of parity records that do not check ---------- */

typedef void (*EditFn) (SbIndexEntry *e, const SbIndexEntry *other);

/*
 * Stripe NUMBER written again with its I-th entry of KIND edited by FN
 * (OTHER: its first parity entry), the index's hash and the trailer made
 * to agree: only the entry's own checks can find it.
 */
static bool
edit_entry(const Bk *b, uint32_t number, int kind, EditFn fn)
{
	size_t		len = b->stripe_len[number - 1];
	uint8_t    *file = malloc(len);
	char		path[PATH_MAX];
	SbTrailer	t;
	SbError		err;
	SbIndexEntry other = {0},
				e;
	uint64_t	i;
	bool		done = false;

	memcpy(file, b->stripe[number - 1], len);
	if (!sb_format_decode_trailer(file + len - SB_TRAILER_SIZE, &t, &err) ||
		!first_entry(b, number, SB_CHUNK_KIND_PARITY, &other))
	{
		free(file);
		return false;
	}
	for (i = 0; i < t.chunk_count && !done; i++)
	{
		uint8_t    *at = file + t.index_offset + i * SB_INDEX_ENTRY_SIZE;

		sb_format_decode_index_entry(at, &e);
		if (e.kind != kind || (kind == SB_CHUNK_KIND_PARITY && e.chunk_id == other.chunk_id))
			continue;
		fn(&e, &other);
		sb_format_encode_index_entry(&e, at);
		done = true;
	}
	t.index_hash = sb_hash64(file + t.index_offset, t.chunk_count * SB_INDEX_ENTRY_SIZE);
	sb_format_encode_trailer(&t, file + len - SB_TRAILER_SIZE);
	done = done && th_write_file(stripe_path(b, number, path), file, len, 0644);
	free(file);
	return done;
}

static void
elsewhere(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->chunk_id += 100000;
	(void) other;
}

static void
compressed(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->codec = SB_CODEC_ZSTD;
	(void) other;
}

static void
too_long(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->stored_len = e->raw_len = 10 * CHUNK;
	(void) other;
}

static void
twice(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->chunk_id = other->chunk_id;
}

/* A data chunk's entry made a parity record's: one more of those, one fewer chunk. */
static void
as_parity(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->kind = SB_CHUNK_KIND_PARITY;
	e->chunk_id = other->chunk_id;
	e->raw_len = e->stored_len;
}

static void
strange_kind(SbIndexEntry *e, const SbIndexEntry *other)
{
	e->kind = 7;
	(void) other;
}

static void
check_entry_refused(Bk *b, uint32_t number, int kind, EditFn fn, const char *want)
{
	char		what[200];
	SbArchive  *a;
	SbError		err;

	snprintf(what, sizeof(what), "%s, stripe %u's index says %s", b->what, number, want);
	if (!ok(edit_entry(b, number, kind, fn), "%s: written", what) || (a = open_ok(b, number, what)) == NULL)
	{
		put_back(b, number);
		return;
	}
	ok(a->nlost == 1 && a->lost_why[number - 1] != NULL, "%s: the stripe is lost", what);
	like(a->lost_why[number - 1] ? a->lost_why[number - 1] : "", want, "%s: and why", what);
	ok(restore_equal(b, a, &err), "%s: restored all the same", what);
	sb_archive_close(a);
	put_back(b, number);
}

void
test_redundancy_restore_parity_entries(void)
{
	Bk			b;

	if (make_backup(&b, 5, 2, SB_CODEC_NONE, false))
	{
		check_entry_refused(&b, 4, SB_CHUNK_KIND_PARITY, elsewhere, "which the manifest does not put in this stripe");
		check_entry_refused(&b, 4, SB_CHUNK_KIND_PARITY, compressed, "is out of bounds");
		check_entry_refused(&b, 4, SB_CHUNK_KIND_PARITY, too_long, "is out of bounds");
		check_entry_refused(&b, 4, SB_CHUNK_KIND_PARITY, twice, "twice");
		check_entry_refused(&b, 4, SB_CHUNK_KIND_DATA, as_parity, "parity records, the manifest");
		check_entry_refused(&b, 4, SB_CHUNK_KIND_DATA, strange_kind, "of kind 7");
	}
	free_backup(&b);
}

/* ---------- a backup without redundancy; the recovery's own refusals ---------- */

void
test_redundancy_restore_none(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbArchive  *a = NULL;
	SbError		err;
	SbRebuildResult r;
	SbRecovery	rec;
	bool		lost[SB_MAX_STRIPES] = {false};
	char		loc[PATH_MAX];
	char		line[256];

	th_fixture(&f, "redundancy-none", 3);
	make_tree(&f);
	th_options(&o, f.dests, 3, "bk");
	o.chunk_size = CHUNK;
	if (ok(th_backup_tree(&o, f.src, &m, &err), "no redundancy: backup succeeds") &&
		(a = sb_archive_open(th_location(&f, 0, "bk", loc), &err)) != NULL)
	{
		ok(!sb_archive_rebuild_stripe(a, 1, f.root, true, &r, &err) && err.code == SB_EINVAL,
		   "no redundancy: rebuild refused");
		like(err.message, "has no redundancy", "no redundancy: the message says so");
		ok(!sb_recovery_open(&rec, a->manifest, a->stripe_paths, NULL, lost, &err) && err.code == SB_EINVAL,
		   "no redundancy: nothing to recover from");
		sb_recovery_close(&rec);
		ok(sb_archive_describe_redundancy(a, line, sizeof(line)), "no redundancy: restorable");
		is_str(line, "restorable: 0 of 3 destinations lost, 0 more may be lost", "no redundancy: none may be lost");
	}
	else
		th_diag_error("no redundancy", &err);
	sb_archive_close(a);
	sb_manifest_free(m);
	th_fixture_done(&f);
}

void
test_redundancy_restore_recovery(void)
{
	Bk			b;
	SbRecovery	rec;
	SbError		err;
	SbChunkHeader h;
	bool		lost[SB_MAX_STRIPES] = {false};
	char	   *paths[SB_MAX_STRIPES] = {NULL};
	char		path[PATH_MAX];
	uint8_t    *buf;
	size_t		len;
	uint32_t	s;

	if (!make_backup(&b, 4, 1, SB_CODEC_ZSTD, false))
	{
		free_backup(&b);
		return;
	}
	for (s = 0; s < b.n; s++)
		paths[s] = strdup(stripe_path(&b, s + 1, path));
	lost[0] = true;
	buf = malloc(sb_recover_record_cap(b.manifest));
	if (ok(sb_recovery_open(&rec, b.manifest, paths, NULL, lost, &err), "recovery opens"))
	{
		ok(sb_recovery_chunk(&rec, 0, buf, &len, &h, &err) && h.chunk_id == 0 && len > SB_CHUNK_HEADER_SIZE,
		   "chunk 0 recovered without its stripe");
		ok(!sb_recovery_chunk(&rec, b.manifest->total_chunks, buf, &len, &h, &err) && err.code == SB_EINVAL,
		   "a chunk past the last refused");
		ok(!sb_recovery_parity(&rec, 1000000, buf, &len, &h, &err) && err.code == SB_EINVAL,
		   "a parity record past the last refused");
		sb_recovery_close(&rec);
	}
	lost[0] = false;
	lost[3] = true;
	if (ok(sb_recovery_open(&rec, b.manifest, paths, NULL, lost, &err), "recovery opens, stripe 4 lost"))
	{
		ok(sb_recovery_parity(&rec, 0, buf, &len, &h, &err) && h.kind == SB_CHUNK_KIND_PARITY &&
		   h.chunk_id == 0, "parity record 0 recovered without its stripe");
		sb_recovery_close(&rec);
	}
	lost[3] = false;
	lost[0] = true;
	free(paths[1]);
	paths[1] = NULL;
	if (ok(sb_recovery_open(&rec, b.manifest, paths, NULL, lost, &err), "recovery opens without stripe 2's path"))
	{
		ok(!sb_recovery_chunk(&rec, 0, buf, &len, &h, &err) && err.code == SB_ECORRUPT,
		   "with two stripes gone, chunk 0 cannot be recovered");
		like(err.message, "stripe 2 is lost", "the message names the other stripe");
		sb_recovery_close(&rec);
	}
	free(buf);
	for (s = 0; s < b.n; s++)
		free(paths[s]);
	free_backup(&b);
}
