/*
 * pgmeta.c
 *		Reading the PostgreSQL part of a manifest's metadata (written by the
 *		extension's online backup; see docs/FORMAT.md 4.1).
 */
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_pgmeta.h"
#include "stripebackup/sb_policy.h"
#include "util/fsutil.h"

static char *
string_field(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? strdup(v->valuestring) : NULL;
}

static bool
read_tablespaces(const cJSON *array, SbPgMeta *info, SbError *err)
{
	const cJSON *item;
	int			n = cJSON_GetArraySize(array);

	info->tablespaces = calloc((size_t) n + 1, sizeof(SbPgTablespace));
	if (info->tablespaces == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	cJSON_ArrayForEach(item, array)
	{
		SbPgTablespace *ts = &info->tablespaces[info->ntablespaces];
		const cJSON *oid = cJSON_GetObjectItemCaseSensitive(item, "oid");

		ts->location = string_field(item, "location");
		if (!cJSON_IsNumber(oid) || ts->location == NULL)
		{
			free(ts->location);	/* not counted yet: sb_pgmeta_free would miss it */
			ts->location = NULL;
			return sb_error_set(err, SB_ECORRUPT, "manifest: bad tablespace in the metadata");
		}
		snprintf(ts->oid, sizeof(ts->oid), "%.0f", oid->valuedouble);
		snprintf(ts->what, sizeof(ts->what), "directory of tablespace %s", ts->oid);
		ts->in_place = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(item, "in_place"));
		info->ntablespaces++;
	}
	return true;
}

/* "archive_destinations": the strings of ARRAY, at most SB_MAX_STRIPES; anything else is passed over. */
static bool
read_archive_destinations(const cJSON *array, SbPgMeta *info, SbError *err)
{
	const cJSON *item;

	if (!cJSON_IsArray(array))
		return true;
	info->archive_destinations = calloc(SB_MAX_STRIPES, sizeof(char *));
	if (info->archive_destinations == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	cJSON_ArrayForEach(item, array)
	{
		if (!cJSON_IsString(item) || info->narchive_destinations == SB_MAX_STRIPES)
			continue;
		if ((info->archive_destinations[info->narchive_destinations] = strdup(item->valuestring)) == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory");
		info->narchive_destinations++;
	}
	return true;
}

/*
 * "archive_redundancy": an integer from 0 to one below the number of
 * destinations recorded (each segment in M + 1 of them), since a reader
 * lets that many destinations be missing; anything else is kept, as text,
 * for the reader to name, and counts as none.
 */
static void
read_archive_redundancy(const cJSON *item, SbPgMeta *info)
{
	char	   *text;

	if (item == NULL)
		return;
	if (cJSON_IsNumber(item) && item->valuedouble >= 0 && item->valuedouble < SB_MAX_STRIPES &&
		item->valuedouble == (double) (int) item->valuedouble &&
		(item->valuedouble == 0 || (uint32_t) item->valuedouble < info->narchive_destinations))
	{
		info->archive_redundancy = (uint32_t) item->valuedouble;
		return;
	}
	text = cJSON_PrintUnformatted(item);
	snprintf(info->bad_archive_redundancy, sizeof(info->bad_archive_redundancy), "%s",
			 text != NULL ? text : "?");
	cJSON_free(text);
}

bool
sb_pgmeta_read(const SbManifest *m, SbPgMeta *info, SbError *err)
{
	cJSON	   *meta;
	const cJSON *kind;
	bool		ok = true;

	memset(info, 0, sizeof(*info));
	if (m->metadata_json == NULL)
		return true;
	meta = cJSON_Parse(m->metadata_json);
	kind = cJSON_GetObjectItemCaseSensitive(meta, "kind");
	if (cJSON_IsString(kind) && strcmp(kind->valuestring, "postgresql") == 0)
	{
		const cJSON *tli = cJSON_GetObjectItemCaseSensitive(meta, "timeline");
		const cJSON *from;

		info->is_postgresql = true;
		info->server_version = string_field(meta, "server_version");
		info->system_identifier = string_field(meta, "system_identifier");
		info->data_directory = string_field(meta, "data_directory");
		info->start_lsn = string_field(meta, "start_lsn");
		info->stop_lsn = string_field(meta, "stop_lsn");
		/* Out of range, the conversion would be undefined: unknown instead. */
		info->timeline = cJSON_IsNumber(tli) && tli->valuedouble >= 0 &&
			tli->valuedouble <= UINT_MAX ? (unsigned) tli->valuedouble : 0;
		from = cJSON_GetObjectItemCaseSensitive(meta, "backup_from");
		info->from_standby = cJSON_IsString(from) && strcmp(from->valuestring, "standby") == 0;
		ok = read_tablespaces(cJSON_GetObjectItemCaseSensitive(meta, "tablespaces"), info, err) &&
			read_archive_destinations(cJSON_GetObjectItemCaseSensitive(meta, "archive_destinations"), info, err);
		if (ok)
			read_archive_redundancy(cJSON_GetObjectItemCaseSensitive(meta, "archive_redundancy"), info);
	}
	cJSON_Delete(meta);
	if (!ok)
		sb_pgmeta_free(info);
	return ok;
}

void
sb_pgmeta_free(SbPgMeta *info)
{
	int			i;

	for (i = 0; i < info->ntablespaces; i++)
		free(info->tablespaces[i].location);
	free(info->tablespaces);
	for (i = 0; i < (int) info->narchive_destinations; i++)
		free(info->archive_destinations[i]);
	free(info->archive_destinations);
	free(info->server_version);
	free(info->system_identifier);
	free(info->data_directory);
	free(info->start_lsn);
	free(info->stop_lsn);
	memset(info, 0, sizeof(*info));
}

/* Apply one "OLD=NEW" (SPELLING: what the caller calls it) to the tablespace at OLD. */
static bool
apply_mapping(SbPgMeta *info, const char *mapping, const char *spelling, SbError *err)
{
	SbMapping  *m = sb_alloc(sizeof(SbMapping), err);
	bool		ok = m != NULL && sb_policy_parse_mapping(mapping, spelling, m, err);
	int			i;

	for (i = 0; ok && i < info->ntablespaces; i++)
	{
		SbPgTablespace *ts = &info->tablespaces[i];

		if (ts->in_place || strcmp(ts->location, m->old_path) != 0)
			continue;
		free(ts->location);
		ts->location = strdup(m->new_path);
		free(m);
		return ts->location != NULL || sb_error_set(err, SB_ENOMEM, "out of memory");
	}
	if (ok)
		sb_error_set(err, SB_EINVAL, "%s \"%s\": no tablespace of this backup is at \"%s\"",
					 spelling, mapping, m->old_path);
	free(m);
	return false;
}

bool
sb_pgmeta_relocations(SbPgMeta *info, const char *const *mappings, uint32_t nmappings,
					  const char *spelling, SbRelocation *relocs, uint32_t *nrelocs, SbError *err)
{
	uint32_t	i;
	int			t;

	*nrelocs = 0;
	for (i = 0; i < nmappings; i++)
		if (!apply_mapping(info, mappings[i], spelling, err))
			return false;
	for (t = 0; t < info->ntablespaces; t++)
	{
		SbPgTablespace *ts = &info->tablespaces[t];

		if (ts->in_place)
			continue;
		snprintf(ts->archive_dir, sizeof(ts->archive_dir), "pg_tblspc/%s", ts->oid);
		relocs[*nrelocs].from = ts->archive_dir;
		relocs[*nrelocs].to = ts->location;
		relocs[*nrelocs].what = ts->what;
		(*nrelocs)++;
	}
	return true;
}
