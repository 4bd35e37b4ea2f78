/*
 * main.c
 *		Runs every engine unit test (the list tests.h describes) and prints
 *		TAP: "ok N" lines, then the plan "1..N".  Exits non-zero if any
 *		assertion failed.
 *
 * Usage: unit_tests [NAME-SUBSTRING ...] runs only the tests whose names
 * contain one of the arguments.  SB_UNIT_TIMEOUT (seconds, default 300)
 * bounds each test, not the whole run: a slow machine or a sanitizer makes the
 * run longer without making any one test hang.  Raise it for long modes such as
 * SB_FLIP_FULL=1.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "tests.h"

typedef struct UnitTest
{
	const char *name;
	void		(*fn) (void);
} UnitTest;

/* Every test, as the Makefile listed them (tests.h). */
static const UnitTest tests[] = {
#define SB_UNIT_TEST(fn) {#fn, fn},
#include "unit_tests.list"
#undef SB_UNIT_TEST
};

static bool
selected(const char *name, int argc, char **argv)
{
	int			i;

	if (argc < 2)
		return true;
	for (i = 1; i < argc; i++)
		if (strstr(name, argv[i]) != NULL)
			return true;
	return false;
}

int
main(int argc, char **argv)
{
	struct timespec t0,
				t1;
	size_t		i;
	unsigned	per_test;

	/* A deadlocked engine must not hang the run: SIGALRM ends it, non-zero. */
	th_install_signal_handlers();
	per_test = getenv("SB_UNIT_TIMEOUT") ? (unsigned) atoi(getenv("SB_UNIT_TIMEOUT")) : 300;
	setvbuf(stdout, NULL, _IOLBF, 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
	{
		struct timespec s0,
					s1;

		if (!selected(tests[i].name, argc, argv))
			continue;
		th_begin(tests[i].name);
		alarm(per_test);
		clock_gettime(CLOCK_MONOTONIC, &s0);
		tests[i].fn();
		clock_gettime(CLOCK_MONOTONIC, &s1);
		diag("%s took %.2f s", tests[i].name,
			 (double) (s1.tv_sec - s0.tv_sec) + (double) (s1.tv_nsec - s0.tv_nsec) / 1e9);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	diag("%d assertions, %d failed, %.2f s", th_count(), th_failures(),
		 (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
	printf("1..%d\n", th_count());
	return th_failures() == 0 && th_count() > 0 ? 0 : 1;
}
