/*
 * json_out.c
 *		What the command's --output=json documents share (json_out.h,
 *		docs/JSON.md): built with cJSON as cluster_meta.c builds a
 *		manifest's metadata, and printed whole at the end: a document is
 *		small (a summary, never a manifest's file table).
 *
 * Byte counts are JSON numbers, exact up to 2^53 (8 PiB); LSNs, system
 * identifiers and backup ids are strings, as PostgreSQL prints them.
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* Where documents go: standard output as the command was started with (json_take_stdout). */
static FILE *document_out;

bool
json_take_stdout(void)
{
	int			fd;

	fflush(stdout);
	if ((fd = dup(STDOUT_FILENO)) < 0 || (document_out = fdopen(fd, "w")) == NULL)
	{
		if (fd >= 0)
			close(fd);
		return false;
	}
	/* from here on what any part prints on stdout lands on stderr */
	return dup2(STDERR_FILENO, STDOUT_FILENO) >= 0;
}

/* A new document of COMMAND: {"version": 1, "command": COMMAND}. */
cJSON *
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

cJSON *
json_keep(cJSON *obj, bool complete)
{
	if (complete)
		return obj;
	cJSON_Delete(obj);
	return NULL;
}

bool
json_emit(cJSON *doc, bool complete)
{
	FILE	   *out = document_out != NULL ? document_out : stdout;
	char	   *text = doc != NULL && complete ? cJSON_Print(doc) : NULL;
	bool		ok = text != NULL && fprintf(out, "%s\n", text) >= 0 && fflush(out) == 0;

	if (!ok)
		fprintf(stderr, "%s: error: could not write the JSON output (out of memory, or standard output closed)\n",
				progname);
	free(text);
	cJSON_Delete(doc);
	return ok;
}

/* KEY: S, or null. */
bool
json_add_string(cJSON *obj, const char *key, const char *s)
{
	return (s != NULL ? cJSON_AddStringToObject(obj, key, s) : cJSON_AddNullToObject(obj, key)) != NULL;
}

/* KEY: [the N strings of LIST]. */
bool
json_add_strings(cJSON *obj, const char *key, const char *const *list, uint32_t n)
{
	cJSON	   *array = cJSON_AddArrayToObject(obj, key);
	uint32_t	i;

	for (i = 0; array != NULL && i < n; i++)
		if (!cJSON_AddItemToArray(array, cJSON_CreateString(list[i])))
			return false;
	return array != NULL;
}

/* "wal": {start_lsn, stop_lsn, timeline} of an online backup, null for a cold one or an unread manifest. */
bool
json_add_wal(cJSON *obj, const char *start_lsn, const char *stop_lsn, unsigned timeline)
{
	cJSON	   *wal;

	if (start_lsn == NULL)
		return cJSON_AddNullToObject(obj, "wal") != NULL;
	return (wal = cJSON_AddObjectToObject(obj, "wal")) != NULL &&
		json_add_string(wal, "start_lsn", start_lsn) && json_add_string(wal, "stop_lsn", stop_lsn) &&
		cJSON_AddNumberToObject(wal, "timeline", timeline) != NULL;
}

/* "parent": {name, id} of a diff or incr backup; null for a full one or an unread manifest. */
bool
json_add_parent(cJSON *obj, const char *name, const char *id)
{
	cJSON	   *parent;

	if (name == NULL)
		return cJSON_AddNullToObject(obj, "parent") != NULL;
	return (parent = cJSON_AddObjectToObject(obj, "parent")) != NULL &&
		json_add_string(parent, "name", name) && json_add_string(parent, "id", id);
}

/* KEY: N, or null when UNKNOWN. */
bool
json_add_count(cJSON *obj, const char *key, uint64_t n, bool known)
{
	return (known ? cJSON_AddNumberToObject(obj, key, (double) n) : cJSON_AddNullToObject(obj, key)) != NULL;
}

