/*
 * sb_sql_restore.c
 *		stripe_restore_plan(), stripe_verify() and stripe_restore(), each by
 *		backup id or by location (a backup folder, even one this server never
 *		took).
 *
 * Plan and verify run in the calling session: verify's reader and checker
 * threads live in the engine; the session's thread only waits, ticks, and
 * turns what the threads found into rows once they are done.  Restore runs
 * in a background worker, as a backup does.
 */
#include "postgres.h"

#include <dirent.h>
#include <errno.h>
#include <unistd.h>
#include <stdlib.h>

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "stripebackup/sb_pgmeta.h"
#include "sb_args.h"
#include "sb_guc.h"
#include "sb_launch.h"
#include "sb_pgrestore.h"
#include "sb_util.h"

PG_FUNCTION_INFO_V1(stripe_restore_plan_id);
PG_FUNCTION_INFO_V1(stripe_restore_plan_location);
PG_FUNCTION_INFO_V1(stripe_verify_id);
PG_FUNCTION_INFO_V1(stripe_verify_location);
PG_FUNCTION_INFO_V1(stripe_restore_id);
PG_FUNCTION_INFO_V1(stripe_restore_location);

/* ---------- plan ---------- */

#define PLAN_COLUMNS 14

static void
put_plan_stripe(ReturnSetInfo *rs, const SbArchive *a, const SbPlanStripe *s)
{
	Datum		v[PLAN_COLUMNS];
	bool		n[PLAN_COLUMNS];
	char		folder[MAXPGPATH];

	memset(n, true, sizeof(n));
	strlcpy(folder, s->path, sizeof(folder));
	*strrchr(folder, '/') = '\0';
	v[0] = Int32GetDatum((int32) s->number);
	v[1] = CStringGetTextDatum(folder);
	v[2] = BoolGetDatum(s->present);
	v[3] = Int64GetDatum((int64) s->chunks);
	v[4] = Int64GetDatum((int64) s->stored_bytes);
	v[5] = Int64GetDatum((int64) s->raw_bytes);
	v[6] = Int64GetDatum((int64) s->files);
	memset(n, false, 7 * sizeof(bool));
	v[7] = Float8GetDatum(s->expected_mbps);
	n[7] = s->expected_mbps <= 0;
	v[8] = Float8GetDatum(s->estimated_seconds);
	n[8] = s->estimated_seconds < 0;
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* The total: every stripe at once, so the slowest one, plus the fixed part. */
static void
put_plan_total(ReturnSetInfo *rs, const SbPlan *plan)
{
	Datum		v[PLAN_COLUMNS];
	bool		n[PLAN_COLUMNS];
	bool		present = true;
	uint32_t	i;

	for (i = 0; i < plan->nstripes; i++)
		present = present && plan->stripes[i].present;
	memset(n, true, sizeof(n));
	v[2] = BoolGetDatum(present);
	v[3] = Int64GetDatum((int64) plan->chunks);
	v[4] = Int64GetDatum((int64) plan->stored_bytes);
	v[5] = Int64GetDatum((int64) plan->raw_bytes);
	v[6] = Int64GetDatum((int64) plan->files);
	memset(n + 2, false, 5 * sizeof(bool));
	v[8] = Float8GetDatum(plan->estimated_seconds);
	n[8] = plan->estimated_seconds < 0;
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* One row per piece of file data, in chunk order. */
static void
put_plan_pieces(ReturnSetInfo *rs, const SbManifest *m)
{
	uint64_t	c;

	for (c = 0; c < m->total_chunks; c++)
	{
		SbPieceIter it;
		SbPiece		p;

		CHECK_FOR_INTERRUPTS();
		sb_piece_iter_init(&it, m, c);
		while (sb_piece_iter_next(&it, &p))
		{
			Datum		v[PLAN_COLUMNS];
			bool		n[PLAN_COLUMNS];

			memset(n, true, sizeof(n));
			v[0] = Int32GetDatum((int32) sb_manifest_chunk_stripe(m, c) + 1);
			n[0] = false;
			v[9] = CStringGetTextDatum(m->entries[p.entry].path);
			v[10] = Int64GetDatum((int64) p.file_offset);
			v[11] = Int64GetDatum((int64) p.length);
			v[12] = Int64GetDatum((int64) c);
			v[13] = Int64GetDatum((int64) p.chunk_offset);
			memset(n + 9, false, 5 * sizeof(bool));
			tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
		}
	}
}

static void
plan_rows(FunctionCallInfo fcinfo, const char *location, bool detail)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbArchive  *volatile a = sb_pgrestore_open(location);

	InitMaterializedSRF(fcinfo, 0);
	PG_TRY();
	{
		SbPlan		plan;
		uint32_t	i;

		sb_restore_plan_with_history(a, &plan);
		for (i = 0; i < plan.nstripes; i++)
			put_plan_stripe(rs, a, &plan.stripes[i]);
		put_plan_total(rs, &plan);
		if (detail)
			put_plan_pieces(rs, a->manifest);
	}
	PG_FINALLY();
	{
		sb_archive_close(a);
	}
	PG_END_TRY();
}

Datum
stripe_restore_plan_id(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(false, "plan a restore");
	plan_rows(fcinfo, sb_pgrestore_location_of(PG_GETARG_INT64(0)), PG_GETARG_BOOL(1));
	return (Datum) 0;
}

Datum
stripe_restore_plan_location(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(false, "plan a restore");
	plan_rows(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), PG_GETARG_BOOL(1));
	return (Datum) 0;
}

/* ---------- verify ---------- */

/* Problems found by the engine's threads, kept in malloc'd memory until done. */
typedef struct Findings
{
	SbProblem  *items;
	size_t		n;
	size_t		cap;
} Findings;

/* On an engine thread (serialized by the engine): no PostgreSQL calls here. */
static void
collect_problem(void *arg, const SbProblem *problem)
{
	Findings   *f = arg;

	if (f->n == f->cap)
	{
		size_t		cap = f->cap ? f->cap * 2 : 16;
		SbProblem  *grown = realloc(f->items, cap * sizeof(SbProblem));

		if (grown == NULL)
			return;				/* counted by the engine all the same */
		f->items = grown;
		f->cap = cap;
	}
	f->items[f->n] = *problem;
	f->items[f->n].file = problem->file ? strdup(problem->file) : NULL;
	f->items[f->n].message = strdup(problem->message);
	f->n++;
}

static void
free_findings(Findings *f)
{
	size_t		i;

	for (i = 0; i < f->n; i++)
	{
		free((char *) f->items[i].file);
		free((char *) f->items[i].message);
	}
	free(f->items);
}

/* The engine's tick in a backend: stop when the session has an interrupt. */
static bool
verify_tick(void *arg, const SbProgress *progress)
{
	return !(InterruptPending && (QueryCancelPending || ProcDiePending));
}

static void
put_problem(ReturnSetInfo *rs, const SbProblem *p)
{
	Datum		v[4];
	bool		n[4] = {p->stripe == 0, p->chunk < 0, p->file == NULL, false};

	v[0] = Int32GetDatum((int32) p->stripe);
	v[1] = Int64GetDatum(p->chunk);
	v[2] = p->file ? CStringGetTextDatum(p->file) : (Datum) 0;
	v[3] = CStringGetTextDatum(p->message ? p->message : "(out of memory)");
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* Run the engine's verify; its threads never touch PostgreSQL. */
static void
verify(SbArchive *a, Findings *found)
{
	double		rates[SB_MAX_STRIPES];
	SbReadOptions options;
	uint64_t	problems;
	SbError		err;

	memset(&options, 0, sizeof(options));
	options.workers = (uint32_t) sb_guc_compression_workers;
	options.buffer_count = (uint32_t) sb_guc_buffer_count;
	options.io_method = (SbIoMethod) sb_guc_io_method_checked();
	options.queue_depth = (uint32_t) sb_guc_queue_depth;
	options.tick = verify_tick;
	sb_guc_max_rates(SB_MAX_STRIPES, rates);
	options.max_rates = rates;
	if (sb_archive_verify(a, &options, collect_problem, found, &problems, &err))
		return;
	CHECK_FOR_INTERRUPTS();		/* a cancel: raise it as PostgreSQL does */
	sb_raise(&err);
}

static void
verify_rows(FunctionCallInfo fcinfo, const char *location)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	Findings	found = {NULL, 0, 0};
	SbArchive  *volatile a = NULL;
	SbError		err;
	size_t		i;

	InitMaterializedSRF(fcinfo, 0);
	a = sb_archive_open(location, &err);
	if (a == NULL)
	{
		SbProblem	p = {0, -1, NULL, err.code, err.message};

		/* No manifest at all is bad input; a damaged one is a finding. */
		if (err.code != SB_ECORRUPT && err.code != SB_EVERSION)
			sb_raise(&err);
		put_problem(rs, &p);
		return;
	}
	PG_TRY();
	{
		verify(a, &found);
		for (i = 0; i < found.n; i++)
			put_problem(rs, &found.items[i]);
	}
	PG_FINALLY();
	{
		free_findings(&found);
		sb_archive_close(a);
	}
	PG_END_TRY();
}

Datum
stripe_verify_id(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(false, "verify a backup");
	verify_rows(fcinfo, sb_pgrestore_location_of(PG_GETARG_INT64(0)));
	return (Datum) 0;
}

Datum
stripe_verify_location(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(false, "verify a backup");
	verify_rows(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)));
	return (Datum) 0;
}

/* ---------- restore ---------- */

static void
read_mappings(ArrayType *array, SbJobArgs *args)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n,
				i;

	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	if (n > SB_MAX_MAPPINGS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d tablespace mappings given; at most %d are allowed", n, SB_MAX_MAPPINGS)));
	for (i = 0; i < n; i++)
	{
		char	   *m;

		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("tablespace mapping %d is NULL", i + 1)));
		m = TextDatumGetCString(elems[i]);
		if (strlen(m) >= sizeof(args->mappings[0]))
			ereport(ERROR,
					(errcode(ERRCODE_NAME_TOO_LONG),
					 errmsg("tablespace mapping \"%s\" is too long", m)));
		strlcpy(args->mappings[i], m, sizeof(args->mappings[0]));
	}
	args->nmappings = n;
}

/* An absent target is made in its parent, which must exist and be writable. */
static void
check_creatable(const char *path, const char *what)
{
	char		parent[MAXPGPATH];
	char	   *slash;

	strlcpy(parent, path, sizeof(parent));
	slash = strrchr(parent, '/');
	if (slash == NULL)
		return;
	*(slash == parent ? slash + 1 : slash) = '\0';
	if (access(parent, W_OK | X_OK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("%s \"%s\" cannot be created in \"%s\": %m", what, path, parent)));
}

/* A restore writes only into an empty or new directory it can write to. */
static void
check_empty_or_absent(const char *path, const char *what)
{
	DIR		   *dir = opendir(path);
	struct dirent *de;
	bool		empty = true;

	if (dir == NULL && errno == ENOENT)
	{
		check_creatable(path, what);
		return;
	}
	if (dir == NULL)
		ereport(ERROR,
				(errcode_for_file_access(), errmsg("%s \"%s\" is not usable: %m", what, path)));
	while ((de = readdir(dir)) != NULL)
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			empty = false;
	closedir(dir);
	if (empty && access(path, W_OK | X_OK) != 0)
		ereport(ERROR,
				(errcode_for_file_access(), errmsg("%s \"%s\" is not writable: %m", what, path)));
	if (!empty)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_FILE),
				 errmsg("%s \"%s\" is not empty", what, path),
				 errhint("Restore into an empty or new directory; map each tablespace in use "
						 "with tablespace_mapping => ARRAY['OLD=NEW'].")));
}

/* Check what the worker would find wrong, before anything is created. */
static void
check_restore(const SbJobArgs *args)
{
	SbArchive  *a = sb_pgrestore_open(args->location);
	SbRelocation relocs[SB_MAX_STRIPES * 4];
	const char *mappings[SB_MAX_MAPPINGS];
	SbPgMeta	meta;
	SbError		err;
	uint32_t	n,
				i;
	bool		ok;

	for (i = 0; i < (uint32_t) args->nmappings; i++)
		mappings[i] = args->mappings[i];
	ok = sb_pgmeta_read(a->manifest, &meta, &err) &&
		(meta.ntablespaces < (int) lengthof(relocs) ||
		 sb_error_set(&err, SB_EINVAL, "the backup has too many tablespaces")) &&
		sb_pgmeta_relocations(&meta, mappings, (uint32_t) args->nmappings, relocs, &n, &err);
	if (ok)
		for (i = 0; i < n; i++)
		{
			sb_check_outside_cluster(relocs[i].to, relocs[i].what);
			check_empty_or_absent(relocs[i].to, relocs[i].what);
		}
	sb_pgmeta_free(&meta);
	sb_archive_close(a);
	if (!ok)
		sb_raise(&err);
	sb_check_outside_cluster(args->target, "restore target");
	check_empty_or_absent(args->target, "restore target");
}

static Datum
restore(FunctionCallInfo fcinfo, const char *location, int64 backup_id)
{
	SbJobArgs  *args = palloc0(sizeof(SbJobArgs));
	bool		wait = PG_ARGISNULL(3) ? true : PG_GETARG_BOOL(3);

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("target_dir must not be NULL")));
	args->kind = SB_JOB_RESTORE;
	args->backup_id = backup_id;
	strlcpy(args->location, location, sizeof(args->location));
	strlcpy(args->target, text_to_cstring(PG_GETARG_TEXT_PP(1)), sizeof(args->target));
	if (!PG_ARGISNULL(2))
		read_mappings(PG_GETARG_ARRAYTYPE_P(2), args);
	args->buffer_count = sb_guc_buffer_count;
	args->workers = sb_guc_compression_workers;
	args->io_method = (SbIoMethod) sb_guc_io_method_checked();
	args->queue_depth = sb_guc_queue_depth;
	sb_guc_max_rates(SB_MAX_STRIPES, args->max_rates);
	check_restore(args);
	args->id = sb_launch_next_id("stripe_restore_id_seq");
	args->database = MyDatabaseId;
	strlcpy(args->requested_by, GetUserNameFromId(GetUserId(), false), NAMEDATALEN);
	sb_launch_run(args, wait);
	PG_RETURN_INT64(args->id);
}

Datum
stripe_restore_id(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(true, "restore a backup");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("backup must not be NULL")));
	return restore(fcinfo, sb_pgrestore_location_of(PG_GETARG_INT64(0)), PG_GETARG_INT64(0));
}

Datum
stripe_restore_location(PG_FUNCTION_ARGS)
{
	sb_launch_check_privileges(true, "restore a backup");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("location must not be NULL")));
	return restore(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), 0);
}
