/*
 * json_out.h
 *		The command's --output=json: one JSON document on standard output
 *		per command, whose every object and field docs/JSON.md describes
 *		(and test/json/output.schema.json checks).  Every document carries
 *		"version" (JSON_OUTPUT_VERSION) and "command"; a field is added in
 *		a minor change, and only a change that removes or redefines one
 *		raises the version.
 */
#ifndef SB_JSON_OUT_H
#define SB_JSON_OUT_H

#include <cjson/cJSON.h>

#include "cli.h"
#include "stripebackup/sb_pgrecovery.h"
#include "stripebackup/sb_wal.h"
#include "list_rows.h"

#define JSON_OUTPUT_VERSION 1

/*
 * Keep standard output for the document alone: what the command's other
 * parts print there (a verify's notes of the WAL archive it found) goes to
 * standard error from now on.  False when that could not be arranged.
 */
extern bool json_take_stdout(void);

/* A new document of COMMAND: {"version": 1, "command": COMMAND}; NULL when out of memory. */
extern cJSON *json_document(const char *command);

/*
 * DOC printed on standard output when COMPLETE (else building it ran out of
 * memory), then freed; false, said on stderr, when it was not printed.
 */
extern bool json_emit(cJSON *doc, bool complete);

/* OBJ when COMPLETE; else (building it ran out of memory) OBJ freed, NULL. */
extern cJSON *json_keep(cJSON *obj, bool complete);

/* OBJ's KEY: S, or null.  Each of these is false when out of memory. */
extern bool json_add_string(cJSON *obj, const char *key, const char *s);

/* OBJ's KEY: [the N strings of LIST]. */
extern bool json_add_strings(cJSON *obj, const char *key, const char *const *list, uint32_t n);

/* OBJ's KEY: N, or null unless KNOWN. */
extern bool json_add_count(cJSON *obj, const char *key, uint64_t n, bool known);

/* OBJ's "wal": {start_lsn, stop_lsn, timeline}, or null when START_LSN is NULL (a cold backup). */
extern bool json_add_wal(cJSON *obj, const char *start_lsn, const char *stop_lsn, unsigned timeline);

/* OBJ's "parent": {name, id}, or null when NAME is NULL (a full backup). */
extern bool json_add_parent(cJSON *obj, const char *name, const char *id);

/* "show": a summary of the backup A (PLAN its stripes): never its file table. */
extern bool json_print_show(const SbArchive *a, const SbPlan *plan);

/* What plan --target found of the target: whether a restore can go there. */
typedef struct JsonTarget
{
	const char *path;
	bool		usable;			/* restore would take it, with room enough */
	bool		will_create;	/* absent: the restore makes it */
	uint64_t	needed_bytes;	/* what the restore writes */
	bool		has_free;
	uint64_t	free_bytes;		/* on its file system, if has_free */
	char		problem[SB_ERROR_MESSAGE_MAX + 64];	/* unless usable: why not */
} JsonTarget;

/*
 * "plan": what a restore of A (PLAN) reads, from it and each older backup
 * of its chain; READY or damaged; TARGET (NULL: none given) what plan
 * found of the target; with a recovery target RECOVERY (NULL: none), what
 * the WAL archive holds of what recovery replays (WAL).
 */
extern bool json_print_plan(const SbArchive *a, const SbPlan *plan, bool ready, const JsonTarget *target,
							const SbRecoveryTarget *recovery, const SbRecoveryWal *wal);

/* "verify": what it checked and found, gathered as it goes. */
typedef struct JsonVerify
{
	cJSON	   *problems;		/* NULL: no document (no --output=json) */
	cJSON	   *backup;			/* {name, id, type, parent} */
	uint64_t	chunks;
	uint32_t	stripes;
	bool		without_key;	/* an encrypted backup checked without its key */
	bool		wal_checked;
	uint64_t	wal_files;
	char		wal_from[64];
	char		wal_to[64];
} JsonVerify;

/* Start gathering; false when out of memory (then no document). */
extern bool json_verify_begin(JsonVerify *v);
extern void json_verify_add_problem(JsonVerify *v, const SbProblem *p);
/* The WAL archive's check: FILES read whole, from segment FROM to TO. */
extern void json_verify_set_wal(JsonVerify *v, uint64_t files, const char *from, const char *to);
/* The backup NAME (M's members, or NULL when its manifest could not be opened), CHUNKS in STRIPES checked. */
extern void json_verify_set_backup(JsonVerify *v, const char *name, const SbManifest *m, uint64_t chunks,
								   uint32_t stripes, bool without_key);
/* The document, GOOD or damaged. */
extern bool json_print_verify(JsonVerify *v, bool good);
extern void json_verify_free(JsonVerify *v);

/* "wal-list": DESTS' archived files and what could not be listed; KEYED: under a key. */
extern bool json_print_wal_list(const char *const *dests, uint32_t ndests, bool keyed, const SbWalListing *l);

/* "wal-verify": what it read and found. */
typedef struct JsonWalVerify
{
	uint64_t	files;			/* read whole */
	uint64_t	problems;
	cJSON	   *messages;		/* an array of each problem's message (the caller's) */
	const char *from;			/* --from, or NULL */
	const char *to;
	bool		range_complete; /* every segment from FROM to TO there */
	uint64_t	segments;		/* of the range, checked */
} JsonWalVerify;

extern bool json_print_wal_verify(const char *const *dests, uint32_t ndests, const JsonWalVerify *v);

/* "list": the destinations given and the rows found. */
extern bool json_print_list(const char *const *dests, uint32_t ndests, const ListRows *rows);

#endif							/* SB_JSON_OUT_H */
