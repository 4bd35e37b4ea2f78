/*
 * make_seeds.c
 *		Writes the fuzz targets' seed corpus from real, small backups made with
 *		the engine: "make fuzz-seeds" (test/fuzz/README.md).
 *
 *		make_seeds CORPUS-DIR	writes CORPUS-DIR/manifest/seed-*.json and
 *								CORPUS-DIR/stripe/seed-*
 *
 *								CORPUS-DIR/wal/seed-*
 *
 * Manifest seeds: the manifests of backups with different shapes (codecs,
 * one to three stripes, both balances, an empty backup, names that are not
 * UTF-8, a label, metadata, sparse files).  Stripe seeds: stripe 1 of the
 * fuzz target's own fixture archives, whole and damaged the ways a real
 * stripe gets damaged, each behind the flag byte fuzz_stripe.c reads.  WAL
 * seeds: the history file fuzz_wal.c reads, archived by the engine raw and
 * with zstd, in the clear and sealed under the seeds' key, whole and
 * damaged, behind its flag byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "format/format.h"
#include "fuzz_wal.h"
#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_wal.h"
#include "../unit/wal_gen.h"

static const char *corpus;
static char work[PATH_MAX];
static int	written;

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "make_seeds: %s: %s\n", what, detail);
	if (work[0] != '\0')
		fuzz_rmtree(work);
	exit(1);
}

static uint8_t *
read_file(const char *path, size_t *len)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf;
	long		n;

	if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
		fseek(f, 0, SEEK_SET) != 0)
		die("could not read", path);
	buf = malloc((size_t) n + 1);
	if (buf == NULL || fread(buf, 1, (size_t) n, f) != (size_t) n)
		die("could not read", path);
	fclose(f);
	*len = (size_t) n;
	return buf;
}

/* CORPUS/KIND/seed-NAME: optionally FLAG first, then LEN bytes of DATA. */
static void
write_seed(const char *kind, const char *name, int flag, const uint8_t *data, size_t len)
{
	char		path[PATH_MAX];
	FILE	   *f;
	uint8_t		byte = (uint8_t) flag;

	snprintf(path, sizeof(path), "%s/%s/seed-%s", corpus, kind, name);
	f = fopen(path, "wb");
	if (f == NULL || (flag >= 0 && fwrite(&byte, 1, 1, f) != 1) ||
		(len > 0 && fwrite(data, 1, len, f) != len) || fclose(f) != 0)
		die("could not write", path);
	written++;
}

static void
make_dir(const char *path)
{
	if (mkdir(path, 0755) != 0 && errno != EEXIST)
		die("could not create", path);
}

static void
write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);

	if (fd < 0 || write(fd, data, len) != (ssize_t) len || close(fd) != 0)
		die("could not write", path);
}

/* A backup of files written under SRC; OPTIONS name the destinations. */
static void
backup_files(const SbBackupOptions *o, const char *src, const char *const *names,
			 size_t n)
{
	SbError		err;
	SbBackup   *b = sb_backup_begin(o, &err);
	char		full[PATH_MAX * 2];
	size_t		i;
	bool		ok;

	if (b == NULL)
		die("backup", err.message);
	ok = sb_backup_add_dir(b, ".", 0755, 1700000000, &err);
	for (i = 0; ok && i < n; i++)
	{
		struct stat st;

		snprintf(full, sizeof(full), "%s/%s", src, names[i]);
		if (lstat(full, &st) != 0)
			die("lstat", full);
		if (S_ISDIR(st.st_mode))
			ok = sb_backup_add_dir(b, names[i], st.st_mode & 07777, st.st_mtime, &err);
		else if (S_ISLNK(st.st_mode))
		{
			char		link[PATH_MAX];
			ssize_t		len = readlink(full, link, sizeof(link) - 1);

			if (len < 0)
				die("readlink", full);
			link[len] = '\0';
			ok = sb_backup_add_symlink(b, names[i], link, st.st_mtime, &err);
		}
		else
			ok = sb_backup_add_file(b, names[i], full, &err);
	}
	if (!ok)
	{
		sb_backup_abort(b);
		die("backup", err.message);
	}
	if (!sb_backup_finish(b, NULL, &err))
		die("backup", err.message);
}

static void
manifest_seed(const char *location, const char *seed)
{
	char		path[PATH_MAX * 2];
	uint8_t    *text;
	size_t		len;

	snprintf(path, sizeof(path), "%s/manifest.json", location);
	text = read_file(path, &len);
	write_seed("manifest", seed, -1, text, len);
	free(text);
}

/* For the incremental seed: files under a/ are judged by block; only a first block changed. */
static bool
seed_under_a(void *arg, const char *path)
{
	(void) arg;
	return strncmp(path, "a/", 2) == 0;
}

static bool
seed_first_block(void *arg, const char *path, int fd, uint64_t offset, const uint8_t *block)
{
	(void) arg;
	(void) path;
	(void) fd;
	(void) block;
	return offset == 0;
}

/* An incremental backup of LOCATION's tree (a manifest 3.0 with a parent and changed blocks). */
static void
incremental_seed(SbBackupOptions *o, const char *src, const char *const *names, size_t n,
				 const char *parent_location)
{
	SbError		err;
	SbArchive  *parent = sb_archive_open(parent_location, &err);
	char		path[PATH_MAX * 2];

	if (parent == NULL)
		die("open parent", err.message);
	o->name = "incr";
	o->type = SB_BACKUP_INCR;
	o->parent = parent->manifest;
	o->block_size = 4096;
	o->hooks.file_filter = seed_under_a;
	o->hooks.block_filter = seed_first_block;
	backup_files(o, src, names, n);
	snprintf(path, sizeof(path), "%s/incr", o->destinations[0]);
	manifest_seed(path, "incremental.json");
	o->type = SB_BACKUP_FULL;
	o->parent = NULL;
	sb_archive_close(parent);
}

/* Backups of other shapes than the fixture's, for their manifests. */
static void
other_manifests(void)
{
	static const char *const names[] = {
		"a", "a/b", "a/b/c.dat", "a/dir\xff", "a/dir\xff/f\x01", "hole", "pg_tblspc",
		"pg_tblspc/16385", "z.txt"
	};
	char		src[PATH_MAX],
				dests[3][PATH_MAX],
				path[PATH_MAX * 2];
	const char *dest_ptrs[3];
	uint8_t		data[12000];
	double		weights[3] = {1, 2.5, 0.75};
	SbBackupOptions o;
	int			fd;
	size_t		i;

	if (snprintf(src, sizeof(src), "%s/src", work) >= (int) sizeof(src))
		die("path too long", work);
	make_dir(src);
	for (i = 0; i < 3; i++)
	{
		if (snprintf(dests[i], PATH_MAX, "%s/other%zu%s", work, i + 1, i == 2 ? "-\xfe" : "") >=
			PATH_MAX)
			die("path too long", work);
		make_dir(dests[i]);
		dest_ptrs[i] = dests[i];
	}
	for (i = 0; i < sizeof(data); i++)
		data[i] = (uint8_t) ("0123456789abcdef"[(i * 7) % 16] ^ (i % 251 == 0));
	snprintf(path, sizeof(path), "%s/a", src);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/a/b", src);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/a/b/c.dat", src);
	write_file(path, data, sizeof(data), 0640);
	snprintf(path, sizeof(path), "%s/a/dir\xff", src);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/a/dir\xff/f\x01", src);
	write_file(path, data, 333, 0600);
	snprintf(path, sizeof(path), "%s/pg_tblspc", src);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/pg_tblspc/16385", src);
	if (symlink("/srv/ts-\xc0", path) != 0)
		die("symlink", path);
	snprintf(path, sizeof(path), "%s/hole", src);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || pwrite(fd, data, 4096, 8192) != 4096 || pwrite(fd, data, 4096, 40960) != 4096 ||
		pwrite(fd, data, 100, 90000) != 100 || ftruncate(fd, 131072) != 0 || fsync(fd) != 0 ||
		close(fd) != 0)
		die("could not write", path);
	snprintf(path, sizeof(path), "%s/z.txt", src);
	write_file(path, "hello\n", 6, 0644);

	memset(&o, 0, sizeof(o));
	o.destinations = dest_ptrs;
	o.ndestinations = 3;
	o.weights = weights;
	o.name = "three";
	o.label = "label \xe9t\xe9";	/* Latin-1: written as encoded_label */
	o.tool = "stripebackup seeds";
	o.codec = SB_CODEC_ZSTD;
	o.level = -5;
	o.balance = SB_BALANCE_WEIGHTED;
	o.chunk_size = 4096;
	o.workers = 1;
	o.detect_holes = true;
	o.metadata_json = "{\"kind\":\"postgresql\",\"timeline\":1,\"start_lsn\":\"0/2000028\","
		"\"tablespaces\":[{\"oid\":16385,\"location\":\"/srv/ts\",\"in_place\":false}],"
		"\"data_checksums\":true}";
	backup_files(&o, src, names, sizeof(names) / sizeof(names[0]));
	snprintf(path, sizeof(path), "%s/three", dests[0]);
	manifest_seed(path, "three-stripes-odd-names.json");

	/* The same over three stripes with redundancy 1, a run of groups of one block (3.1). */
	o.name = "redundant";
	o.redundancy = 1;
	backup_files(&o, src, names, sizeof(names) / sizeof(names[0]));
	snprintf(path, sizeof(path), "%s/redundant", dests[0]);
	manifest_seed(path, "three-stripes-redundancy.json");
	o.redundancy = 0;

	/* The same tree, adaptive, uncompressed, bigger chunks, one destination. */
	o.ndestinations = 1;
	o.weights = NULL;
	o.name = "one";
	o.label = NULL;
	o.metadata_json = NULL;
	o.codec = SB_CODEC_NONE;
	o.balance = SB_BALANCE_ADAPTIVE;
	o.chunk_size = 65536;
	o.detect_holes = false;
	o.file_stamps = true;		/* the parent of the incremental seed */
	backup_files(&o, src, names, sizeof(names) / sizeof(names[0]));
	snprintf(path, sizeof(path), "%s/one", dests[0]);
	manifest_seed(path, "one-stripe-adaptive.json");
	incremental_seed(&o, src, names, sizeof(names) / sizeof(names[0]), path);

	/* Nothing but the root. */
	o.name = "empty";
	backup_files(&o, src, names, 0);
	snprintf(path, sizeof(path), "%s/empty", dests[0]);
	manifest_seed(path, "empty.json");
}

/* Stripe seeds from stripe 1 (and 2) of the fixture archives. */
static void
stripe_seeds(void)
{
	char		path[PATH_MAX * 2];
	uint8_t    *zstd,
			   *none,
			   *second;
	size_t		zlen,
				nlen,
				slen;
	SbTrailer	t;
	SbIndexEntry e;
	SbError		err;

	snprintf(path, sizeof(path), "%s/d1/%s/stripe-1.sbs", work, FUZZ_NAME_ZSTD);
	zstd = read_file(path, &zlen);
	snprintf(path, sizeof(path), "%s/d1/%s/stripe-1.sbs", work, FUZZ_NAME_NONE);
	none = read_file(path, &nlen);
	snprintf(path, sizeof(path), "%s/d2/%s/stripe-2.sbs", work, FUZZ_NAME_ZSTD);
	second = read_file(path, &slen);

	write_seed("stripe", "zstd", 0, zstd, zlen);
	write_seed("stripe", "zstd-reseal", FUZZ_STRIPE_RESEAL, zstd, zlen);
	write_seed("stripe", "zstd-restore", FUZZ_STRIPE_RESTORE, zstd, zlen);
	write_seed("stripe", "zstd-reseal-restore", FUZZ_STRIPE_RESEAL | FUZZ_STRIPE_RESTORE,
			   zstd, zlen);
	write_seed("stripe", "none", FUZZ_STRIPE_NONE, none, nlen);
	write_seed("stripe", "none-reseal", FUZZ_STRIPE_NONE | FUZZ_STRIPE_RESEAL, none, nlen);
	write_seed("stripe", "none-restore", FUZZ_STRIPE_NONE | FUZZ_STRIPE_RESTORE, none, nlen);

	/* Truncated: no trailer, header only, nothing at all. */
	write_seed("stripe", "zstd-truncated", 0, zstd, zlen - 1);
	write_seed("stripe", "zstd-header-only", 0, zstd, SB_STRIPE_HEADER_SIZE);
	write_seed("stripe", "empty", 0, zstd, 0);
	/* Stripe 2 where stripe 1 belongs. */
	write_seed("stripe", "zstd-wrong-number", 0, second, slen);
	/* Stripes of the two archives swapped (each chunk names its own codec). */
	write_seed("stripe", "none-in-zstd", 0, none, nlen);
	write_seed("stripe", "zstd-in-none", FUZZ_STRIPE_NONE | FUZZ_STRIPE_RESTORE, zstd, zlen);

	/* One flipped payload byte in the first chunk, plain and resealed. */
	if (!sb_format_decode_trailer(zstd + zlen - SB_TRAILER_SIZE, &t, &err))
		die("fixture stripe", err.message);
	sb_format_decode_index_entry(zstd + t.index_offset, &e);
	zstd[e.offset + SB_CHUNK_HEADER_SIZE + e.stored_len / 2] ^= 0x10;
	write_seed("stripe", "zstd-flipped", FUZZ_STRIPE_RESTORE, zstd, zlen);
	write_seed("stripe", "zstd-flipped-reseal", FUZZ_STRIPE_RESEAL | FUZZ_STRIPE_RESTORE,
			   zstd, zlen);
	zstd[e.offset + SB_CHUNK_HEADER_SIZE + e.stored_len / 2] ^= 0x10;
	/* A flipped index entry (its raw length), resealed. */
	zstd[t.index_offset + 16] ^= 0x01;
	write_seed("stripe", "zstd-index-reseal", FUZZ_STRIPE_RESEAL, zstd, zlen);
	free(zstd);
	free(none);
	free(second);
}

/* FUZZ_WAL_NAME holding TEXT, archived by the engine into destination DEST (sealed with KEY if given); its .sbw file read. */
static uint8_t *
archive_history(const char *dest, const char *text, const SbKey *key, size_t *len)
{
	const char *const dests[] = {dest};
	SbWalArchiveOptions o = {.destinations = dests, .ndestinations = 1,
		.system_identifier = FUZZ_WAL_SYSID, .codec = SB_CODEC_ZSTD, .level = 3, .workers = 1,
	.encryption_key = key};
	SbWalPushResult r;
	SbWalArchive *a;
	SbError		err;
	char		path[PATH_MAX * 2];

	make_dir(dest);
	snprintf(path, sizeof(path), "%s/source", dest);
	write_file(path, text, strlen(text), 0600);
	if ((a = sb_wal_archive_open(&o, &err)) == NULL)
		die("WAL archive", err.message);
	if (!sb_wal_push(a, FUZZ_WAL_NAME, path, &r))
		die("WAL push", r.error.message);
	sb_wal_archive_close(a);
	snprintf(path, sizeof(path), "%s/wal/%llu/%s.sbw", dest, (unsigned long long) FUZZ_WAL_SYSID,
			 FUZZ_WAL_NAME);
	return read_file(path, len);
}

/* The same history files sealed (format 2.0), read under the key and without, whole and damaged. */
static void
sealed_wal_seeds(const char *text)
{
	char		dest[PATH_MAX + 16];
	uint8_t    *zstd,
			   *raw;
	size_t		zlen,
				rlen;
	SbKey		key;

	fuzz_wal_key(&key);
	snprintf(dest, sizeof(dest), "%s/wal-sealed-zstd", work);
	zstd = archive_history(dest, text, &key, &zlen);
	snprintf(dest, sizeof(dest), "%s/wal-sealed-raw", work);
	raw = archive_history(dest, "1\t0/5000A0\tno recovery target specified\n", &key, &rlen);
	write_seed("wal", "sealed-zstd", FUZZ_WAL_KEYED, zstd, zlen);
	write_seed("wal", "sealed-zstd-reseal", FUZZ_WAL_KEYED | FUZZ_WAL_RESEAL, zstd, zlen);
	write_seed("wal", "sealed-raw", FUZZ_WAL_KEYED, raw, rlen);
	write_seed("wal", "sealed-raw-reseal", FUZZ_WAL_KEYED | FUZZ_WAL_RESEAL, raw, rlen);
	write_seed("wal", "sealed-without-key", 0, raw, rlen);
	write_seed("wal", "sealed-truncated", FUZZ_WAL_KEYED, zstd, zlen - 1);
	write_seed("wal", "sealed-header-only", FUZZ_WAL_KEYED | FUZZ_WAL_RESEAL, zstd, 128);
	zstd[128 + (zlen - 128) / 2] ^= 0x10;
	write_seed("wal", "sealed-zstd-flipped-reseal", FUZZ_WAL_KEYED | FUZZ_WAL_RESEAL, zstd, zlen);
	raw[20] ^= 0x01;
	write_seed("wal", "sealed-other-cluster-reseal", FUZZ_WAL_KEYED | FUZZ_WAL_RESEAL, raw, rlen);
	free(zstd);
	free(raw);
	sb_key_clear(&key);
}

static void
wal_seeds(void)
{
	char		text[4096] = "";
	char		dest[PATH_MAX + 16];
	uint8_t    *zstd,
			   *raw;
	size_t		zlen,
				rlen;
	int			i;

	for (i = 1; i < 40; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "%d\t0/%X\tno recovery target specified\n", i, i * 0x1000028);
	snprintf(dest, sizeof(dest), "%s/wal-zstd", work);
	zstd = archive_history(dest, text, NULL, &zlen);
	snprintf(dest, sizeof(dest), "%s/wal-raw", work);
	raw = archive_history(dest, "1\t0/5000A0\tno recovery target specified\n", NULL, &rlen);
	write_seed("wal", "plain-under-key", FUZZ_WAL_KEYED, raw, rlen);
	write_seed("wal", "zstd", 0, zstd, zlen);
	write_seed("wal", "zstd-reseal", FUZZ_WAL_RESEAL, zstd, zlen);
	write_seed("wal", "raw", 0, raw, rlen);
	write_seed("wal", "raw-reseal", FUZZ_WAL_RESEAL, raw, rlen);
	write_seed("wal", "zstd-truncated", 0, zstd, zlen - 1);
	write_seed("wal", "header-only", FUZZ_WAL_RESEAL, zstd, 128);
	zstd[128 + (zlen - 128) / 2] ^= 0x10;
	write_seed("wal", "zstd-flipped-reseal", FUZZ_WAL_RESEAL, zstd, zlen);
	raw[rlen - 1] ^= 0x01;
	write_seed("wal", "raw-flipped-reseal", FUZZ_WAL_RESEAL, raw, rlen);
	free(zstd);
	free(raw);
	sealed_wal_seeds(text);
}

/*
 * Synthetic WAL for fuzz_walrec: the first pages of segment 1 of 1 MB
 * segments (what libFuzzer mutates well), records crossing pages, each
 * version's page magic, fed whole and in small pieces.
 */
static void
walrec_seeds(void)
{
	static const uint16_t magic[] = {0xD110, 0xD113, 0xD116, 0xD118};
	uint32_t	v;

	for (v = 0; v < 4; v++)
	{
		WalGen		g;
		char		name[32];

		wg_init(&g, (uint32_t) 1 << 20, 1, 1, magic[v], 1, UINT64_C(7301234567890123456));
		wg_filler(&g, 100);
		wg_commit(&g, 700, 1000, 0);
		wg_filler(&g, 9000);
		wg_restore_point(&g, "rp1", 2000);
		wg_commit(&g, 701, 3000, 9000);
		wg_abort(&g, 702, 4000);
		wg_switch(&g);
		snprintf(name, sizeof(name), "pg%u", 15 + v);
		write_seed("walrec", name, 0x06, g.bytes, 4 * 8192);
		snprintf(name, sizeof(name), "pg%u-bytes", 15 + v);
		write_seed("walrec", name, 0x02, g.bytes, 3 * 8192);
		wg_free(&g);
	}
}

int
main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char		path[PATH_MAX * 2];
	SbError		err;

	if (argc != 2)
	{
		fprintf(stderr, "usage: make_seeds CORPUS-DIR\n");
		return 2;
	}
	corpus = argv[1];
	snprintf(path, sizeof(path), "%s/manifest", corpus);
	make_dir(corpus);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/stripe", corpus);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/wal", corpus);
	make_dir(path);
	snprintf(path, sizeof(path), "%s/walrec", corpus);
	make_dir(path);
	if (!fuzz_tempdir(tmp && tmp[0] ? tmp : "/tmp", "sbfuzz-seeds", work, sizeof(work)))
		return 1;
	if (!fuzz_make_fixture(work, FUZZ_NAME_ZSTD, SB_CODEC_ZSTD, &err) ||
		!fuzz_make_fixture(work, FUZZ_NAME_NONE, SB_CODEC_NONE, &err))
		die("fixture", err.message);
	snprintf(path, sizeof(path), "%s/d1/%s", work, FUZZ_NAME_ZSTD);
	manifest_seed(path, "fixture-zstd.json");
	snprintf(path, sizeof(path), "%s/d1/%s", work, FUZZ_NAME_NONE);
	manifest_seed(path, "fixture-none.json");
	other_manifests();
	stripe_seeds();
	wal_seeds();
	walrec_seeds();
	fuzz_rmtree(work);
	printf("make_seeds: %d seeds written under %s\n", written, corpus);
	return 0;
}
