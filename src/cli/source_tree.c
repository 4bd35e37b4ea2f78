/*
 * source_tree.c
 *		Walking the source directory of a cold backup.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "source_tree.h"

static bool
append_item(SourceTree *t, const SourceItem *item, SbError *err)
{
	if (t->nitems == t->cap)
	{
		size_t		cap = t->cap ? t->cap * 2 : 1024;
		SourceItem *grown = realloc(t->items, cap * sizeof(SourceItem));

		if (grown == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
		t->items = grown;
		t->cap = cap;
	}
	t->items[t->nitems++] = *item;
	return true;
}

/* Describe FULL (already lstat'ed) as an item; refuse special files. */
static bool
make_item(const char *full, const char *rel, const struct stat *st, SourceItem *item,
		  SbError *err)
{
	memset(item, 0, sizeof(*item));
	item->mode = st->st_mode & 07777;
	item->mtime = st->st_mtime;
	if (S_ISDIR(st->st_mode))
		item->type = SB_ENTRY_DIR;
	else if (S_ISREG(st->st_mode))
	{
		item->type = SB_ENTRY_FILE;
		item->size = (uint64_t) st->st_size;
	}
	else if (S_ISLNK(st->st_mode))
	{
		char		target[PATH_MAX];
		ssize_t		n = readlink(full, target, sizeof(target) - 1);

		if (n < 0)
			return sb_error_set_errno(err, errno, "could not read link \"%s\"", full);
		target[n] = '\0';
		item->type = SB_ENTRY_SYMLINK;
		item->link_target = strdup(target);
	}
	else
		return sb_error_set(err, SB_EINVAL,
							"\"%s\" is a socket, pipe or device; only files, directories and links can be backed up",
							full);
	item->path = strdup(rel);
	item->full_path = strdup(full);
	if (item->path == NULL || item->full_path == NULL ||
		(item->type == SB_ENTRY_SYMLINK && item->link_target == NULL))
		return sb_error_set(err, SB_ENOMEM, "out of memory listing the source");
	return true;
}

static int
compare_names(const void *a, const void *b)
{
	return strcmp(*(char *const *) a, *(char *const *) b);
}

/* The names in directory FULL, sorted, so backups of a tree are repeatable. */
static char **
sorted_names(const char *full, size_t *count, SbError *err)
{
	DIR		   *dir = opendir(full);
	struct dirent *de;
	char	  **names = NULL;
	size_t		n = 0,
				cap = 0;

	if (dir == NULL)
	{
		sb_error_set_errno(err, errno, "could not open directory \"%s\"", full);
		return NULL;
	}
	while ((de = readdir(dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (n == cap)
		{
			char	  **grown;

			cap = cap ? cap * 2 : 64;
			grown = realloc(names, cap * sizeof(char *));
			if (grown == NULL)
				break;
			names = grown;
		}
		if ((names[n] = strdup(de->d_name)) == NULL)
			break;
		n++;
	}
	closedir(dir);
	if (de != NULL)
	{
		while (n > 0)
			free(names[--n]);
		free(names);
		sb_error_set(err, SB_ENOMEM, "out of memory listing \"%s\"", full);
		return NULL;
	}
	qsort(names, n, sizeof(char *), compare_names);
	*count = n;
	return names ? names : calloc(1, sizeof(char *));
}

static bool walk(SourceTree *t, const char *full, const char *rel, SbError *err);

static bool
walk_entry(SourceTree *t, const char *dir_full, const char *dir_rel, const char *name,
		   SbError *err)
{
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
	if (lstat(full, &st) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", full);
	if (!make_item(full, rel, &st, &item, err) || !append_item(t, &item, err))
		return false;
	t->total_bytes += item.size;
	return item.type != SB_ENTRY_DIR || walk(t, full, rel, err);
}

static bool
walk(SourceTree *t, const char *full, const char *rel, SbError *err)
{
	size_t		n = 0,
				i;
	char	  **names = sorted_names(full, &n, err);
	bool		ok = names != NULL;

	for (i = 0; ok && i < n; i++)
		ok = walk_entry(t, full, rel, names[i], err);
	for (i = 0; names != NULL && i < n; i++)
		free(names[i]);
	free(names);
	return ok;
}

bool
source_tree_scan(const char *root, SourceTree *t, SbError *err)
{
	struct stat st;
	SourceItem	item;

	memset(t, 0, sizeof(*t));
	if (stat(root, &st) != 0)
		return sb_error_set_errno(err, errno, "source \"%s\" is not usable", root);
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "source \"%s\" is not a directory", root);
	return make_item(root, ".", &st, &item, err) && append_item(t, &item, err) &&
		walk(t, root, ".", err);
}

void
source_tree_free(SourceTree *t)
{
	size_t		i;

	for (i = 0; i < t->nitems; i++)
	{
		free(t->items[i].path);
		free(t->items[i].full_path);
		free(t->items[i].link_target);
	}
	free(t->items);
	memset(t, 0, sizeof(*t));
}
