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

#include <fcntl.h>
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
#include "utils/relmapper.h"

#include "sb_control.h"
#include "sb_standby_history.h"
#include "sb_walk.h"

#define TBLSPC_DIR "pg_tblspc"

/* Directories whose contents start-up recreates or never needs. */
static const char *const contents_skipped[] = {
	PG_STAT_TMP_DIR, "pg_replslot", PG_DYNSHMEM_DIR, "pg_notify", "pg_serial",
	"pg_snapshots", "pg_subtrans",
	SB_STANDBY_DIR,				/* this server's own history as a standby */
	NULL
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
	/* a standby's: a restore makes its copy a standby only when asked (standby => true) */
	{STANDBY_SIGNAL_FILE, false},
	{RECOVERY_SIGNAL_FILE, false},
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

/*
 * The relations of a database directory that have an init fork (unlogged
 * ones), sorted: read in a pass of their own, so that the directory's
 * files can then be walked as they are read, none of their names held (a
 * database of a million relation files would hold a million).
 */
typedef struct InitForks
{
	Oid		   *relations;
	int			count;
} InitForks;

static int
compare_oids(const void *a, const void *b)
{
	Oid			x = *(const Oid *) a;
	Oid			y = *(const Oid *) b;

	return x < y ? -1 : x > y;
}

static InitForks
list_init_forks(const char *disk_dir)
{
	DIR		   *dir = AllocateDir(disk_dir);
	struct dirent *de;
	InitForks	f = {palloc(16 * sizeof(Oid)), 0};
	int			allocated = 16;
	Oid			relation;
	ForkNumber	fork;
	unsigned	segno;

	while ((de = ReadDir(dir, disk_dir)) != NULL)
	{
		if (!sbx_compat_parse_relation_file(de->d_name, &relation, &fork, &segno) ||
			fork != INIT_FORKNUM)
			continue;
		if (f.count == allocated)
		{
			allocated *= 2;
			f.relations = repalloc(f.relations, allocated * sizeof(Oid));
		}
		f.relations[f.count++] = relation;
	}
	FreeDir(dir);
	qsort(f.relations, f.count, sizeof(Oid), compare_oids);
	return f;
}

/*
 * A fork of an unlogged relation other than its init fork: start-up rebuilds
 * it.  The init fork is looked up among those listed, not with a stat per
 * relation file (thousands of partitions make that count).  An unlogged
 * relation made after that listing is copied whole: harmless, as start-up
 * resets it from its init fork.
 */
static bool
is_unlogged_fork(const InitForks *forks, const char *name)
{
	ForkNumber	fork;
	Oid			relation;
	unsigned	segno;

	if (forks->count == 0 || !sbx_compat_parse_relation_file(name, &relation, &fork, &segno) ||
		fork == INIT_FORKNUM)
		return false;
	return bsearch(&relation, forks->relations, forks->count, sizeof(Oid), compare_oids) != NULL;
}

static void
check_stop(void)
{
	CHECK_FOR_INTERRUPTS();
	sbx_control_check_stop();
}

static void
add_dir(SbWalk *w, const char *archive_path, const struct stat *st)
{
	SbError		err;
	mode_t		mode = S_ISDIR(st->st_mode) ? st->st_mode : pg_dir_create_mode;

	if (!sb_backup_add_dir(w->backup, archive_path, mode & 07777, st->st_mtime, &err))
		sbx_control_raise(&err);
}

/* The file NAME of the directory open at DIRFD (DISK_PATH), if it is still there. */
static void
add_file_at(SbWalk *w, const char *archive_path, int dirfd, const char *name, const char *disk_path)
{
	SbError		err;

	if (sb_backup_add_file_at(w->backup, archive_path, dirfd, name, disk_path, &err))
		return;
	if (err.code != SB_ENOTFOUND)
		sbx_control_raise(&err);
	w->skipped_files++;			/* dropped while we walked: not an error */
}

/*
 * A directory's regular files are gathered into runs and added a run at a
 * time (sb_backup_add_files_at), so that the engine opens and reads several
 * at once; the run is added before anything else of the walk, so the
 * backup's order is the walk's.
 */
#define RUN_FILES 64
#define RUN_TEXT (16 * MAXPGPATH)

typedef struct SbWalkRun
{
	int			dirfd;
	SbFileAt	files[RUN_FILES];
	int			count;
	char		text[RUN_TEXT];	/* the files' paths and names */
	size_t		used;
} SbWalkRun;

/* Add the files gathered: those that vanished meanwhile are skipped. */
static void
flush_files(SbWalk *w)
{
	SbWalkRun  *run = w->run;
	int			n = run ? run->count : 0;
	SbError		err;
	int			i;

	if (n == 0)
		return;
	run->count = 0;				/* the run is over, added or not */
	run->used = 0;
	if (!sb_backup_add_files_at(w->backup, run->dirfd, run->files, (uint32_t) n, &err))
		sbx_control_raise(&err);
	for (i = 0; i < n; i++)
		if (run->files[i].gone)
			w->skipped_files++; /* dropped while we walked: not an error */
}

static const char *
run_copy(SbWalkRun *run, const char *s)
{
	size_t		len = strlen(s) + 1;
	char	   *copy = run->text + run->used;

	memcpy(copy, s, len);
	run->used += len;
	return copy;
}

/* Gather the regular file NAME of the directory open at DIRFD (DISK_PATH). */
static void
gather_file(SbWalk *w, const char *archive_path, int dirfd, const char *name, const char *disk_path)
{
	SbWalkRun  *run;
	SbFileAt   *f;

	if (w->run == NULL)
		w->run = palloc0(sizeof(SbWalkRun));
	run = w->run;
	if (run->count == RUN_FILES ||
		run->used + strlen(archive_path) + strlen(name) + strlen(disk_path) + 3 > RUN_TEXT)
		flush_files(w);
	f = &run->files[run->count++];
	f->path = run_copy(run, archive_path);
	f->name = run_copy(run, name);
	f->source_path = run_copy(run, disk_path);
	run->dirfd = dirfd;
}

void
sbx_walk_add_file(SbWalk *w, const char *archive_path, const char *disk_path)
{
	add_file_at(w, archive_path, AT_FDCWD, disk_path, disk_path);
}

static void walk_dir(SbWalk *w, const char *disk_dir, const char *archive_dir);

/* An entry of the data directory's top level that gets special treatment? */
static bool
walk_special(SbWalk *w, const char *archive, const char *name, const struct stat *st)
{
	if (strcmp(archive, XLOGDIR) == 0)
	{
		static const char *const subdirs[] = SB_WAL_SUBDIRS;
		char		path[MAXPGPATH];
		int			i;

		/* Needed segments are added after the backup stops. */
		add_dir(w, XLOGDIR, st);
		for (i = 0; subdirs[i] != NULL; i++)
		{
			snprintf(path, sizeof(path), XLOGDIR "/%s", subdirs[i]);
			add_dir(w, path, st);
		}
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

/*
 * Entry NAME of the directory DISK_DIR, open at DIRFD: a regular file is
 * opened through DIRFD, not looked up from the data directory again.
 */
static void
walk_entry(SbWalk *w, int dirfd, const char *disk_dir, const char *archive_dir, const InitForks *forks,
		   const char *name, unsigned char type, bool in_database_dir)
{
	char		disk[MAXPGPATH];
	char		archive[MAXPGPATH];
	struct stat st;

	if (is_skipped_file(name) || strcmp(name, ".DS_Store") == 0)
		return;
	if (in_database_dir && (looks_like_temp_rel_name(name) || is_unlogged_fork(forks, name)))
		return;
	snprintf(disk, sizeof(disk), "%s/%s", disk_dir, name);
	if (strcmp(archive_dir, ".") == 0)
		strlcpy(archive, name, sizeof(archive));
	else
		snprintf(archive, sizeof(archive), "%s/%s", archive_dir, name);
	if (strcmp(archive, XLOG_CONTROL_FILE) == 0)
		return;					/* copied last, by the caller */
	/* A regular file needs no stat here: the engine opens it and fstat()s that. */
	if (type == DT_REG && !is_contents_skipped(name))
	{
		gather_file(w, archive, dirfd, name, disk);
		return;
	}
	flush_files(w);
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0)
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
		add_file_at(w, archive, dirfd, name, disk);
	else
		ereport(WARNING, (errmsg("skipping special file \"%s\"", disk)));
}

/* The directory's entries as they are read, in the order readdir gives. */
static void
walk_dir(SbWalk *w, const char *disk_dir, const char *archive_dir)
{
	bool		in_database_dir = is_database_dir(archive_dir);
	InitForks	forks = {NULL, 0};
	DIR		   *dir;
	struct dirent *de;

	if (in_database_dir)
		forks = list_init_forks(disk_dir);
	dir = AllocateDir(disk_dir);
	while ((de = ReadDir(dir, disk_dir)) != NULL)
	{
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		check_stop();
		walk_entry(w, dirfd(dir), disk_dir, archive_dir, &forks, de->d_name, de->d_type, in_database_dir);
	}
	flush_files(w);				/* before the directory is closed */
	FreeDir(dir);
	if (forks.relations != NULL)
		pfree(forks.relations);
}

void
sbx_walk_root(SbWalk *w)
{
	struct stat st;

	if (lstat(".", &st) != 0)
		ereport(ERROR, (errcode_for_file_access(), errmsg("could not stat the data directory: %m")));
	add_dir(w, ".", &st);
}

void
sbx_walk_data_directory(SbWalk *w)
{
	walk_dir(w, ".", ".");
}

void
sbx_walk_tablespace(SbWalk *w, const char *oid, const char *location)
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
