/*
 * cluster_meta.c
 *		Describing a stopped cluster for its cold backup's manifest: kind,
 *		system identifier and timeline (global/pg_control), version
 *		(PG_VERSION), data directory and tablespaces (the walk).
 *
 * No PostgreSQL code is linked here, so pg_control is read at the offsets
 * of each layout this command knows (its pg_control_version: 1300 for
 * PostgreSQL 13 to 16, 1700 for 17, 1800 for 18), and trusted only when it
 * is of one of them and its CRC-32C (its last field, over every byte before
 * it) holds: the system identifier decides which WAL archive a restore reads
 * and which copies a delta restore may rewrite, so one read from a damaged
 * or unknown file is left out, with a warning, rather than recorded.  What
 * cannot be known is left out: a cold backup has no WAL range or backup
 * label, and says "backup_method": "cold".
 */
#include <cjson/cJSON.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cluster_meta.h"
#include "stripebackup/sb_crc32c.h"

/* The same in every layout since 9.3 (system_identifier, pg_control_version). */
#define PG_CONTROL_SYSID_OFFSET 0
#define PG_CONTROL_VERSION_OFFSET 8

/*
 * The layouts, from each version's catalog/pg_control.h (offsets on the
 * 64-bit platforms the command builds for).  17 added CheckPoint.wal_level
 * into padding after fullPageWrites, moving nothing; 18 added
 * default_char_signedness before crc, moving crc by 4 bytes.
 */
typedef struct ControlLayout
{
	uint32_t	version;		/* pg_control_version */
	const char *servers;		/* the PostgreSQL releases that write it */
	size_t		timeline_offset;	/* checkPointCopy.ThisTimeLineID */
	size_t		crc_offset;		/* offsetof(ControlFileData, crc) */
} ControlLayout;

static const ControlLayout layouts[] = {
	{1300, "PostgreSQL 13 to 16", 48, 288},
	{1700, "PostgreSQL 17", 48, 288},
	{1800, "PostgreSQL 18", 48, 292},
};

/* Older layouts, named when met (their offsets differ and are not read). */
static const struct
{
	uint32_t	version;
	const char *servers;
}			old_layouts[] = {
	{942, "PostgreSQL 9.3 to 9.5"}, {960, "PostgreSQL 9.6"}, {1002, "PostgreSQL 10"},
	{1100, "PostgreSQL 11"}, {1201, "PostgreSQL 12"},
};

#define LAYOUTS_READ "PostgreSQL 13 to 18"
#define CONTROL_READ_MAX 512	/* more than any layout's crc_offset + 4 */

static const ControlLayout *
find_layout(uint32_t version)
{
	size_t		i;

	for (i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		if (layouts[i].version == version)
			return &layouts[i];
	return NULL;
}

/* The releases that write pg_control_version VERSION, for a warning; NULL if none known. */
static const char *
old_layout_servers(uint32_t version)
{
	size_t		i;

	for (i = 0; i < sizeof(old_layouts) / sizeof(old_layouts[0]); i++)
		if (old_layouts[i].version == version)
			return old_layouts[i].servers;
	return NULL;
}

/* The first bytes of ROOT/NAME into BUF; how many were read (0 if none). */
static size_t
read_start(const char *root, const char *name, void *buf, size_t len)
{
	char		path[PATH_MAX];
	FILE	   *f;
	size_t		n;

	snprintf(path, sizeof(path), "%s/%s", root, name);
	if ((f = fopen(path, "rb")) == NULL)
		return 0;
	n = fread(buf, 1, len, f);
	fclose(f);
	return n;
}

/* A layout this command reads, named by its version; NULL with a warning if none. */
static const ControlLayout *
control_layout(const uint8_t *control, size_t len, const char *root)
{
	uint32_t	version;
	const ControlLayout *layout;
	const char *old;

	if (len < PG_CONTROL_VERSION_OFFSET + sizeof(version))
	{
		fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is %zu bytes, too short for a control "
				"file: the backup records no system identifier or timeline\n", progname, root, len);
		return NULL;
	}
	memcpy(&version, control + PG_CONTROL_VERSION_OFFSET, sizeof(version));
	if ((layout = find_layout(version)) != NULL)
		return layout;
	old = old_layout_servers(version);
	fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is of version %u (%s%s), a layout this command "
			"does not read (it reads those of " LAYOUTS_READ "): the backup records no system identifier "
			"or timeline\n", progname, root, version, old ? old : "no PostgreSQL release it knows",
			old ? "" : ", or a damaged file");
	return NULL;
}

/* Is CONTROL (ROOT's pg_control, LEN bytes read) one to trust?  If not, a warning says why. */
static bool
control_trusted(const uint8_t *control, size_t len, const char *root, const ControlLayout *layout)
{
	uint32_t	stored,
				computed;

	if (len < layout->crc_offset + sizeof(stored))
	{
		fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is %zu bytes, too short for a control "
				"file of %s: the backup records no system identifier or timeline\n", progname, root, len,
				layout->servers);
		return false;
	}
	memcpy(&stored, control + layout->crc_offset, sizeof(stored));
	computed = sb_crc32c_final(sb_crc32c_update(SB_CRC32C_INIT, control, layout->crc_offset));
	if (stored != computed)
	{
		fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is damaged (its CRC-32C is %08x, its "
				"contents give %08x): the backup records no system identifier or timeline\n", progname,
				root, stored, computed);
		return false;
	}
	return true;
}

/* System identifier and timeline, when global/pg_control can be read and trusted; false if out of memory. */
static bool
add_control_data(cJSON *meta, const char *root)
{
	uint8_t		control[CONTROL_READ_MAX];
	size_t		len = read_start(root, "global/pg_control", control, sizeof(control));
	const ControlLayout *layout;
	uint64_t	sysid;
	uint32_t	timeline;
	char		text[32];

	if (len == 0 || (layout = control_layout(control, len, root)) == NULL ||
		!control_trusted(control, len, root, layout))
		return true;
	memcpy(&sysid, control + PG_CONTROL_SYSID_OFFSET, sizeof(sysid));
	memcpy(&timeline, control + layout->timeline_offset, sizeof(timeline));
	snprintf(text, sizeof(text), "%" PRIu64, sysid);
	return cJSON_AddStringToObject(meta, "system_identifier", text) != NULL &&
		cJSON_AddNumberToObject(meta, "timeline", timeline) != NULL;
}

/* "15" from PG_VERSION; false if out of memory. */
static bool
add_version(cJSON *meta, const char *root)
{
	char		version[16] = {0};

	read_start(root, "PG_VERSION", version, sizeof(version) - 1);
	version[strcspn(version, "\r\n")] = '\0';
	return version[0] == '\0' || cJSON_AddStringToObject(meta, "server_version", version) != NULL;
}

/* [{"oid": N, "location": "/path", "in_place": false}, ...] as the online backup writes it. */
static bool
add_tablespaces(cJSON *meta, const SourceTree *tree)
{
	cJSON	   *array = cJSON_AddArrayToObject(meta, "tablespaces");
	size_t		i;

	for (i = 0; array != NULL && i < tree->ntablespaces; i++)
	{
		const SourceTablespace *ts = &tree->tablespaces[i];
		cJSON	   *item = cJSON_CreateObject();

		if (item == NULL || !cJSON_AddItemToArray(array, item))
		{
			cJSON_Delete(item);
			return false;
		}
		/* The oid is digits only (source_tree.c), written as a JSON number. */
		if (cJSON_AddRawToObject(item, "oid", ts->oid) == NULL ||
			cJSON_AddStringToObject(item, "location", ts->location) == NULL ||
			cJSON_AddBoolToObject(item, "in_place", ts->in_place) == NULL)
			return false;
	}
	return array != NULL;
}

/* Every field; false if memory ran out. */
static bool
describe(cJSON *meta, const SourceTree *tree)
{
	const char *root = tree->roots[0];

	return cJSON_AddStringToObject(meta, "kind", "postgresql") != NULL &&
		cJSON_AddStringToObject(meta, "backup_method", "cold") != NULL &&
		add_control_data(meta, root) && add_version(meta, root) &&
		cJSON_AddStringToObject(meta, "data_directory", root) != NULL &&
		add_tablespaces(meta, tree);
}

char *
cluster_meta_json(const SourceTree *tree, SbError *err)
{
	cJSON	   *meta;
	char	   *text = NULL;

	sb_error_clear(err);
	if (!tree->is_cluster)
		return NULL;
	meta = cJSON_CreateObject();
	if (meta != NULL && describe(meta, tree))
		text = cJSON_PrintUnformatted(meta);
	cJSON_Delete(meta);
	if (text == NULL)
		sb_error_set(err, SB_ENOMEM, "out of memory describing the cluster");
	return text;
}
