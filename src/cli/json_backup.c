/*
 * json_backup.c
 *		The --output=json documents of the commands that read one backup:
 *		show (a summary of the manifest, never its file table), plan and
 *		verify (docs/JSON.md).
 */
#include <stdio.h>
#include <string.h>

#include "json_out.h"
#include "stripebackup/sb_pgmeta.h"

/* OBJ's KEY: X, a number (seconds, MB/s, a weight), or null unless KNOWN. */
static bool
add_number(cJSON *obj, const char *key, double x, bool known)
{
	return (known ? cJSON_AddNumberToObject(obj, key, x) : cJSON_AddNullToObject(obj, key)) != NULL;
}

/* Name, id, type and parent of M: what every document about a backup starts with. */
static bool
add_identity(cJSON *o, const SbManifest *m)
{
	char		id[33],
				parent_id[33];

	cli_format_id(m->uuid, id);
	if (m->parent != NULL)
		cli_format_id(m->parent->uuid, parent_id);
	return json_add_string(o, "name", m->name) && json_add_string(o, "id", id) &&
		json_add_string(o, "type", sb_backup_type_name(m->type)) &&
		json_add_parent(o, m->parent ? m->parent->name : NULL, parent_id);
}

/* "cluster", "wal" and "tablespaces" of an online or cold backup of a cluster; nulls for a plain tree. */
static bool
add_cluster(cJSON *o, const SbManifest *m)
{
	SbPgMeta	meta;
	SbError		err;
	cJSON	   *cluster,
			   *spaces;
	bool		ok;
	int			i;

	if (!sb_pgmeta_read(m, &meta, &err) || !meta.is_postgresql)
	{
		sb_pgmeta_free(&meta);
		return cJSON_AddNullToObject(o, "cluster") && cJSON_AddNullToObject(o, "wal") &&
			cJSON_AddArrayToObject(o, "tablespaces");
	}
	ok = (cluster = cJSON_AddObjectToObject(o, "cluster")) != NULL &&
		json_add_string(cluster, "server_version", meta.server_version) &&
		json_add_string(cluster, "system_identifier", meta.system_identifier) &&
		json_add_string(cluster, "data_directory", meta.data_directory) &&
		cJSON_AddNumberToObject(cluster, "timeline", meta.timeline) != NULL &&
		cJSON_AddBoolToObject(cluster, "from_standby", meta.from_standby) != NULL &&
		json_add_wal(o, meta.start_lsn, meta.stop_lsn, meta.timeline) &&
		(spaces = cJSON_AddArrayToObject(o, "tablespaces")) != NULL;
	for (i = 0; ok && i < meta.ntablespaces; i++)
	{
		cJSON	   *t = cJSON_CreateObject();

		ok = cJSON_AddItemToArray(spaces, t) && json_add_string(t, "oid", meta.tablespaces[i].oid) &&
			json_add_string(t, "location", meta.tablespaces[i].location) &&
			cJSON_AddBoolToObject(t, "in_place", meta.tablespaces[i].in_place) != NULL;
	}
	sb_pgmeta_free(&meta);
	return ok;
}

/*
 * "redundancy" (destinations that may be lost, 0: none), "parity_bytes" and
 * what they add to the stored bytes, in percent (null with nothing stored).
 */
static bool
add_redundancy(cJSON *o, const SbManifest *m)
{
	return json_add_count(o, "redundancy", m->redundancy.parity, true) &&
		json_add_count(o, "parity_bytes", m->parity_bytes, true) &&
		add_number(o, "parity_overhead_percent",
				   100.0 * (double) m->parity_bytes / (double) m->stored_bytes, m->stored_bytes > 0);
}

/* "compression": {method, level}, "chunk_bytes", "balance", "encrypted", redundancy. */
static bool
add_format(cJSON *o, const SbManifest *m)
{
	cJSON	   *c;
	char		version[32];

	snprintf(version, sizeof(version), "%u.%u", m->version_major, m->version_minor);
	return json_add_string(o, "format_version", version) && json_add_string(o, "tool", m->tool) &&
		(c = cJSON_AddObjectToObject(o, "compression")) != NULL &&
		json_add_string(c, "method", sb_codec_name(m->codec)) &&
		add_number(c, "level", m->level, m->codec == SB_CODEC_ZSTD) &&
		json_add_count(o, "chunk_bytes", m->chunk_size, true) &&
		json_add_string(o, "balance", sb_balance_name(m->balance)) &&
		cJSON_AddBoolToObject(o, "encrypted", m->encrypted) != NULL && add_redundancy(o, m);
}

/* What PLAN counts of the files and the stream. */
static bool
add_contents(cJSON *o, const SbPlan *plan)
{
	return json_add_count(o, "files", plan->files, true) &&
		json_add_count(o, "directories", plan->directories, true) &&
		json_add_count(o, "symlinks", plan->symlinks, true) &&
		json_add_count(o, "logical_bytes", plan->logical_bytes, true) &&
		json_add_count(o, "data_bytes", plan->raw_bytes, true) &&
		json_add_count(o, "stored_bytes", plan->stored_bytes, true) &&
		json_add_count(o, "chunks", plan->chunks, true);
}

/* One stripe of PLAN (M's, for its weight): what it holds, where, whether it is there. */
static cJSON *
stripe_json(const SbManifest *m, const SbPlanStripe *s)
{
	cJSON	   *o = cJSON_CreateObject();

	return json_keep(o, o != NULL && json_add_count(o, "number", s->number, true) &&
		add_number(o, "weight", m->stripes[s->number - 1].weight, true) &&
		json_add_string(o, "path", s->path) && cJSON_AddBoolToObject(o, "present", s->present) != NULL &&
		json_add_count(o, "file_bytes", s->file_bytes, true) && json_add_count(o, "chunks", s->chunks, true) &&
		json_add_count(o, "data_bytes", s->raw_bytes, true) &&
		json_add_count(o, "stored_bytes", s->stored_bytes, true) && json_add_count(o, "files", s->files, true) &&
		add_number(o, "write_seconds", s->write_seconds, s->write_seconds > 0) &&
		add_number(o, "backup_stored_mbps", (double) s->stored_bytes / 1e6 / s->write_seconds,
				   s->write_seconds > 0) &&
		add_number(o, "backup_data_mbps", (double) s->raw_bytes / 1e6 / s->write_seconds,
				   s->write_seconds > 0));
}

static bool
add_stripes(cJSON *o, const SbManifest *m, const SbPlan *plan)
{
	cJSON	   *array = cJSON_AddArrayToObject(o, "stripes");
	uint32_t	i;

	for (i = 0; array != NULL && i < plan->nstripes; i++)
		if (!cJSON_AddItemToArray(array, stripe_json(m, &plan->stripes[i])))
			return false;
	return array != NULL;
}

bool
json_print_show(const SbArchive *a, const SbPlan *plan)
{
	const SbManifest *m = a->manifest;
	cJSON	   *doc = json_document("show");
	cJSON	   *b,
			   *manifest;

	return json_emit(doc, doc != NULL && (b = cJSON_AddObjectToObject(doc, "backup")) != NULL &&
					 add_identity(b, m) && json_add_string(b, "label", m->label) &&
					 json_add_string(b, "started_at", m->started_at) &&
					 json_add_string(b, "finished_at", m->finished_at) && add_format(b, m) && add_cluster(b, m) &&
					 (manifest = cJSON_AddObjectToObject(b, "manifest")) != NULL &&
					 json_add_string(manifest, "path", a->manifest_path) &&
					 cJSON_AddBoolToObject(manifest, "authenticated", a->authenticated) &&
					 add_contents(b, plan) && add_stripes(b, m, plan));
}

bool
json_verify_begin(JsonVerify *v)
{
	memset(v, 0, sizeof(*v));
	return (v->problems = cJSON_CreateArray()) != NULL;
}

void
json_verify_add_problem(JsonVerify *v, const SbProblem *p)
{
	cJSON	   *o = cJSON_CreateObject();

	if (o == NULL || !cJSON_AddItemToArray(v->problems, o))
	{
		cJSON_Delete(o);
		return;
	}
	add_number(o, "stripe", p->stripe, p->stripe > 0);
	add_number(o, "chunk", (double) p->chunk, p->chunk >= 0);
	json_add_string(o, "file", p->file);
	json_add_string(o, "code", sb_error_code_name(p->code));
	json_add_string(o, "message", p->message);
}

void
json_verify_set_wal(JsonVerify *v, uint64_t files, const char *from, const char *to)
{
	v->wal_checked = true;
	v->wal_files = files;
	snprintf(v->wal_from, sizeof(v->wal_from), "%s", from);
	snprintf(v->wal_to, sizeof(v->wal_to), "%s", to);
}

void
json_verify_set_backup(JsonVerify *v, const char *name, const SbManifest *m, uint64_t chunks,
					   uint32_t stripes, bool without_key)
{
	if (v->problems == NULL || v->backup != NULL || (v->backup = cJSON_CreateObject()) == NULL)
		return;
	if (m != NULL)
		add_identity(v->backup, m);
	else
		(void) (json_add_string(v->backup, "name", name) && json_add_string(v->backup, "id", NULL) &&
				json_add_string(v->backup, "type", NULL) && json_add_parent(v->backup, NULL, NULL));
	v->chunks = chunks;
	v->stripes = stripes;
	v->without_key = without_key;
}

/* "wal": {files, from, to} of the archive checked from the backup on, or null. */
static bool
add_verified_wal(cJSON *doc, const JsonVerify *v)
{
	cJSON	   *wal;

	if (!v->wal_checked)
		return cJSON_AddNullToObject(doc, "wal") != NULL;
	return (wal = cJSON_AddObjectToObject(doc, "wal")) != NULL &&
		json_add_count(wal, "files", v->wal_files, true) && json_add_string(wal, "from", v->wal_from) &&
		json_add_string(wal, "to", v->wal_to);
}

bool
json_print_verify(JsonVerify *v, bool good)
{
	cJSON	   *doc = json_document("verify");
	bool		ok = doc != NULL && v->backup != NULL &&
		json_add_string(doc, "status", good ? "good" : "damaged") &&
		cJSON_AddItemToObject(doc, "backup", v->backup) &&
		cJSON_AddBoolToObject(doc, "checked_without_key", v->without_key) != NULL &&
		json_add_count(doc, "chunks", v->chunks, true) && json_add_count(doc, "stripes", v->stripes, true) &&
		cJSON_AddItemToObject(doc, "problems", v->problems) && add_verified_wal(doc, v);

	/* the document owns what was added to it */
	if (cJSON_GetObjectItem(doc, "backup") == v->backup)
		v->backup = NULL;
	if (cJSON_GetObjectItem(doc, "problems") == v->problems)
		v->problems = NULL;
	return json_emit(doc, ok);
}

void
json_verify_free(JsonVerify *v)
{
	cJSON_Delete(v->problems);
	cJSON_Delete(v->backup);
	memset(v, 0, sizeof(*v));
}

/* One backup a restore reads (A, with PLAN): who it is, what it holds, its stripes. */
static cJSON *
plan_link_json(const SbArchive *a, const SbPlan *plan)
{
	cJSON	   *o = cJSON_CreateObject();

	return json_keep(o, o != NULL && add_identity(o, a->manifest) &&
		cJSON_AddBoolToObject(o, "authenticated", a->authenticated) != NULL &&
		json_add_count(o, "files", plan->files, true) && json_add_count(o, "data_bytes", plan->raw_bytes, true) &&
		json_add_count(o, "stored_bytes", plan->stored_bytes, true) && add_stripes(o, a->manifest, plan));
}

/* "chain": each older backup of A's chain, as a restore reads them after A; false when out of memory. */
static bool
add_chain(cJSON *doc, const SbArchive *a)
{
	cJSON	   *chain = cJSON_AddArrayToObject(doc, "chain");
	const SbArchive *link;

	for (link = a->parent; chain != NULL && link != NULL; link = link->parent)
	{
		SbPlan		plan;
		SbError		err;

		/* a link that cannot be planned was said on stderr; the status says damaged */
		if (sb_archive_plan(link, &plan, &err) && !cJSON_AddItemToArray(chain, plan_link_json(link, &plan)))
			return false;
	}
	return chain != NULL;
}

/* "target": what plan found of T, or null without --target. */
static bool
add_target(cJSON *doc, const JsonTarget *t)
{
	cJSON	   *o;

	if (t == NULL)
		return cJSON_AddNullToObject(doc, "target") != NULL;
	return (o = cJSON_AddObjectToObject(doc, "target")) != NULL && json_add_string(o, "path", t->path) &&
		cJSON_AddBoolToObject(o, "usable", t->usable) != NULL &&
		cJSON_AddBoolToObject(o, "will_create", t->will_create) != NULL &&
		json_add_count(o, "needed_bytes", t->needed_bytes, true) &&
		json_add_count(o, "free_bytes", t->free_bytes, t->has_free) &&
		json_add_string(o, "problem", t->usable ? NULL : t->problem);
}

/* "recovery": what the archive holds of the WAL recovery to R replays (W), or null without a target. */
static bool
add_recovery(cJSON *doc, const SbRecoveryTarget *r, const SbRecoveryWal *w)
{
	cJSON	   *o;

	if (r == NULL)
		return cJSON_AddNullToObject(doc, "recovery") != NULL;
	return (o = cJSON_AddObjectToObject(doc, "recovery")) != NULL &&
		json_add_string(o, "target", sb_recovery_kind_name(r->kind)) &&
		cJSON_AddBoolToObject(o, "checked", w->checked) != NULL &&
		cJSON_AddBoolToObject(o, "complete", w->checked && w->complete) != NULL &&
		cJSON_AddBoolToObject(o, "refused", w->checked && w->refuse) != NULL &&
		add_number(o, "timeline", w->timeline, w->checked) &&
		json_add_string(o, "from", w->checked ? w->from : NULL) &&
		json_add_string(o, "to", w->checked ? w->to : NULL) &&
		json_add_count(o, "segments", w->segments, w->checked) &&
		json_add_count(o, "data_bytes", w->raw_bytes, w->checked) &&
		json_add_string(o, "problem", w->checked && !w->complete ? w->message : NULL);
}

bool
json_print_plan(const SbArchive *a, const SbPlan *plan, bool ready, const JsonTarget *target,
				const SbRecoveryTarget *recovery, const SbRecoveryWal *wal)
{
	cJSON	   *doc = json_document("plan");
	cJSON	   *backup;

	return json_emit(doc, doc != NULL && json_add_string(doc, "status", ready ? "ready" : "damaged") &&
					 (backup = plan_link_json(a, plan)) != NULL && cJSON_AddItemToObject(doc, "backup", backup) &&
					 add_chain(doc, a) && add_target(doc, target) && add_recovery(doc, recovery, wal));
}
