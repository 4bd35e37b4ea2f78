/*
 * json_out.c
 *		The command's --output=json documents (json_out.h, docs/JSON.md),
 *		built with cJSON as cluster_meta.c builds a manifest's metadata, and
 *		printed whole at the end: a document is small (a summary, never a
 *		manifest's file table), and a script reads one value.
 *
 * Byte counts are JSON numbers, exact up to 2^53 (8 PiB); LSNs, system
 * identifiers and backup ids are strings, as PostgreSQL prints them.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_out.h"

bool
cli_parse_output(const char *value, bool *json)
{
	if (strcmp(value, "text") == 0)
		*json = false;
	else if (strcmp(value, "json") == 0)
		*json = true;
	else
		return false;
	return true;
}

/* A new document of COMMAND: {"version": 1, "command": COMMAND}. */
static cJSON *
json_document(const char *command)
{
	cJSON	   *doc = cJSON_CreateObject();

	if (doc != NULL &&
		(cJSON_AddNumberToObject(doc, "version", JSON_OUTPUT_VERSION) == NULL ||
		 cJSON_AddStringToObject(doc, "command", command) == NULL))
	{
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

/* DOC printed on standard output (then freed); false, said, when it could not be. */
static bool
json_emit(cJSON *doc)
{
	char	   *text = doc != NULL ? cJSON_Print(doc) : NULL;
	bool		ok = text != NULL && printf("%s\n", text) >= 0 && fflush(stdout) == 0;

	if (!ok)
		fprintf(stderr, "%s: error: could not write the JSON output (out of memory, or standard output closed)\n",
				progname);
	free(text);
	cJSON_Delete(doc);
	return ok;
}

/* KEY: S, or null. */
static bool
add_string(cJSON *obj, const char *key, const char *s)
{
	return (s != NULL ? cJSON_AddStringToObject(obj, key, s) : cJSON_AddNullToObject(obj, key)) != NULL;
}

/* KEY: [the N strings of LIST]. */
static bool
add_strings(cJSON *obj, const char *key, const char *const *list, uint32_t n)
{
	cJSON	   *array = cJSON_AddArrayToObject(obj, key);
	uint32_t	i;

	for (i = 0; array != NULL && i < n; i++)
		if (!cJSON_AddItemToArray(array, cJSON_CreateString(list[i])))
			return false;
	return array != NULL;
}

/* "wal": {start_lsn, stop_lsn, timeline} of an online backup, null for a cold one or an unread manifest. */
static bool
add_wal(cJSON *obj, const char *start_lsn, const char *stop_lsn, unsigned timeline)
{
	cJSON	   *wal;

	if (start_lsn == NULL)
		return cJSON_AddNullToObject(obj, "wal") != NULL;
	return (wal = cJSON_AddObjectToObject(obj, "wal")) != NULL &&
		add_string(wal, "start_lsn", start_lsn) && add_string(wal, "stop_lsn", stop_lsn) &&
		cJSON_AddNumberToObject(wal, "timeline", timeline) != NULL;
}

/* "parent": {name, id} of a diff or incr backup; null for a full one or an unread manifest. */
static bool
add_parent(cJSON *obj, const char *name, const char *id)
{
	cJSON	   *parent;

	if (name == NULL)
		return cJSON_AddNullToObject(obj, "parent") != NULL;
	return (parent = cJSON_AddObjectToObject(obj, "parent")) != NULL &&
		add_string(parent, "name", name) && add_string(parent, "id", id);
}

/* KEY: N, or null when UNKNOWN. */
static bool
add_count(cJSON *obj, const char *key, uint64_t n, bool known)
{
	return (known ? cJSON_AddNumberToObject(obj, key, (double) n) : cJSON_AddNullToObject(obj, key)) != NULL;
}

/* One backup of a list: what its manifest says (nulls without one), its status, its folders. */
static cJSON *
list_row_json(const ListRow *r)
{
	cJSON	   *o = cJSON_CreateObject();
	bool		known = r->uuid[0] != '\0';

	if (o != NULL &&
		add_string(o, "name", r->name) && add_string(o, "id", known ? r->uuid : NULL) &&
		add_string(o, "label", r->label) &&
		add_string(o, "type", known ? sb_backup_type_name(r->type) : NULL) &&
		add_parent(o, r->parent_name, r->parent_uuid) &&
		add_string(o, "status", list_status_name(r->status)) && add_string(o, "problem", r->problem) &&
		add_count(o, "data_bytes", r->data_bytes, known) && add_count(o, "stored_bytes", r->stored_bytes, known) &&
		add_count(o, "stripes", r->nstripes, known) &&
		add_string(o, "started_at", r->started_at) && add_string(o, "finished_at", r->finished_at) &&
		add_string(o, "system_identifier", r->system_identifier) &&
		add_wal(o, r->start_lsn, r->stop_lsn, r->timeline) &&
		(known || r->status == LIST_UNKNOWN ? cJSON_AddBoolToObject(o, "encrypted", r->encrypted)
		 : cJSON_AddNullToObject(o, "encrypted")) != NULL &&
		add_strings(o, "folders", (const char *const *) r->folders, r->nfolders))
		return o;
	cJSON_Delete(o);
	return NULL;
}

bool
json_print_list(const char *const *dests, uint32_t ndests, const ListRows *rows)
{
	cJSON	   *doc = json_document("list");
	cJSON	   *backups;
	size_t		i;

	if (doc == NULL || !add_strings(doc, "destinations", dests, ndests) ||
		(backups = cJSON_AddArrayToObject(doc, "backups")) == NULL)
		return json_emit(NULL);
	for (i = 0; i < rows->count; i++)
		if (!cJSON_AddItemToArray(backups, list_row_json(&rows->rows[i])))
		{
			cJSON_Delete(doc);
			return json_emit(NULL);
		}
	return json_emit(doc);
}
