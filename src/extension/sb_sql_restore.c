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

#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/tuplestore.h"

#include "job_backup.h"
#include "job_restore.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_s3_settings.h"
#include "sb_key.h"
#include "sb_launch.h"
#include "sb_paths.h"
#include "sb_pitr_args.h"
#include "stripebackup/sb_policy.h"

PG_FUNCTION_INFO_V1(stripe_restore_plan_id);
PG_FUNCTION_INFO_V1(stripe_restore_plan_location);
PG_FUNCTION_INFO_V1(stripe_verify_id);
PG_FUNCTION_INFO_V1(stripe_verify_location);
PG_FUNCTION_INFO_V1(stripe_restore_id);
PG_FUNCTION_INFO_V1(stripe_restore_location);

/* The first target argument (target_time) of stripe_restore_plan() and of stripe_restore(). */
#define PLAN_TARGET_ARGS 2
#define PLAN_DELTA_TARGET_ARG 10
#define PLAN_MAPPING_ARG 11
#define PLAN_TARGET_DIRECTORY_ARG 12
#define RESTORE_TARGET_ARGS 4
#define RESTORE_STANDBY_ARGS 12
#define RESTORE_DELTA_ARG 15
/* the location variants' last argument */
#define PLAN_ALLOW_UNENCRYPTED_ARG 13
#define VERIFY_ALLOW_UNENCRYPTED_ARG 1
#define RESTORE_ALLOW_UNENCRYPTED_ARG 16
/* archive_mode: the last argument of each stripe_restore() */
#define RESTORE_ID_ARCHIVE_MODE_ARG 16
#define RESTORE_LOCATION_ARCHIVE_MODE_ARG 17

/* ---------- plan ---------- */

#define PLAN_COLUMNS 15

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
	if (sb_estimate_from_name(s->estimate_from) != NULL)
	{
		v[9] = CStringGetTextDatum(sb_estimate_from_name(s->estimate_from));
		n[9] = false;
	}
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/*
 * The older backups of a chain: their stripes' rows, read after the newest
 * one's, one backup after the other; their totals added into PLAN's (the
 * fixed part, creating and finishing the files, is paid once).
 */
static void
put_chain_stripes(ReturnSetInfo *rs, const SbArchive *a, SbPlan *plan, const SbPlanSampling *sampling,
				  bool *present)
{
	const SbArchive *link;
	StringInfoData chain;
	uint32_t	i;

	initStringInfo(&chain);
	appendStringInfo(&chain, "\"%s\"", a->manifest->name);
	for (link = a->parent; link != NULL; link = link->parent)
	{
		SbPlan	   *older = palloc(sizeof(SbPlan));
		SbPlanSampling *own = palloc(sizeof(SbPlanSampling));	/* its own sample */

		appendStringInfo(&chain, " <- \"%s\"", link->manifest->name);
		*own = *sampling;
		sbx_restore_plan_with_history(link, older, own);
		for (i = 0; i < older->nstripes; i++)
		{
			put_plan_stripe(rs, link, &older->stripes[i]);
			*present = *present && older->stripes[i].present;
		}
		sbx_restore_plan_add_link(plan, older);
	}
	if (a->parent != NULL)
		ereport(NOTICE,
				(errmsg("backup \"%s\" is %s: the restore reads its chain, %s",
						a->manifest->name,
						a->manifest->type == SB_BACKUP_DIFF ? "differential" : "incremental",
						chain.data),
				 errdetail("Each backup writes what no newer one holds; the total row adds them up.")));
}

/* The total: every stripe at once, so the slowest one, plus the fixed part. */
static void
put_plan_total(ReturnSetInfo *rs, const SbPlan *plan, bool present)
{
	Datum		v[PLAN_COLUMNS];
	bool		n[PLAN_COLUMNS];
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
	if (sb_estimate_from_name(plan->estimate_from) != NULL)
	{
		v[9] = CStringGetTextDatum(sb_estimate_from_name(plan->estimate_from));
		n[9] = false;
	}
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
}

/* An estimate made before any restore read these destinations says so, and what it comes from. */
static void
calibration_notice(const SbPlan *plan, const SbPlanSampling *sampling, instr_time opening)
{
	const SbRestoreSample *sample = &sampling->taken;
	const char *fixed = plan->fixed_seconds < 0 ? "are not counted" :
		sample->chunks == 0 ? "cost what the latest restore paid" :
		sample->costs.finish_per_byte < 0 ?
		"cost what the sample paid, and the final sync what the latest restore paid" :
		sample->synced_files ? "cost what the sample paid, its file system synced as a restore ends" :
		"cost what the sample paid, but for the final sync (give target_directory to measure it)";

	if (plan->estimated_seconds < 0 || plan->estimate_from != SB_ESTIMATE_CALIBRATION)
		return;
	ereport(NOTICE,
			(errmsg("the estimate of %.1f s reads at the speeds stripe_calibrate measured: no restore has read from %s yet",
					plan->estimated_seconds,
					plan->nstripes > 1 ? "every one of these destinations" : "this destination"),
			 sample->chunks > 0 ?
			 errdetail("Decompressing and writing cost what a sample of the backup took here "
					   "(%.1f MB in %llu chunks, %u files created), written in \"%s\"; "
					   "creating and finishing the files %s; opening the backup, twice "
					   "(stripe_restore() checks it, then its worker reads it), %.2f s each, "
					   "as for this plan.",
					   (double) sample->raw_bytes / 1e6, (unsigned long long) sample->chunks, sample->files,
					   sampling->dir, fixed, INSTR_TIME_GET_DOUBLE(opening)) :
			 errdetail("Decompressing is not counted; creating the files and the final sync %s; "
					   "opening the backup, twice, %.2f s each, as for this plan.",
					   fixed, INSTR_TIME_GET_DOUBLE(opening))));
}

/* One row per piece of file data: in the caller's session, its memory the query's. */
static bool
put_plan_piece(void *arg, const SbPieceRow *p, SbError *err)
{
	ReturnSetInfo *rs = arg;
	Datum		v[PLAN_COLUMNS];
	bool		n[PLAN_COLUMNS];

	(void) err;
	CHECK_FOR_INTERRUPTS();
	memset(n, true, sizeof(n));
	v[0] = Int32GetDatum((int32) p->stripe + 1);
	n[0] = false;
	v[10] = CStringGetTextDatum(p->path);
	v[11] = Int64GetDatum((int64) p->file_offset);
	v[12] = Int64GetDatum((int64) p->length);
	v[13] = Int64GetDatum((int64) p->chunk);
	v[14] = Int64GetDatum((int64) p->chunk_offset);
	memset(n + 10, false, 5 * sizeof(bool));
	tuplestore_putvalues(rs->setResult, rs->setDesc, v, n);
	return true;
}

/* One row per piece of file data, in chunk order (from the spool: one file held at a time). */
static void
put_plan_pieces(ReturnSetInfo *rs, const SbManifest *m)
{
	SbError		err;

	if (!sb_manifest_each_piece(m, put_plan_piece, rs, &err))
		sbx_raise(&err);
}

static void read_mappings(ArrayType *array, SbRestoreArgs *args);

/* "estimated 12.3 s (into an empty directory: 45.6 s)", or why there is no estimate. */
static char *
delta_time(const SbPlan *plan, const SbDeltaEstimate *e, bool chain, const char *target)
{
	double		compare_mbps;
	double		seconds = sbx_restore_delta_seconds(plan, e, chain, target, &compare_mbps);

	if (seconds >= 0)
		return psprintf("estimated %.1f s (into an empty directory: %.1f s)", seconds,
						plan->estimated_seconds);
	if (plan->estimated_seconds < 0)
		return pstrdup("no time estimated: no restore has measured these destinations yet");
	return pstrdup("no time estimated: no delta restore has measured how fast a copy is compared");
}

/*
 * With delta_target: what a delta restore into it would compare, expects to
 * write and take (PLAN: with history, a chain's links added in), as a
 * NOTICE; a WARNING if it would refuse the target.
 */
static void
delta_notice(FunctionCallInfo fcinfo, const SbArchive *a, const SbPlan *plan, SbRestoreArgs *args)
{
	SbPgMeta   *meta = sbx_restore_read_pgmeta(a);
	SbRelocation *relocs;
	SbDeltaEstimate *e = palloc(sizeof(SbDeltaEstimate));
	SbError		err;
	uint32_t	n;
	bool		chain = a->parent != NULL;

	strlcpy(args->target, text_to_cstring(PG_GETARG_TEXT_PP(PLAN_DELTA_TARGET_ARG)), sizeof(args->target));
	if (!PG_ARGISNULL(PLAN_MAPPING_ARG))
		read_mappings(PG_GETARG_ARRAYTYPE_P(PLAN_MAPPING_ARG), args);
	relocs = sbx_restore_relocations(args, meta, &n);
	if (!sb_policy_check_delta_places(args->target, relocs, n, meta->system_identifier, &err) ||
		!sb_delta_estimate(a->manifest, args->target, relocs, n, e, &err))
	{
		ereport(WARNING, (errmsg("a delta restore into \"%s\" would refuse it: %s", args->target, err.message)));
		return;
	}
	ereport(NOTICE,
			(errmsg("a delta restore into \"%s\" compares %.1f MB in %llu files%s and expects to write "
					"%.1f MB of %llu files (from their sizes and times); %s", args->target,
					(double) (e->bytes_same + e->bytes_differ) / 1e6,
					(unsigned long long) (e->files_same + e->files_differ),
					chain ? " as it reads every backup of the chain" : "",
					(double) (e->bytes_differ + e->bytes_new) / 1e6,
					(unsigned long long) (e->files_differ + e->files_new),
					delta_time(plan, e, chain, args->target)),
			 errdetail("%llu files (%.1f MB) have the backup's size and time, %llu (%.1f MB) another, "
					   "%llu (%.1f MB) are not there; %s, and only the blocks that differ are written.",
					   (unsigned long long) e->files_same, (double) e->bytes_same / 1e6,
					   (unsigned long long) e->files_differ, (double) e->bytes_differ / 1e6,
					   (unsigned long long) e->files_new, (double) e->bytes_new / 1e6,
					   chain ? "a chain is read whole" :
					   "the chunks of the first that the copy holds are not read")));
}

/*
 * A restore opens the backup twice before it writes a file: stripe_restore()
 * checks it, then its worker reads it.  Each costs about what opening it
 * took this plan (OPENING), which the phases a restore measures (setup,
 * read, finish) leave out: added to the total.
 */
static void
add_opening(SbPlan *plan, instr_time opening)
{
	if (plan->estimated_seconds >= 0)
		plan->estimated_seconds += 2 * INSTR_TIME_GET_DOUBLE(opening);
}

/* Is argument N given and true (false when the function has fewer arguments)? */
static bool
arg_true(FunctionCallInfo fcinfo, int n)
{
	return PG_NARGS() > n && !PG_ARGISNULL(n) && PG_GETARG_BOOL(n);
}

static void
plan_rows(FunctionCallInfo fcinfo, const SbBackupRef *ref, SbRestoreArgs *pitr)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	SbPlan	   *plan = palloc(sizeof(SbPlan));
	SbPlanSampling *sampling = palloc0(sizeof(SbPlanSampling));
	bool		detail = !PG_ARGISNULL(1) && PG_GETARG_BOOL(1);
	bool		delta = !PG_ARGISNULL(PLAN_DELTA_TARGET_ARG);
	instr_time	opening,
				opened;
	SbArchive  *a;
	bool		present = true;
	uint32_t	i;

	/*
	 * The stripes' plan needs no file table, the WAL check the members
	 * alone; the detail and the delta's estimate (every file looked at in
	 * the target) a stream of it.
	 */
	INSTR_TIME_SET_CURRENT(opening);
	a = sbx_handle_open_archive(ref, detail || delta ? SB_OPEN_TO_READ : SB_OPEN_TO_PLAN, NULL);
	INSTR_TIME_SET_CURRENT(opened);
	INSTR_TIME_SUBTRACT(opened, opening);
	sbx_handle_warn(a);
	/* a sample written where the restore will write: a right a plan alone does not need */
	sampling->dir = sbx_temp_folder();
	if (!PG_ARGISNULL(PLAN_TARGET_DIRECTORY_ARG))
	{
		sbx_launch_check_privileges(true, "write a restore's sample into target_directory");
		sampling->dir = sbx_restore_sample_folder(text_to_cstring(PG_GETARG_TEXT_PP(PLAN_TARGET_DIRECTORY_ARG)));
		sampling->sync_fs = true;
	}
	/* With a target: does the WAL archive hold what recovery to it replays?  Said, not raised. */
	if (pitr->recovery_kind != SB_RECOVERY_NONE)
		sbx_pitr_check_wal(pitr, sbx_restore_read_pgmeta(a), false);
	InitMaterializedSRF(fcinfo, 0);
	sbx_restore_plan_with_history(a, plan, sampling);
	for (i = 0; i < plan->nstripes; i++)
		put_plan_stripe(rs, a, &plan->stripes[i]);
	put_chain_stripes(rs, a, plan, sampling, &present);
	if (delta)
		delta_notice(fcinfo, a, plan, pitr);
	add_opening(plan, opened);
	put_plan_total(rs, plan, present);
	calibration_notice(plan, sampling, opened);
	if (detail)
		put_plan_pieces(rs, a->manifest);
}

/* stripe_restore_plan(backup, ...): a backup by id, or the newest that reaches the target. */
PGDLLEXPORT Datum
stripe_restore_plan_id(PG_FUNCTION_ARGS)
{
	SbRestoreArgs *pitr = palloc0(sizeof(SbRestoreArgs));
	int64		id;

	sbx_launch_check_privileges(false, "plan a restore");
	sbx_pitr_read(fcinfo, PLAN_TARGET_ARGS, pitr);
	if (PG_ARGISNULL(0))
	{
		id = sbx_pitr_choose_backup(fcinfo, PLAN_TARGET_ARGS, pitr);
		ereport(NOTICE,
				(errmsg("backup %lld is the newest that ended before the %s target", (long long) id,
						sb_recovery_kind_name(pitr->recovery_kind))));
	}
	else
		id = PG_GETARG_INT64(0);
	plan_rows(fcinfo, sbx_backup_recorded(id), pitr);
	return (Datum) 0;
}

PGDLLEXPORT Datum
stripe_restore_plan_location(PG_FUNCTION_ARGS)
{
	SbRestoreArgs *pitr = palloc0(sizeof(SbRestoreArgs));

	sbx_launch_check_privileges(false, "plan a restore");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("location must not be NULL")));
	sbx_pitr_read(fcinfo, PLAN_TARGET_ARGS, pitr);
	plan_rows(fcinfo, sbx_backup_ref_at(text_to_cstring(PG_GETARG_TEXT_PP(0)),
									   arg_true(fcinfo, PLAN_ALLOW_UNENCRYPTED_ARG)), pitr);
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

/* A WAL problem, as a finding of no stripe (on the calling thread, inside the engine). */
static void
collect_wal_problem(void *arg, const char *message)
{
	SbProblem	p = {0, -1, NULL, SB_ECORRUPT, message, false};

	collect_problem(arg, &p);
}

/* A handle's free function: the findings' malloc'd parts (the struct is palloc'd). */
static void
free_findings(void *arg)
{
	Findings   *f = arg;
	size_t		i;

	for (i = 0; i < f->n; i++)
	{
		free((char *) f->items[i].file);
		free((char *) f->items[i].message);
	}
	free(f->items);
	f->items = NULL;
	f->n = 0;
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

	sbx_guc_read_options(&options, rates);
	options.tick = sbx_control_session_tick;
	if (sb_archive_verify(a, &options, collect_problem, found, &problems, &err))
	{
		char		left[256];

		/* with redundancy: whether it restores, and how many more destinations may go */
		if (a->manifest->redundancy.parity > 0)
		{
			sb_archive_describe_redundancy(a, left, sizeof(left));
			ereport(NOTICE, (errmsg("backup \"%s\": %s", a->manifest->name, left)));
		}
		return;
	}
	CHECK_FOR_INTERRUPTS();		/* a cancel: raise it as PostgreSQL does */
	sbx_raise(&err);
}

/*
 * An encrypted backup and no stripebackup.encryption_key_file: check what
 * can be checked in the clear (sb_verify_sealed) into FOUND, and say in a
 * NOTICE what was, and what needs the key.
 */
static void
verify_without_key(const SbBackupRef *ref, Findings *found)
{
	SbSealedVerifyResult r;
	SbError		err;

	if (!sb_verify_sealed(ref->location, sbx_s3_settings(), collect_problem, found, &r, &err))
		sbx_raise(&err);
	/* without the key, the envelope's uuid is what tells the recorded backup from another */
	if (ref->expect.has_uuid && memcmp(r.uuid, ref->expect.uuid, sizeof(r.uuid)) != 0)
	{
		SbProblem	p = {0, -1, NULL, SB_ECORRUPT,
			psprintf("backup %lld: \"%s\" holds another backup than its history records (another uuid)",
					 (long long) ref->backup_id, ref->location), false};

		collect_problem(found, &p);
		r.problems++;
	}
	ereport(NOTICE,
			(errmsg("the backup is encrypted and stripebackup.encryption_key_file is not set: "
					"checked without its key, %llu chunks in %u stripes, %llu problem(s)",
					(unsigned long long) r.chunks, r.nstripes, (unsigned long long) r.problems),
			 errdetail("Every checksum, every index, and each stripe sealed with this manifest were checked; "
					   "that each chunk opens, and the files, need the key.")));
}

static void
verify_rows(FunctionCallInfo fcinfo, const SbBackupRef *ref)
{
	ReturnSetInfo *rs = (ReturnSetInfo *) fcinfo->resultinfo;
	Findings   *found = palloc0(sizeof(Findings));
	SbArchive  *a;
	SbError		err;
	size_t		i;

	InitMaterializedSRF(fcinfo, 0);
	a = sbx_handle_open_archive(ref, SB_OPEN_TO_READ, &err);
	sbx_handle_own(sbx_handle_new(free_findings), found);
	if (a == NULL && err.code == SB_EKEY && sbx_key_current() == NULL)
		verify_without_key(ref, found);
	else if (a == NULL)
	{
		SbProblem	p = {0, -1, NULL, err.code, err.message, false};

		/* No manifest at all is bad input; a damaged one is a finding. */
		if (err.code != SB_ECORRUPT && err.code != SB_EVERSION)
			sbx_raise(&err);
		put_problem(rs, &p);
		return;
	}
	else
	{
		verify(a, found);
		sbx_pitr_verify_wal(sbx_restore_read_pgmeta(a), collect_wal_problem, found);
	}
	for (i = 0; i < found->n; i++)
		put_problem(rs, &found->items[i]);
}

PGDLLEXPORT Datum
stripe_verify_id(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(false, "verify a backup");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("backup must not be NULL")));
	verify_rows(fcinfo, sbx_backup_recorded(PG_GETARG_INT64(0)));
	return (Datum) 0;
}

PGDLLEXPORT Datum
stripe_verify_location(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(false, "verify a backup");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("location must not be NULL")));
	verify_rows(fcinfo, sbx_backup_ref_at(text_to_cstring(PG_GETARG_TEXT_PP(0)),
										 arg_true(fcinfo, VERIFY_ALLOW_UNENCRYPTED_ARG)));
	return (Datum) 0;
}

/* ---------- restore ---------- */

static void
read_mappings(ArrayType *array, SbRestoreArgs *args)
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

/* ERROR for a place a restore cannot write; a full one says what to do. */
static void
raise_place(const SbError *err)
{
	if (err->code == SB_EEXIST)
		ereport(ERROR,
				(errcode(ERRCODE_DUPLICATE_FILE), errmsg("%s", err->message),
				 errhint("Restore into an empty or new directory; map each tablespace in use "
						 "with tablespace_mapping => ARRAY['OLD=NEW'].")));
	sbx_raise(err);
}

/* What the restore's settings would allocate for A, against stripebackup.max_memory. */
static void
check_memory(const SbArchive *a, const SbRestoreArgs *args)
{
	SbReadOptions read;
	SbError		err;

	memset(&read, 0, sizeof(read));
	read.workers = (uint32_t) args->workers;
	read.buffer_count = (uint32_t) args->buffer_count;
	read.queue_depth = (uint32_t) args->queue_depth;
	read.max_memory = args->max_memory;
	if (!sb_policy_check_read_memory(a->manifest, &read, &err))
		sbx_raise(&err);
}

/*
 * Check what the worker would find wrong, before anything is created; a
 * point-in-time restore takes the archive folder of the backup's system.
 */
static void
check_restore(SbRestoreArgs *args, const SbBackupRef *ref)
{
	/*
	 * What is checked here needs the backup's members, not its files: the
	 * worker reads and checks those (parsed here too, they cost a restore of
	 * a million files seconds before its worker starts).
	 */
	SbArchive  *a = sbx_handle_open_archive(ref, SB_OPEN_TO_CHECK, NULL);
	const char *mappings[SB_MAX_MAPPINGS];
	SbRelocation *relocs;
	SbPgMeta   *meta;
	SbError		err;
	uint32_t	n,
				i;

	sbx_handle_warn(a);
	/* the worker opens what was found here (a recorded folder, if the first was set aside) */
	strlcpy(args->location, sbx_archive_used_folder(a), sizeof(args->location));
	if (!a->authenticated)
		ereport(ERROR,
				(errcode(ERRCODE_UNDEFINED_FILE),
				 errmsg("backup at \"%s\" cannot be restored: none of its stripes could be read",
						args->location),
				 errhint("Mount its destinations, or restore from a location whose folder holds a stripe.")));
	for (i = 0; i < (uint32_t) args->nmappings; i++)
		mappings[i] = args->mappings[i];
	if (!sb_policy_check_mappings(mappings, (uint32_t) args->nmappings, args->target, "tablespace_mapping", &err))
		sbx_raise(&err);
	meta = sbx_restore_read_pgmeta(a);
	relocs = sbx_restore_relocations(args, meta, &n);
	sbx_check_outside_cluster(args->target, "restore target");
	for (i = 0; i < n; i++)
		sbx_check_outside_cluster(relocs[i].to, relocs[i].what);
	if (args->delta ?
		!sb_policy_check_delta_places(args->target, relocs, n, meta->system_identifier, &err) :
		!sb_policy_check_restore_places(args->target, relocs, n, &err))
		raise_place(&err);

	check_memory(a, args);
	sbx_pitr_check_wal(args, meta, true);
}

/* archive_mode => 'off' or 'keep' (argument N); NULL: as the target says. */
static void
read_archive_mode(FunctionCallInfo fcinfo, int n, SbRestoreArgs *args)
{
	SbError		err;

	args->archive_mode = SB_ARCHIVE_MODE_DEFAULT;
	if (PG_NARGS() > n && !PG_ARGISNULL(n) &&
		!sb_archive_mode_parse(text_to_cstring(PG_GETARG_TEXT_PP(n)), "archive_mode", &args->archive_mode, &err))
		sbx_raise(&err);
}

/* A copy that will not archive: said, with why and how to keep it when that was not asked for. */
static void
archiving_notice(const SbRestoreArgs *args)
{
	SbRecoveryTarget t;

	sbx_restore_recovery_target(args, &t);
	if (sb_recovery_archive_mode(&t, args->standby) != SB_ARCHIVE_MODE_OFF)
		return;
	ereport(NOTICE,
			(errmsg("the restored copy will not archive WAL: archive_mode = off goes into its postgresql.auto.conf"),
			 errdetail("A copy that archived into this server's WAL archive would put its new timeline there, "
					   "and later restores with target_timeline 'latest' would follow it."),
			 args->archive_mode == SB_ARCHIVE_MODE_DEFAULT ?
			 errhint("Give archive_mode => 'keep' for the copy to archive as this server does.") : 0));
}

static Datum
restore(FunctionCallInfo fcinfo, const char *location, int64 backup_id, int archive_mode_arg)
{
	SbRestoreArgs *args = palloc0(sizeof(SbRestoreArgs));
	bool		wait = PG_ARGISNULL(3) ? true : PG_GETARG_BOOL(3);
	SbBackupRef *ref;
	SbJob	   *job;

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("target_dir must not be NULL")));
	sbx_pitr_read(fcinfo, RESTORE_TARGET_ARGS, args);
	sbx_standby_read(fcinfo, RESTORE_STANDBY_ARGS, args);
	read_archive_mode(fcinfo, archive_mode_arg, args);
	args->delta = !PG_ARGISNULL(RESTORE_DELTA_ARG) && PG_GETARG_BOOL(RESTORE_DELTA_ARG);
	if (location == NULL)
	{
		if (backup_id == 0)
			backup_id = sbx_pitr_choose_backup(fcinfo, RESTORE_TARGET_ARGS, args);
		ref = sbx_backup_recorded(backup_id);
		sbx_backup_expect_copy(&args->expect, &ref->expect);
	}
	else
	{
		args->allow_unencrypted = arg_true(fcinfo, RESTORE_ALLOW_UNENCRYPTED_ARG);
		ref = sbx_backup_ref_at(location, args->allow_unencrypted);
	}
	args->backup_id = backup_id;
	strlcpy(args->location, ref->location, sizeof(args->location));
	strlcpy(args->target, text_to_cstring(PG_GETARG_TEXT_PP(1)), sizeof(args->target));
	if (!PG_ARGISNULL(2))
		read_mappings(PG_GETARG_ARRAYTYPE_P(2), args);
	args->buffer_count = sb_guc_buffer_count;
	args->workers = sb_guc_compression_workers;
	args->io_method = (SbIoMethod) sbx_guc_io_method_checked();
	args->queue_depth = sb_guc_queue_depth;
	sbx_guc_max_rates(SB_MAX_STRIPES, args->max_rates);
	args->max_memory = sbx_guc_max_memory_bytes();
	sbx_key_file_capture(args->encryption_key_file, sizeof(args->encryption_key_file));
	check_restore(args, ref);
	archiving_notice(args);
	job = sbx_launch_new_job(SB_JOB_RESTORE);
	job->backup_in_use = backup_id;
	memcpy(SB_JOB_ARGS(job, SbRestoreArgs), args, sizeof(SbRestoreArgs));
	sbx_launch_run(job, wait);
	PG_RETURN_INT64(job->id);
}

/* stripe_restore(backup, target_dir, ...): a backup by id, or the newest that reaches the target. */
PGDLLEXPORT Datum
stripe_restore_id(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(true, "restore a backup");
	return restore(fcinfo, NULL, PG_ARGISNULL(0) ? 0 : PG_GETARG_INT64(0), RESTORE_ID_ARCHIVE_MODE_ARG);
}

PGDLLEXPORT Datum
stripe_restore_location(PG_FUNCTION_ARGS)
{
	sbx_launch_check_privileges(true, "restore a backup");
	if (PG_ARGISNULL(0))
		ereport(ERROR, (errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED), errmsg("location must not be NULL")));
	return restore(fcinfo, text_to_cstring(PG_GETARG_TEXT_PP(0)), 0, RESTORE_LOCATION_ARCHIVE_MODE_ARG);
}
