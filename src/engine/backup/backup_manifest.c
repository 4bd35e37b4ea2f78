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
#include "backup/backup_internal.h"
#include "format/checksum.h"
#include "util/fsutil.h"
#include "manifest/manifest_envelope.h"
#include "store/store.h"

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

/* Every copy being written: a file made under a temporary name (or an upload, in a bucket). */
typedef struct Copies
{
	SbBackup   *b;
	SbStoreWriter *copies[SB_MAX_STRIPES];
	Digest		digest;
} Copies;

static bool
open_copy(Copies *c, uint32_t i, SbError *err)
{
	SbStripeWriter *w = &c->b->writers[i];
	SbStoreCreate how = {.temp_name = SB_MANIFEST_TEMP_FILE, .parts_in_flight = 1};

	c->copies[i] = sb_store_create(w->folder_store, SB_MANIFEST_FILE, &how, err);
	return c->copies[i] != NULL;
}

static bool
write_block(void *arg, const char *text, size_t len, SbError *err)
{
	Copies	   *c = arg;
	uint32_t	i;

	for (i = 0; i < c->b->nstripes; i++)
		if (!sb_store_append(c->copies[i], text, len, err))
			return false;
	return digest_block(&c->digest, text, len, err);
}

/* Copy I complete: synced and renamed into place (the folder synced), or the object made. */
static bool
commit_copy(Copies *c, uint32_t i, SbError *err)
{
	SbStripeWriter *w = &c->b->writers[i];

	/* A bucket may hold the object from the moment it is asked to make it. */
	if (!(w->features & SB_STORE_DURABLE_RENAME))
		w->put_manifest = true;
	return sb_store_writer_finish(c->copies[i], err);
}

/* What a copy left unfinished goes: its temporary file, or its upload. */
static void
close_copies(Copies *c)
{
	uint32_t	i;

	for (i = 0; i < c->b->nstripes; i++)
		sb_store_writer_free(c->copies[i]);
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
	/* The destination holds the backup folder's name: that lasts too (nothing to do in a bucket). */
	for (i = 0; i < b->nstripes; i++)
		if (!sb_store_sync(b->writers[i].dest, err))
			return false;
	return true;
}
