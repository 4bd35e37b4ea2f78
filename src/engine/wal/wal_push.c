/*
 * wal_push.c
 *		Archiving WAL files: the archive, what the destinations already
 *		hold of each file, writing its copies, and many files at once.
 *
 * A segment goes to one destination: WAL is written once and read once, so
 * spreading segments spreads the bytes and the load as the weights say.
 * With redundancy M it goes to M + 1 distinct destinations, each chosen as
 * the one was, among those not holding it yet, so the load still follows
 * the weights; a destination that fails (missing, unwritable, an I/O
 * error) is then done without, and said in the result, as long as M + 1
 * others take the file (DECISIONS.md, "Copies of each segment").  Which
 * destinations, and the counting the weights need, are wal_place.c's.
 * Timeline and backup history files go to every destination: they are
 * tiny, recovery asks for them first, and without them the segments of
 * later timelines cannot be told apart (DECISIONS.md).
 *
 * Before writing, every destination is looked at: a copy with the same
 * contents (length, XXH3-64, CRC-32C, and read back whole) means the file
 * is archived already; a copy with other contents is refused, since one of
 * the two is not this cluster's WAL; a damaged copy is rewritten from the
 * file PostgreSQL still holds.
 *
 * With a key every file is written sealed.  A copy that does not open
 * under the key (in the clear, forged, altered) counts as damaged and is
 * rewritten, sealed, from the WAL file; without a key, a sealed copy is
 * never written over (SB_EKEY): its key is needed to tell what it holds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "stripebackup/sb_policy.h"
#include "util/fsutil.h"
#include "util/parallel.h"
#include "util/thread.h"
#include "wal/wal_internal.h"
#include "wal/wal_place.h"
#include "wal/wal_recent.h"

#define MAX_WORKERS 64

#define DEST_BIT(d) SB_WAL_DEST_BIT(d)

struct SbWalArchive
{
	char	  **dests;
	uint32_t	ndests;
	uint64_t	sysid;
	const SbS3Settings *s3;		/* the options' (the caller keeps them while the archive is open) */
	SbCodec		codec;
	int			level;
	uint32_t	workers;
	uint32_t	segment_size;
	SbWalWorker *slots;			/* one per worker */
	SbWalPlacement place;		/* where each copy goes, and what each destination holds */
	SbWalRecent recent;			/* segments made durable or read back moments ago */
	bool		sealing;		/* every file is sealed with KEY */
	SbKey		key;			/* the options' key, copied: wiped at close */
};

/* One call of sb_wal_push_many: the destinations' folders, opened for it. */
typedef struct Batch
{
	SbWalArchive *a;
	SbWalFolder *folders;		/* one per destination */
	SbError    *unopened;		/* per destination: why it could not be opened (redundancy
								 * only: without, the batch fails) */
	uint64_t	unavailable;	/* bit d: destination d could not be opened */
	const SbWalFile *files;
	SbWalPushResult *results;
} Batch;

/* The file being archived. */
typedef struct Source
{
	const char *name;
	const char *path;
	SbWalName	parsed;
	int			fd;
	SbWalHeader header;			/* what it is to be archived as */
	bool		identified;		/* header's hashes computed (only when a copy is found) */
	SbWalHeader same;			/* the header of a copy found the same */
	struct stat st;				/* the file, as it was opened */
	bool		source_failed;	/* reading the WAL file itself failed: no destination's fault */
} Source;

typedef enum CopyState
{
	COPY_ABSENT,
	COPY_SAME,					/* the same contents, read back whole */
	COPY_DAMAGED,				/* a file of that name whose header or payload is bad */
	COPY_UNKNOWN				/* the destination could not be looked at: done without */
} CopyState;

/* ---------- options ---------- */

static bool
check_destination_list(const SbWalArchiveOptions *o, SbError *err)
{
	uint32_t	i;

	if (o->ndestinations == 0 || o->ndestinations > SB_MAX_STRIPES)
		return sb_error_set(err, SB_EINVAL, "%u WAL archive destinations given; between 1 and %d are allowed",
							o->ndestinations, SB_MAX_STRIPES);
	for (i = 0; i < o->ndestinations; i++)
	{
		if (!sb_store_check_destination(o->destinations[i], "WAL archive destination", err))
			return false;
		if (o->weights != NULL && !(isfinite(o->weights[i]) && o->weights[i] > 0))
			return sb_error_set(err, SB_EINVAL, "weight %g of WAL archive destination \"%s\" is not a positive number",
								o->weights[i], o->destinations[i]);
	}
	return true;
}

static bool
check_compression(const SbWalArchiveOptions *o, SbError *err)
{
	if (o->codec != SB_CODEC_NONE && o->codec != SB_CODEC_ZSTD)
		return sb_error_set(err, SB_EINVAL, "unknown compression %d", (int) o->codec);
	if (o->codec == SB_CODEC_ZSTD &&
		(o->level < sb_codec_min_level() || o->level > sb_codec_max_level() || o->level == 0))
		return sb_error_set(err, SB_EINVAL, "zstd level %d is out of range (%d to %d, not 0)",
							o->level, sb_codec_min_level(), sb_codec_max_level());
	return true;
}

bool
sb_wal_archive_check_options(const SbWalArchiveOptions *o, SbError *err)
{
	sb_error_clear(err);
	if (!check_destination_list(o, err) || !check_compression(o, err))
		return false;
	if (o->system_identifier == 0)
		return sb_error_set(err, SB_EINVAL, "system identifier 0 is no cluster's");
	if (o->balance != SB_BALANCE_ADAPTIVE && o->balance != SB_BALANCE_WEIGHTED)
		return sb_error_set(err, SB_EINVAL, "unknown balance %d", (int) o->balance);
	if (o->workers > MAX_WORKERS)
		return sb_error_set(err, SB_EINVAL, "%u WAL archive workers; at most %d", o->workers, MAX_WORKERS);
	if (o->segment_size != 0 && !sb_wal_segment_size_valid(o->segment_size))
		return sb_error_set(err, SB_EINVAL, "WAL segment size %u is not a power of two from 1 MB to 1 GB",
							o->segment_size);
	if (o->redundancy >= o->ndestinations)
		return sb_error_set(err, SB_EINVAL,
							"WAL archive redundancy %u needs at least %u destinations; %u are given",
							o->redundancy, o->redundancy + 1, o->ndestinations);
	return sb_policy_check_wal_memory(o, err);
}

/*
 * Local destination I there, and no earlier local one the same folder (a
 * path checked, then re-pointed, included).  THERE[i] says it was found:
 * with redundancy, a destination missing now is done without at each push
 * (which says so), as one that goes missing later is.
 */
static bool
check_folder_exists(const SbWalArchiveOptions *o, uint32_t i, struct stat *st, bool *there, SbError *err)
{
	uint32_t	j;

	there[i] = false;
	if (o->redundancy > 0 && (stat(o->destinations[i], &st[i]) != 0 || !S_ISDIR(st[i].st_mode)))
		return true;
	if (stat(o->destinations[i], &st[i]) != 0)
	{
		if (errno == ENOENT)
			return sb_error_set(err, SB_ENOTFOUND,
								"WAL archive destination \"%s\" does not exist (is its device mounted?)",
								o->destinations[i]);
		return sb_error_set_errno(err, errno, "WAL archive destination \"%s\" is not usable",
								  o->destinations[i]);
	}
	if (!S_ISDIR(st[i].st_mode))
		return sb_error_set(err, SB_EINVAL, "WAL archive destination \"%s\" is not a folder",
							o->destinations[i]);
	there[i] = true;
	for (j = 0; j < i; j++)
		if (there[j] && (sb_store_features_of(o->destinations[j]) & SB_STORE_INODE_IDENTITY) &&
			st[i].st_dev == st[j].st_dev && st[i].st_ino == st[j].st_ino)
			return sb_error_set(err, SB_EINVAL, "WAL archive destinations \"%s\" and \"%s\" are the same folder",
								o->destinations[j], o->destinations[i]);
	return true;
}

/*
 * Every local destination there, no two destinations one place.  A lazy
 * store (a bucket) is reached at the first push, which says what is wrong
 * with it.
 */
static bool
check_destinations_exist(const SbWalArchiveOptions *o, SbError *err)
{
	struct stat st[SB_MAX_STRIPES];
	bool		there[SB_MAX_STRIPES] = {false};
	uint32_t	i,
				j;

	for (i = 0; i < o->ndestinations; i++)
	{
		if (!(sb_store_features_of(o->destinations[i]) & SB_STORE_LAZY))
		{
			if (!check_folder_exists(o, i, st, there, err))
				return false;
			continue;
		}
		for (j = 0; j < i; j++)
			if (sb_store_same_place(o->destinations[i], o->destinations[j]))
				return sb_error_set(err, SB_EINVAL, "WAL archive destinations \"%s\" and \"%s\" are the same place",
									o->destinations[j], o->destinations[i]);
	}
	return true;
}

/* ---------- the archive ---------- */

static bool
copy_settings(SbWalArchive *a, const SbWalArchiveOptions *o, SbError *err)
{
	uint32_t	i;

	a->ndests = o->ndestinations;
	a->sysid = o->system_identifier;
	a->s3 = o->s3;
	a->codec = o->codec;
	a->level = o->codec == SB_CODEC_ZSTD ? o->level : 0;
	a->workers = o->workers ? o->workers : sb_cpu_count();
	if (a->workers > MAX_WORKERS)
		a->workers = MAX_WORKERS;
	a->segment_size = sb_wal_segment_size_of(o->segment_size);
	a->sealing = o->encryption_key != NULL;
	if (a->sealing)
		a->key = *o->encryption_key;
	if ((a->dests = sb_alloc(a->ndests * sizeof(char *), err)) == NULL)
		return false;
	for (i = 0; i < a->ndests; i++)
		if ((a->dests[i] = sb_strdup(o->destinations[i], err)) == NULL)
			return false;
	return true;
}

/* The key the archive seals with: NULL when it writes in the clear. */
static const SbKey *
archive_key(const SbWalArchive *a)
{
	return a->sealing ? &a->key : NULL;
}

static bool
make_workers(SbWalArchive *a, SbError *err)
{
	uint32_t	i;

	if ((a->slots = sb_alloc(a->workers * sizeof(SbWalWorker), err)) == NULL)
		return false;
	for (i = 0; i < a->workers; i++)
		if (!sb_wal_worker_init(&a->slots[i], a->codec, a->level, sb_wal_piece_size(a->segment_size),
								archive_key(a), err))
			return false;
	return true;
}

SbWalArchive *
sb_wal_archive_open(const SbWalArchiveOptions *o, SbError *err)
{
	SbWalArchive *a;

	if (!sb_wal_archive_check_options(o, err) || !check_destinations_exist(o, err))
		return NULL;
	if ((a = sb_alloc(sizeof(SbWalArchive), err)) == NULL)
		return NULL;
	sb_wal_place_init(&a->place, o);
	sb_wal_recent_init(&a->recent);
	if (!copy_settings(a, o, err) || !make_workers(a, err))
	{
		sb_wal_archive_close(a);
		return NULL;
	}
	return a;
}

void
sb_wal_archive_close(SbWalArchive *a)
{
	uint32_t	i;

	if (a == NULL)
		return;
	for (i = 0; a->slots != NULL && i < a->workers; i++)
		sb_wal_worker_free(&a->slots[i]);
	for (i = 0; a->dests != NULL && i < a->ndests; i++)
		free(a->dests[i]);
	free(a->dests);
	free(a->slots);
	sb_wal_place_destroy(&a->place);
	sb_wal_recent_destroy(&a->recent);
	sb_key_clear(&a->key);
	free(a);
}

void
sb_wal_archive_held_bytes(SbWalArchive *a, uint64_t *bytes)
{
	sb_wal_place_held(&a->place, bytes);
}

/* ---------- one batch ---------- */

/*
 * Open destination I's folder.  Without redundancy a destination that
 * cannot be opened fails the batch (a file might be there, or be meant for
 * it); with it, the destination is noted unavailable and each file of the
 * batch goes to the others, saying so.
 */
static bool
open_destination(Batch *b, uint32_t i, SbError *err)
{
	if (sb_wal_folder_open(b->a->dests[i], b->a->s3, b->a->sysid, true, &b->folders[i], err))
		return true;
	if (b->a->place.redundancy == 0)
		return false;
	sb_wal_folder_none(&b->folders[i], b->a->dests[i]);
	b->unopened[i] = *err;
	b->unavailable |= DEST_BIT(i);
	sb_error_clear(err);
	return true;
}

static bool
open_batch(Batch *b, SbError *err)
{
	uint32_t	i;

	if ((b->folders = sb_alloc(b->a->ndests * sizeof(SbWalFolder), err)) == NULL ||
		(b->unopened = sb_alloc(b->a->ndests * sizeof(SbError), err)) == NULL)
		return false;
	for (i = 0; i < b->a->ndests; i++)
		sb_wal_folder_none(&b->folders[i], b->a->dests[i]);
	for (i = 0; i < b->a->ndests; i++)
		if (!open_destination(b, i, err))
			return false;
	sb_wal_place_count(&b->a->place, b->folders);
	return true;
}

static void
close_batch(Batch *b)
{
	uint32_t	i;

	for (i = 0; b->folders != NULL && i < b->a->ndests; i++)
		sb_wal_folder_close(&b->folders[i]);
	free(b->folders);
	free(b->unopened);
}

/* ---------- the source file ---------- */

/* The length a file of this kind may have: a segment exactly the cluster's segment size. */
static bool
check_source_size(const SbWalArchive *a, const Source *s, uint64_t size, SbError *err)
{
	if (sb_wal_kind_is_segment(s->parsed.kind) && size != a->segment_size)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is %" PRIu64 " bytes; this cluster's WAL segments are %u bytes",
							s->path, size, a->segment_size);
	if (size == 0 || size > SB_WAL_MAX_SEGMENT_SIZE)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is %" PRIu64 " bytes; a WAL file is 1 byte to 1 GB",
							s->path, size);
	return true;
}

static bool
open_source(const SbWalArchive *a, Source *s, SbError *err)
{
	struct stat *st = &s->st;

	if (!sb_wal_name_parse(s->name, &s->parsed, err))
		return false;
	if ((s->fd = open(s->path, O_RDONLY | O_CLOEXEC)) < 0)
		return sb_error_set_errno(err, errno, "could not open \"%s\"", s->path);
	if (fstat(s->fd, st) != 0)
		return sb_error_set_errno(err, errno, "could not stat \"%s\"", s->path);
	if (!S_ISREG(st->st_mode))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a regular file", s->path);
	if (!check_source_size(a, s, (uint64_t) st->st_size, err))
		return false;
	s->header.system_identifier = a->sysid;
	s->header.sealed = a->sealing;	/* what it is written as; its hashes are never said */
	snprintf(s->header.name, sizeof(s->header.name), "%s", s->name);
	s->header.raw_len = (uint64_t) st->st_size;
	s->header.codec = (uint8_t) a->codec;
	s->header.level = a->level;
	s->header.archived_at = (int64_t) time(NULL);
	return true;
}

/* ---------- copies already there ---------- */

/* The copy F has a good header: is it this file, read back whole? */
static bool
compare_copy(const Batch *b, SbWalWorker *w, Source *s, SbStoreFile *f,
			 const SbWalHeader *theirs, CopyState *state, SbError *err)
{
	const char *path = f->path;
	SbWalHeader again;
	SbError		why;
	char		ours_text[128],
				theirs_text[128];

	if (!sb_wal_header_is(theirs, b->a->sysid, s->name, err))
	{
		err->code = SB_EEXIST;
		sb_error_prefix(err, "\"%s\" is not this cluster's copy", path);
		return false;
	}
	if (!s->identified && !sb_wal_source_identity(w, s->fd, s->path, &s->header, err))
		return (s->source_failed = true, false);
	s->identified = true;
	if (!sb_wal_same_contents(theirs, &s->header))
	{
		sb_wal_describe_contents(theirs, theirs_text, sizeof(theirs_text));
		sb_wal_describe_contents(&s->header, ours_text, sizeof(ours_text));
		return sb_error_set(err, SB_EEXIST, "the archive already holds \"%s\" with other contents (%s; \"%s\": %s)",
							path, theirs_text, s->path, ours_text);
	}
	if (sb_wal_file_read(w, f, b->a->sysid, s->name, &again, NULL, NULL, &why))
	{
		*state = COPY_SAME;
		s->same = again;
	}
	else if (why.code == SB_ECORRUPT)
		*state = COPY_DAMAGED;
	else
		return (*err = why, false);
	return true;
}

/* What destination D holds of the file: nothing, the same, or a damaged copy. */
static bool
survey_copy(const Batch *b, uint32_t d, SbWalWorker *w, Source *s, CopyState *state, SbError *err)
{
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFileIn in;
	SbWalHeader theirs;
	SbError		why;
	bool		ok = true;

	sb_wal_file_name(s->name, file);
	*state = COPY_ABSENT;
	if (!sb_wal_folder_open_file(&b->folders[d], file, &in, &why))
	{
		if (why.code == SB_ENOTFOUND)
			return true;
		/* A link or a folder where the file should be: nothing is archived through or over it. */
		if (why.code == SB_ECORRUPT)
			why.code = SB_EEXIST;
		return (*err = why, false);
	}
	if (sb_wal_file_read_header(&in.store, archive_key(b->a), &theirs, NULL, &why))
		ok = compare_copy(b, w, s, &in.store, &theirs, state, err);
	else if (why.code == SB_ECORRUPT)
		*state = COPY_DAMAGED;
	else
		ok = (*err = why, false);
	sb_wal_file_in_close(&in);
	return ok;
}

/* ---------- destinations done without (redundancy) ---------- */

/* Destination D failed the file S with ERR: done without, or (false) the file fails. */
static bool
skip_destination(const Batch *b, uint32_t d, const Source *s, SbWalPushResult *r, SbError *err)
{
	return sb_wal_place_skip(&b->a->place, d, b->a->dests[d], s->source_failed, r, err);
}

static bool
survey_copies(const Batch *b, SbWalWorker *w, Source *s, CopyState *states, SbWalPushResult *r,
			  SbError *err)
{
	uint32_t	d;

	for (d = 0; d < b->a->ndests; d++)
	{
		if (b->unavailable & DEST_BIT(d))
			*err = b->unopened[d];
		else if (survey_copy(b, d, w, s, &states[d], err))
			continue;
		if (!skip_destination(b, d, s, r, err))
			return false;
		states[d] = COPY_UNKNOWN;
	}
	return true;
}

/* ---------- writing ---------- */

/*
 * Write the file to destination D (over a damaged copy when REPLACE).  A
 * copy that another writer put there meanwhile counts if it is the same.
 */
static bool
write_copy(const Batch *b, uint32_t d, SbWalWorker *w, Source *s, bool replace,
		   SbWalPushResult *r, SbError *err)
{
	SbWalWriteJob job = {.folder = &b->folders[d], .src_fd = s->fd,
	.src_path = s->path, .replace = replace, .header = s->header};
	CopyState	state;

	if (sb_wal_file_write(w, &job, err))
	{
		r->written++;
		r->stored_bytes = job.header.stored_len;
		r->codec = (SbCodec) job.header.codec;
		return true;
	}
	s->source_failed = job.source_failed;
	if (err->code != SB_EEXIST)
		return false;
	if (!survey_copy(b, d, w, s, &state, err))
		return false;
	if (state != COPY_SAME)
		return sb_error_set(err, SB_EEXIST, "a damaged copy appeared in \"%s\" while it was being written",
							b->folders[d].path);
	return true;
}

/* Write a copy to D; it holds one then, or is done without (false: the file fails). */
static bool
write_or_skip(const Batch *b, uint32_t d, SbWalWorker *w, Source *s, bool replace,
			  SbWalPushResult *r, SbError *err)
{
	if (write_copy(b, d, w, s, replace, r, err))
	{
		r->holders |= DEST_BIT(d);
		return true;
	}
	return skip_destination(b, d, s, r, err);
}

/* Copies already there: good ones kept, damaged ones rewritten. */
static bool
keep_copies(const Batch *b, SbWalWorker *w, Source *s, const CopyState *states,
			SbWalPushResult *r, SbError *err)
{
	uint32_t	d;

	for (d = 0; d < b->a->ndests; d++)
	{
		if (states[d] == COPY_SAME)
			r->holders |= DEST_BIT(d);
		else if (states[d] == COPY_DAMAGED && !write_or_skip(b, d, w, s, true, r, err))
			return false;
	}
	return true;
}

/* A new copy of a segment in the destination the weights choose among those without one. */
static bool
add_copy(const Batch *b, SbWalWorker *w, Source *s, SbWalPushResult *r, SbError *err)
{
	uint64_t	estimate = SB_WAL_HEADER_SIZE + s->header.raw_len;
	uint32_t	d = sb_wal_place_choose(&b->a->place, estimate, r->holders | r->skipped);
	bool		ok;

	if (d == SB_WAL_NO_DESTINATION)
		return sb_wal_place_too_few(&b->a->place, r, err);
	ok = write_copy(b, d, w, s, false, r, err);
	sb_wal_place_finish(&b->a->place, d, estimate, ok ? SB_WAL_HEADER_SIZE + r->stored_bytes : 0);
	if (ok)
		r->holders |= DEST_BIT(d);
	return ok || skip_destination(b, d, s, r, err);
}

/* A segment: kept where good copies are (damaged ones rewritten), written until M + 1 destinations hold it. */
static bool
archive_segment(const Batch *b, SbWalWorker *w, Source *s, const CopyState *states,
				SbWalPushResult *r, SbError *err)
{
	if (!keep_copies(b, w, s, states, r, err))
		return false;
	while (!sb_wal_place_enough(&b->a->place, r))
		if (!add_copy(b, w, s, r, err))
			return false;
	r->destination = (int32_t) __builtin_ctzll(r->holders);
	return true;
}

/*
 * A history file: in every destination; each one tried even when another
 * fails.  With redundancy, one that fails is done without while M + 1 hold
 * the file.
 */
static bool
archive_everywhere(const Batch *b, SbWalWorker *w, Source *s, const CopyState *states,
				   SbWalPushResult *r, SbError *err)
{
	SbError		first;
	bool		ok = true;
	uint32_t	d;

	sb_error_clear(&first);
	r->destination = -1;
	for (d = 0; d < b->a->ndests; d++)
	{
		if (states[d] == COPY_UNKNOWN)
			continue;
		if (states[d] == COPY_SAME)
			r->holders |= DEST_BIT(d);
		else if (!write_or_skip(b, d, w, s, states[d] == COPY_DAMAGED, r, err))
		{
			if (ok)
				first = *err;
			ok = false;
		}
	}
	if (!ok)
		return (*err = first, false);
	if (!sb_wal_place_enough(&b->a->place, r))
		return sb_wal_place_too_few(&b->a->place, r, err);
	return true;
}

/* A segment this archive made durable (or read back whole) moments ago, its file untouched since: done. */
static bool
recalled(const Batch *b, const Source *s, SbWalPushResult *r)
{
	SbWalRecentItem item;

	if (!sb_wal_kind_is_segment(s->parsed.kind) ||
		!sb_wal_recent_check(&b->a->recent, s->name, &s->st, b->folders, &item))
		return false;
	r->remembered = true;
	r->destination = (int32_t) item.destination;
	r->stored_bytes = item.stored_len;
	r->codec = (SbCodec) item.codec;
	return true;
}

/* Note where the segment now is, as it is: the next push of it (after a push ahead) need not read it. */
static void
remember(const Batch *b, const Source *s, const SbWalPushResult *r)
{
	SbWalHeader h = s->header;

	h.stored_len = r->stored_bytes ? r->stored_bytes : s->same.stored_len;
	h.codec = (uint8_t) (r->written ? r->codec : (SbCodec) s->same.codec);
	sb_wal_recent_note(&b->a->recent, &h, &s->st, (uint32_t) r->destination,
					   &b->folders[r->destination]);
}

static void
push_one(const Batch *b, const SbWalFile *f, SbWalPushResult *r, SbWalWorker *w)
{
	Source		s = {.name = f->name, .path = f->path, .fd = -1};
	CopyState	states[SB_MAX_STRIPES];
	SbError    *err = &r->error;
	bool		ok;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	r->destination = -1;
	ok = open_source(b->a, &s, err);
	if (ok && !recalled(b, &s, r))
	{
		ok = survey_copies(b, w, &s, states, r, err) &&
			(sb_wal_kind_is_segment(s.parsed.kind) ? archive_segment(b, w, &s, states, r, err) :
			 archive_everywhere(b, w, &s, states, r, err));
		if (ok && sb_wal_kind_is_segment(s.parsed.kind))
			remember(b, &s, r);
	}
	if (s.fd >= 0)
		close(s.fd);
	r->raw_bytes = s.header.raw_len;
	r->archived = ok;
	r->already_archived = ok && r->written == 0;
	if (r->already_archived && !r->remembered)
	{
		r->stored_bytes = s.same.stored_len;
		r->codec = (SbCodec) s.same.codec;
	}
	if (!ok)
		sb_wal_error_about(err, "archive", f->name);
}

/* The destinations could not be opened: no file of the call was looked at. */
static void
fail_unpushed(const SbWalFile *f, SbWalPushResult *r, const SbError *err)
{
	memset(r, 0, sizeof(*r));
	r->destination = -1;
	r->error = *err;
	sb_wal_error_about(&r->error, "archive", f->name);
}

static void
push_task(void *arg, size_t task, uint32_t slot)
{
	Batch	   *b = arg;

	push_one(b, &b->files[task], &b->results[task], &b->a->slots[slot]);
}

bool
sb_wal_push_many(SbWalArchive *a, const SbWalFile *files, uint32_t n, SbWalPushResult *results)
{
	Batch		b = {.a = a, .files = files, .results = results};
	SbError		err;
	bool		all = true;
	uint32_t	i;

	if (open_batch(&b, &err))
		sb_parallel_run(n, a->workers, push_task, &b);
	else
		for (i = 0; i < n; i++)
			fail_unpushed(&files[i], &results[i], &err);
	close_batch(&b);
	for (i = 0; i < n; i++)
		all = all && results[i].archived;
	return all;
}

bool
sb_wal_push(SbWalArchive *a, const char *name, const char *path, SbWalPushResult *result)
{
	SbWalFile	file = {.name = name, .path = path};

	return sb_wal_push_many(a, &file, 1, result);
}
