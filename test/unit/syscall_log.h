/*
 * syscall_log.h
 *		What the engine's syncs, renames and some writes did, in order, and
 *		making a chosen one fail as a dying or full disk would.
 *
 * The unit test binary is linked with --wrap for fsync, rename, renameat,
 * renameat2, syncfs, pwrite and sync_file_range (Makefile): every such call
 * of the engine goes through syscall_log.c, which logs it while logging is
 * on (with the path behind the descriptor; of pwrite only the writes of
 * stripe trailers; sync_file_range as "startwb") and fails the one chosen.
 */
#ifndef SB_UNIT_SYSCALL_LOG_H
#define SB_UNIT_SYSCALL_LOG_H

#include <errno.h>
#include <stdbool.h>

/*
 * Log from now on, and fail the (SKIP + 1)-th OP ("fsync", "rename",
 * "syncfs", "trailer" or "pwrite": any write of pwrite) on a path that
 * ends with PATTERN, or contains what follows a leading '*', with EIO
 * (th_log_start) or ERRNUM.  OP NULL: fail nothing.
 */
extern void th_log_start(const char *op, const char *pattern, int skip);
extern void th_log_start_errno(const char *op, const char *pattern, int skip, int errnum);
extern void th_log_stop(void);

/* Is a log running (started, not yet stopped)? */
extern bool th_log_active(void);

/* Did the chosen call fail (it was reached)? */
extern bool th_log_failed(void);

/* The index of the first (or, LAST, the last) OP on PATH; -1 when none. */
extern int	th_log_find(const char *op, const char *path, bool last);

/* The same for a path that starts with PREFIX. */
extern int	th_log_find_prefix(const char *op, const char *prefix, bool last);

/* How many OPs were logged. */
extern int	th_log_count(const char *op);

/* Print the log as diagnostics (for a failing test). */
extern void th_log_diag(void);

#endif							/* SB_UNIT_SYSCALL_LOG_H */
