/*
 * json_list.c
 *		"stripebackup list --output=json" (docs/JSON.md, "list").
 */
#include <cjson/cJSON.h>

#include "json_out.h"

/* One backup of a list: what its manifest says (nulls without one), its status, its folders. */
static cJSON *
list_row_json(const ListRow *r)
{
	cJSON	   *o = cJSON_CreateObject();
	bool		known = r->uuid[0] != '\0';

	return json_keep(o, o != NULL && json_add_string(o, "name", r->name) &&
		json_add_string(o, "id", known ? r->uuid : NULL) && json_add_string(o, "label", r->label) &&
		json_add_string(o, "type", known ? sb_backup_type_name(r->type) : NULL) &&
		json_add_parent(o, r->parent_name, r->parent_uuid) &&
		json_add_string(o, "status", list_status_name(r->status)) && json_add_string(o, "problem", r->problem) &&
		json_add_count(o, "data_bytes", r->data_bytes, known) &&
		json_add_count(o, "stored_bytes", r->stored_bytes, known) &&
		json_add_count(o, "stripes", r->nstripes, known) &&
		json_add_string(o, "started_at", r->started_at) && json_add_string(o, "finished_at", r->finished_at) &&
		json_add_string(o, "system_identifier", r->system_identifier) &&
		json_add_wal(o, r->start_lsn, r->stop_lsn, r->timeline) &&
		(known || r->status == LIST_UNKNOWN ? cJSON_AddBoolToObject(o, "encrypted", r->encrypted)
		 : cJSON_AddNullToObject(o, "encrypted")) != NULL &&
		(known ? cJSON_AddBoolToObject(o, "kept", r->kept) : cJSON_AddNullToObject(o, "kept")) != NULL &&
		json_add_string(o, "note", r->note) &&
		json_add_strings(o, "folders", (const char *const *) r->folders, r->nfolders));
}

bool
json_print_list(const char *const *dests, uint32_t ndests, const ListRows *rows)
{
	cJSON	   *doc = json_document("list");
	cJSON	   *backups;
	size_t		i;

	bool		ok = doc != NULL && json_add_strings(doc, "destinations", dests, ndests) &&
		(backups = cJSON_AddArrayToObject(doc, "backups")) != NULL;

	for (i = 0; ok && i < rows->count; i++)
		ok = cJSON_AddItemToArray(backups, list_row_json(&rows->rows[i]));
	return json_emit(doc, ok);
}
