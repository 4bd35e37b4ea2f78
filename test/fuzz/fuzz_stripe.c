/*
 * fuzz_stripe.c
 *		libFuzzer target: arbitrary bytes as stripe 1 of a small, valid archive,
 *		read through the same pipeline as "stripebackup verify" and restore.
 *
 * Input: one flag byte (fixture.h: FUZZ_STRIPE_*), then the stripe file.
 * The fixture archives (zstd, and the same content uncompressed) are built
 * once, at start-up, with the engine itself; stripe 2 stays valid on disk.
 * The input lives in a memfd that the stripe reader opens by its /proc path,
 * so nothing is written to disk per run; a restore goes to a tmpfs folder
 * that is removed after each run.
 *
 * Besides the sanitizers, the target checks that verify and restore agree:
 * a stripe that verifies without a problem must restore, and one that does
 * not must fail the restore.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_archive.h"
#include "fixture.h"

int			LLVMFuzzerInitialize(int *argc, char ***argv);
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char root[PATH_MAX];
static char target[PATH_MAX + 16];
static SbArchive *archives[2];	/* zstd, none */
static int	input_fd = -1;
static uint8_t *image;
static size_t image_cap;
static bool verbose;			/* FUZZ_VERBOSE set: print each problem */

static void
cleanup(void)
{
	sb_archive_close(archives[0]);
	sb_archive_close(archives[1]);
	if (root[0] != '\0')
		fuzz_rmtree(root);
	free(image);
}

static void
die(const char *what, const SbError *err)
{
	fprintf(stderr, "fuzz_stripe: %s: %s\n", what, err ? err->message : strerror(errno));
	abort();
}

/* Open a fixture archive with stripe 1 read from the input memfd. */
static SbArchive *
open_fixture(const char *name, const char *input_path)
{
	char		location[PATH_MAX + 64];
	SbArchive  *a;
	SbError		err;

	snprintf(location, sizeof(location), "%s/d1/%s", root, name);
	a = sb_archive_open(location, &err);
	if (a == NULL)
		die("open the fixture archive", &err);
	snprintf(location, sizeof(location), "%s/d2/%s", root, name);
	if (!sb_archive_set_stripe_dir(a, 2, location, &err))
		die("find stripe 2 of the fixture archive", &err);
	free(a->stripe_paths[0]);
	a->stripe_paths[0] = strdup(input_path);
	if (a->stripe_paths[0] == NULL)
		die("strdup", NULL);
	return a;
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : getenv("TMPDIR");
	char		input_path[64];
	SbError		err;

	(void) argc;
	(void) argv;
	if (!fuzz_tempdir(base ? base : "/tmp", "sbfuzz-stripe", root, sizeof(root)))
		abort();
	atexit(cleanup);
	if (!fuzz_make_fixture(root, FUZZ_NAME_ZSTD, SB_CODEC_ZSTD, &err) ||
		!fuzz_make_fixture(root, FUZZ_NAME_NONE, SB_CODEC_NONE, &err))
		die("build the fixture archives", &err);
	input_fd = memfd_create("fuzz-stripe", MFD_CLOEXEC);
	if (input_fd < 0)
		die("memfd_create", NULL);
	snprintf(input_path, sizeof(input_path), "/proc/self/fd/%d", input_fd);
	archives[0] = open_fixture(FUZZ_NAME_ZSTD, input_path);
	archives[1] = open_fixture(FUZZ_NAME_NONE, input_path);
	snprintf(target, sizeof(target), "%s/target", root);
	verbose = getenv("FUZZ_VERBOSE") != NULL;
	return 0;
}

/*
 * Every problem says what is wrong, and names its stripe, or is about no
 * one stripe (stripe 0: a manifest copy, a whole file) and no chunk.
 */
static void
check_problem(void *arg, const SbProblem *p)
{
	const SbArchive *a = arg;

	if (p->stripe > a->manifest->nstripes || (p->stripe == 0 && p->chunk >= 0) ||
		p->code == SB_OK ||
		p->message == NULL || p->message[0] == '\0' ||
		(p->chunk >= 0 && (uint64_t) p->chunk >= a->manifest->total_chunks))
	{
		fprintf(stderr, "fuzz_stripe: malformed problem report: stripe %u chunk %lld: %s\n",
				p->stripe, (long long) p->chunk, p->message ? p->message : "(null)");
		abort();
	}
	if (verbose)
		fprintf(stderr, "problem: %s\n", p->message);
}

/* Put the stripe image in the memfd the archive reads stripe 1 from. */
static void
load_input(const uint8_t *data, size_t len)
{
	if (ftruncate(input_fd, 0) != 0 ||
		(len > 0 && pwrite(input_fd, data, len, 0) != (ssize_t) len))
		die("write the input", NULL);
}

static void
restore_and_compare(SbArchive *a, uint64_t problems)
{
	SbRestoreOptions ro;
	SbError		err;
	bool		ok;

	memset(&ro, 0, sizeof(ro));
	ro.target = target;
	ro.read.workers = 1;
	ro.read.buffer_count = 4;
	ok = sb_archive_restore(a, &ro, &err);
	if (ok != (problems == 0))
	{
		fprintf(stderr, "fuzz_stripe: verify found %llu problem(s) but restore %s: %s\n",
				(unsigned long long) problems, ok ? "succeeded" : "failed",
				ok ? "" : err.message);
		abort();
	}
	if (!ok && access(target, F_OK) == 0)
	{
		fprintf(stderr, "fuzz_stripe: a failed restore left \"%s\" behind\n", target);
		abort();
	}
	fuzz_rmtree(target);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SbArchive  *a;
	SbReadOptions ro;
	SbError		err;
	uint64_t	problems = 0;
	uint8_t		flags;

	if (size < 1)
		return 0;
	flags = data[0];
	a = archives[(flags & FUZZ_STRIPE_NONE) ? 1 : 0];
	if (size - 1 > image_cap)
	{
		free(image);
		image_cap = size - 1;
		image = malloc(image_cap);
		if (image == NULL)
			die("malloc", NULL);
	}
	if (size > 1)
		memcpy(image, data + 1, size - 1);
	if (flags & FUZZ_STRIPE_RESEAL)
		fuzz_reseal_stripe(image, size - 1);
	load_input(image, size - 1);

	memset(&ro, 0, sizeof(ro));
	ro.workers = 1;
	ro.buffer_count = 4;
	if (!sb_archive_verify(a, &ro, check_problem, a, &problems, &err))
		die("verify could not run", &err);
	if (flags & FUZZ_STRIPE_RESTORE)
		restore_and_compare(a, problems);
	return 0;
}
