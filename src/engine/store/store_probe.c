/*
 * store_probe.c
 *		What a pre-flight check asks of a destination (sb_store.h): that it
 *		opens and lists with the settings it is given (for a bucket, the
 *		endpoint and credentials: a HEAD says less, a listing is refused to a
 *		wrong key as a write would be), that a small file can be made and
 *		removed in it, and, where it is a folder of this machine, its free
 *		space and device.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "store/store.h"

/* The probe's file: one block, so that a full file system refuses it (a tmpfs takes an empty file). */
#define PROBE_BYTES 4096

/* An SbStoreEntryFn that only counts: the listing is what is probed, not what it holds. */
static bool
count_entry(void *arg, const char *name, int64_t size, SbError *err)
{
	(void) name;
	(void) size;
	(void) err;
	(*(uint64_t *) arg)++;
	return true;
}

/* Make NAME in S, one block, durable, then remove it. */
static bool
probe_write(SbStore *s, const char *name, SbError *err)
{
	static const char block[PROBE_BYTES];
	SbStoreCreate how = {.what = "check file"};
	SbStoreWriter *w = sb_store_create(s, name, &how, err);
	bool		done;

	if (w == NULL)
		return false;
	done = sb_store_append(w, block, sizeof(block), err) && sb_store_writer_finish(w, err);
	if (!done)
		sb_store_writer_abort(w);
	sb_store_writer_free(w);
	/* An abort removed it already; after a finish it is ours to remove. */
	return done && sb_store_remove(s, name, NULL, err);
}

/* Free space and device of a folder of this machine (SB_STORE_DESCRIPTORS). */
static bool
probe_space(SbStore *s, SbStoreProbe *p, SbError *err)
{
	struct statvfs vfs;
	struct stat st;
	int			fd = sb_store_fd(s);

	if (fstatvfs(fd, &vfs) != 0 || fstat(fd, &st) != 0)
		return sb_error_set_errno(err, errno, "could not stat destination \"%s\"", sb_store_path(s));
	p->free_bytes = (uint64_t) vfs.f_bavail * (uint64_t) vfs.f_frsize;
	p->device = (uint64_t) st.st_dev;
	p->local = true;
	return true;
}

bool
sb_store_probe(const char *dest, const SbS3Settings *s3, SbStoreProbe *p, SbError *err)
{
	SbStoreOptions o = {.s3 = s3, .what = "destination"};
	SbStore    *s;
	char		name[64];
	bool		good;

	memset(p, 0, sizeof(*p));
	if ((s = sb_store_new(dest, &o, err)) == NULL)
		return false;
	snprintf(name, sizeof(name), ".stripebackup-check.%ld", (long) getpid());
	good = sb_store_list(s, count_entry, &p->entries, err);
	if (good)
		p->listed = true;
	good = good && probe_write(s, name, err);
	if (good)
		p->writable = true;
	if (good && (sb_store_features(s) & SB_STORE_DESCRIPTORS))
		good = probe_space(s, p, err);
	sb_store_free(s);
	return good;
}
