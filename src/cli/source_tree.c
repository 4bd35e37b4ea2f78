/*
 * source_tree.c
 *		Walking the source directory of a cold backup.
 *
 * A link is never stored: a restore refuses links outside pg_tblspc/<oid>,
 * and the online backup stores a tablespace and pg_wal as directories.  So
 * in a data directory (PG_VERSION at the top) the pg_wal link and the
 * pg_tblspc/<oid> links are followed, each listed as a directory of that
 * name holding its target's contents, and any other link is refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "source_tree.h"

#define TABLESPACE_DIR "pg_tblspc/"

/* Fewer names than this in a folder: a second thread costs more than it saves. */
#define SHARED_STAT_MIN 64

/* Room for one more element of SIZE bytes in *ITEMS (COUNT used of *CAP). */
static bool
grow(void **items, size_t *cap, size_t count, size_t size, SbError *err)
{
	size_t		new_cap = *cap ? *cap * 2 : 64;
	void	   *grown;

	if (count < *cap)
		return true;
	grown = realloc(*items, new_cap * size);
	if (grown == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
	*items = grown;
	*cap = new_cap;
	return true;
}

/* One more item of the walk: counted, and to the visitor. */
static bool
visit_item(SourceTree *t, const SourceItem *item, SbError *err)
{
	t->nitems++;
	t->total_bytes += item->size;
	return t->visit == NULL || t->visit(t->visit_arg, item, err);
}

/* Is REL "pg_tblspc/<digits>" in a data directory? */
static bool
is_tablespace_path(const SourceTree *t, const char *rel)
{
	const char *oid = rel + strlen(TABLESPACE_DIR);

	return t->is_cluster && strncmp(rel, TABLESPACE_DIR, strlen(TABLESPACE_DIR)) == 0 &&
		oid[0] != '\0' && strlen(oid) < sizeof(((SourceTablespace *) NULL)->oid) &&
		strspn(oid, "0123456789") == strlen(oid);
}

static bool
add_tablespace(SourceTree *t, const char *rel, const char *location, bool in_place,
			   SbError *err)
{
	SourceTablespace *ts;

	if (!grow((void **) &t->tablespaces, &t->tablespaces_cap, t->ntablespaces,
			  sizeof(SourceTablespace), err))
		return false;
	ts = &t->tablespaces[t->ntablespaces];
	snprintf(ts->oid, sizeof(ts->oid), "%s", rel + strlen(TABLESPACE_DIR));
	ts->in_place = in_place;
	if ((ts->location = strdup(location)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
	t->ntablespaces++;
	return true;
}

/*
 * A folder read from, canonical: it must not overlap one already read (a
 * link back into the data directory would copy it twice, or forever).
 */
static bool
add_root(SourceTree *t, const char *link, const char *canonical, SbError *err)
{
	size_t		i;

	for (i = 0; i < t->nroots; i++)
		if (sb_policy_canonical_within(canonical, t->roots[i]) ||
			sb_policy_canonical_within(t->roots[i], canonical))
			return sb_error_set(err, SB_EINVAL,
								"link \"%s\" leads to \"%s\", which overlaps \"%s\", also backed up",
								link, canonical, t->roots[i]);
	if (!grow((void **) &t->roots, &t->roots_cap, t->nroots, sizeof(char *), err))
		return false;
	if ((t->roots[t->nroots] = strdup(canonical)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
	t->nroots++;
	return true;
}

static void
init_item(SourceItem *item, const struct stat *st)
{
	memset(item, 0, sizeof(*item));
	item->mode = st->st_mode & 07777;
	item->mtime = st->st_mtime;
}

static void
name_item(SourceItem *item, const char *full, const char *rel)
{
	item->path = rel;
	item->full_path = full;
	item->dirfd = AT_FDCWD;
	item->name = full;
}

/* Describe FULL (already lstat'ed, not a link) as an item; refuse special files. */
static bool
make_item(const char *full, const char *rel, const struct stat *st, SourceItem *item,
		  SbError *err)
{
	init_item(item, st);
	if (S_ISDIR(st->st_mode))
		item->type = SB_ENTRY_DIR;
	else if (S_ISREG(st->st_mode))
	{
		item->type = SB_ENTRY_FILE;
		item->size = (uint64_t) st->st_size;
	}
	else
		return sb_error_set(err, SB_EINVAL,
							"\"%s\" is a socket, pipe or device; only files and directories can be backed up",
							full);
	name_item(item, full, rel);
	return true;
}

/* A name in a directory, and its type as readdir gave it (DT_UNKNOWN where the file system keeps none). */
typedef struct DirName
{
	char	   *name;
	unsigned char type;
} DirName;

static int
compare_names(const void *a, const void *b)
{
	return strcmp(((const DirName *) a)->name, ((const DirName *) b)->name);
}

static void
free_names(DirName *names, size_t n)
{
	while (n > 0)
		free(names[--n].name);
	free(names);
}

/* The names in directory FULL, open at DIRFD (not closed), sorted, so backups of a tree are repeatable. */
static DirName *
sorted_names(int dirfd, const char *full, size_t *count, SbError *err)
{
	int			fd = dup(dirfd);
	DIR		   *dir = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	DirName    *names = NULL;
	size_t		n = 0,
				cap = 0;

	if (dir == NULL)
	{
		sb_error_set_errno(err, errno, "could not open directory \"%s\"", full);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((de = readdir(dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (!grow((void **) &names, &cap, n, sizeof(DirName), err) ||
			(names[n].name = strdup(de->d_name)) == NULL)
			break;
		names[n++].type = de->d_type;
	}
	closedir(dir);
	if (de != NULL)
	{
		free_names(names, n);
		sb_error_set(err, SB_ENOMEM, "out of memory listing \"%s\"", full);
		return NULL;
	}
	qsort(names, n, sizeof(DirName), compare_names);
	*count = n;
	return names ? names : calloc(1, sizeof(DirName));
}

/* A name's status (ERROR: 0, or why fstatat failed), taken ahead of the walk that counts. */
typedef struct NameStatus
{
	struct stat st;
	int			error;
} NameStatus;

typedef struct StatRange
{
	int			dirfd;
	const DirName *names;
	NameStatus *status;
	size_t		from;
	size_t		to;
} StatRange;

static void *
stat_range(void *arg)
{
	const StatRange *r = arg;
	size_t		i;

	for (i = r->from; i < r->to; i++)
		r->status[i].error = fstatat(r->dirfd, r->names[i].name, &r->status[i].st,
									 AT_SYMLINK_NOFOLLOW) == 0 ? 0 : errno;
	return NULL;
}

/*
 * The status of each of the N names in DIRFD, half of them from a second
 * thread (signals blocked: they are the main thread's).  The walk that
 * counts is one fstatat a file, a fifth of the time of a backup of many
 * small files; the walk that backs up does not stat regular files at all.
 */
static NameStatus *
stat_names(int dirfd, const DirName *names, size_t n, const char *full, SbError *err)
{
	NameStatus *status = malloc(n * sizeof(NameStatus) + 1);
	StatRange	mine = {dirfd, names, status, 0, n};
	StatRange	theirs = {dirfd, names, status, n / 2, n};
	pthread_t	thread;
	sigset_t	all,
				old;
	bool		shared = false;

	if (status == NULL)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory listing \"%s\"", full);
		return NULL;
	}
	if (n >= SHARED_STAT_MIN && sysconf(_SC_NPROCESSORS_ONLN) > 1)
	{
		sigfillset(&all);
		pthread_sigmask(SIG_BLOCK, &all, &old);
		shared = pthread_create(&thread, NULL, stat_range, &theirs) == 0;
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	if (shared)
		mine.to = n / 2;
	stat_range(&mine);
	if (shared)
		pthread_join(thread, NULL);
	return status;
}

/* Regular files of one directory gathered for VISIT_FILES, their names in TEXT. */
#define RUN_TEXT (16 * PATH_MAX)

typedef struct SourceFileRun
{
	int			dirfd;
	SourceItem	items[SOURCE_FILES_MAX];
	size_t		count;
	char		text[RUN_TEXT];
	size_t		used;
} SourceFileRun;

/* Hand the files gathered to VISIT_FILES. */
static bool
flush_files(SourceTree *t, SbError *err)
{
	SourceFileRun *run = t->run;
	size_t		n = run ? run->count : 0;

	if (n == 0)
		return true;
	run->count = 0;
	run->used = 0;
	t->nitems += n;
	return t->visit_files(t->visit_arg, run->dirfd, run->items, n, err);
}

/* Keep a copy of S in the run's text (gather_file made room). */
static const char *
run_copy(SourceFileRun *run, const char *s)
{
	size_t		len = strlen(s) + 1;
	char	   *copy = run->text + run->used;

	memcpy(copy, s, len);
	run->used += len;
	return copy;
}

/* Gather the regular file NAME of the directory open at DIRFD (FULL, archive path REL). */
static bool
gather_file(SourceTree *t, int dirfd, const char *full, const char *rel, const char *name,
			SbError *err)
{
	SourceFileRun *run = t->run;
	SourceItem *item;

	if ((run->count == SOURCE_FILES_MAX || run->used + strlen(full) + strlen(rel) + 2 > RUN_TEXT) &&
		!flush_files(t, err))
		return false;
	item = &run->items[run->count++];
	memset(item, 0, sizeof(*item));
	item->type = SB_ENTRY_FILE;
	item->full_path = run_copy(run, full);
	item->path = run_copy(run, rel);
	item->name = item->full_path + (strlen(full) - strlen(name));
	item->dirfd = dirfd;
	run->dirfd = dirfd;
	return true;
}

static bool walk(SourceTree *t, const char *full, const char *rel, SbError *err);

/*
 * The link at FULL (archive path REL), when it may be followed: pg_wal and
 * pg_tblspc/<oid> of a data directory.  Its target is listed as the
 * directory REL, and a tablespace is recorded with the link's text as its
 * location, as PostgreSQL reads it.
 */
static bool
follow_link(SourceTree *t, const char *full, const char *rel, SbError *err)
{
	bool		tablespace = is_tablespace_path(t, rel);
	char		text[PATH_MAX];
	char		canonical[PATH_MAX];
	ssize_t		n;
	struct stat st;
	SourceItem	item;

	if (!tablespace && !(t->is_cluster && strcmp(rel, "pg_wal") == 0))
		return sb_error_set(err, SB_EINVAL,
							"\"%s\" is a symbolic link: a backup stores none (of a data directory, pg_wal and pg_tblspc/<oid> are followed)",
							full);
	if ((n = readlink(full, text, sizeof(text) - 1)) < 0)
		return sb_error_set_errno(err, errno, "could not read link \"%s\"", full);
	text[n] = '\0';
	if (tablespace && text[0] != '/')
		return sb_error_set(err, SB_EINVAL, "tablespace link \"%s\" points to \"%s\", not an absolute path",
							full, text);
	if (realpath(full, canonical) == NULL || stat(canonical, &st) != 0)
		return sb_error_set_errno(err, errno, "link \"%s\" points to \"%s\", which is not usable", full, text);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "link \"%s\" points to \"%s\", which is not a directory", full, text);
	init_item(&item, &st);
	item.type = SB_ENTRY_DIR;
	name_item(&item, canonical, rel);
	return add_root(t, full, canonical, err) && visit_item(t, &item, err) &&
		(!tablespace || add_tablespace(t, rel, text, false, err)) && walk(t, canonical, rel, err);
}

/*
 * ENTRY (its name and type) of the directory open at DIRFD (DIR_FULL,
 * archive path DIR_REL), examined through DIRFD (a path walk from the root
 * for every file cost a backup of many small files a tenth of its time), or
 * as STATUS says when the walk took it ahead.
 */
static bool
walk_entry(SourceTree *t, int dirfd, const char *dir_full, const char *dir_rel, const DirName *entry,
		   const NameStatus *status, SbError *err)
{
	const char *name = entry->name;
	char		full[PATH_MAX];
	char		rel[PATH_MAX];
	struct stat st;
	SourceItem	item;

	if ((size_t) snprintf(full, sizeof(full), "%s/%s", dir_full, name) >= sizeof(full))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s/%s\"", dir_full, name);
	if (strcmp(dir_rel, ".") == 0)
		snprintf(rel, sizeof(rel), "%s", name);
	else
		snprintf(rel, sizeof(rel), "%s/%s", dir_rel, name);

	/*
	 * A regular file, walked to be backed up: no stat here, the engine takes
	 * its status from the descriptor it reads (and refuses it if it is no
	 * longer a regular file); the first walk, which counts, examined it.
	 */
	if (t->visit_files != NULL && entry->type == DT_REG)
		return gather_file(t, dirfd, full, rel, name, err);
	if (!flush_files(t, err))
		return false;
	if (t->visit != NULL && entry->type == DT_REG)
	{
		memset(&item, 0, sizeof(item));
		item.type = SB_ENTRY_FILE;
		name_item(&item, full, rel);
		item.dirfd = dirfd;
		item.name = name;
		return visit_item(t, &item, err);
	}
	if (status != NULL && status->error != 0)
		return sb_error_set_errno(err, status->error, "could not stat \"%s\"", full);
	if (status != NULL)
		st = status->st;
	else if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", full);
	if (S_ISLNK(st.st_mode))
		return follow_link(t, full, rel, err);
	if (!make_item(full, rel, &st, &item, err))
		return false;
	item.dirfd = dirfd;
	item.name = name;
	if (!visit_item(t, &item, err))
		return false;
	/* An in-place tablespace (allow_in_place_tablespaces): a directory, recorded as the server does. */
	if (item.type == SB_ENTRY_DIR && is_tablespace_path(t, rel) &&
		!add_tablespace(t, rel, rel, true, err))
		return false;
	return item.type != SB_ENTRY_DIR || walk(t, full, rel, err);
}

/*
 * A data directory's pg_tblspc first: with source lanes each tablespace's
 * device starts on its large files while the rest is walked, instead of once
 * the data directory's own files (read on its device, behind its lane's
 * reads) are all walked.  The archive's order means nothing to a restore.
 */
static void
tablespaces_first(const SourceTree *t, const char *rel, DirName *names, size_t n)
{
	size_t		i;

	if (!t->is_cluster || strcmp(rel, ".") != 0)
		return;
	for (i = 0; i < n && strcmp(names[i].name, "pg_tblspc") != 0; i++)
		;
	for (; i > 0 && i < n; i--)
	{
		DirName		moved = names[i];

		names[i] = names[i - 1];
		names[i - 1] = moved;
	}
}

static bool
walk(SourceTree *t, const char *full, const char *rel, SbError *err)
{
	int			dirfd = open(full, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	size_t		n = 0,
				i;
	DirName    *names;
	NameStatus *status = NULL;
	bool		ok;

	if (dirfd < 0)
		return sb_error_set_errno(err, errno, "could not open directory \"%s\"", full);
	names = sorted_names(dirfd, full, &n, err);
	ok = names != NULL;
	if (ok)
		tablespaces_first(t, rel, names, n);
	/* the walk that counts stats every name: ahead, on two threads */
	if (ok && t->visit == NULL)
		ok = (status = stat_names(dirfd, names, n, full, err)) != NULL;
	for (i = 0; ok && i < n; i++)
		ok = walk_entry(t, dirfd, full, rel, &names[i], status ? &status[i] : NULL, err);
	ok = ok && flush_files(t, err);	/* before DIRFD is closed */
	if (names != NULL)
		free_names(names, n);
	free(status);
	close(dirfd);
	return ok;
}

bool
source_tree_scan(const char *root, SourceTree *t, SourceItemFn visit, SourceFilesFn visit_files,
				 void *arg, SbError *err)
{
	char		canonical[PATH_MAX];
	char		version[PATH_MAX];
	struct stat st,
				version_st;
	SourceItem	item;

	memset(t, 0, sizeof(*t));
	t->visit = visit;
	t->visit_files = visit_files;
	t->visit_arg = arg;
	if (visit_files != NULL && (t->run = calloc(1, sizeof(SourceFileRun))) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
	if (stat(root, &st) != 0 || realpath(root, canonical) == NULL)
		return sb_error_set_errno(err, errno, "source \"%s\" is not usable", root);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "source \"%s\" is not a directory", root);
	snprintf(version, sizeof(version), "%s/PG_VERSION", root);
	t->is_cluster = stat(version, &version_st) == 0 && S_ISREG(version_st.st_mode);
	return add_root(t, root, canonical, err) && make_item(root, ".", &st, &item, err) &&
		visit_item(t, &item, err) && walk(t, root, ".", err);
}

void
source_tree_free(SourceTree *t)
{
	size_t		i;

	for (i = 0; i < t->ntablespaces; i++)
		free(t->tablespaces[i].location);
	for (i = 0; i < t->nroots; i++)
		free(t->roots[i]);
	free(t->tablespaces);
	free(t->roots);
	free(t->run);
	memset(t, 0, sizeof(*t));
}
