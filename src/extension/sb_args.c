/*
 * sb_args.c
 *		Checking stripe_backup()'s arguments in the calling session, so a bad
 *		value gets a clear error naming it and nothing is created: the worker
 *		only starts with arguments that passed every check the engine makes.
 */
#include "postgres.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "storage/fd.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "sb_args.h"
#include "sb_guc.h"
#include "sb_spi.h"
#include "sb_util.h"
#include "stripebackup/sb_version.h"

/* The elements of a one-dimensional text[] as C strings; ERROR on NULLs. */
static int
text_array_elements(ArrayType *array, char ***out)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n,
				i;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("destinations must be a one-dimensional array")));
	deconstruct_array(array, TEXTOID, -1, false, TYPALIGN_INT, &elems, &nulls, &n);
	*out = palloc(sizeof(char *) * (n + 1));
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("destination %d is NULL", i + 1)));
		(*out)[i] = TextDatumGetCString(elems[i]);
	}
	return n;
}

void
sb_args_read_destinations(ArrayType *array, SbJobArgs *args)
{
	char	  **dests;
	int			n = text_array_elements(array, &dests);
	int			i;

	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("destinations must not be empty"),
				 errhint("Give one folder per device, for example ARRAY['/mnt/a/bk', '/mnt/b/bk'].")));
	if (n > SB_MAX_STRIPES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d destinations given; at most %d are allowed", n, SB_MAX_STRIPES)));
	for (i = 0; i < n; i++)
	{
		if (strlen(dests[i]) >= MAXPGPATH)
			ereport(ERROR,
					(errcode(ERRCODE_NAME_TOO_LONG),
					 errmsg("destination \"%s\" is too long", dests[i])));
		strlcpy(args->destinations[i], dests[i], MAXPGPATH);
	}
	args->ndestinations = n;
}

static void
read_weights(ArrayType *array, SbJobArgs *args)
{
	Datum	   *elems;
	bool	   *nulls;
	int			n,
				i;

	if (ARR_NDIM(array) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("weights must be a one-dimensional array")));
	deconstruct_array(array, FLOAT8OID, sizeof(float8), FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, &nulls, &n);
	if (n != args->ndestinations)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%d weights given for %d destinations", n, args->ndestinations),
				 errhint("Give one weight per destination, or none for equal shares.")));
	for (i = 0; i < n; i++)
	{
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("weight %d is NULL", i + 1)));
		args->weights[i] = DatumGetFloat8(elems[i]);
	}
}

/*
 * No weights given: each destination's latest calibrated sequential write
 * speed, when every destination has one; equal shares otherwise.
 */
static void
weights_from_calibrations(SbJobArgs *args)
{
	SbSavedUser saved_user;
	char	   *sql = psprintf("SELECT mb_per_s FROM %s.stripe_calibrations "
							   "WHERE destination = $1 AND test = 'sequential write' "
							   "ORDER BY measured_at DESC, id DESC LIMIT 1", sb_schema_quoted());
	Oid			types[1] = {TEXTOID};
	bool		all = true;
	int			i;

	saved_user = sb_spi_connect_as_extension();
	for (i = 0; i < args->ndestinations && all; i++)
	{
		Datum		values[1] = {CStringGetTextDatum(args->destinations[i])};
		bool		isnull = true;

		if (SPI_execute_with_args(sql, 1, types, values, NULL, true, 1) == SPI_OK_SELECT &&
			SPI_processed == 1)
			args->weights[i] = DatumGetFloat8(SPI_getbinval(SPI_tuptable->vals[0],
															SPI_tuptable->tupdesc, 1, &isnull));
		all = !isnull && args->weights[i] > 0;
	}
	sb_spi_finish_as_extension(saved_user);
	for (i = 0; i < args->ndestinations && !all; i++)
		args->weights[i] = 1.0;
}

static char *
text_arg(FunctionCallInfo fcinfo, int n, const char *name)
{
	if (PG_ARGISNULL(n))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be NULL", name)));
	return text_to_cstring(PG_GETARG_TEXT_PP(n));
}

static void
read_choices(FunctionCallInfo fcinfo, SbJobArgs *args)
{
	char	   *compression = text_arg(fcinfo, 3, "compression");
	char	   *balance = text_arg(fcinfo, 5, "balance");

	if (!sb_codec_parse(compression, &args->codec))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown compression \"%s\"", compression),
				 errhint("Use 'zstd' or 'none'.")));
	if (PG_ARGISNULL(4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compression_level must not be NULL")));
	args->level = PG_GETARG_INT32(4);
	if (!sb_balance_parse(balance, &args->balance))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown balance \"%s\"", balance),
				 errhint("Use 'adaptive' or 'weighted'.")));
}

/* Is A the same as B or inside it?  Both canonical. */
static bool
path_within(const char *a, const char *b)
{
	size_t		len = strlen(b);

	return strncmp(a, b, len) == 0 && (a[len] == '\0' || a[len] == '/' || strcmp(b, "/") == 0);
}

/* PATH made canonical; a last component that does not exist yet is kept as is. */
static bool
resolve(const char *path, char *resolved)
{
	char		parent[MAXPGPATH];
	char		real_parent[PATH_MAX];
	const char *slash;

	if (realpath(path, resolved) != NULL)
		return true;
	slash = strrchr(path, '/');
	if (slash == NULL || slash[1] == '\0')
		return false;
	strlcpy(parent, path, Min(sizeof(parent), (size_t) (slash - path) + 1));
	if (realpath(parent[0] ? parent : "/", real_parent) == NULL)
		return false;
	snprintf(resolved, PATH_MAX, "%s/%s", strcmp(real_parent, "/") == 0 ? "" : real_parent, slash + 1);
	return true;
}

/* Refuse PATH (resolved as RESOLVED) inside DIR. */
static void
check_outside(const char *path, const char *resolved, const char *dir, const char *dir_what,
			  const char *what)
{
	char		real_dir[PATH_MAX];

	if (realpath(dir, real_dir) != NULL && path_within(resolved, real_dir))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is inside %s \"%s\"", what, path, dir_what, dir),
				 errhint("Backups and restores must be written outside the running cluster.")));
}

void
sb_check_outside_cluster(const char *path, const char *what)
{
	char		resolved[PATH_MAX];
	DIR		   *dir;
	struct dirent *de;

	if (path[0] != '/')
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s \"%s\" is not an absolute path", what, path)));
	if (!resolve(path, resolved))
		return;					/* the engine says why it is unusable */
	check_outside(path, resolved, DataDir, "the data directory", what);
	dir = AllocateDir("pg_tblspc");
	while ((de = ReadDir(dir, "pg_tblspc")) != NULL)
	{
		char		link[MAXPGPATH];

		if (strspn(de->d_name, "0123456789") != strlen(de->d_name))
			continue;
		snprintf(link, sizeof(link), "pg_tblspc/%s", de->d_name);
		check_outside(path, resolved, link, "tablespace", what);
	}
	FreeDir(dir);
}

void
sb_args_to_options(const SbJobArgs *args, SbBackupOptions *o, const char **dest_ptrs)
{
	int			i;

	memset(o, 0, sizeof(*o));
	for (i = 0; i < args->ndestinations; i++)
		dest_ptrs[i] = args->destinations[i];
	o->destinations = dest_ptrs;
	o->ndestinations = (uint32_t) args->ndestinations;
	o->weights = args->weights;
	o->name = args->name;
	o->label = args->has_label ? args->label : NULL;
	o->tool = SB_TOOL_NAME;
	o->codec = args->codec;
	o->level = args->level;
	o->balance = args->balance;
	o->chunk_size = (uint32_t) args->chunk_size;
	o->buffer_count = (uint32_t) args->buffer_count;
	o->workers = (uint32_t) args->workers;
	o->detect_holes = false;	/* a live relation file is never read as holes */
	o->io_method = args->io_method;
	o->queue_depth = (uint32_t) args->queue_depth;
	o->direct_io = args->direct_io;
	o->max_rates = args->max_rates;
}

void
sb_args_from_call(FunctionCallInfo fcinfo, SbJobArgs *args)
{
	SbBackupOptions options;
	const char *dest_ptrs[SB_MAX_STRIPES];
	SbError		err;
	int			i;

	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("destinations must not be NULL")));
	sb_args_read_destinations(PG_GETARG_ARRAYTYPE_P(0), args);
	if (!PG_ARGISNULL(1))
		read_weights(PG_GETARG_ARRAYTYPE_P(1), args);
	else
		weights_from_calibrations(args);
	args->has_label = !PG_ARGISNULL(2);
	if (args->has_label)
	{
		char	   *label = text_to_cstring(PG_GETARG_TEXT_PP(2));

		if (strlen(label) >= SB_LABEL_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
					 errmsg("label is longer than %d bytes", SB_LABEL_LEN - 1)));
		strlcpy(args->label, label, SB_LABEL_LEN);
	}
	read_choices(fcinfo, args);
	args->buffer_count = sb_guc_buffer_count;
	args->chunk_size = sb_guc_transfer_size_kb * 1024;
	args->workers = sb_guc_compression_workers;
	args->fast_checkpoint = sb_guc_fast_checkpoint;
	args->io_method = (SbIoMethod) sb_guc_io_method_checked();
	args->queue_depth = sb_guc_queue_depth;
	args->direct_io = sb_guc_direct_io;
	sb_guc_max_rates(args->ndestinations, args->max_rates);
	/* The name is made later from the id; a placeholder passes the check. */
	strlcpy(args->name, "check", sizeof(args->name));
	sb_args_to_options(args, &options, dest_ptrs);
	if (!sb_backup_check_options(&options, &err))
		sb_raise(&err);
	for (i = 0; i < args->ndestinations; i++)
		sb_check_outside_cluster(args->destinations[i], "destination");
}
