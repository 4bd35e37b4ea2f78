/*
 * files_floor.c
 *		What this machine can do with many small files, without stripebackup:
 *		the floor its backup and restore of such a tree are measured against
 *		(make bench-files).  Not part of the product.
 *
 *   files_floor write DIR COUNT SIZE THREADS
 *		COUNT files of SIZE bytes made under DIR in folders of 1,000 (the
 *		bench's layout), each created, written in one call, its time set
 *		and closed, THREADS folders at once; then one syncfs(), as a
 *		restore makes its files durable.  Prints files a second.
 *   files_floor read DIR COUNT THREADS
 *		The same files each opened, read whole and closed, THREADS folders
 *		at once: what a backup must do at least.  Prints files a second.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define PER_FOLDER 1000

typedef struct Job
{
	const char *dir;
	long		count;
	size_t		size;
	bool		writing;
	atomic_long next_folder;
	char	   *data;
} Job;

static void
die(const char *what, const char *path)
{
	fprintf(stderr, "files_floor: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static void
write_folder(Job *job, long folder)
{
	struct timespec times[2] = {{1700000000, 0}, {1700000000, 0}};
	char		path[4096];
	long		i;

	snprintf(path, sizeof(path), "%s/%ld", job->dir, folder);
	if (mkdir(path, 0700) != 0)
		die("mkdir", path);
	for (i = folder * PER_FOLDER; i < job->count && i < (folder + 1) * PER_FOLDER; i++)
	{
		int			fd;

		snprintf(path, sizeof(path), "%s/%ld/%ld", job->dir, folder, i % PER_FOLDER);
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, job->data, job->size) != (ssize_t) job->size ||
			futimens(fd, times) != 0 || close(fd) != 0)
			die("write", path);
	}
}

static void
read_folder(Job *job, long folder)
{
	char		path[4096];
	char		buf[1 << 16];
	long		i;

	for (i = folder * PER_FOLDER; i < job->count && i < (folder + 1) * PER_FOLDER; i++)
	{
		int			fd;
		ssize_t		n;

		snprintf(path, sizeof(path), "%s/%ld/%ld", job->dir, folder, i % PER_FOLDER);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME)) < 0 &&
			(fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
			die("open", path);
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			;
		if (n < 0 || close(fd) != 0)
			die("read", path);
	}
}

static void *
worker(void *arg)
{
	Job		   *job = arg;
	long		folders = (job->count + PER_FOLDER - 1) / PER_FOLDER;
	long		f;

	while ((f = atomic_fetch_add(&job->next_folder, 1)) < folders)
	{
		if (job->writing)
			write_folder(job, f);
		else
			read_folder(job, f);
	}
	return NULL;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int
main(int argc, char **argv)
{
	Job			job = {0};
	pthread_t	threads[64];
	int			nthreads,
				t;
	double		start;
	bool		writing = argc == 6 && strcmp(argv[1], "write") == 0;

	if (!writing && !(argc == 5 && strcmp(argv[1], "read") == 0))
	{
		fprintf(stderr, "usage: files_floor write DIR COUNT SIZE THREADS | read DIR COUNT THREADS\n");
		return 2;
	}
	job.dir = argv[2];
	job.count = atol(argv[3]);
	job.writing = writing;
	job.size = writing ? (size_t) atol(argv[4]) : 0;
	nthreads = atoi(argv[writing ? 5 : 4]);
	if (nthreads < 1 || nthreads > 64 || job.count < 1)
		return 2;
	if (writing && (job.data = malloc(job.size + 1)) == NULL)
		return 1;
	if (writing)
		memset(job.data, 'x', job.size);
	start = now();
	for (t = 0; t < nthreads; t++)
		pthread_create(&threads[t], NULL, worker, &job);
	for (t = 0; t < nthreads; t++)
		pthread_join(threads[t], NULL);
	if (writing)
	{
		int			fd = open(job.dir, O_RDONLY | O_DIRECTORY);

		if (fd < 0 || syncfs(fd) != 0)
			die("syncfs", job.dir);
		close(fd);
	}
	printf("%.0f\n", job.count / (now() - start));
	return 0;
}
