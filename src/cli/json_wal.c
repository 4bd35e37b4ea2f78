/*
 * json_wal.c
 *		The --output=json documents of the WAL archive's commands:
 *		wal-list (every archived file, from its header) and wal-verify
 *		(docs/JSON.md).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json_out.h"

/* "2026-12-07T03:06:16Z" of T (seconds since the epoch). */
static const char *
utc_time(int64_t t, char *buf, size_t len)
{
	time_t		tt = (time_t) t;
	struct tm	tm;

	gmtime_r(&tt, &tm);
	strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

/* One archived file: its name, which destination (1-based), sizes, codec, when, sealed. */
static cJSON *
wal_entry_json(const SbWalEntry *e)
{
	cJSON	   *o = cJSON_CreateObject();
	char		when[32];

	return json_keep(o, o != NULL && json_add_string(o, "name", e->info.name) &&
		json_add_count(o, "destination", e->destination + 1, true) &&
		json_add_count(o, "data_bytes", e->info.raw_bytes, true) &&
		json_add_count(o, "stored_bytes", e->info.stored_bytes, true) &&
		json_add_string(o, "compression", sb_codec_name(e->info.codec)) &&
		json_add_string(o, "archived_at", utc_time(e->info.archived_at, when, sizeof(when))) &&
		cJSON_AddBoolToObject(o, "sealed", e->info.sealed) != NULL);
}

/* One file or destination a listing could not take. */
static cJSON *
wal_problem_json(const SbWalProblem *p)
{
	cJSON	   *o = cJSON_CreateObject();

	return json_keep(o, o != NULL && json_add_string(o, "file", p->name[0] ? p->name : NULL) &&
		json_add_string(o, "code", sb_error_code_name(p->code)) && json_add_string(o, "message", p->message));
}

/* "total": {files, data_bytes, stored_bytes} of L. */
static bool
add_total(cJSON *doc, const SbWalListing *l)
{
	cJSON	   *total = cJSON_AddObjectToObject(doc, "total");
	uint64_t	raw = 0,
				stored = 0;
	size_t		i;

	for (i = 0; i < l->count; i++)
	{
		raw += l->entries[i].info.raw_bytes;
		stored += l->entries[i].info.stored_bytes;
	}
	return total != NULL && json_add_count(total, "files", l->count, true) &&
		json_add_count(total, "data_bytes", raw, true) && json_add_count(total, "stored_bytes", stored, true);
}

bool
json_print_wal_list(const char *const *dests, uint32_t ndests, bool keyed, const SbWalListing *l)
{
	cJSON	   *doc = json_document("wal-list");
	cJSON	   *files,
			   *problems;
	bool		ok;
	size_t		i;

	ok = doc != NULL && json_add_strings(doc, "destinations", dests, ndests) &&
		cJSON_AddBoolToObject(doc, "with_key", keyed) != NULL &&
		(files = cJSON_AddArrayToObject(doc, "files")) != NULL &&
		(problems = cJSON_AddArrayToObject(doc, "problems")) != NULL && add_total(doc, l);
	for (i = 0; ok && i < l->count; i++)
		ok = cJSON_AddItemToArray(files, wal_entry_json(&l->entries[i]));
	for (i = 0; ok && i < l->nproblems; i++)
		ok = cJSON_AddItemToArray(problems, wal_problem_json(&l->problems[i]));
	return json_emit(doc, ok);
}

bool
json_print_wal_verify(const char *const *dests, uint32_t ndests, const JsonWalVerify *v)
{
	cJSON	   *doc = json_document("wal-verify");
	cJSON	   *range;
	bool		ok;

	ok = doc != NULL && json_add_strings(doc, "destinations", dests, ndests) &&
		json_add_string(doc, "status", v->problems == 0 ? "good" : "damaged") &&
		json_add_count(doc, "files", v->files, true) &&
		cJSON_AddItemReferenceToObject(doc, "problems", v->messages);
	if (ok && v->from == NULL)
		ok = cJSON_AddNullToObject(doc, "range") != NULL;
	else if (ok)
		ok = (range = cJSON_AddObjectToObject(doc, "range")) != NULL &&
			json_add_string(range, "from", v->from) && json_add_string(range, "to", v->to) &&
			cJSON_AddBoolToObject(range, "complete", v->range_complete) != NULL &&
			json_add_count(range, "segments", v->segments, true);
	return json_emit(doc, ok);
}
