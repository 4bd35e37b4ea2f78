/*
 * wal_file.c
 *		Writing and reading one archived WAL file, in pieces.
 *
 * A segment may be 1 GB, so nothing holds a file whole: the writer reads a
 * piece, feeds it to one zstd frame and writes what comes out at once; the
 * reader reads a piece of payload, decompresses it and hands it on.  Each
 * worker owns two buffers of a piece and its contexts, so memory is fixed.
 *
 * Writing is durable before it counts: a temporary file in the same
 * folder, a provisional header (so a file a crash leaves is still
 * recognisably ours), the payload, the final header, fsync, rename, fsync
 * of the folder.  A bucket's object is the same bytes, made in memory and
 * put whole (a PUT has to know its length and its first bytes, the header,
 * which comes last); memory then grows to the file's length.  Compression
 * that does not shrink the file so far is abandoned for the bytes as they
 * are, so stored <= raw always holds (of what the codec gave).
 *
 * A worker with a key seals what it writes (format 2.0): a random salt
 * gives the file keys of its own (wal_seal.c); the payload is one
 * AES-256-GCM message, nonce first and tag last, encrypted a piece at a
 * time as it goes to the file; the header is tagged.  Reading opens it a
 * piece at a time too, so the raw bytes reach the sink before the tag at
 * the end is checked: every sink keeps them where nothing uses them (a
 * temporary file, a buffer) until the read returns true.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "wal/wal_internal.h"

bool
sb_wal_worker_init(SbWalWorker *w, SbCodec codec, int level, size_t piece, const SbKey *key,
				   SbError *err)
{
	memset(w, 0, sizeof(*w));
	w->piece = piece;
	w->key = key;
	if ((w->in = sb_alloc(piece, err)) == NULL || (w->out = sb_alloc(piece, err)) == NULL ||
		(w->codec = sb_codec_context_new(codec, level, err)) == NULL ||
		(w->raw_hash = sb_hash_stream_new(err)) == NULL ||
		(w->stored_hash = sb_hash_stream_new(err)) == NULL)
	{
		sb_wal_worker_free(w);
		return false;
	}
	return true;
}

void
sb_wal_worker_free(SbWalWorker *w)
{
	free(w->in);
	free(w->out);
	free(w->sealed);
	sb_codec_context_free(w->codec);
	sb_hash_stream_free(w->raw_hash);
	sb_hash_stream_free(w->stored_hash);
	memset(w, 0, sizeof(*w));
}

/* ---------- the source ---------- */

/* Read piece [OFFSET, OFFSET + LEN) of the source, all of it: a file that shrank is an error. */
static bool
read_source_piece(SbWalWorker *w, int fd, const char *path, uint64_t offset, size_t len,
				  SbError *err)
{
	ssize_t		n = sb_pread_upto(fd, w->in, len, offset, path, err);

	if (n < 0)
		return false;
	if ((size_t) n != len)
		return sb_error_set(err, SB_EIO, "\"%s\" ended at %" PRIu64 " bytes while being archived",
							path, offset + (uint64_t) n);
	return true;
}

/* Nothing past the length the file had: a file that grew while it was read is not archived. */
static bool
check_source_end(SbWalWorker *w, int fd, const char *path, uint64_t len, SbError *err)
{
	ssize_t		n = sb_pread_upto(fd, w->in, 1, len, path, err);

	if (n < 0)
		return false;
	if (n > 0)
		return sb_error_set(err, SB_EIO, "\"%s\" grew past %" PRIu64 " bytes while being archived",
							path, len);
	return true;
}

static size_t
piece_at(const SbWalWorker *w, uint64_t offset, uint64_t total)
{
	return total - offset < w->piece ? (size_t) (total - offset) : w->piece;
}

bool
sb_wal_source_identity(SbWalWorker *w, int src_fd, const char *src_path, SbWalHeader *h,
					   SbError *err)
{
	uint32_t	crc = SB_CRC32C_INIT;
	uint64_t	offset;

	sb_hash_stream_reset(w->raw_hash);
	for (offset = 0; offset < h->raw_len;)
	{
		size_t		n = piece_at(w, offset, h->raw_len);

		if (!read_source_piece(w, src_fd, src_path, offset, n, err))
			return false;
		sb_hash_stream_update(w->raw_hash, w->in, n);
		crc = sb_crc32c_update(crc, w->in, n);
		offset += n;
	}
	if (!check_source_end(w, src_fd, src_path, h->raw_len, err))
		return false;
	h->raw_hash = sb_hash_stream_digest(w->raw_hash);
	h->crc32c = sb_crc32c_final(crc);
	return true;
}

/* ---------- writing ---------- */

/* The temporary file being written, or (for a bucket) the object's bytes being made in memory. */
typedef struct TempFile
{
	SbWalWorker *w;
	int			fd;				/* -1: in memory */
	uint8_t    *mem;
	size_t		mem_cap;
	size_t		mem_limit;		/* what it grows to at most by doubling */
	char		name[SB_WAL_FILE_NAME_MAX + 48];
	char		path[SB_WAL_PATH_MAX];
	uint64_t	stored;			/* payload bytes written so far (of what the codec gave) */
	bool		sealing;		/* a sealed file: what follows is its */
	SbWalKeys	keys;
	SbGcmStream gcm;			/* the payload's cipher, while it is written */
} TempFile;

/* LEN bytes at OFFSET of the object in memory, growing it by doubling up to its limit. */
static bool
put_in_memory(TempFile *t, const void *data, size_t len, uint64_t offset, SbError *err)
{
	size_t		need = (size_t) offset + len;

	if (need > t->mem_cap)
	{
		size_t		cap = t->mem_cap ? t->mem_cap : t->w->piece;
		uint8_t    *grown;

		while (cap < need)
			cap *= 2;
		if (cap > t->mem_limit && need <= t->mem_limit)
			cap = t->mem_limit;
		if ((grown = realloc(t->mem, cap)) == NULL)
			return sb_error_set(err, SB_ENOMEM, "out of memory for \"%s\" (%zu bytes)", t->path, cap);
		t->mem = grown;
		t->mem_cap = cap;
	}
	memcpy(t->mem + offset, data, len);
	return true;
}

static bool
put_bytes(TempFile *t, const void *data, size_t len, uint64_t offset, SbError *err)
{
	if (t->fd < 0)
		return put_in_memory(t, data, len, offset, err);
	return sb_pwrite_all(t->fd, data, len, offset, t->path, err);
}

/* Where the next payload byte goes: after the header, and a sealed payload's nonce. */
static uint64_t
payload_offset(const TempFile *t)
{
	return SB_WAL_HEADER_SIZE + (t->sealing ? SB_CRYPTO_NONCE_LEN : 0) + t->stored;
}

/*
 * An SbCodecSink: payload bytes go to the temporary file after the header,
 * and into its hash; a sealed file's encrypted first, into the worker's
 * buffer (the codec's buffer is the codec's).
 */
static bool
write_stored(void *arg, const void *data, size_t len, SbError *err)
{
	TempFile   *t = arg;
	const void *out = data;

	if (t->sealing)
	{
		if (len > t->w->piece)
			return sb_error_set(err, SB_EINVAL, "a piece of %zu bytes to seal, more than %zu", len, t->w->piece);
		if (!sb_gcm_stream_update(&t->gcm, data, len, t->w->sealed, err))
			return false;
		out = t->w->sealed;
	}
	else
		sb_hash_stream_update(t->w->stored_hash, data, len);
	if (!put_bytes(t, out, len, payload_offset(t), err))
		return false;
	t->stored += len;
	return true;
}

/* A sealed payload begins with a fresh nonce, its cipher bound to where it belongs and its codec (H's). */
static bool
begin_sealing(TempFile *t, const SbWalHeader *h, SbError *err)
{
	uint8_t		nonce[SB_CRYPTO_NONCE_LEN];
	uint8_t		aad[SB_WAL_AAD_MAX];

	if (!t->sealing)
		return true;
	return sb_random_bytes(nonce, sizeof(nonce), err) &&
		put_bytes(t, nonce, sizeof(nonce), SB_WAL_HEADER_SIZE, err) &&
		sb_gcm_stream_begin(&t->gcm, true, t->keys.payload, nonce, aad, sb_wal_payload_aad(h, aad), err);
}

/* After a sealed payload: its tag. */
static bool
end_sealing(TempFile *t, SbError *err)
{
	uint8_t		tag[SB_CRYPTO_TAG_LEN];

	if (!t->sealing)
		return true;
	return sb_gcm_stream_seal_end(&t->gcm, tag, err) && put_bytes(t, tag, sizeof(tag), payload_offset(t), err);
}

/* Start the payload again from nothing (compression did not pay); a sealed one under a new nonce. */
static bool
restart_payload(TempFile *t, SbError *err)
{
	if (t->fd >= 0 && ftruncate(t->fd, SB_WAL_HEADER_SIZE) != 0)
		return sb_error_set_errno(err, errno, "could not truncate \"%s\"", t->path);
	t->stored = 0;
	sb_gcm_stream_free(&t->gcm);
	sb_hash_stream_reset(t->w->stored_hash);
	sb_hash_stream_reset(t->w->raw_hash);
	return true;
}

/*
 * The payload, a piece at a time: through one zstd frame (COMPRESS) or as
 * the bytes are.  Compressing, *HELPED is false, and nothing more done, as
 * soon as the frame so far is no smaller than the bytes it holds.
 */
static bool
write_payload(TempFile *t, SbWalWriteJob *job, bool compress, bool *helped, SbError *err)
{
	SbWalWorker *w = t->w;
	uint64_t	total = job->header.raw_len;
	uint32_t	crc = SB_CRC32C_INIT;
	uint64_t	offset;

	*helped = false;
	if (!begin_sealing(t, &job->header, err) ||
		(compress && !sb_codec_stream_begin(w->codec, total, err)))
		return false;
	for (offset = 0; offset < total;)
	{
		size_t		n = piece_at(w, offset, total);

		if (!read_source_piece(w, job->src_fd, job->src_path, offset, n, err))
			return (job->source_failed = true, false);
		sb_hash_stream_update(w->raw_hash, w->in, n);
		crc = sb_crc32c_update(crc, w->in, n);
		offset += n;
		if (!compress)
		{
			if (!write_stored(t, w->in, n, err))
				return false;
			continue;
		}
		if (!sb_codec_stream_compress(w->codec, w->in, n, offset == total, w->out, w->piece,
									  write_stored, t, err))
			return false;
		if (t->stored >= offset)
			return true;
	}
	job->header.crc32c = sb_crc32c_final(crc);
	*helped = compress;
	return true;
}

static bool
write_header(TempFile *t, const SbWalHeader *h, SbError *err)
{
	uint8_t		raw[SB_WAL_HEADER_SIZE];

	return sb_wal_header_encode(h, t->sealing ? &t->keys : NULL, raw, err) &&
		put_bytes(t, raw, sizeof(raw), 0, err);
}

/* Payload (compressed if that helps), then the header that describes it. */
static bool
write_contents(TempFile *t, SbWalWriteJob *job, SbError *err)
{
	SbWalHeader *h = &job->header;
	bool		helped = false;

	sb_hash_stream_reset(t->w->raw_hash);
	sb_hash_stream_reset(t->w->stored_hash);
	if (h->codec == SB_CODEC_ZSTD && !write_payload(t, job, true, &helped, err))
		return false;
	if (!helped)
	{
		h->codec = SB_CODEC_NONE;
		h->level = 0;
		if (!restart_payload(t, err) || !write_payload(t, job, false, &helped, err))
			return false;
	}
	if (!check_source_end(t->w, job->src_fd, job->src_path, h->raw_len, err))
		return (job->source_failed = true, false);
	if (!end_sealing(t, err))
		return false;
	h->stored_len = t->stored + (t->sealing ? SB_WAL_SEAL_OVERHEAD : 0);
	h->raw_hash = sb_hash_stream_digest(t->w->raw_hash);
	h->stored_hash = t->sealing ? 0 : sb_hash_stream_digest(t->w->stored_hash);
	return write_header(t, h, err);
}

/*
 * What every write begins with: the format, and for a worker with a key a
 * fresh salt, so that the file's keys are its own, and the buffer to seal
 * into (made by the first sealed write: workers that only read need none).
 */
static bool
begin_file(TempFile *t, SbWalWriteJob *job, SbError *err)
{
	SbWalHeader *h = &job->header;

	t->sealing = t->w->key != NULL;
	h->sealed = t->sealing;
	h->major = t->sealing ? SB_WAL_SEALED_MAJOR : SB_WAL_FORMAT_MAJOR;
	h->minor = t->sealing ? SB_WAL_SEALED_MINOR : SB_WAL_FORMAT_MINOR;
	if (!t->sealing)
		return true;
	h->level = 0;
	if (t->w->sealed == NULL && (t->w->sealed = sb_alloc(t->w->piece, err)) == NULL)
		return false;
	return sb_random_bytes(h->salt, sizeof(h->salt), err) &&
		sb_wal_keys_derive(t->w->key, h, &t->keys, err);
}

/* What a write leaves behind it, done or not: no key, no cipher, no buffer. */
static void
end_file(TempFile *t)
{
	sb_gcm_stream_free(&t->gcm);
	sb_wal_keys_clear(&t->keys);
	free(t->mem);
	t->mem = NULL;
}

/* A name no other writer uses: "<name>.sbw.tmp.<pid>.<n>". */
static void
temp_name(TempFile *t, const SbWalWriteJob *job)
{
	static uint32_t counter;
	uint32_t	n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);

	snprintf(t->name, sizeof(t->name), "%s" SB_WAL_SUFFIX SB_WAL_TEMP_INFIX "%ld.%u",
			 job->header.name, (long) getpid(), n);
	snprintf(t->path, sizeof(t->path), "%s/%s", job->folder->path, t->name);
}

/*
 * Rename the temporary file to its name: without replacing a file that
 * appeared meanwhile (another writer of the same WAL file), unless REPLACE.
 */
static bool
rename_into_place(const TempFile *t, const SbWalWriteJob *job, SbError *err)
{
	int			dirfd = job->folder->fd;
	char		final[SB_WAL_FILE_NAME_MAX];

	sb_wal_file_name(job->header.name, final);
	if (!job->replace && renameat2(dirfd, t->name, dirfd, final, RENAME_NOREPLACE) == 0)
		return true;
	if (!job->replace && errno == EEXIST)
		return sb_error_set(err, SB_EEXIST, "\"%s/%s\" appeared while it was being written",
							job->folder->path, final);
	/* A file system without RENAME_NOREPLACE: the check before writing is what there is. */
	if ((job->replace || errno == EINVAL || errno == ENOSYS) &&
		renameat(dirfd, t->name, dirfd, final) == 0)
		return true;
	return sb_error_set_errno(err, errno, "could not rename \"%s\" to \"%s\"", t->path, final);
}

/* The object's bytes made in memory, then put whole: a bucket shows all of it or nothing. */
static bool
write_object(SbWalWorker *w, SbWalWriteJob *job, SbError *err)
{
	/* Stored bytes never pass the raw length by more than a piece before compression is abandoned. */
	size_t		limit = SB_WAL_HEADER_SIZE + (size_t) job->header.raw_len + 2 * w->piece +
		SB_WAL_SEAL_OVERHEAD;
	TempFile	t = {.w = w, .fd = -1, .mem_limit = limit};
	char		file[SB_WAL_FILE_NAME_MAX];
	bool		ok;

	sb_wal_file_name(job->header.name, file);
	snprintf(t.path, sizeof(t.path), "%s/%s", job->folder->path, file);
	ok = begin_file(&t, job, err) && write_contents(&t, job, err) &&
		sb_wal_folder_put(job->folder, file, t.mem, SB_WAL_HEADER_SIZE + (size_t) job->header.stored_len,
						  job->replace, err);
	end_file(&t);
	return ok;
}

bool
sb_wal_file_write(SbWalWorker *w, SbWalWriteJob *job, SbError *err)
{
	TempFile	t = {.w = w};
	int			dirfd = job->folder->fd;
	bool		ok;

	/* A store without durable renames takes the file whole, visible at once. */
	if (!(sb_wal_folder_features(job->folder) & SB_STORE_DURABLE_RENAME))
		return write_object(w, job, err);
	temp_name(&t, job);
	if (!begin_file(&t, job, err))
	{
		end_file(&t);
		return false;
	}
	t.fd = openat(dirfd, t.name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (t.fd < 0)
	{
		end_file(&t);
		return sb_error_set_errno(err, errno, "could not create \"%s\"", t.path);
	}
	/* Provisional: names the file and its cluster, and can never pass for a finished one. */
	ok = write_header(&t, &job->header, err) && write_contents(&t, job, err);
	end_file(&t);
	if (ok && fsync(t.fd) != 0)
		ok = sb_error_set_errno(err, errno, "could not fsync \"%s\"", t.path);
	close(t.fd);
	if (ok)
		ok = rename_into_place(&t, job, err);
	if (!ok)
	{
		unlinkat(dirfd, t.name, 0);
		return false;
	}
	return sb_wal_folder_sync(job->folder, err);
}

/* ---------- reading ---------- */

bool
sb_wal_file_read_header(SbStoreFile *f, const SbKey *key, SbWalHeader *h, SbWalKeys *keys,
						SbError *err)
{
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	const char *path = f->path;
	ssize_t		n = sb_store_pread(f, raw, sizeof(raw), 0, err);

	if (n < 0)
		return false;
	if ((size_t) n < sizeof(raw))
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" holds %zd bytes, less than a header", path, n);
	if (!sb_wal_header_decode(raw, key, h, keys, err))
	{
		sb_error_prefix(err, "\"%s\"", path);
		return false;
	}
	if (f->size != SB_WAL_HEADER_SIZE + h->stored_len)
	{
		if (keys != NULL)
			sb_wal_keys_clear(keys);
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" is %" PRIu64 " bytes long; its header says %" PRIu64,
							path, f->size, SB_WAL_HEADER_SIZE + h->stored_len);
	}
	return true;
}

/* What the reader has seen of the raw bytes, and where they go. */
typedef struct RawOut
{
	SbWalWorker *w;
	const char *path;
	uint64_t	expected;
	uint64_t	seen;
	uint32_t	crc;
	SbCodecSink sink;
	void	   *arg;
} RawOut;

/* An SbCodecSink: raw bytes hashed and counted (never past the length the header gives), then handed on. */
static bool
take_raw(void *arg, const void *data, size_t len, SbError *err)
{
	RawOut	   *r = arg;

	if (len > r->expected - r->seen)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" decompresses to more than the %" PRIu64
							" bytes its header gives", r->path, r->expected);
	r->seen += len;
	sb_hash_stream_update(r->w->raw_hash, data, len);
	r->crc = sb_crc32c_update(r->crc, data, len);
	return r->sink == NULL || r->sink(r->arg, data, len, err);
}

/* Where the bytes the codec gave lie in the file, and a sealed payload's cipher. */
typedef struct StoredIn
{
	uint64_t	begin;			/* file offset of the first */
	uint64_t	len;
	SbGcmStream gcm;
} StoredIn;

/* A sealed payload: its nonce read, its cipher begun; the codec's bytes lie between nonce and tag. */
static bool
begin_opening(SbStoreFile *f, const SbWalHeader *h, const SbWalKeys *keys, StoredIn *in,
			  SbError *err)
{
	uint8_t		nonce[SB_CRYPTO_NONCE_LEN];
	uint8_t		aad[SB_WAL_AAD_MAX];
	ssize_t		got;

	in->begin = SB_WAL_HEADER_SIZE;
	in->len = h->stored_len;
	if (!h->sealed)
		return true;
	if ((got = sb_store_pread(f, nonce, sizeof(nonce), SB_WAL_HEADER_SIZE, err)) < 0)
		return false;
	if ((size_t) got != sizeof(nonce))
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" ends early", f->path);
	in->begin += SB_CRYPTO_NONCE_LEN;
	in->len -= SB_WAL_SEAL_OVERHEAD;
	return sb_gcm_stream_begin(&in->gcm, false, keys->payload, nonce, aad, sb_wal_payload_aad(h, aad), err);
}

/* After a sealed payload: its tag, which proves every byte handed on was what was sealed. */
static bool
end_opening(SbStoreFile *f, const SbWalHeader *h, StoredIn *in, SbError *err)
{
	uint8_t		tag[SB_CRYPTO_TAG_LEN];
	ssize_t		got;

	if (!h->sealed)
		return true;
	if ((got = sb_store_pread(f, tag, sizeof(tag), in->begin + in->len, err)) < 0)
		return false;
	if ((size_t) got != sizeof(tag))
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" ends early", f->path);
	return sb_gcm_stream_open_end(&in->gcm, tag, err);
}

/* Feed the stored payload, a piece at a time, to the decoder (or straight on when uncompressed). */
static bool
read_stored(SbWalWorker *w, SbStoreFile *f, const SbWalHeader *h, StoredIn *in, RawOut *r,
			SbError *err)
{
	bool		done = false;
	uint64_t	offset;

	if (h->codec == SB_CODEC_ZSTD && !sb_codec_stream_decompress_begin(w->codec, h->raw_len, err))
		return false;
	for (offset = 0; offset < in->len;)
	{
		size_t		n = piece_at(w, offset, in->len);
		ssize_t		got = sb_store_pread(f, w->in, n, in->begin + offset, err);

		if (got < 0)
			return false;
		if ((size_t) got != n)
			return sb_error_set(err, SB_ECORRUPT, "\"%s\" ends early", r->path);
		if (h->sealed && !sb_gcm_stream_update(&in->gcm, w->in, n, w->in, err))
			return false;
		if (!h->sealed)
			sb_hash_stream_update(w->stored_hash, w->in, n);
		offset += n;
		if (h->codec == SB_CODEC_NONE ? !take_raw(r, w->in, n, err) :
			!sb_codec_stream_decompress(w->codec, w->in, n, w->out, w->piece, take_raw, r, &done, err))
			return false;
	}
	if (!end_opening(f, h, in, err))
		return false;
	if (h->codec == SB_CODEC_ZSTD && !done)
		return sb_error_set(err, SB_ECORRUPT, "the zstd frame of \"%s\" is cut short", r->path);
	return true;
}

/* The payload of F whole, opened with KEYS when sealed (decrypted in place, a piece at a time). */
static bool
read_payload(SbWalWorker *w, SbStoreFile *f, const SbWalHeader *h, const SbWalKeys *keys, RawOut *r,
			 SbError *err)
{
	StoredIn	in = {0};
	bool		ok;

	ok = begin_opening(f, h, keys, &in, err) && read_stored(w, f, h, &in, r, err);
	sb_gcm_stream_free(&in.gcm);
	return ok;
}

/* After the whole payload: every hash and the length as the header says. */
static bool
check_payload(SbWalWorker *w, const SbWalHeader *h, const RawOut *r, SbError *err)
{
	uint64_t	stored_hash = sb_hash_stream_digest(w->stored_hash);
	uint64_t	raw_hash = sb_hash_stream_digest(w->raw_hash);

	if (!h->sealed && stored_hash != h->stored_hash)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\": payload checksum mismatch (stored %016" PRIx64
							", computed %016" PRIx64 ")", r->path, h->stored_hash, stored_hash);
	if (r->seen != h->raw_len)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" decompresses to %" PRIu64 " bytes, its header gives %" PRIu64,
							r->path, r->seen, h->raw_len);
	if (raw_hash != h->raw_hash)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\": checksum mismatch of the WAL file's bytes (stored %016"
							PRIx64 ", computed %016" PRIx64 ")", r->path, h->raw_hash, raw_hash);
	if (sb_crc32c_final(r->crc) != h->crc32c)
		return sb_error_set(err, SB_ECORRUPT, "\"%s\": CRC-32C mismatch (stored %08x, computed %08x)",
							r->path, h->crc32c, sb_crc32c_final(r->crc));
	return true;
}

bool
sb_wal_file_read(SbWalWorker *w, SbStoreFile *f, uint64_t sysid, const char *name,
				 SbWalHeader *h, SbCodecSink sink, void *arg, SbError *err)
{
	const char *path = f->path;
	RawOut		r = {.w = w, .path = path, .crc = SB_CRC32C_INIT, .sink = sink, .arg = arg};
	SbWalKeys	keys;
	bool		ok;

	if (!sb_wal_file_read_header(f, w->key, h, &keys, err))
		return false;
	if (!sb_wal_header_is(h, sysid, name, err))
	{
		sb_wal_keys_clear(&keys);
		sb_error_prefix(err, "\"%s\"", path);
		return false;
	}
	r.expected = h->raw_len;
	sb_hash_stream_reset(w->raw_hash);
	sb_hash_stream_reset(w->stored_hash);
	ok = read_payload(w, f, h, &keys, &r, err);
	sb_wal_keys_clear(&keys);
	if (!ok)
	{
		if (err->code == SB_ECORRUPT && strstr(err->message, path) == NULL)
			sb_error_prefix(err, "\"%s\"", path);
		return false;
	}
	return check_payload(w, h, &r, err);
}
