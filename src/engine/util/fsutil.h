/*
 * fsutil.h
 *		File-system helpers that report through SbError: full reads and writes,
 *		durable syncs, paths confined beneath a directory, tree removal.
 */
#ifndef SB_FSUTIL_H
#define SB_FSUTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stripebackup/sb_error.h"

/* malloc that reports failure as SB_ENOMEM. */
extern void *sb_alloc(size_t size, SbError *err);
extern char *sb_strdup(const char *s, SbError *err);

/*
 * Make room in a growing array for one more element after COUNT: doubles
 * *CAP (from 16) when full.  False (SB_ENOMEM) if memory runs out; the array
 * is unchanged then.
 */
extern bool sb_grow(void **items, size_t *cap, size_t count, size_t elem_size, SbError *err);

/* qsort's comparison of two uint64_t. */
extern int	sb_compare_u64(const void *a, const void *b);

/* "a/b" from "a" and "b"; malloc'd. */
extern char *sb_path_join(const char *a, const char *b, SbError *err);

/* An unlinked file in DIR (O_TMPFILE, or a named one removed at once) for WHAT; -1 and ERR on failure. */
extern int	sb_open_unlinked(const char *dir, const char *what, SbError *err);

/* Write all of BUF at the file position; WHAT names the file in errors. */
extern bool sb_write_all(int fd, const void *buf, size_t len, const char *what, SbError *err);

/* pwrite all of BUF at OFFSET. */
extern bool sb_pwrite_all(int fd, const void *buf, size_t len, uint64_t offset,
						  const char *what, SbError *err);

/* pread up to LEN bytes at OFFSET, stopping early only at end of file; -1 on error. */
extern ssize_t sb_pread_upto(int fd, void *buf, size_t len, uint64_t offset,
							 const char *what, SbError *err);

/* fsync a file or directory by path. */
extern bool sb_fsync_path(const char *path, bool is_dir, SbError *err);

/*
 * Replace NAME in the directory DIRFD with BYTES, atomically and durably:
 * write TMP_NAME (never through a link), fsync it, rename it to NAME, fsync
 * the directory.  WHERE names the directory in errors.  On failure the
 * temporary file is removed.
 */
extern bool sb_replace_file_at(int dirfd, const char *where, const char *name,
							   const char *tmp_name, const void *bytes, size_t len,
							   SbError *err);

/* Read a whole (small) file into a NUL-terminated malloc'd buffer. */
extern char *sb_read_small_file(const char *path, size_t max, size_t *len, SbError *err);

/*
 * Open PATH (relative) beneath DIRFD without following any symlink, so a path
 * can never leave the directory.  Returns the fd, or -1 with errno set.
 */
extern int	sb_open_beneath(int dirfd, const char *path, int flags, mode_t mode);

/*
 * The process's umask, read without changing it (umask(2) cannot be read
 * without setting it, which would race with other threads' creates); -1
 * when /proc does not say.
 */
extern int	sb_current_umask(void);

/*
 * Create the missing ancestors of PATH (mode 0700, as pg_basebackup makes a
 * target's), outermost first; *MADE how many were made, which are the
 * innermost ones, for sb_remove_made_parents.  SB_EINVAL or the system's
 * error naming the one that could not be made, as the parent of WHAT PATH.
 */
extern bool sb_make_parents(const char *path, const char *what, uint32_t *made, SbError *err);

/* Remove the MADE innermost ancestors of PATH (those sb_make_parents made), while empty. */
extern void sb_remove_made_parents(const char *path, uint32_t made);

/* Create the missing parent directories of PATH beneath DIRFD (mode 0700). */
extern bool sb_make_parents_beneath(int dirfd, const char *path, SbError *err);

/* Is DIR an empty directory?  Sets *exists when it exists at all. */
extern bool sb_dir_is_empty(const char *path, bool *exists, bool *empty, SbError *err);

/* Remove everything inside DIRFD's tree without following symlinks. */
extern bool sb_remove_contents(const char *path, SbError *err);

/* Current UTC time as "YYYY-MM-DDTHH:MM:SSZ". */
extern void sb_now_iso8601(char *buf, size_t len);

/* Monotonic clock in seconds. */
extern double sb_monotonic_seconds(void);

#endif							/* SB_FSUTIL_H */
