/*
 * harness.c
 *		TAP output and the helpers shared by the unit tests.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format/checksum.h"
#include "harness.h"
#include "store/store.h"
#include "syscall_log.h"

static int	test_count;
static int	fail_count;
/* The test running now, named if a signal ends the run. */
static const char *current_test = "(no test yet)";
/* What every assertion's message begins with now (th_label), or "". */
static char label[64];

/* ---------- TAP ---------- */

static bool report(bool cond, const char *file, int line, const char *fmt, va_list ap)
			__attribute__((format(printf, 4, 0)));

static bool
report(bool cond, const char *file, int line, const char *fmt, va_list ap)
{
	test_count++;
	printf("%s %d - %s%s", cond ? "ok" : "not ok", test_count, label, label[0] ? ": " : "");
	vprintf(fmt, ap);
	printf("\n");
	if (!cond)
	{
		fail_count++;
		printf("#   Failed test at %s line %d.\n", file, line);
	}
	fflush(stdout);
	return cond;
}

bool
th_ok(bool cond, const char *file, int line, const char *fmt,...)
{
	va_list		ap;

	va_start(ap, fmt);
	report(cond, file, line, fmt, ap);
	va_end(ap);
	return cond;
}

bool
th_is_int(long long got, long long want, const char *file, int line, const char *fmt,...)
{
	va_list		ap;
	bool		cond = got == want;

	va_start(ap, fmt);
	report(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#          got: %lld\n#     expected: %lld\n", got, want);
	fflush(stdout);
	return cond;
}

bool
th_like(const char *got, const char *want, const char *file, int line, const char *fmt,...)
{
	va_list		ap;
	bool		cond = got != NULL && strstr(got, want) != NULL;

	va_start(ap, fmt);
	report(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#     '%.300s%s'\n#         doesn't contain '%s'\n", got ? got : "(null)",
			   got && strlen(got) > 300 ? "..." : "", want);
	fflush(stdout);
	return cond;
}

bool
th_is_str(const char *got, const char *want, const char *file, int line, const char *fmt,...)
{
	va_list		ap;
	bool		cond = got != NULL && want != NULL ? strcmp(got, want) == 0 : got == want;

	va_start(ap, fmt);
	report(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#          got: '%.300s'\n#     expected: '%.300s'\n", got ? got : "(null)",
			   want ? want : "(null)");
	fflush(stdout);
	return cond;
}

void
th_diag(const char *fmt,...)
{
	va_list		ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void
th_diag_error(const char *what, const SbError *err)
{
	th_diag("%s: [%s] %s", what, sb_error_code_name(err->code), err->message);
}

void
th_label(const char *text)
{
	snprintf(label, sizeof(label), "%s", text != NULL ? text : "");
}

void
th_begin(const char *name)
{
	current_test = name;
	label[0] = '\0';
	th_diag("--- %s", name);
}

double
th_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

int
th_count(void)
{
	return test_count;
}

int
th_failures(void)
{
	return fail_count;
}

/* ---------- temporary folders and files ---------- */

/* Temporary folders not yet removed, so a fatal signal can remove them. */
#define MAX_LIVE_DIRS 16
static char live_dirs[MAX_LIVE_DIRS][PATH_MAX];

static void
remember_dir(const char *path)
{
	int			i;

	for (i = 0; i < MAX_LIVE_DIRS; i++)
		if (live_dirs[i][0] == '\0')
		{
			snprintf(live_dirs[i], PATH_MAX, "%s", path);
			return;
		}
}

static void
forget_dir(const char *path)
{
	int			i;

	for (i = 0; i < MAX_LIVE_DIRS; i++)
		if (strcmp(live_dirs[i], path) == 0)
			live_dirs[i][0] = '\0';
}

/*
 * Interrupted, timed out or cut off (SIGPIPE): remove the folders, then stop,
 * naming the test that was running (only write(2) here: a signal handler).
 */
static void
on_fatal_signal(int sig)
{
	static const char interrupted[] = "Bail out! interrupted by a signal in ";
	static const char timed_out[] = "Bail out! SB_UNIT_TIMEOUT reached in ";
	static const char removed[] = "; temporary folders removed\n";
	const char *head = sig == SIGALRM ? timed_out : interrupted;
	int			i;

	for (i = 0; i < MAX_LIVE_DIRS; i++)
		if (live_dirs[i][0] != '\0')
			th_rmtree(live_dirs[i]);
	if (sig != SIGPIPE &&
		(write(STDOUT_FILENO, head, strlen(head)) < 0 ||
		 write(STDOUT_FILENO, current_test, strlen(current_test)) < 0 ||
		 write(STDOUT_FILENO, removed, sizeof(removed) - 1) < 0))
		_exit(2);
	_exit(2);
}

void
th_install_signal_handlers(void)
{
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGPIPE, on_fatal_signal);
	signal(SIGALRM, on_fatal_signal);
	signal(SIGHUP, on_fatal_signal);
}

void
th_tempdir(char *out, const char *tag)
{
	const char *base = getenv("TMPDIR");

	if (base == NULL || base[0] == '\0')
		base = "/tmp";
	snprintf(out, PATH_MAX, "%s/sbunit-%s-XXXXXX", base, tag);
	if (mkdtemp(out) == NULL)
	{
		printf("Bail out! could not create a temporary folder under %s: %s\n",
			   base, strerror(errno));
		exit(255);
	}
	remember_dir(out);
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

/* Make every folder of a tree writable and searchable, so it can be removed. */
static int
open_up(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void) ftw;
	if (flag == FTW_D || flag == FTW_DNR)
		chmod(path, (st->st_mode & 07777) | 0700);
	return 0;
}

void
th_rmtree(const char *path)
{
	nftw(path, open_up, 32, FTW_PHYS);
	nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS);
	forget_dir(path);
}

char *
th_path(char *out, const char *fmt,...)
{
	va_list		ap;
	int			n;

	va_start(ap, fmt);
	n = vsnprintf(out, PATH_MAX, fmt, ap);
	va_end(ap);
	/* A cut path would name another file: a test that makes one is broken. */
	if (n < 0 || n >= PATH_MAX)
	{
		printf("Bail out! a path longer than PATH_MAX: %.100s...\n", out);
		exit(255);
	}
	return out;
}

void
th_fill(uint8_t *buf, size_t len, uint32_t seed, bool compressible)
{
	static const char *const words[] = {
		"stripe ", "chunk ", "backup ", "restore ", "manifest ", "weight ",
		"page ", "relation ", "\n", "wal ", "0123456789 ", "checkpoint "
	};
	uint32_t	x = seed * 2654435761u + 0x9E3779B9u;
	size_t		i = 0;

	if (x == 0)
		x = 1;
	while (i < len)
	{
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		if (compressible)
		{
			const char *w = words[x % (sizeof(words) / sizeof(words[0]))];
			size_t		n = strlen(w);

			if (n > len - i)
				n = len - i;
			memcpy(buf + i, w, n);
			i += n;
		}
		else
			buf[i++] = (uint8_t) (x >> 7);
	}
}

ssize_t
th_read_pieces(void *arg, char *buf, size_t len, SbError *err)
{
	ThPieces   *p = arg;
	size_t		n = p->len - p->pos;

	if (p->fail_at != 0 && p->pos >= p->fail_at)
	{
		sb_error_set(err, SB_EIO, "the source failed at byte %zu", p->pos);
		return -1;
	}
	n = n < len ? n : len;
	n = n < p->piece ? n : p->piece;
	memcpy(buf, p->text + p->pos, n);
	p->pos += n;
	return (ssize_t) n;
}

bool
th_write_file(const char *path, const void *data, size_t len, mode_t mode)
{
	int			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	const uint8_t *p = data;

	if (fd < 0)
	{
		th_diag("could not create %s: %s", path, strerror(errno));
		return false;
	}
	while (len > 0)
	{
		ssize_t		n = write(fd, p, len);

		if (n <= 0)
		{
			th_diag("could not write %s: %s", path, strerror(errno));
			close(fd);
			return false;
		}
		p += n;
		len -= (size_t) n;
	}
	if (fchmod(fd, mode) != 0)
	{
		close(fd);
		return false;
	}
	return close(fd) == 0;
}

bool
th_write_pattern(const char *path, size_t len, uint32_t seed, bool compressible, mode_t mode)
{
	uint8_t    *buf = malloc(len ? len : 1);
	bool		ok;

	if (buf == NULL)
		return false;
	th_fill(buf, len, seed, compressible);
	ok = th_write_file(path, buf, len, mode);
	free(buf);
	return ok;
}

bool
th_pwrite_pattern(int fd, uint64_t offset, size_t len, uint32_t seed)
{
	uint8_t    *buf = malloc(len ? len : 1);
	bool		ok;

	if (buf == NULL)
		return false;
	th_fill(buf, len, seed, false);
	ok = pwrite(fd, buf, len, (off_t) offset) == (ssize_t) len;
	free(buf);
	return ok;
}

uint8_t *
th_read_file(const char *path, size_t *len)
{
	int			fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t    *buf;
	size_t		done = 0;

	if (fd < 0 || fstat(fd, &st) != 0)
	{
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	buf = malloc((size_t) st.st_size + 1);
	while (buf != NULL && done < (size_t) st.st_size)
	{
		ssize_t		n = read(fd, buf + done, (size_t) st.st_size - done);

		if (n <= 0)
			break;
		done += (size_t) n;
	}
	close(fd);
	if (buf != NULL)
		buf[done] = '\0';
	*len = done;
	return buf;
}

bool
th_mkdir(const char *path, mode_t mode)
{
	if (mkdir(path, 0700) != 0)
	{
		th_diag("could not create %s: %s", path, strerror(errno));
		return false;
	}
	return chmod(path, mode) == 0;
}

bool
th_set_mtime(const char *path, int64_t mtime)
{
	struct timespec times[2];

	times[0].tv_sec = (time_t) mtime;
	times[0].tv_nsec = 0;
	times[1] = times[0];
	return utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW) == 0;
}

bool
th_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

int
th_count_entries(const char *path)
{
	DIR		   *dir = opendir(path);
	struct dirent *de;
	int			n = 0;

	if (dir == NULL)
		return -1;
	while ((de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			n++;
	closedir(dir);
	return n;
}

bool
th_flip_byte(const char *path, uint64_t offset, uint8_t mask)
{
	int			fd = open(path, O_RDWR);
	uint8_t		byte;
	bool		ok;

	if (fd < 0)
		return false;
	ok = pread(fd, &byte, 1, (off_t) offset) == 1;
	byte ^= mask;
	ok = ok && pwrite(fd, &byte, 1, (off_t) offset) == 1;
	close(fd);
	return ok;
}

bool
th_edit_file(const char *path, const char *from, const char *to)
{
	size_t		len;
	uint8_t    *text = th_read_file(path, &len);
	char	   *hit;
	char	   *out;
	size_t		head,
				outlen;
	bool		ok;

	if (text == NULL)
		return false;
	hit = strstr((char *) text, from);
	if (hit == NULL)
	{
		th_diag("\"%s\" not found in %s", from, path);
		free(text);
		return false;
	}
	head = (size_t) (hit - (char *) text);
	outlen = len - strlen(from) + strlen(to);
	out = malloc(outlen + 1);
	if (out == NULL)
	{
		free(text);
		return false;
	}
	memcpy(out, text, head);
	memcpy(out + head, to, strlen(to));
	memcpy(out + head + strlen(to), hit + strlen(from), len - head - strlen(from));
	ok = th_write_file(path, out, outlen, 0600);
	free(out);
	free(text);
	return ok;
}

uint32_t
th_crc32c(const uint8_t *data, size_t len)
{
	static uint32_t table[256];
	static bool ready;
	uint32_t	crc = 0xFFFFFFFFu;
	size_t		i;

	if (!ready)
	{
		uint32_t	n;

		for (n = 0; n < 256; n++)
		{
			uint32_t	c = n;
			int			k;

			for (k = 0; k < 8; k++)
				c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
			table[n] = c;
		}
		ready = true;
	}
	for (i = 0; i < len; i++)
		crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
	return crc ^ 0xFFFFFFFFu;
}

/* ---------- other programs ---------- */

int
th_run(const char *const *argv, char *out, size_t outlen)
{
	posix_spawn_file_actions_t actions;
	char		discard[256];
	int			fds[2];
	pid_t		pid = -1;
	size_t		len = 0;
	ssize_t		n;
	int			status;

	if (out == NULL || outlen == 0)
	{
		out = discard;
		outlen = sizeof(discard);
	}
	out[0] = '\0';
	if (pipe(fds) != 0)
		return -1;
	posix_spawn_file_actions_init(&actions);
	posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
	posix_spawn_file_actions_addclose(&actions, fds[0]);
	if (posix_spawnp(&pid, argv[0], &actions, NULL, (char *const *) argv, environ) != 0)
		pid = -1;
	posix_spawn_file_actions_destroy(&actions);
	close(fds[1]);
	/* Read it all (a full pipe would block the program); keep what fits. */
	while ((n = read(fds[0], discard, sizeof(discard))) > 0)
	{
		size_t		keep = len + (size_t) n < outlen ? (size_t) n : outlen - 1 - len;

		if (out != discard)
			memcpy(out + len, discard, keep);
		len += keep;
	}
	close(fds[0]);
	if (out == discard)
		len = 0;
	out[len] = '\0';
	if (len > 0 && out[len - 1] == '\n')
		out[len - 1] = '\0';
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---------- listing trees ---------- */

typedef struct PathList
{
	char	  **items;
	size_t		n;
	size_t		cap;
} PathList;

static void
list_add(PathList *l, const char *path)
{
	if (l->n == l->cap)
	{
		l->cap = l->cap ? l->cap * 2 : 256;
		l->items = realloc(l->items, l->cap * sizeof(char *));
		if (l->items == NULL)
		{
			printf("Bail out! out of memory\n");
			exit(255);
		}
	}
	l->items[l->n++] = strdup(path);
}

static void
list_free(PathList *l)
{
	size_t		i;

	for (i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

static int
compare_strings(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Every path under ROOT/REL, relative to ROOT, not following links. */
static void
list_tree(const char *root, const char *rel, PathList *l)
{
	char		full[PATH_MAX];
	DIR		   *dir;
	struct dirent *de;

	snprintf(full, sizeof(full), "%s/%s", root, rel);
	dir = opendir(full);
	if (dir == NULL)
		return;
	while ((de = readdir(dir)) != NULL)
	{
		char		child[PATH_MAX];
		char		child_full[PATH_MAX];
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (strcmp(rel, ".") == 0)
			snprintf(child, sizeof(child), "%s", de->d_name);
		else
			snprintf(child, sizeof(child), "%s/%s", rel, de->d_name);
		list_add(l, child);
		th_path(child_full, "%s/%s", root, child);
		if (lstat(child_full, &st) == 0 && S_ISDIR(st.st_mode))
			list_tree(root, child, l);
	}
	closedir(dir);
}

static void
list_sorted(const char *root, PathList *l)
{
	memset(l, 0, sizeof(*l));
	list_add(l, ".");
	list_tree(root, ".", l);
	qsort(l->items + 1, l->n - 1, sizeof(char *), compare_strings);
}

/* ---------- a test's folders ---------- */

void
th_fixture(ThFixture *f, const char *tag, uint32_t ndests)
{
	uint32_t	i;

	memset(f, 0, sizeof(*f));
	th_tempdir(f->root, tag);
	th_path(f->src, "%s/src", f->root);
	th_mkdir(f->src, 0755);
	for (i = 0; i < ndests && i < TH_MAX_DESTS; i++)
	{
		th_path(f->dest[i], "%s/d%u", f->root, i + 1);
		th_mkdir(f->dest[i], 0755);
		f->dests[i] = f->dest[i];
	}
	f->ndests = ndests;
	th_path(f->target, "%s/restore", f->root);
}

void
th_fixture_done(ThFixture *f)
{
	th_rmtree(f->root);
	if (th_exists(f->root))
		th_diag("could not remove %s", f->root);
}

char *
th_location(const ThFixture *f, uint32_t i, const char *name, char *out)
{
	return th_path(out, "%s/%s", f->dest[i], name);
}

char *
th_stripe_path(const ThFixture *f, uint32_t number, const char *name, char *out)
{
	return th_path(out, "%s/%s/stripe-%u.sbs", f->dest[number - 1], name, number);
}

/* ---------- backups and restores ---------- */

void
th_options(SbBackupOptions *o, const char *const *dests, uint32_t n, const char *name)
{
	memset(o, 0, sizeof(*o));
	o->destinations = dests;
	o->ndestinations = n;
	o->name = name;
	o->tool = "stripebackup unit tests";
	o->codec = SB_CODEC_NONE;
	o->level = 3;
	o->balance = SB_BALANCE_WEIGHTED;
	o->chunk_size = 64 * 1024;
	o->workers = 4;
	o->detect_holes = true;
}

#define TH_FILE_RUN 64

static bool
add_path(SbBackup *b, const char *src, const char *rel, SbError *err)
{
	char		full[PATH_MAX];
	struct stat st;

	snprintf(full, sizeof(full), "%s/%s", src, rel);
	if (lstat(full, &st) != 0)
		return sb_error_set_errno(err, errno, "lstat %s", full);
	if (S_ISDIR(st.st_mode))
		return sb_backup_add_dir(b, rel, st.st_mode & 07777, st.st_mtime, err);
	if (S_ISLNK(st.st_mode))
	{
		char		target[PATH_MAX];
		ssize_t		len = readlink(full, target, sizeof(target) - 1);

		if (len < 0)
			return sb_error_set_errno(err, errno, "readlink %s", full);
		target[len] = '\0';
		return sb_backup_add_symlink(b, rel, target, st.st_mtime, err);
	}
	return sb_backup_add_file(b, rel, full, err);
}

/* The folder of REL, relative to the source ("." at the top), into OUT. */
static const char *
parent_of(const char *rel, char *out, size_t len)
{
	const char *slash = strrchr(rel, '/');

	if (slash == NULL)
		snprintf(out, len, ".");
	else
		snprintf(out, len, "%.*s", (int) (slash - rel), rel);
	return out;
}

/*
 * Add the regular files ITEMS[0..N) of one folder at once, as the walks of
 * the command and the server do (sb_backup_add_files_at); one gone is an
 * error here.
 */
static bool
add_file_run(SbBackup *b, const char *src, char **items, size_t n, SbError *err)
{
	SbFileAt	files[TH_FILE_RUN];
	char		full[TH_FILE_RUN][PATH_MAX];
	char		folder[PATH_MAX];
	char		parent[PATH_MAX];
	int			dirfd;
	size_t		i;
	bool		ok;

	th_path(folder, "%s/%s", src, parent_of(items[0], parent, sizeof(parent)));
	dirfd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return sb_error_set_errno(err, errno, "open %s", folder);
	for (i = 0; i < n; i++)
	{
		const char *slash = strrchr(items[i], '/');

		files[i].path = items[i];
		files[i].name = slash ? slash + 1 : items[i];
		files[i].source_path = th_path(full[i], "%s/%s", src, items[i]);
	}
	ok = sb_backup_add_files_at(b, dirfd, files, (uint32_t) n, err);
	close(dirfd);
	for (i = 0; ok && i < n; i++)
		if (files[i].gone)
			ok = sb_error_set(err, SB_ENOTFOUND, "%s is gone", files[i].source_path);
	return ok;
}

/* Is REL (under SRC) a regular file, one more for a run of files in FOLDER (or none yet)? */
static bool
joins_run(const char *src, const char *rel, size_t run, const char *folder)
{
	char		full[PATH_MAX];
	char		parent[PATH_MAX];
	struct stat st;

	return lstat(th_path(full, "%s/%s", src, rel), &st) == 0 && S_ISREG(st.st_mode) &&
		(run == 0 || (run < TH_FILE_RUN && strcmp(parent_of(rel, parent, sizeof(parent)), folder) == 0));
}

bool
th_backup_tree(const SbBackupOptions *o, const char *src, SbManifest **manifest,
			   SbError *err)
{
	PathList	l;
	SbBackup   *b;
	size_t		i;
	size_t		run = 0;		/* regular files of one folder, gathered: L.items[I - RUN, I) */
	char		folder[PATH_MAX] = "";
	bool		ok = true;

	if (manifest != NULL)
		*manifest = NULL;
	b = sb_backup_begin(o, err);
	if (b == NULL)
		return false;
	list_sorted(src, &l);
	for (i = 0; ok && i < l.n; i++)
	{
		if (run > 0 && !joins_run(src, l.items[i], run, folder))
		{
			ok = add_file_run(b, src, &l.items[i - run], run, err);
			run = 0;
		}
		if (ok && joins_run(src, l.items[i], run, folder))
		{
			if (run++ == 0)
				parent_of(l.items[i], folder, sizeof(folder));
		}
		else if (ok)
			ok = add_path(b, src, l.items[i], err);
	}
	if (ok && run > 0)
		ok = add_file_run(b, src, &l.items[l.n - run], run, err);
	list_free(&l);
	if (!ok)
	{
		sb_backup_abort(b);
		return false;
	}
	return sb_backup_finish(b, manifest, err);
}

SbManifest *
th_backup_end(SbBackup *b, bool done, const char *name, SbError *err)
{
	SbManifest *m = NULL;

	if (b != NULL && !done)
		sb_backup_abort(b);
	else if (b != NULL)
		done = sb_backup_finish(b, &m, err);
	if (!done)
		th_diag_error(name, err);
	return m;
}

/*
 * The restore of LOCATION as RO says, done again a window of 2 files at a
 * time (SB_KEEP_STREAMED) into a folder of its own: it must succeed or fail
 * as the one with the file table did (OK, ERR), and give the same tree.
 */
static void
restore_windowed_too(const char *location, const SbRestoreOptions *ro, bool ok, const SbError *err)
{
	const char *tmp = getenv("TMPDIR");
	char		target[PATH_MAX];
	SbRestoreOptions copy = *ro;
	SbError		werr;
	SbArchive  *a;
	bool		wok;

	th_path(target, "%s.windowed", ro->target);
	copy.target = target;
	copy.read.window_files = 2;
	a = sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED,
							 .spool_dir = tmp && tmp[0] == '/' ? tmp : "/tmp"}, &werr);
	wok = a != NULL && sb_archive_restore(a, &copy, &werr);
	if (a == NULL && !ok)
		werr = *err;			/* refused as it opened, as the first was */
	ok(wok == ok && (ok || werr.code == err->code) &&
	   (!ok || th_trees_equal(ro->target, target, TH_CMP_MTIME)),
	   "restored a window of 2 files at a time too: %s", wok ? "the same tree" : werr.message);
	sb_archive_close(a);
	th_rmtree(target);
}

bool
th_restore_with(const char *location, const SbRestoreOptions *ro, SbError *err)
{
	SbArchive  *a = sb_archive_open(location, err);
	bool		ok;

	if (a == NULL)
		return false;
	ok = sb_archive_restore(a, ro, err);
	sb_archive_close(a);
	/* not when the target was the point, or the system calls are being watched */
	if (!ro->delta && ro->nrelocations == 0 && !ro->keep_on_error && !th_log_active() &&
		(ok || (err->code != SB_EEXIST && err->code != SB_EINVAL)))
		restore_windowed_too(location, ro, ok, err);
	return ok;
}

bool
th_delta_restore(const ThFixture *f, const char *name, bool streamed, SbRestoreStats *stats, SbError *err)
{
	SbRestoreOptions ro;
	char		location[PATH_MAX];
	SbArchive  *a;
	bool		done;

	memset(&ro, 0, sizeof(ro));
	ro.target = f->target;
	ro.read.workers = 3;
	ro.delta = true;
	ro.delta_guard = "global/pg_control";
	ro.stats = stats;
	ro.marker = "delta test";
	th_location(f, 0, name, location);
	if (!streamed)
		return th_restore_with(location, &ro, err);
	ro.read.window_files = 2;
	a = sb_archive_open_with(location,
				&(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED, .spool_dir = f->root}, err);
	if (a != NULL && a->manifest->streamed == NULL)
		sb_error_set(err, SB_EINVAL, "the test's backup was not opened streamed");
	done = a != NULL && a->manifest->streamed != NULL && sb_archive_restore(a, &ro, err);
	sb_archive_close(a);
	return done;
}

bool
th_restore(const char *location, const char *target, SbError *err)
{
	SbRestoreOptions ro;

	memset(&ro, 0, sizeof(ro));
	ro.target = target;
	ro.read.workers = 4;
	return th_restore_with(location, &ro, err);
}

/* Verify the backup opened at LOCATION as KEEP says, collecting its problems; -1 if it could not run. */
static long
verify_kept(const char *location, SbEntryKeep keep, int workers, uint32_t window, ThProblems *problems)
{
	const char *tmp = getenv("TMPDIR");
	SbError		err;
	SbArchive  *a = keep == SB_KEEP_STREAMED ?
		sb_archive_open_with(location, &(SbArchiveOpenOptions){.keep = SB_KEEP_STREAMED,
							 .spool_dir = tmp && tmp[0] == '/' ? tmp : "/tmp"}, &err) :
		sb_archive_open(location, &err);
	SbReadOptions ro;
	uint64_t	n = 0;
	bool		done;

	memset(problems, 0, sizeof(*problems));
	if (a == NULL)
	{
		th_diag_error("open for verify", &err);
		return -1;
	}
	memset(&ro, 0, sizeof(ro));
	ro.workers = (uint32_t) workers;
	ro.window_files = window;
	done = sb_archive_verify(a, &ro, th_collect_problem, problems, &n, &err);
	sb_archive_close(a);
	if (!done)
	{
		th_diag_error("verify", &err);
		return -1;
	}
	return (long) n;
}

/* A problem as one line, to compare two runs' problems in any order. */
static char *
problem_line(const ThProblem *p)
{
	char	   *line = NULL;

	if (asprintf(&line, "%u|%lld|%s|%d|%s", p->stripe, (long long) p->chunk,
				 p->file ? p->file : "", (int) p->code, p->message) < 0)
		return NULL;
	return line;
}

static int
compare_lines(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* Do A and B hold the same problems, in whatever order? */
static bool
same_problems(const ThProblems *a, const ThProblems *b)
{
	char	   *x[64];
	char	   *y[64];
	bool		same = a->n == b->n && a->dropped == b->dropped;
	int			i;

	for (i = 0; i < a->n && same; i++)
	{
		x[i] = problem_line(&a->items[i]);
		y[i] = problem_line(&b->items[i]);
	}
	if (same)
	{
		qsort(x, (size_t) a->n, sizeof(char *), compare_lines);
		qsort(y, (size_t) b->n, sizeof(char *), compare_lines);
	}
	for (i = 0; i < a->n && same; i++)
		if (strcmp(x[i], y[i]) != 0)
		{
			th_diag("table: %s", x[i]);
			th_diag("window: %s", y[i]);
			same = false;
		}
	for (i = 0; i < a->n && a->n == b->n; i++)
	{
		free(x[i]);
		free(y[i]);
	}
	return same;
}

long
th_verify_collect(const char *location, int workers, ThProblems *problems)
{
	static const uint32_t windows[] = {0, 2};
	ThProblems	windowed;
	long		n = verify_kept(location, SB_KEEP_TO_RESTORE, workers, 0, problems);
	long		m;
	int			i;

	if (n < 0)
		return n;
	for (i = 0; i < 2; i++)
	{
		m = verify_kept(location, SB_KEEP_STREAMED, workers, windows[i], &windowed);
		ok(m == n && same_problems(problems, &windowed),
		   "verified a window of %s files at a time: the same %ld problem(s) (%ld)",
		   windows[i] ? "2" : "the default", n, m);
		th_free_problems(&windowed);
	}
	return n;
}

long
th_verify(const char *location)
{
	ThProblems	problems;
	long		n = th_verify_collect(location, 3, &problems);
	int			i;

	for (i = 0; i < problems.n; i++)
		th_diag("problem: stripe %u chunk %lld: %s", problems.items[i].stripe,
				(long long) problems.items[i].chunk, problems.items[i].message);
	th_free_problems(&problems);
	return n;
}

/* ---------- comparisons ---------- */

/* Data regions of FD (one region over the file if SEEK_DATA is not supported). */
static size_t
data_regions(int fd, uint64_t size, uint64_t (*regions)[2], size_t max)
{
	uint64_t	pos = 0;
	size_t		n = 0;

	while (pos < size && n < max)
	{
		off_t		data = lseek(fd, (off_t) pos, SEEK_DATA);
		off_t		hole;

		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
		{
			regions[0][0] = 0;
			regions[0][1] = size;
			return 1;
		}
		hole = lseek(fd, data, SEEK_HOLE);
		if (hole < 0 || (uint64_t) hole > size)
			hole = (off_t) size;
		regions[n][0] = (uint64_t) data;
		regions[n][1] = (uint64_t) hole;
		n++;
		pos = (uint64_t) hole;
	}
	if (pos < size && n == max)
	{
		/* Too fragmented to list: compare the rest whole. */
		regions[n - 1][1] = size;
	}
	return n;
}

static bool
compare_range(int fa, int fb, uint64_t start, uint64_t end, const char *a)
{
	static uint8_t ba[1 << 20];
	static uint8_t bb[1 << 20];

	while (start < end)
	{
		size_t		n = end - start < sizeof(ba) ? (size_t) (end - start) : sizeof(ba);
		size_t		i;

		if (pread(fa, ba, n, (off_t) start) != (ssize_t) n ||
			pread(fb, bb, n, (off_t) start) != (ssize_t) n)
		{
			th_diag("short read of %s at %llu", a, (unsigned long long) start);
			return false;
		}
		if (memcmp(ba, bb, n) != 0)
		{
			for (i = 0; i < n && ba[i] == bb[i]; i++)
				;
			th_diag("%s differs at byte %llu", a, (unsigned long long) (start + i));
			return false;
		}
		start += n;
	}
	return true;
}

bool
th_files_equal(const char *a, const char *b)
{
	static uint64_t regions[4096][2];
	int			fa = open(a, O_RDONLY);
	int			fb = open(b, O_RDONLY);
	struct stat sa,
				sb;
	bool		ok = fa >= 0 && fb >= 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0;
	int			side;

	if (ok && sa.st_size != sb.st_size)
	{
		th_diag("%s is %lld bytes, %s is %lld", a, (long long) sa.st_size, b,
				(long long) sb.st_size);
		ok = false;
	}
	/* Outside the data of both files both read as zeros: compare the data. */
	for (side = 0; ok && side < 2; side++)
	{
		size_t		n = data_regions(side ? fb : fa, (uint64_t) sa.st_size, regions, 4096);
		size_t		i;

		for (i = 0; ok && i < n; i++)
			ok = compare_range(fa, fb, regions[i][0], regions[i][1], a);
	}
	if (fa >= 0)
		close(fa);
	if (fb >= 0)
		close(fb);
	return ok;
}

static bool
entries_equal(const char *a, const char *b, const char *rel, int flags)
{
	char		pa[PATH_MAX];
	char		pb[PATH_MAX];
	struct stat sa,
				sb;

	snprintf(pa, sizeof(pa), "%s/%s", a, rel);
	snprintf(pb, sizeof(pb), "%s/%s", b, rel);
	if (lstat(pa, &sa) != 0 || lstat(pb, &sb) != 0)
	{
		th_diag("cannot lstat %s or %s", pa, pb);
		return false;
	}
	if ((sa.st_mode & S_IFMT) != (sb.st_mode & S_IFMT))
	{
		th_diag("%s: type %o, restored %o", rel, sa.st_mode & S_IFMT, sb.st_mode & S_IFMT);
		return false;
	}
	if (!S_ISLNK(sa.st_mode) && (sa.st_mode & 07777) != (sb.st_mode & 07777))
	{
		th_diag("%s: mode %04o, restored %04o", rel, sa.st_mode & 07777, sb.st_mode & 07777);
		return false;
	}
	if ((flags & TH_CMP_MTIME) && sa.st_mtime != sb.st_mtime)
	{
		th_diag("%s: mtime %lld, restored %lld", rel, (long long) sa.st_mtime,
				(long long) sb.st_mtime);
		return false;
	}
	if (S_ISLNK(sa.st_mode))
	{
		char		ta[PATH_MAX];
		char		tb[PATH_MAX];
		ssize_t		la = readlink(pa, ta, sizeof(ta));
		ssize_t		lb = readlink(pb, tb, sizeof(tb));

		if (la < 0 || la != lb || memcmp(ta, tb, (size_t) la) != 0)
		{
			th_diag("%s: link targets differ", rel);
			return false;
		}
	}
	if (S_ISREG(sa.st_mode) && !th_files_equal(pa, pb))
		return false;
	return true;
}

bool
th_trees_equal(const char *a, const char *b, int flags)
{
	PathList	la,
				lb;
	size_t		i;
	bool		ok = true;

	list_sorted(a, &la);
	list_sorted(b, &lb);
	if (la.n != lb.n)
	{
		th_diag("%s has %zu entries, %s has %zu", a, la.n, b, lb.n);
		ok = false;
	}
	for (i = 0; ok && i < la.n; i++)
	{
		if (strcmp(la.items[i], lb.items[i]) != 0)
		{
			th_diag("entry %zu: \"%s\" vs restored \"%s\"", i, la.items[i], lb.items[i]);
			ok = false;
		}
		else
			ok = entries_equal(a, b, la.items[i], flags);
	}
	list_free(&la);
	list_free(&lb);
	return ok;
}

/* ---------- stripe files ---------- */

bool
th_read_index(const char *stripe_path, SbTrailer *trailer, SbIndexEntry **entries,
			  uint64_t *nentries)
{
	/* Through the store: a local file or an object alike (drivers.h). */
	SbStoreFile f;
	uint8_t		buf[SB_TRAILER_SIZE];
	uint8_t    *raw = NULL;
	SbError		err;
	uint64_t	i;
	bool		opened = sb_store_open(&f, stripe_path, NULL, &err);
	bool		ok;

	*entries = NULL;
	*nentries = 0;
	ok = opened && f.size >= SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE &&
		sb_store_pread(&f, buf, sizeof(buf), f.size - SB_TRAILER_SIZE, &err) == SB_TRAILER_SIZE;
	if (ok && !sb_format_decode_trailer(buf, trailer, &err))
	{
		th_diag_error(stripe_path, &err);
		ok = false;
	}
	if (ok)
	{
		size_t		len = (size_t) trailer->chunk_count * SB_INDEX_ENTRY_SIZE;

		raw = malloc(len + 1);
		*entries = calloc(trailer->chunk_count + 1, sizeof(SbIndexEntry));
		ok = raw != NULL && *entries != NULL &&
			sb_store_pread(&f, raw, len, trailer->index_offset, &err) == (ssize_t) len;
	}
	for (i = 0; ok && i < trailer->chunk_count; i++)
		sb_format_decode_index_entry(raw + i * SB_INDEX_ENTRY_SIZE, &(*entries)[i]);
	if (ok)
		*nentries = trailer->chunk_count;
	else
		th_diag("could not read the index of %s", stripe_path);
	free(raw);
	if (opened)
		sb_store_close(&f);
	return ok;
}

bool
th_file_sha256(const char *path, uint8_t *sha, uint64_t *len)
{
	size_t		n;
	uint8_t    *bytes = th_read_file(path, &n);
	SbError		err;
	bool		ok = bytes != NULL && sb_sha256(bytes, n, sha, &err);

	free(bytes);
	*len = n;
	return ok;
}

/* Rewrite the trailer of one stripe file to record SHA and LEN. */
static bool
rebind_stripe(const char *stripe, const uint8_t *sha, uint64_t len)
{
	uint8_t		buf[SB_TRAILER_SIZE];
	SbTrailer	t;
	SbError		err;
	struct stat st;
	int			fd = open(stripe, O_RDWR);
	bool		ok = fd >= 0 && fstat(fd, &st) == 0 &&
		pread(fd, buf, sizeof(buf), st.st_size - SB_TRAILER_SIZE) == SB_TRAILER_SIZE &&
		sb_format_decode_trailer(buf, &t, &err);

	if (ok)
	{
		memcpy(t.manifest_sha256, sha, SB_SHA256_LEN);
		t.manifest_length = len;
		sb_format_encode_trailer(&t, buf);
		ok = pwrite(fd, buf, sizeof(buf), st.st_size - SB_TRAILER_SIZE) == SB_TRAILER_SIZE;
	}
	if (!ok)
		th_diag("could not seal %s again", stripe);
	if (fd >= 0)
		close(fd);
	return ok;
}

bool
th_rebind_stripes(const char *manifest_path, const char *const *stripes, uint32_t n)
{
	uint8_t		sha[SB_SHA256_LEN];
	uint64_t	len;
	uint32_t	i;
	bool		ok = th_file_sha256(manifest_path, sha, &len);

	for (i = 0; ok && i < n; i++)
		ok = rebind_stripe(stripes[i], sha, len);
	return ok;
}

/* ---------- problems ---------- */

void
th_collect_problem(void *arg, const SbProblem *problem)
{
	ThProblems *p = arg;
	ThProblem  *item;

	if (p->n == (int) (sizeof(p->items) / sizeof(p->items[0])))
	{
		p->dropped++;
		return;
	}
	item = &p->items[p->n++];
	item->stripe = problem->stripe;
	item->chunk = problem->chunk;
	item->file = problem->file ? strdup(problem->file) : NULL;
	item->code = problem->code;
	item->message = strdup(problem->message ? problem->message : "");
}

void
th_free_problems(ThProblems *p)
{
	int			i;

	for (i = 0; i < p->n; i++)
	{
		free(p->items[i].file);
		free(p->items[i].message);
	}
	p->n = 0;
}

const SbEntry *
th_find_entry(const SbManifest *m, const char *path)
{
	size_t		i;

	for (i = 0; m != NULL && i < m->nentries; i++)
		if (strcmp(m->entries[i].path, path) == 0)
			return &m->entries[i];
	return NULL;
}
