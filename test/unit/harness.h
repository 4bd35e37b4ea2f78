/*
 * harness.h
 *		A tiny TAP harness for the engine's unit tests, and the helpers the
 *		tests share: temporary folders, source trees, backups, restores,
 *		tree comparison.
 *
 * Output is TAP (prove can run the binary): "ok N - ..." or "not ok N - ...",
 * diagnostics as "# ..." lines, and the plan "1..N" at the end.  The process
 * exits non-zero when any assertion failed.
 */
#ifndef SB_UNIT_HARNESS_H
#define SB_UNIT_HARNESS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_backup.h"
#include "format/format.h"

/* ---------- TAP ---------- */

extern bool th_ok(bool cond, const char *file, int line, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));
extern bool th_is_int(long long got, long long want, const char *file, int line,
					  const char *fmt,...)
			__attribute__((format(printf, 5, 6)));
extern bool th_like(const char *got, const char *want, const char *file, int line,
					const char *fmt,...)
			__attribute__((format(printf, 5, 6)));
extern bool th_is_str(const char *got, const char *want, const char *file, int line,
					  const char *fmt,...)
			__attribute__((format(printf, 5, 6)));
extern void th_diag(const char *fmt,...) __attribute__((format(printf, 1, 2)));

/* ok(condition, "description", ...) */
#define ok(cond, ...) th_ok((cond), __FILE__, __LINE__, __VA_ARGS__)
/* is_int(got, expected, "description", ...) */
#define is_int(got, want, ...) \
	th_is_int((long long) (got), (long long) (want), __FILE__, __LINE__, __VA_ARGS__)
/* like(string, substring, "description", ...): STRING contains SUBSTRING */
#define like(got, want, ...) th_like((got), (want), __FILE__, __LINE__, __VA_ARGS__)
/* is_str(string, expected, "description", ...): equal strings (or both NULL) */
#define is_str(got, want, ...) th_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define diag(...) th_diag(__VA_ARGS__)

/* Report an SbError that was not expected (no assertion). */
extern void th_diag_error(const char *what, const SbError *err);

/*
 * Begin every assertion's message with "TEXT: " from now on (NULL or "":
 * no more), as the driver loop of drivers.h names its driver; th_begin
 * clears it.
 */
extern void th_label(const char *text);

/* Start of a test: a comment line naming it. */
extern void th_begin(const char *name);

/* Monotonic clock, in seconds. */
extern double th_now(void);

/* Number of assertions so far, and of failed ones. */
extern int	th_count(void);
extern int	th_failures(void);

/* ---------- temporary folders and files ---------- */

/* Remove the temporary folders on SIGINT, SIGTERM, SIGPIPE, SIGHUP or SIGALRM. */
extern void th_install_signal_handlers(void);

/* A new folder under $TMPDIR (or /tmp), removed by th_rmtree; PATH_MAX buffer. */
extern void th_tempdir(char *out, const char *tag);

/* Remove a tree without following symlinks; quiet. */
extern void th_rmtree(const char *path);

/* snprintf into a PATH_MAX buffer; bails out (TAP) when the path does not fit. */
extern char *th_path(char *out, const char *fmt,...) __attribute__((format(printf, 2, 3)));

/* Deterministic content: random-looking, or (COMPRESSIBLE) text-like. */
extern void th_fill(uint8_t *buf, size_t len, uint32_t seed, bool compressible);

/* Text handed over PIECE bytes at a time (an SbManifestReadFn); a read error at FAIL_AT if not 0. */
typedef struct ThPieces
{
	const char *text;
	size_t		len;
	size_t		pos;
	size_t		piece;
	size_t		fail_at;
} ThPieces;

extern ssize_t th_read_pieces(void *arg, char *buf, size_t len, SbError *err);

extern bool th_write_file(const char *path, const void *data, size_t len, mode_t mode);
extern bool th_write_pattern(const char *path, size_t len, uint32_t seed,
							 bool compressible, mode_t mode);
extern bool th_pwrite_pattern(int fd, uint64_t offset, size_t len, uint32_t seed);
extern uint8_t *th_read_file(const char *path, size_t *len);
extern bool th_mkdir(const char *path, mode_t mode);
extern bool th_set_mtime(const char *path, int64_t mtime);
extern bool th_exists(const char *path);
extern int	th_count_entries(const char *dir);	/* -1 if it cannot be read */

/* XOR one byte of a file at OFFSET with MASK. */
extern bool th_flip_byte(const char *path, uint64_t offset, uint8_t mask);

/* Replace the first occurrence of FROM by TO in a text file. */
extern bool th_edit_file(const char *path, const char *from, const char *to);

/* CRC-32C (Castagnoli) of a buffer, for checking the manifest's. */
extern uint32_t th_crc32c(const uint8_t *data, size_t len);

/* ---------- other programs ---------- */

/*
 * Run ARGV (found on PATH, NULL-terminated); what it prints goes to OUT (as
 * much as fits, the last newline dropped; OUT may be NULL).  Returns its exit
 * status, or -1 if it could not run or died of a signal.
 */
extern int	th_run(const char *const *argv, char *out, size_t outlen);

/* ---------- a test's folders ---------- */

#define TH_MAX_DESTS 5

/*
 * ROOT (a new temporary folder) holds SRC (created, empty), destinations
 * d1..dN (created, empty) and TARGET (a restore target, not created).
 */
typedef struct ThFixture
{
	char		root[PATH_MAX];
	char		src[PATH_MAX];
	char		dest[TH_MAX_DESTS][PATH_MAX];
	const char *dests[TH_MAX_DESTS];
	uint32_t	ndests;
	char		target[PATH_MAX];
} ThFixture;

extern void th_fixture(ThFixture *f, const char *tag, uint32_t ndests);
extern void th_fixture_done(ThFixture *f);

/* DEST[I]/NAME (I 0-based), and that folder's stripe file NUMBER. */
extern char *th_location(const ThFixture *f, uint32_t i, const char *name, char *out);
extern char *th_stripe_path(const ThFixture *f, uint32_t number, const char *name, char *out);

/* ---------- backups, restores, comparisons ---------- */

/* Options: codec none, weighted, chunk 64 KiB, holes detected, 4 workers. */
extern void th_options(SbBackupOptions *o, const char *const *dests, uint32_t n,
					   const char *name);

/* Back up the tree at SRC ("." first, then every entry in sorted order). */
extern bool th_backup_tree(const SbBackupOptions *o, const char *src,
						   SbManifest **manifest, SbError *err);

/*
 * End backup B (NULL: it did not begin): finished when DONE, else aborted.
 * Its manifest, or NULL (ERR said under NAME).
 */
extern SbManifest *th_backup_end(SbBackup *b, bool done, const char *name, SbError *err);

/* The entry at PATH of M, or NULL. */
extern const SbEntry *th_find_entry(const SbManifest *m, const char *path);

/* Open LOCATION and restore it into TARGET. */
extern bool th_restore(const char *location, const char *target, SbError *err);

/* Open LOCATION and restore it with options RO. */
extern bool th_restore_with(const char *location, const SbRestoreOptions *ro, SbError *err);

/*
 * A delta restore of backup NAME (fixture destination 0) into F's target,
 * global/pg_control its guard, STATS filled; STREAMED: the backup opened
 * with its entries in a spool (in F's root) and read 2 files at a time.
 */
extern bool th_delta_restore(const ThFixture *f, const char *name, bool streamed, SbRestoreStats *stats,
							 SbError *err);

/* Open LOCATION and verify it; returns the number of problems, -1 on failure. */
extern long th_verify(const char *location);

/* Compare two trees: names, types, modes, sizes, contents, link targets and mtimes. */
#define TH_CMP_MTIME 0x1
extern bool th_trees_equal(const char *a, const char *b, int flags);

/* Content of two files equal (holes read through SEEK_DATA, not byte by byte). */
extern bool th_files_equal(const char *a, const char *b);

/*
 * Read a stripe file's trailer and index (format.h), to find chunk records
 * on disk.  *ENTRIES is malloc'd.  False (with a diagnostic) if unreadable.
 */
extern bool th_read_index(const char *stripe_path, SbTrailer *trailer,
						  SbIndexEntry **entries, uint64_t *nentries);

/*
 * Seal the N stripe files STRIPES again with the manifest at MANIFEST_PATH
 * as it is now: each trailer records that file's SHA-256 and length, as if
 * the backup had written it (what someone able to rewrite every file of an
 * archive can do).  False (with a diagnostic) if a stripe has no trailer.
 */
extern bool th_rebind_stripes(const char *manifest_path, const char *const *stripes, uint32_t n);

/* The SHA-256 of the file at PATH, and its length; false if unreadable. */
extern bool th_file_sha256(const char *path, uint8_t *sha, uint64_t *len);

/* ---------- problems reported by verify ---------- */

typedef struct ThProblem
{
	uint32_t	stripe;
	int64_t		chunk;
	char	   *file;
	SbErrorCode code;
	char	   *message;
} ThProblem;

typedef struct ThProblems
{
	ThProblem	items[64];
	int			n;
	int			dropped;
} ThProblems;

/*
 * Verify LOCATION with WORKERS workers, its problems into *PROBLEMS (-1 if
 * verify could not run): once with the file table, once a window of files
 * at a time (SB_KEEP_STREAMED), which must find the same problems.
 */
extern long th_verify_collect(const char *location, int workers, ThProblems *problems);

/* An SbProblemFn that copies problems into a ThProblems. */
extern void th_collect_problem(void *arg, const SbProblem *problem);
extern void th_free_problems(ThProblems *p);

#endif							/* SB_UNIT_HARNESS_H */
