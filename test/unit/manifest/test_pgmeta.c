/*
 * test_pgmeta.c
 *		What a manifest's metadata says about the PostgreSQL cluster it copied
 *		(sb_pgmeta_read), and the tablespace relocations a restore of it needs,
 *		with and without --tablespace-mapping (sb_pgmeta_relocations).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stripebackup/sb_pgmeta.h"
#include "tests.h"

#define ONLINE_METADATA \
	"{\"kind\":\"postgresql\",\"server_version\":\"15.20\"," \
	"\"system_identifier\":\"7301234567890123456\",\"data_directory\":\"/srv/pg/data\"," \
	"\"start_lsn\":\"0/2000028\",\"stop_lsn\":\"0/2000138\",\"timeline\":3," \
	"\"tablespaces\":[{\"oid\":16385,\"location\":\"/srv/ts/fast\"}," \
	"{\"oid\":16390,\"location\":\"/srv/pg/data/pg_tblspc_inplace\",\"in_place\":true}," \
	"{\"oid\":16400,\"location\":\"/srv/ts/slow\",\"in_place\":false}]}"

/* Read METADATA (NULL: none) as a manifest holding it would give it. */
static bool
read_meta(const char *metadata, SbPgMeta *info, SbError *err)
{
	SbManifest *m = sb_manifest_new();
	bool		ok;

	m->metadata_json = metadata ? strdup(metadata) : NULL;
	ok = sb_pgmeta_read(m, info, err);
	sb_manifest_free(m);
	return ok;
}

/* Metadata that is not about PostgreSQL, or that is missing, reads as "not PostgreSQL". */
static void
pgmeta_not_postgresql(void)
{
	static const char *const others[] = {NULL, "{}", "{\"kind\":\"tree\"}",
	"{\"kind\":5}", "{\"kind\":\"PostgreSQL\"}"};
	size_t		i;

	for (i = 0; i < sizeof(others) / sizeof(others[0]); i++)
	{
		SbPgMeta	info;
		SbError		err;
		bool		done = read_meta(others[i], &info, &err);

		ok(done && !info.is_postgresql && info.ntablespaces == 0 && info.server_version == NULL,
		   "metadata %s: read, not a PostgreSQL backup", others[i] ? others[i] : "(none)");
		sb_pgmeta_free(&info);
	}
}

/* Every field of an online backup's metadata, tablespaces in order. */
static void
pgmeta_online(void)
{
	SbPgMeta	info;
	SbError		err;
	bool		done = read_meta(ONLINE_METADATA, &info, &err);

	if (!ok(done && info.is_postgresql, "an online backup's metadata reads as PostgreSQL"))
		th_diag_error("read", &err);
	is_str(info.server_version, "15.20", "server version");
	is_str(info.system_identifier, "7301234567890123456", "system identifier, kept as text");
	is_str(info.data_directory, "/srv/pg/data", "data directory");
	is_str(info.start_lsn, "0/2000028", "start LSN");
	is_str(info.stop_lsn, "0/2000138", "stop LSN");
	is_int(info.timeline, 3, "timeline");
	if (is_int(info.ntablespaces, 3, "three tablespaces"))
	{
		is_str(info.tablespaces[0].oid, "16385", "first tablespace's OID, as text");
		is_str(info.tablespaces[0].location, "/srv/ts/fast", "its location");
		ok(!info.tablespaces[0].in_place, "not in place");
		is_str(info.tablespaces[0].what, "directory of tablespace 16385", "named for messages");
		ok(info.tablespaces[1].in_place, "\"in_place\": true is read");
		ok(!info.tablespaces[2].in_place, "\"in_place\": false is read");
	}
	sb_pgmeta_free(&info);
	ok(info.tablespaces == NULL && info.server_version == NULL && info.ntablespaces == 0,
	   "sb_pgmeta_free leaves an empty SbPgMeta");
	sb_pgmeta_free(&info);
}

/* Optional fields left out, or of the wrong type, read as unknown. */
static void
pgmeta_sparse(void)
{
	static const char *const timelines[] = {"\"3\"", "-1", "1e30", "null"};
	size_t		i;

	for (i = 0; i < sizeof(timelines) / sizeof(timelines[0]); i++)
	{
		char		json[200];
		SbPgMeta	info;
		SbError		err;
		bool		done;

		snprintf(json, sizeof(json), "{\"kind\":\"postgresql\",\"server_version\":15,\"timeline\":%s}",
				 timelines[i]);
		done = read_meta(json, &info, &err);
		ok(done && info.is_postgresql, "%s: read", json);
		is_int(info.timeline, 0, "timeline %s reads as 0 (unknown)", timelines[i]);
		ok(info.server_version == NULL && info.stop_lsn == NULL && info.ntablespaces == 0,
		   "a number for the version, no LSNs and no tablespaces read as none");
		sb_pgmeta_free(&info);
	}
}

/* A tablespace without a numeric OID or a location: SB_ECORRUPT, nothing left to free. */
static void
pgmeta_bad_tablespaces(void)
{
	static const char *const bad[] = {
		"[{\"location\":\"/srv/ts/a\"}]",
		"[{\"oid\":\"16385\",\"location\":\"/srv/ts/a\"}]",
		"[{\"oid\":16385}]",
		"[{\"oid\":16385,\"location\":7}]",
		"[{\"oid\":16385,\"location\":\"/srv/ts/a\"},{\"oid\":null,\"location\":\"/srv/ts/b\"}]",
	};
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		char		json[300];
		SbPgMeta	info;
		SbError		err;

		snprintf(json, sizeof(json), "{\"kind\":\"postgresql\",\"server_version\":\"15.2\","
				 "\"tablespaces\":%s}", bad[i]);
		ok(!read_meta(json, &info, &err), "tablespaces %s: refused", bad[i]);
		is_int(err.code, SB_ECORRUPT, "error code is corrupt");
		like(err.message, "bad tablespace in the metadata", "message says what is wrong");
		ok(info.server_version == NULL && info.tablespaces == NULL && info.ntablespaces == 0,
		   "what was read is freed (the sanitized run checks for leaks)");
	}
}

/* Relocations computed from ONLINE_METADATA with MAPPINGS. */
static bool
relocations(const char *const *mappings, uint32_t nmappings, SbPgMeta *info,
			SbRelocation *relocs, uint32_t *nrelocs, SbError *err)
{
	SbError		read_err;

	if (!read_meta(ONLINE_METADATA, info, &read_err))
	{
		th_diag_error("read", &read_err);
		return false;
	}
	return sb_pgmeta_relocations(info, mappings, nmappings, "--tablespace-mapping", relocs, nrelocs, err);
}

/* Without mappings every tablespace not in place goes back where it was. */
static void
pgmeta_relocations_default(void)
{
	SbPgMeta	info;
	SbRelocation relocs[4];
	uint32_t	n = 99;
	SbError		err;

	ok(relocations(NULL, 0, &info, relocs, &n, &err), "relocations without mappings");
	if (is_int(n, 2, "one per tablespace, none for the one in place"))
	{
		is_str(relocs[0].from, "pg_tblspc/16385", "first: from its archive folder");
		is_str(relocs[0].to, "/srv/ts/fast", "to its original location");
		is_str(relocs[0].what, "directory of tablespace 16385", "named for messages");
		is_str(relocs[1].from, "pg_tblspc/16400", "second: tablespace 16400");
		is_str(relocs[1].to, "/srv/ts/slow", "to its original location");
	}
	sb_pgmeta_free(&info);
}

/* --tablespace-mapping OLD=NEW moves the tablespace at OLD, and only that one. */
static void
pgmeta_relocations_mapped(void)
{
	static const char *const mappings[] = {"/srv/ts/slow=/mnt/new slow", "/srv/ts/fast=/mnt/fast"};
	SbPgMeta	info;
	SbRelocation relocs[4];
	uint32_t	n = 0;
	SbError		err;
	bool		done = relocations(mappings, 2, &info, relocs, &n, &err);

	if (!ok(done, "two mappings accepted"))
		th_diag_error("relocations", &err);
	if (is_int(n, 2, "still one relocation per tablespace"))
	{
		is_str(relocs[0].to, "/mnt/fast", "tablespace 16385 moved by the second mapping");
		is_str(relocs[1].to, "/mnt/new slow", "tablespace 16400 moved by the first");
	}
	sb_pgmeta_free(&info);
}

/* A mapping that is malformed or names no tablespace is refused with SB_EINVAL. */
static void
pgmeta_relocations_refused(void)
{
	static const struct
	{
		const char *mapping;
		const char *message;
	}			bad[] = {
		{"/srv/ts/fast", "is not of the form OLD=NEW"},
		{"=/mnt/x", "is not of the form OLD=NEW"},
		{"/srv/ts/fast=relative", "is not of the form OLD=NEW with OLD and NEW absolute paths"},
		{"/srv/ts/fast=/mnt/a=b", "has more than one \"=\""},
		{"/srv/ts/fa\\=st=/mnt/x", "no tablespace of this backup is at \"/srv/ts/fa=st\""},
		{"/srv/ts/fast=", "is not of the form OLD=NEW"},
		{"/srv/ts=/mnt/x", "no tablespace of this backup is at \"/srv/ts\""},
		{"/srv/ts/fastest=/mnt/x", "no tablespace of this backup is at \"/srv/ts/fastest\""},
		{"/srv/pg/data/pg_tblspc_inplace=/mnt/x", "no tablespace of this backup is at"},
	};
	size_t		i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		SbPgMeta	info;
		SbRelocation relocs[4];
		uint32_t	n = 0;
		SbError		err;
		const char *mapping = bad[i].mapping;

		ok(!relocations(&mapping, 1, &info, relocs, &n, &err), "mapping \"%s\": refused", mapping);
		is_int(err.code, SB_EINVAL, "error code is invalid");
		like(err.message, bad[i].message, "message says %s", bad[i].message);
		like(err.message, mapping, "message names the mapping");
		sb_pgmeta_free(&info);
	}
}

void
test_pgmeta_read(void)
{
	pgmeta_not_postgresql();
	pgmeta_online();
	pgmeta_sparse();
	pgmeta_bad_tablespaces();
}

void
test_pgmeta_relocations(void)
{
	pgmeta_relocations_default();
	pgmeta_relocations_mapped();
	pgmeta_relocations_refused();
}
