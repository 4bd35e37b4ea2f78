/*
 * fixture.c
 *		The fixed archive of the stripe fuzz target, and shared helpers.
 *
 * Content: directories, a compressible text file, an incompressible one (its
 * chunks are stored uncompressed even with zstd), an empty file, a tablespace
 * symlink,
 * a sparse file with two data extents and a small tail file: about 34 KB,
 * nine chunks of 4 KiB, six in stripe 1 and three in stripe 2 (weights 2:1).
 * One compression worker, weighted balance and a fixed backup id make the
 * stripe files the same on every run; what the manifest holds of the run
 * (times, temporary folders) is then fixed too, and the stripes sealed
 * again with the SHA-256 of that manifest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "format/checksum.h"
#include "fixture.h"
#include "format/format.h"
#include "fuzz_wal.h"
#include "wal/wal_internal.h"

#define FIXTURE_MTIME 1700000000
#define FIXTURE_CHUNK_SIZE 4096

static const uint8_t fixed_uuid[16] = {
	0x5b, 0xf0, 0x22, 0x7a, 0x11, 0x3c, 0x4e, 0x8d,
	0x9a, 0x07, 0x66, 0x2e, 0xc1, 0x58, 0x3f, 0xb4
};

bool
fuzz_tempdir(const char *dir, const char *tag, char *out, size_t outlen)
{
	snprintf(out, outlen, "%s/%s-XXXXXX", dir, tag);
	if (mkdtemp(out) != NULL)
		return true;
	fprintf(stderr, "could not create a folder under %s: %s\n", dir, strerror(errno));
	return false;
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) st;
	(void) ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

void
fuzz_rmtree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* Deterministic bytes: text-like when COMPRESSIBLE, else noise. */
static void
fill(uint8_t *buf, size_t len, uint32_t seed, bool compressible)
{
	static const char text[] = "stripe chunk backup restore manifest weight page wal\n";
	uint32_t	x = seed * 2654435761u + 1;
	size_t		i;

	for (i = 0; i < len; i++)
	{
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		buf[i] = compressible ? (uint8_t) text[(i + x % 3) % (sizeof(text) - 1)] : (uint8_t) x;
	}
}

/* A 64 KiB file with data at 0 and at 32 KiB, holes elsewhere. */
static bool
make_sparse_source(const char *path, SbError *err)
{
	uint8_t		block[4096];
	struct timespec times[2];
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	bool		ok;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not create \"%s\"", path);
	fill(block, sizeof(block), 7, true);
	ok = ftruncate(fd, 65536) == 0 &&
		pwrite(fd, block, sizeof(block), 0) == (ssize_t) sizeof(block) &&
		pwrite(fd, block, sizeof(block), 32768) == (ssize_t) sizeof(block);
	times[0].tv_sec = FIXTURE_MTIME;
	times[0].tv_nsec = 0;
	times[1] = times[0];
	ok = ok && fsync(fd) == 0 && futimens(fd, times) == 0;
	if (!ok)
		sb_error_set_errno(err, errno, "could not write \"%s\"", path);
	close(fd);
	return ok;
}

/* The fixed content, in archive order. */
static bool
add_content(SbBackup *b, const char *sparse_source, SbError *err)
{
	static uint8_t text[20000];
	static uint8_t noise[6000];
	static uint8_t tail[100];

	fill(text, sizeof(text), 1, true);
	fill(noise, sizeof(noise), 2, false);
	fill(tail, sizeof(tail), 3, true);
	return sb_backup_add_dir(b, ".", 0700, FIXTURE_MTIME, err) &&
		sb_backup_add_dir(b, "base", 0700, FIXTURE_MTIME, err) &&
		sb_backup_add_dir(b, "base/1", 0700, FIXTURE_MTIME, err) &&
		sb_backup_add_data(b, "base/1/noise", noise, sizeof(noise), 0600, FIXTURE_MTIME, err) &&
		sb_backup_add_data(b, "base/1/text", text, sizeof(text), 0600, FIXTURE_MTIME, err) &&
		sb_backup_add_data(b, "empty", "", 0, 0600, FIXTURE_MTIME, err) &&
		sb_backup_add_dir(b, "pg_tblspc", 0700, FIXTURE_MTIME, err) &&
		sb_backup_add_symlink(b, "pg_tblspc/16385", "/srv/tablespaces/16385", FIXTURE_MTIME, err) &&
		sb_backup_add_file(b, "sparse", sparse_source, err) &&
		sb_backup_add_data(b, "tail", tail, sizeof(tail), 0640, FIXTURE_MTIME, err);
}

/* Record in stripe file PATH's trailer (resealed) the manifest digest SHA of LEN bytes. */
static bool
seal_with_manifest(const char *path, const uint8_t *sha, uint64_t len, SbError *err)
{
	uint8_t		tail[SB_TRAILER_SIZE];
	SbTrailer	t;
	struct stat st;
	int			fd = open(path, O_RDWR | O_CLOEXEC);
	bool		ok;

	if (fd < 0)
		return sb_error_set_errno(err, errno, "could not open \"%s\"", path);
	ok = fstat(fd, &st) == 0 && st.st_size >= SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE &&
		pread(fd, tail, sizeof(tail), st.st_size - SB_TRAILER_SIZE) == (ssize_t) sizeof(tail);
	if (!ok)
		sb_error_set_errno(err, errno, "could not read \"%s\"", path);
	ok = ok && sb_format_decode_trailer(tail, &t, err);
	if (ok)
	{
		memcpy(t.manifest_sha256, sha, SB_SHA256_LEN);
		t.manifest_length = len;
		sb_format_encode_trailer(&t, tail);
		ok = pwrite(fd, tail, sizeof(tail), st.st_size - SB_TRAILER_SIZE) == (ssize_t) sizeof(tail);
		if (!ok)
			sb_error_set_errno(err, errno, "could not write \"%s\"", path);
	}
	close(fd);
	return ok;
}

/*
 * What differs from run to run (times, the temporary destinations, the
 * writers' seconds) is set to fixed values, so that the manifest, and the
 * SHA-256 of it every trailer records, is the same on every run.
 */
static void
make_manifest_fixed(SbManifest *m)
{
	uint32_t	i;

	free(m->started_at);
	free(m->finished_at);
	m->started_at = strdup("2024-01-01T00:00:00Z");
	m->finished_at = strdup("2024-01-01T00:00:01Z");
	for (i = 0; i < m->nstripes; i++)
	{
		SbStripeInfo *s = &m->stripes[i];
		char		dest[32];

		snprintf(dest, sizeof(dest), "/fuzz/d%u", i + 1);
		free(s->destination);
		s->destination = strdup(dest);
		s->seconds = 0;
		s->finished_after = 0;
		s->ntimeline = 1;
		s->timeline[0] = s->stored_bytes;
		s->timeline_interval = 0.1;
	}
}

/* Fix the manifest, seal both stripes with it, and write it in both folders. */
static bool
fix_manifest(SbManifest *m, char dests[][PATH_MAX], const char *name, SbError *err)
{
	char		folder[PATH_MAX];
	char		stripe[PATH_MAX + 32];
	uint8_t		sha[SB_SHA256_LEN];
	size_t		len;
	char	   *bytes;
	uint32_t	i;
	bool		ok;

	make_manifest_fixed(m);
	bytes = sb_manifest_serialize(m, &len, err);
	ok = bytes != NULL && sb_sha256(bytes, len, sha, err);
	for (i = 0; ok && i < FUZZ_NDESTS; i++)
	{
		if (snprintf(folder, sizeof(folder), "%s/%s", dests[i], name) >= (int) sizeof(folder))
			return sb_error_set(err, SB_EINVAL, "path too long: %s/%s", dests[i], name);
		snprintf(stripe, sizeof(stripe), "%s/%s", folder, m->stripes[i].file_name);
		ok = seal_with_manifest(stripe, sha, len, err) && sb_manifest_write(m, folder, err);
	}
	free(bytes);
	return ok;
}

bool
fuzz_make_fixture(const char *root, const char *name, SbCodec codec, SbError *err)
{
	char		dests[FUZZ_NDESTS][PATH_MAX];
	const char *dest_ptrs[FUZZ_NDESTS];
	char		sparse[PATH_MAX];
	double		weights[FUZZ_NDESTS] = {2, 1};
	SbBackupOptions o;
	SbBackup   *b;
	SbManifest *m = NULL;
	uint32_t	i;
	bool		ok;

	sb_error_clear(err);
	for (i = 0; i < FUZZ_NDESTS; i++)
	{
		snprintf(dests[i], PATH_MAX, "%s/d%u", root, i + 1);
		dest_ptrs[i] = dests[i];
		if (mkdir(dests[i], 0700) != 0 && errno != EEXIST)
			return sb_error_set_errno(err, errno, "could not create \"%s\"", dests[i]);
	}
	snprintf(sparse, sizeof(sparse), "%s/sparse-source", root);
	if (!make_sparse_source(sparse, err))
		return false;
	memset(&o, 0, sizeof(o));
	o.destinations = dest_ptrs;
	o.ndestinations = FUZZ_NDESTS;
	o.weights = weights;
	o.name = name;
	o.label = "fuzz fixture";
	o.tool = "stripebackup fuzz fixture";
	o.codec = codec;
	o.level = 1;
	o.balance = SB_BALANCE_WEIGHTED;
	o.chunk_size = FIXTURE_CHUNK_SIZE;
	o.workers = 1;				/* chunks reach the stripes in stream order */
	o.detect_holes = true;
	memcpy(o.uuid, fixed_uuid, 16);
	b = sb_backup_begin(&o, err);
	if (b == NULL)
		return false;
	if (!add_content(b, sparse, err))
	{
		sb_backup_abort(b);
		return false;
	}
	ok = sb_backup_finish(b, &m, err) && fix_manifest(m, dests, name, err);
	sb_manifest_free(m);
	unlink(sparse);
	return ok;
}

/*
 * Recompute what random mutations can hardly get right, so the fuzzer gets
 * past the seals to the checks behind them: the header's seal, each chunk's
 * stored-payload hash (in its index entry and its header) and header seal,
 * the index hash and the trailer's seal.  Raw-data hashes stay as they are:
 * recomputing them would need the decompression under test.  Structures
 * that lie outside the image are left alone.
 */
void
fuzz_reseal_stripe(uint8_t *p, size_t len)
{
	uint8_t    *trailer;
	uint64_t	index_offset,
				count,
				i;

	if (len < SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE)
		return;
	sb_format_seal(p, SB_STRIPE_HEADER_SIZE);
	trailer = p + len - SB_TRAILER_SIZE;
	index_offset = sb_format_get64(trailer + 8);
	count = sb_format_get64(trailer + 16);
	if (index_offset > len - SB_TRAILER_SIZE ||
		count > (len - SB_TRAILER_SIZE - index_offset) / SB_INDEX_ENTRY_SIZE)
		return;
	for (i = 0; i < count; i++)
	{
		uint8_t    *entry = p + index_offset + i * SB_INDEX_ENTRY_SIZE;
		uint64_t	offset = sb_format_get64(entry + 8);
		uint64_t	stored_len = entry[20] | (entry[21] << 8) | (entry[22] << 16) |
			((uint64_t) entry[23] << 24);
		uint64_t	hash;

		if (offset > index_offset || SB_CHUNK_HEADER_SIZE + stored_len > index_offset - offset)
			continue;
		hash = sb_hash64(p + offset + SB_CHUNK_HEADER_SIZE, stored_len);
		sb_format_put64(entry + 40, hash);
		sb_format_put64(p + offset + 32, hash);
		sb_format_seal(p + offset, SB_CHUNK_HEADER_SIZE);
	}
	sb_format_put64(trailer + 40, sb_hash64(p + index_offset, count * SB_INDEX_ENTRY_SIZE));
	sb_format_seal(trailer, SB_TRAILER_SIZE);
}

void
fuzz_wal_key(SbKey *key)
{
	memset(key, 0, sizeof(*key));
	memset(key->secret, 'k', 48);
	key->len = 48;
}

/* A sealed image's header tagged again under KEY, with the keys its salt, cluster and name give. */
static void
retag_wal(uint8_t *p, const SbKey *key)
{
	SbWalHeader h;
	SbWalKeys	k;
	SbError		err;

	memset(&h, 0, sizeof(h));
	h.system_identifier = sb_format_get64(p + 16);
	memcpy(h.name, p + 24, SB_WAL_NAME_MAX);
	memcpy(h.salt, p + 96, SB_WAL_SALT_LEN);
	if (sb_wal_keys_derive(key, &h, &k, &err))
		(void) sb_wal_tag(&k, p, p + SB_WAL_TAGGED_LEN, &err);
	sb_wal_keys_clear(&k);
}

/* The stored length made the payload's, the header proved again: the rest is left to the reader. */
void
fuzz_reseal_wal(uint8_t *p, size_t len, const SbKey *key)
{
	if (len < SB_WAL_HEADER_SIZE)
		return;
	sb_format_put64(p + 72, len - SB_WAL_HEADER_SIZE);
	if (sb_format_get16(p + 8) == SB_WAL_SEALED_MAJOR)
	{
		if (key != NULL)
			retag_wal(p, key);
		return;
	}
	sb_format_put64(p + 96, sb_hash64(p + SB_WAL_HEADER_SIZE, len - SB_WAL_HEADER_SIZE));
	sb_format_seal(p, SB_WAL_HEADER_SIZE);
}
