/*
 * cluster_meta.c
 *		Describing a stopped cluster for its cold backup's manifest: kind,
 *		system identifier and timeline (global/pg_control), version
 *		(PG_VERSION), data directory and tablespaces (the walk).
 *
 * No PostgreSQL code is linked here, so pg_control is read at the offsets
 * of its layout 1300 (PostgreSQL 13 to 16), and trusted only when it is of
 * that layout and its CRC-32C (its last field, over every byte before it)
 * holds: the system identifier decides which WAL archive a restore reads
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

#define PG_CONTROL_LAYOUT 1300
#define PG_CONTROL_SYSID_OFFSET 0
#define PG_CONTROL_VERSION_OFFSET 8
#define PG_CONTROL_TIMELINE_OFFSET 48	/* checkPointCopy.ThisTimeLineID */
#define PG_CONTROL_CRC_OFFSET 288	/* crc: offsetof(ControlFileData, crc) */

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

/* Is CONTROL (ROOT's pg_control, LEN bytes read) one to trust?  If not, a warning says why. */
static bool
control_trusted(const uint8_t *control, size_t len, const char *root)
{
	uint32_t	version,
				stored,
				computed;

	if (len < PG_CONTROL_CRC_OFFSET + sizeof(stored))
	{
		fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is %zu bytes, too short for a control "
				"file: the backup records no system identifier or timeline\n", progname, root, len);
		return false;
	}
	memcpy(&version, control + PG_CONTROL_VERSION_OFFSET, sizeof(version));
	if (version != PG_CONTROL_LAYOUT)
	{
		fprintf(stderr, "%s: warning: \"%s/global/pg_control\" is of layout %u, not %u (PostgreSQL 13 "
				"to 16): the backup records no system identifier or timeline\n", progname, root, version,
				PG_CONTROL_LAYOUT);
		return false;
	}
	memcpy(&stored, control + PG_CONTROL_CRC_OFFSET, sizeof(stored));
	computed = sb_crc32c_final(sb_crc32c_update(SB_CRC32C_INIT, control, PG_CONTROL_CRC_OFFSET));
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
	uint8_t		control[PG_CONTROL_CRC_OFFSET + 8];
	size_t		len = read_start(root, "global/pg_control", control, sizeof(control));
	uint64_t	sysid;
	uint32_t	timeline;
	char		text[32];

	if (len == 0 || !control_trusted(control, len, root))
		return true;
	memcpy(&sysid, control + PG_CONTROL_SYSID_OFFSET, sizeof(sysid));
	memcpy(&timeline, control + PG_CONTROL_TIMELINE_OFFSET, sizeof(timeline));
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
