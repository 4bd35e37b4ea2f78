/*
 * backup_dest.c
 *		A backup's destinations: checking them, creating the backup folder
 *		and the stripe in each, writing the stripe's own bytes (header, index,
 *		trailer), publishing the manifest, and removing what was created when
 *		the backup fails.
 *
 * A local destination is opened once, at the start, and everything the
 * backup writes or removes goes through that descriptor and the one of the
 * backup folder made in it (opened without following a link): a destination
 * whose path is re-pointed during the backup cannot split it between two
 * places, and a failure removes exactly what was created, where it was
 * created.
 *
 * An object-storage destination (s3://bucket/prefix) holds the backup
 * under the key prefix prefix/name/: the stripe is one object written by a
 * multipart upload as it grows (s3_upload.h), the manifest one object put
 * last.  A prefix that already holds an object under that name is refused
 * as a folder that exists is; a failure aborts the upload (no part is left
 * stored) and deletes the objects this backup made, and only those.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "backup/backup_internal.h"
#include "util/fsutil.h"
#include "store/store.h"

/* Is A the same as B or inside it?  Both are canonical absolute paths, or bucket/prefix. */
static bool
path_within(const char *a, const char *b)
{
	size_t		len = strlen(b);

	if (strcmp(b, "/") == 0)
		return true;
	return strncmp(a, b, len) == 0 && (a[len] == '\0' || a[len] == '/');
}

static bool
check_local_destination(const char *dest, char *resolved, SbError *err)
{
	struct stat st;

	if (dest[0] != '/')
		return sb_error_set(err, SB_EINVAL,
							"destination \"%s\" is not an absolute path", dest);
	if (stat(dest, &st) != 0)
	{
		sb_error_set_errno(err, errno, "destination \"%s\" is not usable", dest);
		if (errno == ENOENT)
			sb_error_set(err, SB_EINVAL,
						 "destination \"%s\" does not exist (is its device mounted?)", dest);
		return false;
	}
	if (!S_ISDIR(st.st_mode))
		return sb_error_set(err, SB_EINVAL, "destination \"%s\" is not a directory", dest);
	if (access(dest, W_OK | X_OK) != 0)
		return sb_error_set_errno(err, errno, "destination \"%s\" is not writable", dest);
	return sb_store_canonical(dest, resolved, err);
}

bool
sb_backup_check_destinations(const SbBackupOptions *o, SbError *err)
{
	char		(*resolved)[PATH_MAX];
	uint32_t	i,
				j;
	bool		ok = true;

	if (o->ndestinations == 0 || o->ndestinations > SB_MAX_STRIPES)
		return sb_error_set(err, SB_EINVAL, "%u destinations given; between 1 and %d are allowed",
							o->ndestinations, SB_MAX_STRIPES);
	resolved = sb_alloc(o->ndestinations * sizeof(*resolved), err);
	if (resolved == NULL)
		return false;
	/* A folder of this machine must be there and writable; any other is checked at its first write. */
	for (i = 0; ok && i < o->ndestinations; i++)
		ok = (sb_store_features_of(o->destinations[i]) & SB_STORE_DESCRIPTORS) ?
			check_local_destination(o->destinations[i], resolved[i], err) :
			sb_store_canonical(o->destinations[i], resolved[i], err);
	for (i = 0; ok && i < o->ndestinations; i++)
		for (j = 0; ok && j < o->ndestinations; j++)
		{
			if (i == j || !path_within(resolved[i], resolved[j]))
				continue;
			if (strcmp(resolved[i], resolved[j]) == 0)
				ok = sb_error_set(err, SB_EINVAL,
								  "destinations \"%s\" and \"%s\" are the same folder",
								  o->destinations[i < j ? i : j], o->destinations[i < j ? j : i]);
			else
				ok = sb_error_set(err, SB_EINVAL,
								  "destination \"%s\" is inside destination \"%s\"",
								  o->destinations[i], o->destinations[j]);
		}
	free(resolved);
	return ok;
}

/* Open destination DEST once: whatever its path later points to, the backup stays here. */
static bool
open_destination(SbStripeWriter *w, const char *dest, const SbS3Settings *s3, SbError *err)
{
	if ((w->dest = sb_store_new(dest, &(SbStoreOptions) {.s3 = s3}, err)) == NULL)
		return false;
	w->features = sb_store_features(w->dest);
	return true;
}

/* Two destinations that are one folder (the paths checked, then re-pointed) are refused. */
static bool
check_distinct_folders(const SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	SbStoreStamp st[SB_MAX_STRIPES];
	uint32_t	i,
				j;

	for (i = 0; i < b->nstripes; i++)
		if (!sb_store_identity(b->writers[i].dest, &st[i], err))
			return false;
	for (i = 0; i < b->nstripes; i++)
		for (j = i + 1; j < b->nstripes; j++)
			if ((b->writers[i].features & b->writers[j].features & SB_STORE_INODE_IDENTITY) &&
				st[i].st.st_dev == st[j].st.st_dev && st[i].st.st_ino == st[j].st.st_ino)
				return sb_error_set(err, SB_EINVAL,
									"destinations \"%s\" and \"%s\" are the same folder",
									o->destinations[i], o->destinations[j]);
	return true;
}

/*
 * Make the backup folder NAME in the destination (not through a link; in
 * a bucket: nothing may exist under prefix/name/ yet), then the stripe in
 * it, which a bucket makes an object only when its upload completes.
 */
static bool
create_stripe_file(SbBackup *b, SbStripeWriter *w, const char *dest, SbError *err)
{
	const char *name = b->manifest->name;
	SbStoreCreate how = {
		.what = "stripe file",
		.drop_cache = b->direct_io,
	};

	if ((w->folder = sb_path_join(dest, name, err)) == NULL ||
		(w->path = sb_path_join(w->folder, w->file_name, err)) == NULL)
		return false;
	if (!sb_store_make(w->dest, name, &w->folder_store, err))
	{
		if (err->code == SB_EEXIST)
			sb_error_set(err, SB_EEXIST, "destination \"%s\" already holds a backup named \"%s\"", dest, name);
		return false;
	}
	w->created_folder = true;
	if ((w->stripe = sb_store_create(w->folder_store, w->file_name, &how, err)) == NULL)
		return false;
	w->fd = sb_store_writer_fd(w->stripe);
	return true;
}

/* Create the backup folder and its stripe file in the destination, and write the stripe header. */
static bool
create_stripe(SbBackup *b, SbStripeWriter *w, const char *dest, SbError *err)
{
	SbStripeHeader h;
	uint8_t		header[SB_STRIPE_HEADER_SIZE];

	sb_stripe_file_name(w->index + 1, w->file_name, sizeof(w->file_name));
	if (!create_stripe_file(b, w, dest, err))
		return false;
	memset(&h, 0, sizeof(h));
	h.major = SB_FORMAT_MAJOR;
	h.minor = SB_FORMAT_MINOR;
	memcpy(h.uuid, b->manifest->uuid, 16);
	h.number = w->index + 1;
	h.count = b->nstripes;
	h.chunk_size = b->chunk_size;
	sb_format_encode_header(&h, header);
	w->offset = 0;
	return sb_stripe_sink_write(w, header, sizeof(header), err);
}

bool
sb_backup_create_destinations(SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < b->nstripes; i++)
		if (!open_destination(&b->writers[i], o->destinations[i], o->s3, err))
			return false;
	if (!check_distinct_folders(b, o, err))
		return false;
	for (i = 0; i < b->nstripes; i++)
		if (!create_stripe(b, &b->writers[i], o->destinations[i], err))
			return false;
	return true;
}

bool
sb_stripe_sink_write(SbStripeWriter *w, const void *buf, size_t len, SbError *err)
{
	if (!sb_store_write_at(w->stripe, buf, len, w->offset, err))
		return false;
	w->offset += len;
	return true;
}

bool
sb_stripe_sink_sync(SbStripeWriter *w, SbError *err)
{
	return sb_store_writer_sync(w->stripe, err);
}

bool
sb_stripe_sink_seal(SbStripeWriter *w, SbError *err)
{
	return sb_store_writer_finish(w->stripe, err);
}

SbIo *
sb_stripe_sink_io(SbStripeWriter *w, SbError *err)
{
	return sb_store_writer_io(w->stripe, w->backup->io_method, w->backup->queue_depth, err);
}

void
sb_backup_remove_created(SbBackup *b, SbStripeWriter *w)
{
	SbError		ignored;

	if (!w->created_folder)
		return;
	/* After a cancel too: what this backup made must go. */
	sb_store_set_cleanup(w->folder_store);
	sb_store_writer_abort(w->stripe);
	/*
	 * The manifest, where this backup may have put it: a store with durable
	 * renames holds it (or its temporary file) only once the backup wrote
	 * it; one without only once it was put.
	 */
	if ((w->features & SB_STORE_DURABLE_RENAME) || w->put_manifest)
		(void) sb_store_remove(w->folder_store, SB_MANIFEST_FILE, NULL, &ignored);
	if (w->features & SB_STORE_DURABLE_RENAME)
		(void) sb_store_remove(w->folder_store, SB_MANIFEST_TEMP_FILE, NULL, &ignored);
	sb_store_remove_folder(w->dest, b->manifest->name);
}

void
sb_stripe_sink_close(SbStripeWriter *w)
{
	sb_store_writer_free(w->stripe);
	w->stripe = NULL;
	w->fd = -1;
	sb_store_free(w->folder_store);
	w->folder_store = NULL;
	sb_store_free(w->dest);
	w->dest = NULL;
}
