/*
 * replay.c
 *		Runs a fuzz target over files, without libFuzzer: each argument is a
 *		file or a folder of files, each file one input (a folder that does not
 *		exist holds none).  With the target built
 *		under the sanitizers (make fuzz-replay), this checks the kept corpus and
 *		the regression inputs where clang is not installed, as in CI.
 */
#include <dirent.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

int			LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));
int			LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static long inputs;

static void
run_file(const char *path)
{
	FILE	   *f = fopen(path, "rb");
	uint8_t    *buf = NULL;
	size_t		len = 0,
				cap = 0,
				n;

	if (f == NULL)
	{
		perror(path);
		exit(1);
	}
	do
	{
		if (len == cap)
		{
			cap = cap ? cap * 2 : 65536;
			buf = realloc(buf, cap);
			if (buf == NULL)
				abort();
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	inputs++;
}

/* The files of DIR, in name order (a missing folder holds none). */
static void
run_dir(const char *dir)
{
	struct dirent **names;
	int			n = scandir(dir, &names, NULL, alphasort);
	int			i;

	if (n < 0)
		return;
	for (i = 0; i < n; i++)
	{
		char		path[PATH_MAX];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
			run_file(path);
		free(names[i]);
	}
	free(names);
}

int
main(int argc, char **argv)
{
	int			i;

	if (LLVMFuzzerInitialize != NULL)
		LLVMFuzzerInitialize(&argc, &argv);
	for (i = 1; i < argc; i++)
	{
		struct stat st;

		if (stat(argv[i], &st) != 0 || S_ISDIR(st.st_mode))
			run_dir(argv[i]);
		else
			run_file(argv[i]);
	}
	printf("%s: %ld inputs, no failure\n", argv[0], inputs);
	return 0;
}
