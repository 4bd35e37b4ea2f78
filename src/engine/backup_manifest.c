/*
 * backup_manifest.c
 *		A backup's manifest: its digest, which every stripe's trailer
 *		records, and its copies, one in every destination.
 *
 * The text of a manifest is about 150 bytes a file: a million files would
 * hold 150 MB at the end of a backup.  So it is emitted twice, a block at a
 * time (sb_manifest_emit_published: the same bytes each time, from the same
 * manifest, in the clear or in its envelope): first only hashed, for the
 * trailers, then written to every copy at once, and hashed again so that no
 * copy is published that is not what the trailers record.
 *
 * A copy in a folder is written as a temporary file, synced and renamed
 * into place; in a bucket it is an upload that makes the object only when
 * it completes (S3 shows an object whole or not at all).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "backup_internal.h"
#include "checksum.h"
#include "fsutil.h"
#include "store/s3/io_s3.h"
#include "manifest_envelope.h"
#include "store/s3/s3_upload.h"

/* What a manifest's text, as it is emitted, hashes to. */
typedef struct Digest
{
	SbSha256   *sha;
	uint64_t	len;
} Digest;

static bool
digest_block(void *arg, const char *text, size_t len, SbError *err)
{
	Digest	   *d = arg;

	d->len += len;
	return sb_sha256_update(d->sha, text, len, err);
}

bool
sb_backup_digest_manifest(SbBackup *b, SbError *err)
{
	SbManifest *m = b->manifest;
	Digest		d = {sb_sha256_begin(err), 0};
	bool		ok = d.sha != NULL && sb_manifest_emit_published(m, b->wrapped_key, digest_block, &d, err);

	if (!ok)
	{
		sb_sha256_free(d.sha);
		return false;
	}
	m->json_length = d.len;
	return sb_sha256_end(d.sha, m->json_sha256, err);
}

/* ---------- copies written as the text is emitted ---------- */

/* Every copy being written: a temporary file, or an upload. */
typedef struct Copies
{
	SbBackup   *b;
	int			fds[SB_MAX_STRIPES];
	SbS3Upload *uploads[SB_MAX_STRIPES];
	Digest		digest;
} Copies;

static bool
open_copy(Copies *c, uint32_t i, SbError *err)
{
	SbStripeWriter *w = &c->b->writers[i];
	SbS3Config	config;
	char		key[SB_S3_KEY_MAX];

	if (!w->remote)
	{
		c->fds[i] = openat(w->folder_fd, SB_MANIFEST_TEMP_FILE,
						   O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
		return c->fds[i] >= 0 ||
			sb_error_set_errno(err, errno, "could not create \"%s/%s\"", w->folder,
							   SB_MANIFEST_TEMP_FILE);
	}
	if (!sb_backup_object_key(w, SB_MANIFEST_FILE, key, sizeof(key), err) ||
		!sb_s3_current_config(w->s3.bucket, &config, err))
		return false;
	c->uploads[i] = sb_s3_upload_new(&config, w->s3.bucket, key, 1, 0, err);
	sb_s3_config_clear(&config);
	return c->uploads[i] != NULL;
}

static bool
write_block(void *arg, const char *text, size_t len, SbError *err)
{
	Copies	   *c = arg;
	uint32_t	i;

	for (i = 0; i < c->b->nstripes; i++)
	{
		SbStripeWriter *w = &c->b->writers[i];

		if (w->remote ? !sb_s3_upload_append(c->uploads[i], text, len, err) :
			!sb_write_all(c->fds[i], text, len, w->folder, err))
			return false;
	}
	return digest_block(&c->digest, text, len, err);
}

/* Copy I complete: synced and renamed into place, or the object made. */
static bool
commit_copy(Copies *c, uint32_t i, SbError *err)
{
	SbStripeWriter *w = &c->b->writers[i];
	int			fd = c->fds[i];

	if (w->remote)
	{
		w->put_manifest = true;
		return sb_s3_upload_finish(c->uploads[i], err);
	}
	c->fds[i] = -1;
	if (fsync(fd) != 0)
	{
		close(fd);
		return sb_error_set_errno(err, errno, "could not fsync \"%s/%s\"", w->folder,
								  SB_MANIFEST_TEMP_FILE);
	}
	close(fd);
	if (renameat(w->folder_fd, SB_MANIFEST_TEMP_FILE, w->folder_fd, SB_MANIFEST_FILE) != 0)
		return sb_error_set_errno(err, errno, "could not rename \"%s/%s\"", w->folder,
								  SB_MANIFEST_TEMP_FILE);
	if (fsync(w->folder_fd) != 0)
		return sb_error_set_errno(err, errno, "could not fsync \"%s\"", w->folder);
	return true;
}

/* What a copy left unfinished goes: its temporary file, or its upload. */
static void
close_copies(Copies *c)
{
	uint32_t	i;

	for (i = 0; i < c->b->nstripes; i++)
	{
		if (c->fds[i] >= 0)
		{
			close(c->fds[i]);
			unlinkat(c->b->writers[i].folder_fd, SB_MANIFEST_TEMP_FILE, 0);
		}
		if (c->uploads[i] != NULL)
			sb_s3_upload_free(c->uploads[i]);	/* aborts one not finished */
	}
	sb_sha256_free(c->digest.sha);
}

/* The text emitted again into every copy; what was written must be what the trailers record. */
static bool
publish_emitted(SbBackup *b, SbError *err)
{
	const SbManifest *m = b->manifest;
	Copies		c;
	uint8_t		sha[SB_SHA256_LEN];
	uint32_t	i;
	bool		ok;

	memset(&c, 0, sizeof(c));
	c.b = b;
	for (i = 0; i < SB_MAX_STRIPES; i++)
		c.fds[i] = -1;
	ok = (c.digest.sha = sb_sha256_begin(err)) != NULL;
	for (i = 0; ok && i < b->nstripes; i++)
		ok = open_copy(&c, i, err);
	ok = ok && sb_manifest_emit_published(m, b->wrapped_key, write_block, &c, err);
	if (ok)
	{
		ok = sb_sha256_end(c.digest.sha, sha, err);
		c.digest.sha = NULL;	/* freed by sb_sha256_end */
	}
	if (ok && (c.digest.len != m->json_length || memcmp(sha, m->json_sha256, SB_SHA256_LEN) != 0))
		ok = sb_error_set(err, SB_ECORRUPT,
						  "the manifest written is not the one the stripes record (%llu bytes, %llu expected)",
						  (unsigned long long) c.digest.len,
						  (unsigned long long) m->json_length);
	for (i = 0; ok && i < b->nstripes; i++)
		ok = commit_copy(&c, i, err);
	close_copies(&c);
	return ok;
}

bool
sb_backup_publish_manifest(SbBackup *b, SbError *err)
{
	uint32_t	i;

	if (!publish_emitted(b, err))
		return false;
	for (i = 0; i < b->nstripes; i++)
		if (!b->writers[i].remote && fsync(b->writers[i].dest_fd) != 0)
			return sb_error_set_errno(err, errno, "could not fsync \"%s\"",
									  b->manifest->stripes[i].destination);
	return true;
}
