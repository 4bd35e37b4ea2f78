/*
 * fuzz_wal.c
 *		libFuzzer target: arbitrary bytes as an archived WAL file
 *		(<name>.sbw) in a one-destination WAL archive, read the three ways
 *		the engine reads one: listed (its header), restored (sb_wal_get)
 *		and verified (sb_wal_verify).
 *
 * Input: one flag byte (FUZZ_WAL_RESEAL: recompute the payload hash and the
 * header's seal or, for a sealed file, its tag first, so mutations get past
 * them to the checks behind; FUZZ_WAL_KEYED: read the archive under the
 * seeds' key, so that sealed files are opened and files in the clear
 * refused), then the file.  The archive is a folder under /dev/shm made
 * once; the file is always "00000002.history" of one system identifier.
 *
 * Besides the sanitizers, the target checks that the readers agree: a file
 * restores exactly when verify finds no problem, a restored file has the
 * length its header gives, a refused one leaves no file behind, and every
 * refusal says what is wrong.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fixture.h"
#include "fuzz_wal.h"
#include "wal/wal_internal.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX];
static char dest[PATH_MAX + 8];
static char archived[PATH_MAX * 2];
static char target[PATH_MAX + 16];
static uint8_t *image;
static size_t image_cap;

static void
cleanup(void)
{
	if (root[0] != '\0')
		fuzz_rmtree(root);
	free(image);
}

static void
die(const char *what, const char *detail)
{
	fprintf(stderr, "fuzz_wal: %s: %s\n", what, detail ? detail : strerror(errno));
	abort();
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	char		folder[PATH_MAX + 96];

	(void) argc;
	(void) argv;
	if (!fuzz_tempdir(base ? base : "/tmp", "sbfuzz-wal", root, sizeof(root)))
		abort();
	atexit(cleanup);
	snprintf(dest, sizeof(dest), "%s/d1", root);
	snprintf(folder, sizeof(folder), "%s/wal", dest);
	if (mkdir(dest, 0700) != 0 || mkdir(folder, 0700) != 0)
		die("mkdir", NULL);
	snprintf(folder, sizeof(folder), "%s/wal/%llu", dest, (unsigned long long) FUZZ_WAL_SYSID);
	if (mkdir(folder, 0700) != 0)
		die("mkdir", NULL);
	snprintf(archived, sizeof(archived), "%s/%s.sbw", folder, FUZZ_WAL_NAME);
	snprintf(target, sizeof(target), "%s/target", root);
	return 0;
}

/* The input, after its flag byte, as it is to be read (resealed if asked, under KEY if given). */
static const uint8_t *
prepare(const uint8_t *data, size_t size, const SbKey *key, size_t *len)
{
	*len = size - 1;
	if (!(data[0] & FUZZ_WAL_RESEAL))
		return data + 1;
	if (*len > image_cap)
	{
		free(image);
		image_cap = *len;
		if ((image = malloc(image_cap)) == NULL)
			abort();
	}
	memcpy(image, data + 1, *len);
	fuzz_reseal_wal(image, *len, key);
	return image;
}

static void
write_input(const uint8_t *bytes, size_t len)
{
	int			fd = open(archived, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0 || (len > 0 && write(fd, bytes, len) != (ssize_t) len) || close(fd) != 0)
		die("write the input", NULL);
}

static void
count_problem(void *arg, const char *message)
{
	if (message == NULL || message[0] == '\0')
		die("a problem", "without a message");
	(*(int *) arg)++;
}

/* The promises the three readers keep together. */
static void
check_agreement(const SbWalDests *d, bool restored, const SbError *err, const SbWalListing *l)
{
	struct stat st;
	uint64_t	files,
				problems;
	int			reported = 0;
	SbError		verify_err;

	if (!sb_wal_verify(d, count_problem, &reported, &files, &problems, &verify_err))
		die("verify could not run", verify_err.message);
	if (problems != (uint64_t) reported)
		die("verify", "counted problems it did not report");
	if (restored && problems != 0)
		die("disagreement", "restored, yet verify found a problem");
	if (!restored && problems == 0)
		die("disagreement", "refused, yet verify found no problem");
	if (restored && (l->count != 1 || stat(target, &st) != 0 ||
					 (uint64_t) st.st_size != l->entries[0].info.raw_bytes))
		die("restore", "the file restored is not of the length its header gives");
	if (!restored && (stat(target, &st) == 0 || errno != ENOENT))
		die("restore", "a refused file left something behind");
	if (!restored && (err->code == SB_OK || err->message[0] == '\0'))
		die("restore", "refused without an error");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static SbKey key;
	const char *const paths[] = {dest};
	SbWalDests	d = {.paths = paths, .count = 1, .system_identifier = FUZZ_WAL_SYSID};
	SbWalGetOptions o;
	SbWalGetResult r;
	SbWalListing l;
	SbError		err;
	const uint8_t *bytes;
	size_t		len;
	bool		restored;

	if (size < 1)
		return 0;
	if (key.len == 0)
		fuzz_wal_key(&key);
	d.key = (data[0] & FUZZ_WAL_KEYED) ? &key : NULL;
	o = (SbWalGetOptions) {.dests = d};
	bytes = prepare(data, size, d.key, &len);
	write_input(bytes, len);
	if (!sb_wal_list(&d, &l, &err))
		die("list could not run", err.message);
	if (l.count + l.nproblems != 1)
		die("list", "the file is neither listed nor a problem");
	restored = sb_wal_get(&o, FUZZ_WAL_NAME, target, &r, &err);
	check_agreement(&d, restored, &err, &l);
	sb_wal_listing_free(&l);
	unlink(target);
	return 0;
}
