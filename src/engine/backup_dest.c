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
#include "backup_internal.h"
#include "fsutil.h"
#include "store/s3/io_s3.h"

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
	if (realpath(dest, resolved) == NULL)
		return sb_error_set_errno(err, errno, "could not resolve destination \"%s\"", dest);
	return true;
}

/* An object-storage destination, as "s3://bucket/prefix" (compared like a path). */
static bool
check_s3_destination(const char *dest, char *resolved, SbError *err)
{
	SbS3Location loc;

	if (!sb_s3_parse_location(dest, &loc, err))
		return false;
	snprintf(resolved, PATH_MAX, "s3://%s%s%s", loc.bucket, loc.prefix[0] ? "/" : "", loc.prefix);
	return true;
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
	for (i = 0; ok && i < o->ndestinations; i++)
		ok = sb_s3_is_location(o->destinations[i]) ?
			check_s3_destination(o->destinations[i], resolved[i], err) :
			check_local_destination(o->destinations[i], resolved[i], err);
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
open_destination(SbStripeWriter *w, const char *dest, SbError *err)
{
	if (sb_s3_is_location(dest))
	{
		w->remote = true;
		return sb_s3_parse_location(dest, &w->s3, err);
	}
	w->dest_fd = open(dest, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dest_fd < 0)
		return sb_error_set_errno(err, errno, "could not open destination \"%s\"", dest);
	return true;
}

/* Two local destinations that are one folder (the paths checked, then re-pointed) are refused. */
static bool
check_distinct_folders(const SbBackup *b, const SbBackupOptions *o, SbError *err)
{
	struct stat st[SB_MAX_STRIPES];
	uint32_t	i,
				j;

	for (i = 0; i < b->nstripes; i++)
		if (!b->writers[i].remote && fstat(b->writers[i].dest_fd, &st[i]) != 0)
			return sb_error_set_errno(err, errno, "could not stat destination \"%s\"",
									  o->destinations[i]);
	for (i = 0; i < b->nstripes; i++)
		for (j = i + 1; j < b->nstripes; j++)
			if (!b->writers[i].remote && !b->writers[j].remote &&
				st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino)
				return sb_error_set(err, SB_EINVAL,
									"destinations \"%s\" and \"%s\" are the same folder",
									o->destinations[i], o->destinations[j]);
	return true;
}

/* Make NAME in the destination and open it, not through a link. */
static bool
create_folder(SbBackup *b, SbStripeWriter *w, const char *dest, SbError *err)
{
	const char *name = b->manifest->name;

	w->folder = sb_path_join(dest, name, err);
	if (w->folder == NULL)
		return false;
	if (mkdirat(w->dest_fd, name, 0700) != 0)
	{
		if (errno == EEXIST)
			return sb_error_set(err, SB_EEXIST,
								"destination \"%s\" already holds a backup named \"%s\"",
								dest, name);
		return sb_error_set_errno(err, errno, "could not create backup folder \"%s\"", w->folder);
	}
	w->created_folder = true;
	w->folder_fd = openat(w->dest_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->folder_fd < 0)
		return sb_error_set_errno(err, errno, "could not open backup folder \"%s\"", w->folder);
	return true;
}

bool
sb_backup_object_key(const SbStripeWriter *w, const char *file, char *out, size_t len, SbError *err)
{
	if ((size_t) snprintf(out, len, "%s%s%s/%s", w->s3.prefix, w->s3.prefix[0] ? "/" : "",
						  w->backup->manifest->name, file) >= len)
		return sb_error_set(err, SB_EINVAL, "the object key of \"%s/%s\" is too long", w->folder, file);
	return true;
}

static bool
found_object(void *arg, const SbS3Item *item, SbError *err)
{
	*(bool *) arg = true;
	return true;
}

/*
 * The object-storage "folder": nothing may exist under prefix/name/ yet;
 * then the stripe's upload, which makes the object only when it completes.
 */
static bool
create_remote_stripe(SbBackup *b, SbStripeWriter *w, const char *dest, SbError *err)
{
	SbS3Config	config;
	SbS3Client *client;
	char		key[SB_S3_KEY_MAX];
	bool		exists = false;
	bool		ok;

	if ((w->folder = sb_path_join(dest, b->manifest->name, err)) == NULL ||
		(w->path = sb_path_join(w->folder, w->file_name, err)) == NULL ||
		!sb_backup_object_key(w, "", key, sizeof(key), err) || !sb_s3_current_config(w->s3.bucket, &config, err))
		return false;
	client = sb_s3_client_new(&config, 1, err);
	ok = client != NULL && sb_s3_list_objects(client, w->s3.bucket, key, found_object, &exists, err);
	sb_s3_client_free(client);
	if (!ok)
		sb_error_prefix(err, "destination \"%s\"", dest);
	else if (exists)
		ok = sb_error_set(err, SB_EEXIST, "destination \"%s\" already holds a backup named \"%s\"",
						  dest, b->manifest->name);
	if (!ok)
	{
		sb_s3_config_clear(&config);
		return false;
	}
	ok = sb_backup_object_key(w, w->file_name, key, sizeof(key), err);
	if (ok)
		w->upload = sb_s3_upload_new(&config, w->s3.bucket, key, SB_S3_PARTS_IN_FLIGHT, 0, err);
	sb_s3_config_clear(&config);
	w->created_folder = w->upload != NULL;
	return w->upload != NULL;
}

/* Create the backup folder and its stripe file in the destination, and write the stripe header. */
static bool
create_stripe(SbBackup *b, SbStripeWriter *w, const char *dest, SbError *err)
{
	SbStripeHeader h;
	uint8_t		header[SB_STRIPE_HEADER_SIZE];

	sb_stripe_file_name(w->index + 1, w->file_name, sizeof(w->file_name));
	if (w->remote)
	{
		if (!create_remote_stripe(b, w, dest, err))
			return false;
	}
	else
	{
		if (!create_folder(b, w, dest, err) || (w->path = sb_path_join(w->folder, w->file_name, err)) == NULL)
			return false;
		w->fd = openat(w->folder_fd, w->file_name,
					   O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (w->fd < 0)
			return sb_error_set_errno(err, errno, "could not create stripe file \"%s\"", w->path);
	}
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
		if (!open_destination(&b->writers[i], o->destinations[i], err))
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
	if (w->remote ? !sb_s3_upload_append(w->upload, buf, len, err) :
		!sb_pwrite_all(w->fd, buf, len, w->offset, w->path, err))
		return false;
	w->offset += len;
	return true;
}

bool
sb_stripe_sink_sync(SbStripeWriter *w, SbError *err)
{
	if (w->remote)
		return sb_s3_upload_flush(w->upload, err);
	if (fsync(w->fd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", w->path);
	return true;
}

bool
sb_stripe_sink_seal(SbStripeWriter *w, SbError *err)
{
	if (w->remote)
		return sb_s3_upload_finish(w->upload, err);
	if (!sb_stripe_sink_sync(w, err))
		return false;
	if (w->backup->direct_io)
		(void) posix_fadvise(w->fd, 0, 0, POSIX_FADV_DONTNEED);
	return true;
}

SbIo *
sb_stripe_sink_io(SbStripeWriter *w, SbError *err)
{
	if (w->remote)
		return sb_io_new_s3_appender(w->upload, err);
	return sb_io_new(w->backup->io_method, w->backup->queue_depth, NULL, err);
}

/* The manifest as one object: a PUT is atomic, readers see all of it or none. */
/* The stripe's upload aborted (or its object deleted), and a manifest this backup put. */
static void
remove_remote(SbStripeWriter *w)
{
	SbS3Client *client;
	char		key[SB_S3_KEY_MAX];
	SbError		ignored;

	(void) sb_s3_upload_abort(w->upload, &ignored);
	if (!w->put_manifest || !sb_backup_object_key(w, SB_MANIFEST_FILE, key, sizeof(key), &ignored))
		return;
	client = sb_s3_client_open(w->s3.bucket, 1, &ignored);
	if (client != NULL)
	{
		sb_s3_client_set_cleanup(client);	/* after a cancel too */
		(void) sb_s3_delete_object(client, w->s3.bucket, key, &ignored);
	}
	sb_s3_client_free(client);
}

void
sb_backup_remove_created(SbBackup *b, SbStripeWriter *w)
{
	if (!w->created_folder)
		return;
	if (w->remote)
	{
		remove_remote(w);
		return;
	}
	if (w->folder_fd >= 0)
	{
		unlinkat(w->folder_fd, w->file_name, 0);
		unlinkat(w->folder_fd, SB_MANIFEST_FILE, 0);
		unlinkat(w->folder_fd, SB_MANIFEST_TEMP_FILE, 0);
	}
	unlinkat(w->dest_fd, b->manifest->name, AT_REMOVEDIR);
}

void
sb_stripe_sink_close(SbStripeWriter *w)
{
	if (w->fd >= 0)
		close(w->fd);
	if (w->folder_fd >= 0)
		close(w->folder_fd);
	if (w->dest_fd >= 0)
		close(w->dest_fd);
	w->fd = w->folder_fd = w->dest_fd = -1;
	sb_s3_upload_free(w->upload);
	w->upload = NULL;
}
