/*
 * rebuild.c
 *		Writing a lost stripe of a backup with redundancy again, from the
 *		others (docs/FORMAT.md 10.4: "a stripe a writer could have
 *		written"), onto a new destination.
 *
 * Every record of the stripe is recovered from its group (recover.h), in
 * the order its runs give, so the stripe is byte for byte what the writer
 * wrote: the same records, index and trailer, bound to the same manifest.
 * The manifest does not change (every other stripe's trailer records its
 * SHA-256); the new place is a backup folder of its own, NEW_DEST/NAME,
 * holding the stripe and that manifest's exact bytes, which opens the
 * backup with the stripe found next to the manifest (archive_auth.c) and
 * the others at their recorded destinations.  Who records the new place
 * (the server's history, a user's note) is the caller's business.
 *
 * Through the store interface, so a bucket is a new destination as a
 * folder is: written under a temporary name, made durable, renamed (a
 * bucket shows the object only once its upload completes).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_policy.h"
#include "format/checksum.h"
#include "format/format.h"
#include "format/parity.h"
#include "manifest/manifest_text.h"
#include "restore/recover.h"
#include "restore/stripe_reader.h"
#include "store/store.h"
#include "util/fsutil.h"

/* Bytes of the manifest copied at a time. */
#define COPY_BLOCK (1024 * 1024)

/* One run of ids the stripe holds (sb_parity_stripe_runs), in file order. */
typedef struct Run
{
	int			kind;
	uint64_t	first;
	uint64_t	last;
} Run;

typedef struct Runs
{
	Run		   *runs;
	size_t		n;
	size_t		cap;
	bool		failed;			/* out of memory */
} Runs;

/* The stripe being written: where, and what its trailer will say. */
typedef struct Rebuild
{
	SbArchive  *a;
	uint32_t	index;			/* 0-based */
	SbStore    *dest;
	SbStore    *folder;
	bool		made_folder;	/* the backup folder is ours: removed on failure */
	SbStoreWriter *stripe;
	char		file_name[64];
	uint64_t	offset;
	SbIndexEntry *entries;
	size_t		nentries;
	size_t		entries_cap;
	uint64_t	raw_bytes;
	uint64_t	stored_bytes;
	SbRebuildResult *result;
} Rebuild;

static void
add_run(void *arg, int kind, uint64_t first, uint64_t last)
{
	Runs	   *r = arg;
	SbError		ignored;

	if (r->failed ||
		!sb_grow((void **) &r->runs, &r->cap, r->n, sizeof(Run), &ignored))
	{
		r->failed = true;
		return;
	}
	r->runs[r->n++] = (Run) {kind, first, last};
}

/* Refusals before anything is written: each names the value. */
static bool
check_rebuildable(const SbArchive *a, uint32_t stripe, bool force, SbError *err)
{
	const SbManifest *m = a->manifest;
	char		lost[2048] = "";
	size_t		used = 0;
	uint32_t	others = 0,
				i;

	if (m->redundancy.parity == 0)
		return sb_error_set(err, SB_EINVAL, "backup \"%s\" has no redundancy: a lost stripe cannot be rebuilt",
							m->name);
	if (stripe < 1 || stripe > m->nstripes)
		return sb_error_set(err, SB_EINVAL, "stripe %u does not exist: backup \"%s\" has stripes 1 to %u",
							stripe, m->name, m->nstripes);
	if (!a->authenticated)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest \"%s\" of backup \"%s\" is not authenticated by any stripe: nothing can be rebuilt from it",
							a->manifest_path, m->name);
	if (a->lost_why[stripe - 1] == NULL && !force)
		return sb_error_set(err, SB_EINVAL,
							"stripe %u of backup \"%s\" (\"%s\") is not lost: it opens and checks, so there is nothing to rebuild (verify finds chunks damaged in it; force writes it again anyway)",
							stripe, m->name, a->stripe_paths[stripe - 1]);
	for (i = 0; i < m->nstripes; i++)
		if (i != stripe - 1 && a->lost_why[i] != NULL && used < sizeof(lost))
		{
			others++;
			used += (size_t) snprintf(lost + used, sizeof(lost) - used, "%sstripe %u (\"%s\"): %.300s",
									  used ? "; " : "", i + 1, a->stripe_paths[i], a->lost_why[i]);
		}
	if (others + 1 > m->redundancy.parity)
		return sb_error_set(err, SB_ECORRUPT,
							"stripe %u of backup \"%s\" cannot be rebuilt: %u other stripe(s) are lost too and its redundancy is %u; lost: %s",
							stripe, m->name, others, m->redundancy.parity, lost);
	return true;
}

/* NEW_DEST/NAME, entered (made when absent); refused when it holds the stripe already. */
static bool
open_folder(Rebuild *rb, const char *new_dest, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	SbStoreStamp stamp;

	if ((rb->dest = sb_store_new(new_dest, &(SbStoreOptions) {.s3 = rb->a->s3, .what = "new destination"}, err)) == NULL)
	{
		/* a destination not there is the caller's to make: not a backup that is damaged */
		if (err->code == SB_ENOTFOUND)
			err->code = SB_EINVAL;
		return false;
	}
	if (!sb_store_enter(rb->dest, m->name, false, &rb->folder, err))
		return false;
	if (rb->folder != NULL && sb_store_stamp(rb->folder, rb->file_name, &stamp))
		return sb_error_set(err, SB_EEXIST,
							"new destination \"%s\" holds stripe %u of backup \"%s\" already (\"%s/%s/%s\"): remove it first, or name another destination",
							new_dest, rb->index + 1, m->name, new_dest, m->name, rb->file_name);
	if (rb->folder != NULL)
		return true;
	rb->made_folder = true;
	return sb_store_enter(rb->dest, m->name, true, &rb->folder, err);
}

static bool
append(Rebuild *rb, const void *buf, size_t len, SbError *err)
{
	if (!sb_store_append(rb->stripe, buf, len, err))
		return false;
	rb->offset += len;
	return true;
}

/* The stripe's header, as the writer makes it (backup_dest.c). */
static bool
write_header(Rebuild *rb, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	SbStripeHeader h = {.major = SB_FORMAT_MAJOR, .minor = SB_FORMAT_MINOR, .number = rb->index + 1,
	.count = m->nstripes, .chunk_size = m->chunk_size};
	uint8_t		buf[SB_STRIPE_HEADER_SIZE];

	memcpy(h.uuid, m->uuid, 16);
	sb_format_encode_header(&h, buf);
	return append(rb, buf, sizeof(buf), err);
}

/* Record ID of KIND, recovered from its group, appended; its index entry kept. */
static bool
write_record(Rebuild *rb, SbRecovery *r, int kind, uint64_t id, uint8_t *buf, SbError *err)
{
	SbChunkHeader h;
	SbIndexEntry *e;
	size_t		len;
	bool		ok = kind == SB_CHUNK_KIND_PARITY ?
		sb_recovery_parity(r, id, buf, &len, &h, err) :
		sb_recovery_chunk(r, id, buf, &len, &h, err);

	if (!ok || !sb_grow((void **) &rb->entries, &rb->entries_cap, rb->nentries, sizeof(SbIndexEntry), err))
		return false;
	e = &rb->entries[rb->nentries++];
	sb_recover_entry(&h, e);
	e->offset = rb->offset;
	rb->raw_bytes += h.raw_len;
	rb->stored_bytes += h.stored_len;
	if (kind == SB_CHUNK_KIND_PARITY)
		rb->result->parity_records++;
	else
		rb->result->data_records++;
	return append(rb, buf, len, err);
}

/* Every record the stripe holds, block by block, recovered from the other stripes. */
static bool
write_records(Rebuild *rb, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	bool		lost[SB_MAX_STRIPES] = {0};
	SbRecovery	r;
	Runs		runs = {0};
	uint8_t    *buf = NULL;
	bool		ok;
	size_t		i;

	for (i = 0; i < m->nstripes; i++)
		lost[i] = rb->a->lost_why[i] != NULL;
	lost[rb->index] = true;		/* never read from: it is what is written */
	ok = sb_recovery_open(&r, m, rb->a->stripe_paths, rb->a->s3, lost, err);
	if (ok)
	{
		sb_parity_stripe_runs(&r.layout, rb->index, m->total_chunks, add_run, &runs);
		if (runs.failed)
			ok = sb_error_set(err, SB_ENOMEM, "out of memory listing stripe %u's records", rb->index + 1);
	}
	if (ok)
		ok = (buf = sb_alloc(r.cap, err)) != NULL;
	for (i = 0; ok && i < runs.n; i++)
		for (uint64_t id = runs.runs[i].first; ok && id <= runs.runs[i].last; id++)
			ok = write_record(rb, &r, runs.runs[i].kind, id, buf, err);
	free(buf);
	free(runs.runs);
	sb_recovery_close(&r);
	return ok;
}

/* The index, then the trailer binding the stripe to the manifest (backup.c's write_trailer). */
static bool
write_index_and_trailer(Rebuild *rb, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	size_t		index_len = rb->nentries * SB_INDEX_ENTRY_SIZE;
	uint8_t    *index = sb_alloc(index_len ? index_len : 1, err);
	uint8_t		trailer[SB_TRAILER_SIZE];
	SbTrailer	t = {0};
	bool		ok;

	if (index == NULL)
		return false;
	for (size_t i = 0; i < rb->nentries; i++)
		sb_format_encode_index_entry(&rb->entries[i], index + i * SB_INDEX_ENTRY_SIZE);
	t.index_offset = rb->offset;
	t.chunk_count = rb->nentries;
	t.raw_bytes = rb->raw_bytes;
	t.stored_bytes = rb->stored_bytes;
	t.index_hash = sb_hash64(index, index_len);
	t.number = rb->index + 1;
	t.count = m->nstripes;
	memcpy(t.uuid, m->uuid, 16);
	memcpy(t.manifest_sha256, m->json_sha256, SB_SHA256_LEN);
	t.manifest_length = m->json_length;
	sb_format_encode_trailer(&t, trailer);
	ok = append(rb, index, index_len, err) && append(rb, trailer, sizeof(trailer), err);
	free(index);
	return ok;
}

/* Stream the manifest copy in use into W, checking it is still the bytes the stripes record. */
static bool
copy_manifest_bytes(const SbArchive *a, SbStoreWriter *w, SbError *err)
{
	const SbManifest *m = a->manifest;
	SbStoreFile f;
	SbSha256   *sha = NULL;
	uint8_t		digest[SB_SHA256_LEN];
	uint8_t    *buf = NULL;
	uint64_t	at = 0;
	ssize_t		n = 1;
	bool		ok;

	if (!sb_store_open(&f, a->manifest_path, a->s3, err))
		return false;
	ok = (sha = sb_sha256_begin(err)) != NULL && (buf = sb_alloc(COPY_BLOCK, err)) != NULL;
	while (ok && (n = sb_store_pread(&f, buf, COPY_BLOCK, at, err)) > 0)
	{
		ok = sb_sha256_update(sha, buf, (size_t) n, err) && sb_store_append(w, buf, (size_t) n, err);
		at += (uint64_t) n;
	}
	ok = ok && n == 0;
	sb_store_close(&f);
	free(buf);
	if (!ok)
	{
		sb_sha256_free(sha);
		return false;
	}
	if (!sb_sha256_end(sha, digest, err))
		return false;
	if (at != m->json_length || memcmp(digest, m->json_sha256, SB_SHA256_LEN) != 0)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest copy \"%s\" changed while the stripe was rebuilt: it is no longer the one the stripes record",
							a->manifest_path);
	return true;
}

/* The manifest's exact bytes beside the stripe, unless an equal copy is there already. */
static bool
write_manifest(Rebuild *rb, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	SbStoreWriter *w;
	char		path[8192];
	uint8_t		sha[SB_SHA256_LEN];
	uint64_t	len = 0;
	SbError		why;
	bool		ok;

	snprintf(path, sizeof(path), "%s/%s", rb->result->folder, SB_MANIFEST_FILE);
	if (sb_store_file_size(path, rb->a->s3, &len, &why))
	{
		if (sb_manifest_digest_path(path, rb->a->s3, sha, &len, &why) && len == m->json_length &&
			memcmp(sha, m->json_sha256, SB_SHA256_LEN) == 0)
			return true;
	}
	/* any other copy there is not this backup's manifest: the authenticated bytes replace it */
	w = sb_store_create(rb->folder, SB_MANIFEST_FILE,
						&(SbStoreCreate) {.temp_name = SB_MANIFEST_TEMP_FILE, .what = "manifest"}, err);
	if (w == NULL)
		return false;
	ok = copy_manifest_bytes(rb->a, w, err) && sb_store_writer_finish(w, err);
	if (!ok)
		sb_store_writer_abort(w);
	sb_store_writer_free(w);
	return ok;
}

/* Read the new stripe back as a reader does, and check every record in it. */
static bool
check_written(Rebuild *rb, SbError *err)
{
	SbStripeReader r;
	uint8_t    *buf = NULL;
	size_t		cap = sb_recover_record_cap(rb->a->manifest);
	bool		ok = sb_stripe_open(&r, rb->a->manifest, rb->index, rb->result->path, rb->a->s3, err) &&
		(buf = sb_alloc(cap, err)) != NULL;

	for (uint64_t i = 0; ok && i < r.nentries + r.nparity; i++)
	{
		bool		parity = i >= r.nentries;
		const SbIndexEntry *e = parity ? &r.parity_entries[i - r.nentries] : &r.entries[i];
		size_t		len = SB_CHUNK_HEADER_SIZE + (size_t) e->stored_len;
		ssize_t		got = len <= cap ? sb_store_pread(&r.file, buf, len, e->offset, err) : -1;

		ok = got >= 0 && (parity ? sb_stripe_check_parity_record(e, buf, (size_t) got, err) :
						  sb_stripe_check_record(&r, i, buf, (size_t) got, err));
	}
	if (ok)
		rb->result->file_bytes = r.file_size;
	else
		sb_error_prefix(err, "the rebuilt stripe \"%s\" does not read back", rb->result->path);
	free(buf);
	sb_stripe_close(&r);
	return ok;
}

static bool
rebuild(Rebuild *rb, const char *new_dest, SbError *err)
{
	const SbManifest *m = rb->a->manifest;
	char		temp_name[80];
	char	   *folder = sb_path_join(new_dest, m->name, err);
	char	   *path = folder ? sb_path_join(folder, rb->file_name, err) : NULL;
	bool		ok = path != NULL;

	if (ok)
	{
		snprintf(rb->result->folder, sizeof(rb->result->folder), "%s", folder);
		snprintf(rb->result->path, sizeof(rb->result->path), "%s", path);
	}
	free(folder);
	free(path);
	snprintf(temp_name, sizeof(temp_name), "%s.rebuild", rb->file_name);
	ok = ok && open_folder(rb, new_dest, err) &&
		(rb->stripe = sb_store_create(rb->folder, rb->file_name,
									  &(SbStoreCreate) {.temp_name = temp_name, .what = "stripe file"},
									  err)) != NULL &&
		write_header(rb, err) && write_records(rb, err) && write_index_and_trailer(rb, err) &&
		sb_store_writer_finish(rb->stripe, err) &&
		write_manifest(rb, err) && sb_store_sync(rb->dest, err) && check_written(rb, err);
	return ok;
}

/* A failed rebuild leaves nothing: its stripe (any name), and the folder if it made it. */
static void
undo(Rebuild *rb)
{
	SbError		ignored;

	if (rb->stripe != NULL)
		sb_store_writer_abort(rb->stripe);
	if (rb->made_folder && rb->folder != NULL)
	{
		(void) sb_store_remove(rb->folder, SB_MANIFEST_FILE, NULL, &ignored);
		(void) sb_store_remove(rb->folder, SB_MANIFEST_TEMP_FILE, NULL, &ignored);
		sb_store_remove_folder(rb->dest, rb->a->manifest->name);
	}
}

bool
sb_archive_rebuild_stripe(SbArchive *a, uint32_t stripe, const char *new_destination, bool force,
						  SbRebuildResult *result, SbError *err)
{
	Rebuild		rb = {.a = a, .index = stripe - 1, .result = result};
	double		started = sb_monotonic_seconds();
	bool		ok;

	memset(result, 0, sizeof(*result));
	sb_error_clear(err);
	if (!check_rebuildable(a, stripe, force, err))
		return false;
	sb_stripe_file_name(stripe, rb.file_name, sizeof(rb.file_name));
	ok = rebuild(&rb, new_destination, err);
	if (!ok)
	{
		sb_error_prefix(err, "rebuilding stripe %u of backup \"%s\" into \"%s\"", stripe,
						a->manifest->name, new_destination);
		undo(&rb);
	}
	sb_store_writer_free(rb.stripe);
	sb_store_free(rb.folder);
	sb_store_free(rb.dest);
	free(rb.entries);
	result->seconds = sb_monotonic_seconds() - started;
	return ok;
}
