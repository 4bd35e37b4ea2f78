/*
 * test_catalog.c
 *		sb_catalog_read and sb_catalog_probe tell what a destination holds
 *		from a listing alone: backup folders by the files in them (a
 *		manifest, stripes, a manifest's temporary file), the WAL archive and
 *		other folders left out; and what a place named as a backup is.
 *		Both run once per store driver (drivers.h): a local folder, then a
 *		prefix of a bucket.
 */
#include <limits.h>
#include <string.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_catalog.h"
#include "drivers.h"
#include "harness.h"
#include "tests.h"

/* An empty file at ROOT/REL, its folders made first. */
static void
touch(const char *root, const char *rel)
{
	char		path[PATH_MAX];
	char	   *slash;

	th_path(path, "%s/%s", root, rel);
	if (strncmp(root, "s3://", 5) == 0)
	{
		th_dest_write(path, "x", 1);	/* an object needs no folders */
		return;
	}
	for (slash = strchr(path + strlen(root) + 1, '/'); slash != NULL; slash = strchr(slash + 1, '/'))
	{
		*slash = '\0';
		(void) mkdir(path, 0700);	/* made by an earlier file, or now */
		*slash = '/';
	}
	th_write_file(path, "x", 1, 0600);
}

/* What ROOT/REL is, as sb_catalog_probe says. */
static int
probe(const char *root, const char *rel)
{
	char		path[PATH_MAX];
	SbPlaceKind kind = SB_PLACE_OTHER;
	SbError		err;

	th_path(path, "%s%s%s", root, rel[0] ? "/" : "", rel);
	if (!ok(sb_catalog_probe(path, &kind, &err), "\"%s\" can be told", rel))
		th_diag_error("probe", &err);
	return (int) kind;
}

static void
catalog_read(const ThDriver *d, void *arg)
{
	char		dest[PATH_MAX],
				path[PATH_MAX];
	SbCatalog	c;
	SbError		err;

	th_tempdir(dest, "catalog");
	if (d->s3)
	{
		th_rmtree(dest);
		th_path(dest, "s3://" TH_S3_BUCKET "/%s/catalog", d->prefix);
	}
	touch(dest, "full/manifest.json");
	touch(dest, "full/stripe-1.sbs");
	touch(dest, "full/stripe-3.sbs");
	touch(dest, "cut/stripe-2.sbs");
	touch(dest, "cut/manifest.json.tmp");
	touch(dest, "wal/7301234567890123456/000000010000000000000001");
	touch(dest, "notes/stripe-0.sbs");
	touch(dest, "deep/x/manifest.json");
	touch(dest, "stray.txt");
	if (!ok(sb_catalog_read(dest, &c, &err), "the destination is listed"))
		th_diag_error("read", &err);
	is_int(c.nfolders, 2, "two backup folders: the WAL archive, deeper files and other names are none");
	if (c.nfolders == 2)
	{
		is_str(c.folders[0].name, "cut", "sorted by name: \"cut\" first");
		ok(!c.folders[0].has_manifest, "\"cut\" has no manifest");
		is_int(c.folders[0].nstripe_files, 1, "\"cut\" holds one stripe file");
		is_str(c.folders[1].name, "full", "then \"full\"");
		ok(c.folders[1].has_manifest, "\"full\" has its manifest");
		is_int(c.folders[1].nstripe_files, 2, "\"full\" holds two stripe files");
	}
	sb_catalog_free(&c);

	is_int(probe(dest, ""), SB_PLACE_DESTINATION, "the destination is one");
	is_int(probe(dest, "full"), SB_PLACE_BACKUP, "a folder with a manifest is a backup");
	is_int(probe(dest, "cut"), SB_PLACE_INCOMPLETE, "stripes without a manifest: a backup that did not complete");
	is_int(probe(dest, "notes"), SB_PLACE_OTHER, "\"stripe-0.sbs\" is no stripe: something else");
	/* A folder not there is missing; a prefix with nothing below is only empty. */
	if (!d->s3)
	{
		is_int(probe(dest, "missing"), SB_PLACE_MISSING, "a path that is not there is missing");
		ok(!sb_catalog_read(th_path(path, "%s/missing", dest), &c, &err) && err.code == SB_ENOTFOUND,
		   "reading a destination that is not there: SB_ENOTFOUND");
		ok(sb_catalog_missing(th_path(path, "%s/missing", dest)), "a folder that is not there is missing");
	}
	else
	{
		ok(sb_catalog_read(th_path(path, "%s/missing", dest), &c, &err) && c.nfolders == 0,
		   "reading a prefix with nothing below: no backup folder");
		sb_catalog_free(&c);
	}
	ok(!sb_catalog_missing(dest), "the destination is not");
	ok(!sb_catalog_missing("s3://bucket/prefix"), "a bucket's prefix is not known missing without a request");
	if (!d->s3)
		th_rmtree(dest);
}

void
test_catalog_read(void)
{
	th_begin("catalog: the backup folders of a destination");
	th_each_driver(catalog_read, NULL);
}

/* The cheap checks of the backup at F's first destination, NAME: their verdict, the problem into PROBLEM. */
static bool
check_backup(const ThFixture *f, const char *name, char *problem, size_t len)
{
	char		location[PATH_MAX];
	SbArchive  *a;
	SbPlan		plan;
	SbError		err;
	bool		good = false;

	problem[0] = '\0';
	if ((a = sb_archive_open_with(th_location(f, 0, name, location),
								  &(SbArchiveOpenOptions){.keep = SB_KEEP_COUNTS, .alone = true},
								  &err)) == NULL)
	{
		snprintf(problem, len, "could not open: %.900s", err.message);
		return false;
	}
	if (sb_archive_plan(a, &plan, &err))
		good = sb_catalog_check_backup(a, &plan, problem, len);
	else
		snprintf(problem, len, "could not plan: %.900s", err.message);
	sb_archive_close(a);
	return good;
}

static void
catalog_check_backup(const ThDriver *d, void *arg)
{
	ThFixture	f;
	SbBackupOptions o;
	SbManifest *m = NULL;
	SbError		err;
	char		path[PATH_MAX],
				problem[1024];

	th_fixture(&f, "catalogcheck", 3);
	th_driver_dests(d, &f, "catalogcheck");
	th_write_pattern(th_path(path, "%s/data", f.src), 600000, 7, false, 0644);
	th_options(&o, f.dests, 3, "b");
	if (!ok(th_backup_tree(&o, f.src, &m, &err), "a backup over three destinations"))
		th_diag_error("backup", &err);
	sb_manifest_free(m);

	ok(check_backup(&f, "b", problem, sizeof(problem)), "whole: every check passes (%s)", problem);

	/* a manifest copy of another size beside stripe 3 */
	th_path(path, "%s/b/manifest.json", f.dest[2]);
	th_dest_write(path, "{}", 2);
	ok(!check_backup(&f, "b", problem, sizeof(problem)), "a manifest copy of another size: damaged");
	like(problem, "beside stripe 3", "the problem names the stripe the copy is beside");

	/* no copy at all there */
	th_dest_remove(path);
	ok(!check_backup(&f, "b", problem, sizeof(problem)), "no manifest copy beside a stripe: damaged");
	like(problem, "no manifest beside stripe 3", "and says so");

	/* a stripe of another size */
	th_stripe_path(&f, 2, "b", path);
	if (!th_dest_truncate(path, 100))
		diag("could not truncate %s", path);
	ok(!check_backup(&f, "b", problem, sizeof(problem)), "a stripe cut short: damaged");
	like(problem, "stripe 2", "the problem names the stripe");
	th_fixture_done(&f);
}

void
test_catalog_check_backup(void)
{
	th_begin("catalog: the cheap checks of a backup");
	th_each_driver(catalog_check_backup, NULL);
}
