/*
 * test_s3_wal.c
 *		The WAL archive with a bucket beside a local folder, against the
 *		test S3 server (test/s3/with-s3.sh): pushes, a push of what is
 *		there, a push ahead remembered, gets (with prefetch), listing,
 *		verify (a damaged object found), continuity, retention (a user's
 *		object kept), a bucket that does not exist never taken for an
 *		empty archive, and an archive sealed under a key in a bucket.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "store/s3/s3_client.h"
#include "store/store.h"
#include "stripebackup/sb_s3.h"
#include "drivers.h"
#include "tests.h"
#include "wal_fixture.h"

#define BUCKET "bk1"

/* A client for the test server's objects, as the engine's settings give it. */
static SbS3Client *
wal_client(void)
{
	SbError		err;
	SbS3Client *c;

	if (!ok(th_s3_endpoint() != NULL, "an S3 server to test against (run under test/s3/with-s3.sh)"))
		return NULL;
	setenv("AWS_ENDPOINT_URL", th_s3_endpoint(), 1);
	if ((c = sb_s3_client_open(NULL, BUCKET, 1, &err)) == NULL)
		th_diag_error("S3 client", &err);
	return c;
}

/* The key of archived NAME under PREFIX. */
static char *
wal_key(const char *prefix, const char *name, char *out, size_t len)
{
	snprintf(out, len, "%s/wal/%llu/%s.sbw", prefix, (unsigned long long) TH_WAL_SYSID, name);
	return out;
}

/* An SbWalProblemFn: the first problem that names a bucket's object, into ARG (512 bytes). */
static void
collect_problem(void *arg, const char *message)
{
	char	   *first = arg;

	if (first[0] == '\0' && strstr(message, "s3://") != NULL)
		snprintf(first, 512, "%s", message);
}

/* Push segments 1..4 and a history file to a folder and a bucket: where each went, what the bucket holds. */
static void
push_to_folder_and_bucket(ThWal *w, SbS3Client *c, const char *prefix)
{
	SbWalArchiveOptions o;
	SbWalArchive *a;
	SbWalPushResult r[5];
	SbWalFile files[5];
	SbWalFound found;
	char		paths[5][PATH_MAX];
	char		key[1024];
	uint64_t	size = 0;
	SbError		err;
	int			in_bucket = 0;
	uint32_t	i;

	for (i = 0; i < 4; i++)
	{
		files[i].name = strdup(th_wal_name(1, i + 1));
		files[i].path = th_wal_source(w, files[i].name, TH_WAL_SEGMENT, i, i % 2 == 0, paths[i]);
	}
	files[4].name = "00000002.history";
	files[4].path = th_wal_text_source(w, files[4].name, "1\t0/3000000\tno recovery target specified\n",
									   paths[4]);
	th_wal_options(&o, w);
	a = sb_wal_archive_open(&o, &err);
	ok(a != NULL, "an archive over a folder and a bucket opens");
	if (a == NULL)
		return th_diag_error("open", &err);
	ok(sb_wal_push_many(a, files, 5, r), "four segments and a history file archived");
	for (i = 0; i < 5; i++)
		if (!r[i].archived)
			th_diag_error(files[i].name, &r[i].error);
	for (i = 0; i < 4; i++)
		in_bucket += r[i].destination == 1;
	ok(in_bucket >= 1 && in_bucket <= 3, "the weights spread the segments by their bytes: %d of 4 in the bucket",
	   in_bucket);
	is_int(r[4].destination, -1, "the history file goes to both");
	ok(sb_s3_head_object(c, BUCKET, wal_key(prefix, files[4].name, key, sizeof(key)), &size, &err) &&
	   size > 128, "the bucket holds the history file's object");
	ok(sb_wal_push(a, files[1].name, files[1].path, &r[0]) && r[0].remembered,
	   "a push ahead's segment pushed again is remembered (its object's ETag unchanged)");
	sb_wal_archive_close(a);

	a = sb_wal_archive_open(&o, &err);
	for (i = 0; i < 4 && a != NULL; i++)
	{
		ok(sb_wal_push(a, files[i].name, files[i].path, &r[0]) && r[0].already_archived &&
		   !r[0].remembered, "a new archiver finds %s already archived, read back whole", files[i].name);
		ok(sb_wal_find(&w->dests, files[i].name, &found, &err) &&
		   th_wal_get_equal(w, files[i].name, &err), "%s found and restored byte for byte", files[i].name);
	}
	th_wal_source(w, "other", TH_WAL_SEGMENT, 99, true, paths[0]);
	ok(a != NULL && !sb_wal_push(a, files[3].name, paths[0], &r[0]) && r[0].error.code == SB_EEXIST,
	   "other contents under an archived name are refused: %s", r[0].error.message);
	sb_wal_archive_close(a);
	for (i = 0; i < 4; i++)
		free((char *) files[i].name);
}

/* Listing, verify, continuity, a prefetching get, a damaged object found. */
static void
read_back(ThWal *w, SbS3Client *c, const char *prefix)
{
	SbWalListing l = {0};
	SbWalContinuity cont;
	SbWalGetOptions g = {.dests = w->dests, .prefetch = 3};
	SbWalGetResult r;
	char		spool[PATH_MAX],
				target[PATH_MAX],
				key[1024],
				problem[512] = "";
	uint64_t	files = 0,
				problems = 0;
	SbError		err;

	ok(sb_wal_list(&w->dests, &l, &err) && l.count == 6 && l.nproblems == 0,
	   "the listing has four segments and two copies of the history file");
	sb_wal_listing_free(&l);
	ok(sb_wal_verify(&w->dests, collect_problem, problem, &files, &problems, &err) && files == 6 &&
	   problems == 0, "verify reads all six whole: nothing wrong");
	ok(sb_wal_check_continuity(&w->dests, th_wal_name(1, 1), th_wal_name(1, 4), 0, &cont, &err) &&
	   cont.complete, "segments 1 to 4 are all there");
	th_path(spool, "%s/spool", w->f.root);
	th_path(target, "%s/got", w->f.root);
	g.spool = spool;
	ok(sb_wal_get(&g, th_wal_name(1, 1), target, &r, &err) && r.prefetched == 3,
	   "a get fetches the next three segments ahead, from either place");
	ok(sb_wal_get(&g, th_wal_name(1, 2), target, &r, &err) && r.from_spool, "the next comes from the spool");

	ok(sb_s3_put_object(c, BUCKET, wal_key(prefix, "00000002.history", key, sizeof(key)), "garbage", 7, &err),
	   "the bucket's copy of the history file is damaged");
	problem[0] = '\0';
	ok(sb_wal_verify(&w->dests, collect_problem, problem, &files, &problems, &err) && problems >= 1 &&
	   strstr(problem, "s3://" BUCKET "/") != NULL, "verify names the damaged object: %s", problem);
	ok(th_wal_get_equal(w, "00000002.history", &err), "a get takes the folder's good copy");
}

/* Retention removes the bucket's segments before the cutoff, and keeps an object it cannot prove its own. */
static void
retention(ThWal *w, SbS3Client *c, const char *prefix)
{
	SbWalRemoval rm;
	SbWalFound	found;
	char		key[1024];
	uint64_t	size;
	SbError		err;

	ok(sb_s3_put_object(c, BUCKET, wal_key(prefix, th_wal_name(1, 1), key, sizeof(key)), "mine", 4, &err),
	   "an object of a user's under a segment's name");
	ok(sb_wal_remove_before(&w->dests, th_wal_name(1, 3), false, &rm, &err),
	   "WAL before segment 3 removed");
	ok(rm.kept == 1 && strstr(rm.detail, "s3://") != NULL, "the object not proven ours is kept: %s",
	   rm.detail);
	ok(sb_s3_head_object(c, BUCKET, key, &size, &err) && size == 4, "it is still there");
	ok(!sb_wal_find(&w->dests, th_wal_name(1, 2), &found, &err) && err.code == SB_ENOTFOUND,
	   "segment 2 is gone: %s", err.message);
	ok(sb_wal_find(&w->dests, th_wal_name(1, 3), &found, &err), "segment 3 is kept");
	(void) sb_s3_delete_object(c, BUCKET, key, &err);
}

/* The bytes of object URL (an archived file, small enough to read whole); NULL when it cannot be read. */
static uint8_t *
read_object(const char *url, size_t *len)
{
	SbError		err;
	char	   *bytes = sb_store_read_small(url, NULL, 8 << 20, len, &err);

	if (bytes == NULL)
		th_diag_error(url, &err);
	return (uint8_t *) bytes;
}

/* Segment 2 archived in the clear in a folder of its own: its .sbw bytes. */
static uint8_t *
plain_segment_2(size_t *len)
{
	ThWal		p;
	char		path[PATH_MAX];
	uint8_t    *bytes;

	th_wal_fixture(&p, "s3walplain", 1);
	th_wal_source(&p, th_wal_name(1, 2), TH_WAL_SEGMENT, 2, false, path);
	ok(th_wal_archive(&p, th_wal_name(1, 2)), "segment 2 archived in the clear elsewhere");
	bytes = th_read_file(th_wal_archived(&p, 0, th_wal_name(1, 2), path), len);
	th_wal_fixture_done(&p);
	return bytes;
}

/* Under a key, a bucket's objects are sealed, read back under it, and one renamed or in the clear is refused. */
static void
sealed_bucket(SbS3Client *c, const char *prefix)
{
	ThWal		w;
	SbKey		key;
	SbWalArchiveOptions o;
	SbWalPushResult r;
	SbWalDests	d;
	SbWalListing l;
	SbError		err;
	char		dest[256],
				url[1400],
				key_name[1024],
				path[PATH_MAX],
				sealed_prefix[160];
	uint8_t    *bytes;
	size_t		len;
	uint64_t	size = 0;
	int			i;

	snprintf(sealed_prefix, sizeof(sealed_prefix), "%s-sealed", prefix);
	snprintf(dest, sizeof(dest), "s3://" BUCKET "/%s", sealed_prefix);
	th_wal_fixture(&w, "s3walsealed", 1);
	w.f.dests[0] = dest;
	th_wal_key(&key, 'k');
	th_wal_options(&o, &w);
	o.encryption_key = &key;
	for (i = 1; i <= 2; i++)
	{
		th_wal_source(&w, th_wal_name(1, (uint64_t) i), TH_WAL_SEGMENT, (uint32_t) i, false, path);
		ok(th_wal_push_one(&o, &w, th_wal_name(1, (uint64_t) i), &r), "segment %d archived sealed into the bucket", i);
	}
	ok(sb_s3_head_object(c, BUCKET, wal_key(sealed_prefix, th_wal_name(1, 1), key_name, sizeof(key_name)), &size, &err) &&
	   size == 128 + TH_WAL_SEGMENT + 28, "its object: header, nonce, the segment encrypted, tag");
	d = w.dests;
	d.key = &key;
	ok(th_wal_get_equal_from(&w, &d, th_wal_name(1, 1), &err), "it restores under the key");
	ok(sb_wal_list(&d, &l, &err) && l.count == 2 && l.nproblems == 0, "the listing takes both under the key");
	sb_wal_listing_free(&l);
	ok(!sb_wal_get(&(SbWalGetOptions) {.dests = w.dests}, th_wal_name(1, 1), th_path(path, "%s/got", w.f.root),
				   &(SbWalGetResult) {0}, &err) && err.code == SB_EKEY, "without the key: SB_EKEY (%s)", err.message);

	snprintf(url, sizeof(url), "s3://" BUCKET "/%s", key_name);
	bytes = read_object(url, &len);
	ok(bytes != NULL && sb_s3_put_object(c, BUCKET, wal_key(sealed_prefix, th_wal_name(1, 2), key_name, sizeof(key_name)),
										 bytes, len, &err), "segment 1's object put as segment 2's");
	free(bytes);
	ok(!th_wal_get_equal_from(&w, &d, th_wal_name(1, 2), &err) && err.code == SB_ECORRUPT &&
	   strstr(err.message, "not \"000000010000000000000002\"") != NULL, "refused: %s", err.message);
	bytes = plain_segment_2(&len);
	ok(bytes != NULL && sb_s3_put_object(c, BUCKET, key_name, bytes, len, &err), "segment 2 in the clear put in its place");
	free(bytes);
	ok(!th_wal_get_equal_from(&w, &d, th_wal_name(1, 2), &err) && err.code == SB_ECORRUPT &&
	   strstr(err.message, "it is in the clear") != NULL, "refused under the key: %s", err.message);
	for (i = 1; i <= 2; i++)
		(void) sb_s3_delete_object(c, BUCKET, wal_key(sealed_prefix, th_wal_name(1, (uint64_t) i), key_name,
													  sizeof(key_name)), &err);
	w.f.dests[0] = w.f.dest[0];
	th_wal_fixture_done(&w);
}

/* A bucket that does not exist: pushes fail naming it, and nothing passes for "not archived". */
static void
missing_bucket(ThWal *w)
{
	const char *paths[2] = {w->f.dests[0], "s3://no-such-bucket/pg"};
	SbWalDests	dests = {.paths = paths, .count = 2, .system_identifier = TH_WAL_SYSID};
	SbWalArchiveOptions o;
	SbWalArchive *a;
	SbWalPushResult r;
	SbWalFound	found;
	char		path[PATH_MAX];
	SbError		err;

	th_wal_options(&o, w);
	o.destinations = paths;
	th_wal_source(w, th_wal_name(1, 9), TH_WAL_SEGMENT, 9, true, path);
	a = sb_wal_archive_open(&o, &err);
	ok(a != NULL && !sb_wal_push(a, th_wal_name(1, 9), path, &r) &&
	   strstr(r.error.message, "NoSuchBucket") != NULL, "a push fails, naming the bucket's error: %s",
	   r.error.message);
	sb_wal_archive_close(a);
	ok(!sb_wal_find(&dests, th_wal_name(1, 9), &found, &err) && err.code == SB_EIO,
	   "a segment is not said to be absent while a bucket cannot be looked at: %s", err.message);
	paths[1] = "s3://" BUCKET "/x/../y";
	ok(!sb_wal_archive_check_options(&o, &err) && err.code == SB_EINVAL,
	   "a location with \"..\" is refused: %s", err.message);
}

void
test_s3_wal(void)
{
	ThWal		w;
	SbS3Client *c;
	char		prefix[128],
				bucket_dest[256];

	th_begin("s3: a WAL archive in a folder and a bucket: push, get, list, verify, retention");
	if ((c = wal_client()) == NULL)
		return;
	snprintf(prefix, sizeof(prefix), "unit-%d-wal", (int) getpid());
	snprintf(bucket_dest, sizeof(bucket_dest), "s3://" BUCKET "/%s", prefix);
	th_wal_fixture(&w, "s3wal", 2);
	w.f.dests[1] = bucket_dest;
	push_to_folder_and_bucket(&w, c, prefix);
	read_back(&w, c, prefix);
	retention(&w, c, prefix);
	missing_bucket(&w);
	sealed_bucket(c, prefix);
	w.f.dests[1] = w.f.dest[1];
	th_wal_fixture_done(&w);
	sb_s3_client_free(c);
	unsetenv("AWS_ENDPOINT_URL");
}
