/*
 * sb_walk.c
 *		What an online backup copies, by PostgreSQL's rules (basebackup.c):
 *		every file of the data directory, except temporary files and
 *		relations, non-init forks of unlogged relations, files rebuilt or
 *		removed at start-up, and the contents of pg_wal (whose needed
 *		segments are added after the backup stops) and of a few directories
 *		whose contents start-up clears.  Directories are kept, even when
 *		their contents are not, so a restore has them with their modes.
 */
#include "postgres.h"

#include <sys/stat.h>

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "catalog/catalog.h"
#include "common/relpath.h"
#include "common/file_perm.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/syslogger.h"
#include "storage/dsm_impl.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "storage/reinit.h"
#include "utils/relmapper.h"

#include "sb_control.h"
#include "sb_walk.h"

#define TBLSPC_DIR "pg_tblspc"

/* Directories whose contents start-up recreates or never needs. */
static const char *const contents_skipped[] = {
	PG_STAT_TMP_DIR, "pg_replslot", PG_DYNSHMEM_DIR, "pg_notify", "pg_serial",
	"pg_snapshots", "pg_subtrans", NULL
};

/* Files never copied: {name, match as prefix}. */
static const struct
{
	const char *name;
	bool		prefix;
}			files_skipped[] = {
	{PG_AUTOCONF_FILENAME ".tmp", false},
	{LOG_METAINFO_DATAFILE_TMP, false},
	{RELCACHE_INIT_FILENAME, true},
	{BACKUP_LABEL_FILE, false},
	{TABLESPACE_MAP, false},
	{"backup_manifest", false},
	{"postmaster.pid", false},
	{"postmaster.opts", false},
	{NULL, false}
};

static bool
is_skipped_file(const char *name)
{
	int			i;

	if (strncmp(name, PG_TEMP_FILE_PREFIX, strlen(PG_TEMP_FILE_PREFIX)) == 0)
		return true;
	for (i = 0; files_skipped[i].name != NULL; i++)
	{
		size_t		len = strlen(files_skipped[i].name);

		if (files_skipped[i].prefix ? strncmp(name, files_skipped[i].name, len) == 0
			: strcmp(name, files_skipped[i].name) == 0)
			return true;
	}
	return false;
}

static bool
is_contents_skipped(const char *name)
{
	int			i;

	for (i = 0; contents_skipped[i] != NULL; i++)
		if (strcmp(name, contents_skipped[i]) == 0)
			return true;
	return false;
}

/* base/<db> or <tablespace version directory>/<db>: holds relations. */
static bool
is_database_dir(const char *archive_path)
{
	const char *last = strrchr(archive_path, '/');
	size_t		parent_len;

	if (last == NULL || last[1] == '\0' || strspn(last + 1, "0123456789") != strlen(last + 1))
		return false;
	parent_len = last - archive_path;
	if (parent_len == 4 && strncmp(archive_path, "base", 4) == 0)
		return true;
	return parent_len >= strlen(TABLESPACE_VERSION_DIRECTORY) &&
		strncmp(last - strlen(TABLESPACE_VERSION_DIRECTORY), TABLESPACE_VERSION_DIRECTORY,
				strlen(TABLESPACE_VERSION_DIRECTORY)) == 0;
}

/* A directory's entries, sorted by name, so the archive order is repeatable. */
typedef struct DirEntry
{
	char	   *name;
	unsigned char type;			/* d_type: DT_REG, DT_DIR, ... or DT_UNKNOWN */
} DirEntry;

typedef struct DirListing
{
	DirEntry   *entries;
	int			count;
} DirListing;

static int
compare_entries(const void *a, const void *b)
{
	return strcmp(((const DirEntry *) a)->name, ((const DirEntry *) b)->name);
}

static bool
listing_has(const DirListing *l, const char *name)
{
	DirEntry	key = {(char *) name, DT_UNKNOWN};

	return bsearch(&key, l->entries, l->count, sizeof(DirEntry), compare_entries) != NULL;
}

/*
 * A fork of an unlogged relation other than its init fork: start-up rebuilds
 * it.  The init fork is looked up in the directory's listing, not with a
 * stat per relation file (thousands of partitions make that count).
 */
static bool
is_unlogged_fork(const DirListing *l, const char *name)
{
	int			oidchars;
	ForkNumber	fork;
	char		init_fork[MAXPGPATH];

	if (!parse_filename_for_nontemp_relation(name, &oidchars, &fork) || fork == INIT_FORKNUM)
		return false;
	snprintf(init_fork, sizeof(init_fork), "%.*s_init", oidchars, name);
	return listing_has(l, init_fork);
}

static void
check_stop(void)
{
	CHECK_FOR_INTERRUPTS();
	sb_control_check_stop();
}

static void
add_dir(SbWalk *w, const char *archive_path, const struct stat *st)
{
	SbError		err;
	mode_t		mode = S_ISDIR(st->st_mode) ? st->st_mode : pg_dir_create_mode;

	if (!sb_backup_add_dir(w->backup, archive_path, mode & 07777, st->st_mtime, &err))
		sb_control_raise(&err);
}

void
sb_walk_add_file(SbWalk *w, const char *archive_path, const char *disk_path)
{
	SbError		err;

	if (sb_backup_add_file(w->backup, archive_path, disk_path, &err))
		return;
	if (err.code != SB_ENOTFOUND)
		sb_control_raise(&err);
	w->skipped_files++;			/* dropped while we walked: not an error */
}

static DirListing
list_dir(const char *disk_dir)
{
	DIR		   *dir = AllocateDir(disk_dir);
	struct dirent *de;
	DirListing	l = {palloc(64 * sizeof(DirEntry)), 0};
	int			allocated = 64;

	while ((de = ReadDir(dir, disk_dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (l.count == allocated)
		{
			allocated *= 2;
			l.entries = repalloc(l.entries, allocated * sizeof(DirEntry));
		}
		l.entries[l.count].name = pstrdup(de->d_name);
		l.entries[l.count].type = de->d_type;
		l.count++;
	}
	FreeDir(dir);
	qsort(l.entries, l.count, sizeof(DirEntry), compare_entries);
	return l;
}

static void
free_listing(DirListing *l)
{
	int			i;

	for (i = 0; i < l->count; i++)
		pfree(l->entries[i].name);
	pfree(l->entries);
}

static void walk_dir(SbWalk *w, const char *disk_dir, const char *archive_dir);

/* An entry of the data directory's top level that gets special treatment? */
static bool
walk_special(SbWalk *w, const char *archive, const char *name, const struct stat *st)
{
	if (strcmp(archive, XLOGDIR) == 0)
	{
		/* Needed segments are added after the backup stops. */
		add_dir(w, XLOGDIR, st);
		add_dir(w, XLOGDIR "/archive_status", st);
		return true;
	}
	if (strcmp(archive, TBLSPC_DIR) == 0)
	{
		/* Each tablespace is added whole, from the list backup start gave. */
		add_dir(w, TBLSPC_DIR, st);
		return true;
	}
	if (is_contents_skipped(name))
	{
		add_dir(w, archive, st);
		return true;
	}
	return false;
}

static void
walk_entry(SbWalk *w, const char *disk_dir, const char *archive_dir, const DirListing *listing,
		   const DirEntry *entry, bool in_database_dir)
{
	const char *name = entry->name;
	char		disk[MAXPGPATH];
	char		archive[MAXPGPATH];
	struct stat st;

	if (is_skipped_file(name) || strcmp(name, ".DS_Store") == 0)
		return;
	if (in_database_dir && (looks_like_temp_rel_name(name) || is_unlogged_fork(listing, name)))
		return;
	snprintf(disk, sizeof(disk), "%s/%s", disk_dir, name);
	if (strcmp(archive_dir, ".") == 0)
		strlcpy(archive, name, sizeof(archive));
	else
		snprintf(archive, sizeof(archive), "%s/%s", archive_dir, name);
	if (strcmp(archive, XLOG_CONTROL_FILE) == 0)
		return;					/* copied last, by the caller */
	/* A regular file needs no stat here: the engine opens it and fstat()s that. */
	if (entry->type == DT_REG && !is_contents_skipped(name))
	{
		sb_walk_add_file(w, archive, disk);
		return;
	}
	if (lstat(disk, &st) != 0)
	{
		if (errno == ENOENT)
			return;				/* dropped while we walked */
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not stat \"%s\": %m", disk)));
	}
	if (walk_special(w, archive, name, &st))
		return;
	if (S_ISDIR(st.st_mode))
	{
		add_dir(w, archive, &st);
		walk_dir(w, disk, archive);
	}
	else if (S_ISREG(st.st_mode))
		sb_walk_add_file(w, archive, disk);
	else
		ereport(WARNING, (errmsg("skipping special file \"%s\"", disk)));
}

static void
walk_dir(SbWalk *w, const char *disk_dir, const char *archive_dir)
{
	DirListing	listing = list_dir(disk_dir);
	bool		in_database_dir = is_database_dir(archive_dir);
	int			i;

	for (i = 0; i < listing.count; i++)
	{
		check_stop();
		walk_entry(w, disk_dir, archive_dir, &listing, &listing.entries[i], in_database_dir);
	}
	free_listing(&listing);
}

void
sb_walk_data_directory(SbWalk *w)
{
	struct stat st;

	if (lstat(".", &st) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not stat the data directory: %m")));
	add_dir(w, ".", &st);
	walk_dir(w, ".", ".");
}

void
sb_walk_tablespace(SbWalk *w, const char *oid, const char *location)
{
	char		archive[MAXPGPATH];
	char		disk[MAXPGPATH];
	struct stat st;

	snprintf(archive, sizeof(archive), "%s/%s", TBLSPC_DIR, oid);
	if (lstat(location, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not stat tablespace %s at \"%s\": %m", oid, location)));
	add_dir(w, archive, &st);
	snprintf(disk, sizeof(disk), "%s/%s", location, TABLESPACE_VERSION_DIRECTORY);
	snprintf(archive, sizeof(archive), "%s/%s/%s", TBLSPC_DIR, oid, TABLESPACE_VERSION_DIRECTORY);
	if (lstat(disk, &st) != 0)
		ereport(ERROR,
				(errcode_for_file_access(), errmsg("could not stat \"%s\": %m", disk)));
	add_dir(w, archive, &st);
	walk_dir(w, disk, archive);
}
