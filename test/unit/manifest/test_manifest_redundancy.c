/*
 * test_manifest_redundancy.c
 *		A manifest with redundancy (3.1, docs/FORMAT.md section 10.3): written
 *		by a backup, read back the same, and each way of getting its
 *		redundancy wrong refused with a message naming the value.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

/* The manifest of a backup of a few blocks with redundancy 1 over 3, as JSON. */
static char *
redundant_manifest_json(void)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX];
	char	   *json = NULL;

	th_fixture(&f, "manifest-redundancy", 3);
	th_write_pattern(th_path(path, "%s/file", f.src), 5 * 1024 * 1024 + 99, 7, false, 0644);
	th_options(&o, f.dests, 3, "bk");
	o.redundancy = 1;
	if (th_backup_tree(&o, f.src, &m, &err))
		json = sb_manifest_to_json(m, &err);
	else
		th_diag_error("backup", &err);
	sb_manifest_free(m);
	th_fixture_done(&f);
	return json;
}

/* JSON with its first FROM replaced by TO, or NULL if FROM is not there. */
static char *
edited(const char *json, const char *from, const char *to)
{
	const char *hit = strstr(json, from);
	char	   *out;

	if (hit == NULL)
		return NULL;
	out = malloc(strlen(json) + strlen(to) + 1);
	memcpy(out, json, (size_t) (hit - json));
	strcpy(out + (hit - json), to);
	strcat(out, hit + strlen(from));
	return out;
}

static void
expect_refused(const char *json, const char *from, const char *to, const char *want)
{
	char	   *text = edited(json, from, to);
	SbManifest *back = NULL;
	SbError		err;

	if (!ok(text != NULL, "the manifest has %s", from))
		return;
	back = sb_manifest_from_json(text, strlen(text), &err);
	ok(back == NULL, "%s for %s: refused", to, from);
	if (back == NULL)
		like(err.message, want, "%s: the message says %s", to, want);
	sb_manifest_free(back);
	free(text);
}

void
test_manifest_redundancy_round_trip(void)
{
	char	   *json = redundant_manifest_json();
	SbManifest *back;
	SbError		err;
	char	   *again;

	if (!ok(json != NULL, "a backup with redundancy wrote its manifest"))
		return;
	like(json, "\"format_version\":\"3.1\"", "its format is 3.1");
	like(json, "\"redundancy\":{\"parity\":1,\"data\":2,\"run\":16,\"code\":\"rs-cauchy-gf256\"}",
		 "it records the redundancy");
	like(json, "\"parity_ranges\":[[", "each stripe lists its parity records");
	back = sb_manifest_from_json(json, strlen(json), &err);
	if (!ok(back != NULL, "it reads back"))
		th_diag_error("read", &err);
	again = back ? sb_manifest_to_json(back, &err) : NULL;
	ok(again != NULL && strcmp(json, again) == 0, "and writes the same text again");
	ok(back != NULL && back->version_minor == 1 && back->redundancy.parity == 1 &&
	   back->redundancy.data == 2 && back->redundancy.run == 16 && back->parity_bytes > 0 &&
	   back->stripes[0].parity_chunks + back->stripes[1].parity_chunks +
	   back->stripes[2].parity_chunks > 0, "with its redundancy and parity records");
	free(again);
	sb_manifest_free(back);
	free(json);
}

void
test_manifest_redundancy_refused(void)
{
	char	   *json = redundant_manifest_json();

	if (!ok(json != NULL, "a backup with redundancy wrote its manifest"))
		return;
	expect_refused(json, "\"parity\":1,", "\"parity\":0,", "redundancy with parity 0");
	expect_refused(json, "\"parity\":1,\"data\":2", "\"parity\":3,\"data\":0",
				   "redundancy parity 3 over 3 stripes");
	expect_refused(json, "\"parity\":1,\"data\":2", "\"parity\":9,\"data\":2",
				   "redundancy parity 9 is out of range");
	expect_refused(json, "\"data\":2", "\"data\":1", "redundancy data 1 is not the 3 stripes less parity 1");
	expect_refused(json, "\"run\":16", "\"run\":0", "redundancy run 0 is out of range");
	expect_refused(json, "\"run\":16", "\"run\":8", "are not those of its redundancy groups");
	expect_refused(json, "rs-cauchy-gf256", "xor", "unknown redundancy code \"xor\"");
	expect_refused(json, "\"format_version\":\"3.1\"", "\"format_version\":\"3.0\"",
				   "\"redundancy\" in a manifest of format version 3.0");
	expect_refused(json, "\"parity_ranges\":[[", "\"parity_ranges\":[[0,0],[",
				   "parity_ranges are not those of its redundancy groups");
	expect_refused(json, "\"redundancy\":{", "\"no_redundancy\":{",
				   "parity bytes without \"redundancy\"");
	expect_refused(json, "\"parity_chunks\":", "\"parity_chunks\":1", "parity records");
	expect_refused(json, ",\"parity_bytes\":", ",\"parity_bytes\":1", "parity");
	free(json);
}
