/*
 * sb_args.c
 *		Checking stripe_backup()'s arguments in the calling session, so a bad
 *		value gets a clear error naming it and nothing is created: the worker
 *		only starts with arguments that passed every check the engine makes.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "sb_args.h"
#include "sb_control.h"
#include "sb_guc.h"
#include "sb_key.h"
#include "sb_paths.h"
#include "sb_s3_settings.h"
#include "sb_spi.h"
#include "stripebackup/sb_s3.h"
#include "stripebackup/sb_store.h"
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

int
sbx_args_read_destinations(ArrayType *array, char (*destinations)[MAXPGPATH])
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
		strlcpy(destinations[i], dests[i], MAXPGPATH);
	}
	return n;
}

static void
read_weights(ArrayType *array, SbBackupArgs *args)
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
weights_from_calibrations(SbBackupArgs *args)
{
	bool		all = true;
	SbSql		sql;
	int			i;

	sbx_sql_enter(&sql);
	for (i = 0; i < args->ndestinations && all; i++)
	{
		Datum		values[2] = {CStringGetTextDatum(args->destinations[i]),
		CStringGetTextDatum("sequential write")};
		SbRows		rows = sbx_sql_run(SB_SQL_CALIBRATED_SPEED, values, NULL);
		bool		isnull = true;

		if (rows.count == 1)
			args->weights[i] = DatumGetFloat8(sbx_sql_datum(&sql, &rows, 0, 1, &isnull));
		all = !isnull && args->weights[i] > 0;
	}
	sbx_sql_leave(&sql);
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
read_choices(FunctionCallInfo fcinfo, int first, SbBackupArgs *args)
{
	char	   *compression = text_arg(fcinfo, first + 3, "compression");
	char	   *balance = text_arg(fcinfo, first + 5, "balance");

	if (!sb_codec_parse(compression, &args->codec))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown compression \"%s\"", compression),
				 errhint("Use 'zstd' or 'none'.")));
	if (PG_ARGISNULL(first + 4))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("compression_level must not be NULL")));
	args->level = PG_GETARG_INT32(first + 4);
	if (!sb_balance_parse(balance, &args->balance))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("unknown balance \"%s\"", balance),
				 errhint("Use 'adaptive' or 'weighted'.")));
}

void
sbx_args_from_call(FunctionCallInfo fcinfo, int first, int redundancy, SbBackupArgs *args)
{
	SbBackupOptions options;
	const char *dest_ptrs[SB_MAX_STRIPES];
	SbError		err;
	int			i;

	if (!PG_ARGISNULL(first))
		args->ndestinations = sbx_args_read_destinations(PG_GETARG_ARRAYTYPE_P(first),
														args->destinations);
	else if (args->ndestinations == 0)
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("destinations must not be NULL")));
	if (!PG_ARGISNULL(first + 1))
		read_weights(PG_GETARG_ARRAYTYPE_P(first + 1), args);
	else
		weights_from_calibrations(args);
	args->has_label = !PG_ARGISNULL(first + 2);
	if (args->has_label)
	{
		char	   *label = text_to_cstring(PG_GETARG_TEXT_PP(first + 2));

		if (strlen(label) >= SB_LABEL_LEN)
			ereport(ERROR,
					(errcode(ERRCODE_STRING_DATA_RIGHT_TRUNCATION),
					 errmsg("label is longer than %d bytes", SB_LABEL_LEN - 1)));
		strlcpy(args->label, label, SB_LABEL_LEN);
	}
	read_choices(fcinfo, first, args);
	args->redundancy = PG_ARGISNULL(redundancy) ? sb_guc_redundancy : PG_GETARG_INT32(redundancy);
	/* the engine names a value too large for the destinations; a negative one is no uint32 */
	if (args->redundancy < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("redundancy %d is out of range (0 to %d)", args->redundancy, SB_MAX_REDUNDANCY)));
	args->buffer_count = sb_guc_buffer_count;
	args->chunk_size = sb_guc_transfer_size_kb * 1024;
	args->frame_size = sb_guc_frame_size_kb * 1024;
	args->workers = sb_guc_compression_workers;
	args->fast_checkpoint = sb_guc_fast_checkpoint;
	args->io_method = (SbIoMethod) sbx_guc_io_method_checked();
	args->queue_depth = sb_guc_queue_depth;
	args->direct_io = sb_guc_direct_io;
	sbx_guc_max_rates(args->ndestinations, args->max_rates);
	args->max_memory = sbx_guc_max_memory_bytes();
	sbx_key_file_capture(args->encryption_key_file, sizeof(args->encryption_key_file));
	/* The name is made later from the id; a placeholder passes the check. */
	strlcpy(args->name, "check", sizeof(args->name));
	sbx_backup_args_to_options(args, &options, dest_ptrs);
	if (!sb_backup_check_options(&options, &err))
		sbx_raise(&err);
	/*
	 * An object-storage destination is no path of this machine (the engine
	 * checked its form), but must be a bucket the server allows.
	 */
	for (i = 0; i < args->ndestinations; i++)
		if (sb_store_features_of(args->destinations[i]) & SB_STORE_DESCRIPTORS)
			sbx_check_outside_cluster(args->destinations[i], "destination");
		else
			sbx_s3_settings_check_location(args->destinations[i], true);
}
