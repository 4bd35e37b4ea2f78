/*
 * archive_auth.c
 *		Authenticating the manifest an archive is read by.
 *
 * Every stripe's trailer records the SHA-256 and length of the exact
 * manifest.json bytes its backup wrote (docs/FORMAT.md).  A copy of the
 * manifest is the backup's when a stripe it leads to records its digest and
 * no stripe of the same backup records another.  A copy that is not (a bit
 * flipped, two paths swapped, an edit) is set aside with a note, and the
 * copies in the destinations named by the manifests read so far are tried
 * (by the text of a copy too damaged to parse, as a hint of where to look:
 * whatever is found there must still be authenticated).
 * When no stripe can be read at all, nothing can authenticate the copy: it
 * is used for what needs no data (a plan that says every stripe is
 * missing) and marked not authenticated; restore refuses it, verify
 * reports it.
 *
 * The stripes vouch for a manifest, not for which backup it is: whoever can
 * write to the storage can put a whole other backup (its stripes and
 * manifests, encrypted or not) under this one's names.  So a copy must also
 * be what the caller expects (sb_archive.h, SbArchiveExpect): the uuid its
 * record holds, encrypted or in the clear as recorded, and, when a key is
 * in force and the caller did not allow otherwise, encrypted.  A copy that
 * is not is set aside as a damaged one is, and the caller's recorded
 * folders are tried before those the manifests name.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "restore/archive_auth.h"
#include "format/checksum.h"
#include "format/format.h"
#include "util/fsutil.h"
#include "manifest/manifest_envelope.h"
#include "manifest/manifest_text.h"
#include "store/store.h"

/* Backup folders looked at: the location, and a few rounds of destinations. */
#define MAX_FOLDERS (4 * SB_MAX_STRIPES)

/* One manifest copy, read. */
typedef struct Candidate
{
	char	   *folder;
	char	   *path;			/* folder/manifest.json */
	SbManifest *m;				/* NULL when it could not be parsed */
	SbError		error;			/* why not */
	char	   *text;			/* then its bytes, kept for hints */
	size_t		len;
	char		reason[SB_ERROR_MESSAGE_MAX];	/* why it is not the backup's */
} Candidate;

typedef struct Search
{
	const char *location;
	const SbS3Settings *s3;		/* how its s3:// places are reached */
	const SbKey *key;			/* opens an encrypted backup's envelopes */
	const SbArchiveExpect *expect;	/* what every copy must be */
	SbEntryKeep keep;			/* what is kept of the entries */
	const char *spool_dir;		/* where streamed entries go */
	char	   *queue[MAX_FOLDERS];	/* folders to look in, in order */
	uint32_t	nqueued;
	uint32_t	next;
	dev_t		seen_dev[MAX_FOLDERS];	/* the queued folders' (local ones) */
	ino_t		seen_ino[MAX_FOLDERS];
	char	   *rejected[MAX_FOLDERS];	/* "manifest copy "P" ...": copies set aside */
	uint32_t	nrejected;
	uint32_t	nothers;		/* copies found besides the location's */
	bool		any_witness;	/* some stripe's trailer could be read */
} Search;

char *
sb_archive_locate_stripe(const char *location, const SbS3Settings *s3, const SbManifest *m, uint32_t i,
						 SbError *err)
{
	const SbStripeInfo *s = &m->stripes[i];
	char	   *local = sb_path_join(location, s->file_name, err);
	char	   *folder;
	char	   *recorded;
	uint64_t	size;

	if (local == NULL || sb_store_file_size(local, s3, &size, NULL))
		return local;
	folder = sb_path_join(s->destination, m->name, err);
	recorded = folder ? sb_path_join(folder, s->file_name, err) : NULL;
	free(folder);
	free(local);
	return recorded;
}

/* The trailer of the stripe file at PATH, if it has an intact one. */
static bool
read_trailer(const char *path, const SbS3Settings *s3, SbTrailer *t)
{
	uint8_t		buf[SB_TRAILER_SIZE];
	SbStoreFile f;
	SbError		ignored;
	bool		ok;

	if (!sb_store_open(&f, path, s3, &ignored))
		return false;
	ok = f.size >= SB_STRIPE_HEADER_SIZE + SB_TRAILER_SIZE &&
		sb_store_pread(&f, buf, sizeof(buf), f.size - SB_TRAILER_SIZE, &ignored) == (ssize_t) sizeof(buf) &&
		sb_format_decode_trailer(buf, t, &ignored);
	sb_store_close(&f);
	return ok;
}

static bool
records(const SbTrailer *t, const SbManifest *m)
{
	return memcmp(t->manifest_sha256, m->json_sha256, SB_SHA256_LEN) == 0 &&
		t->manifest_length == m->json_length;
}

/* Queue FOLDER unless it is one already queued (or does not exist). */
static void
enqueue(Search *s, const char *folder)
{
	struct stat st = {0};
	bool		by_inode = (sb_store_features_of(folder) & SB_STORE_INODE_IDENTITY) != 0;
	uint32_t	i;
	char	   *copy;

	if (s->nqueued == MAX_FOLDERS || !sb_store_is_folder(folder) ||
		(by_inode && stat(folder, &st) != 0))
		return;
	/* A local folder is known by its device and inode, an object-storage one by its name. */
	for (i = 0; i < s->nqueued; i++)
		if (!by_inode ? strcmp(s->queue[i], folder) == 0 :
			s->seen_dev[i] == st.st_dev && s->seen_ino[i] == st.st_ino &&
			(sb_store_features_of(s->queue[i]) & SB_STORE_INODE_IDENTITY))
			return;
	copy = strdup(folder);
	if (copy == NULL)
		return;
	s->seen_dev[s->nqueued] = st.st_dev;
	s->seen_ino[s->nqueued] = st.st_ino;
	s->queue[s->nqueued++] = copy;
}

/* The backup folders in every destination manifest M names. */
static void
enqueue_destinations(Search *s, const SbManifest *m)
{
	SbError		ignored;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
	{
		char	   *folder = sb_path_join(m->stripes[i].destination, m->name, &ignored);

		if (folder != NULL)
			enqueue(s, folder);
		free(folder);
	}
}

/*
 * The string values of KEY in TEXT ("key":"value", no escapes), at most MAX,
 * malloc'd into VALUES; how many.
 */
static uint32_t
scan_values(const char *text, size_t len, const char *key, char **values, uint32_t max)
{
	char		pattern[64];
	size_t		plen = (size_t) snprintf(pattern, sizeof(pattern), "\"%s\":\"", key);
	const char *p = text;
	const char *end = text + len;
	uint32_t	n = 0;

	while (n < max && (p = memmem(p, (size_t) (end - p), pattern, plen)) != NULL)
	{
		const char *value = p + plen;
		const char *q = value;

		while (q < end && *q != '"' && *q != '\\' && (unsigned char) *q >= 0x20 &&
			   q - value < PATH_MAX)
			q++;
		if (q < end && *q == '"' && q > value)
			values[n++] = strndup(value, (size_t) (q - value));
		p = q;
	}
	return n;
}

/*
 * A copy too damaged to parse most likely still names the destinations:
 * queue DEST/NAME for each "destination" in its text, NAME being the one
 * it gives and the location's own folder name.
 */
static void
enqueue_hinted_destinations(Search *s, const char *text, size_t len)
{
	char	   *dests[SB_MAX_STRIPES];
	char	   *names[2] = {NULL, NULL};
	uint32_t	ndests = scan_values(text, len, "destination", dests, SB_MAX_STRIPES);
	uint32_t	nnames = scan_values(text, len, "name", names, 1);
	const char *slash = strrchr(s->location, '/');
	uint32_t	i,
				k;

	if (slash != NULL && slash[1] != '\0')
		names[nnames++] = strdup(slash + 1);
	for (i = 0; i < ndests; i++)
		for (k = 0; k < nnames; k++)
		{
			SbError		ignored;
			char	   *folder = dests[i] && names[k] ?
				sb_path_join(dests[i], names[k], &ignored) : NULL;

			if (folder != NULL)
				enqueue(s, folder);
			free(folder);
		}
	for (i = 0; i < ndests; i++)
		free(dests[i]);
	for (k = 0; k < nnames; k++)
		free(names[k]);
}

/*
 * Read and parse FOLDER's copy (an envelope opened with KEY; TO_PLAN, its
 * entries only counted); false (C->error) when it is missing or unreadable.
 * A copy that does not parse is read again whole, for the destinations its
 * text still names.
 */
static bool
load_candidate(Candidate *c, const char *folder, const SbS3Settings *s3, const SbKey *key, SbEntryKeep keep,
			   const char *spool_dir)
{
	SbError		ignored;

	memset(c, 0, sizeof(*c));
	c->folder = strdup(folder);
	c->path = sb_path_join(folder, SB_MANIFEST_FILE, &c->error);
	if (c->folder == NULL || c->path == NULL)
		return sb_error_set(&c->error, SB_ENOMEM, "out of memory");
	c->m = sb_manifest_read_path(c->path, s3, key, keep, spool_dir, &c->error);
	if (c->m != NULL)
		return true;
	if (c->error.code == SB_ENOTFOUND)
		return sb_error_set(&c->error, SB_ENOTFOUND,
							"no %s in \"%s\": not a stripebackup backup folder, or a backup that did not complete",
							SB_MANIFEST_FILE, folder);
	if (c->error.code != SB_ECORRUPT && c->error.code != SB_EVERSION &&
		c->error.code != SB_EKEY)
		return false;			/* not read, rather than read and refused */
	c->text = sb_store_read_small(c->path, s3, SB_MANIFEST_MAX_BYTES, &c->len, &ignored);
	return true;
}

static void
free_candidate(Candidate *c)
{
	sb_manifest_free(c->m);
	free(c->text);
	free(c->folder);
	free(c->path);
	memset(c, 0, sizeof(*c));
}

/*
 * Is C's manifest the backup's?  Some stripe it leads to records its digest,
 * and none of the same backup records another.  Otherwise C->reason says why.
 */
static bool
judge(Search *s, Candidate *c)
{
	const SbManifest *m = c->m;
	uint32_t	other = 0;		/* a stripe recording another digest (1-based) */
	char	   *other_path = NULL;
	bool		confirmed = false;
	bool		contradicted = false;
	uint32_t	i;

	for (i = 0; i < m->nstripes; i++)
	{
		SbError		ignored;
		char	   *path = sb_archive_locate_stripe(s->location, s->s3, m, i, &ignored);
		SbTrailer	t;

		if (path != NULL && read_trailer(path, s->s3, &t))
		{
			s->any_witness = true;
			if (records(&t, m))
				confirmed = true;
			else
			{
				contradicted = contradicted || memcmp(t.uuid, m->uuid, 16) == 0;
				if (other == 0)
				{
					other = i + 1;
					other_path = path;
					path = NULL;
				}
			}
		}
		free(path);
	}
	if (confirmed && !contradicted)
	{
		free(other_path);
		return true;
	}
	if (other != 0)
		snprintf(c->reason, sizeof(c->reason),
				 "differs from what backup \"%s\" wrote (stripe %u, \"%s\", records another SHA-256)",
				 m->name, other, other_path);
	else
		snprintf(c->reason, sizeof(c->reason),
				 "cannot be authenticated: no stripe of backup \"%s\" it names could be read", m->name);
	free(other_path);
	return false;
}

/*
 * Is C's manifest what the caller expects?  Otherwise C->reason says what
 * differs.  Encrypted means opened from an envelope under the key (it has
 * the keys): a manifest in the clear that claims it was refused on reading.
 */
static bool
meets_expectation(const Search *s, Candidate *c)
{
	const SbArchiveExpect *e = s->expect;
	bool		sealed = c->m->cipher != NULL;
	char		found[33],
				recorded[33];

	if (e->has_uuid && memcmp(c->m->uuid, e->uuid, 16) != 0)
	{
		sb_hex_encode(c->m->uuid, 16, found);
		sb_hex_encode(e->uuid, 16, recorded);
		snprintf(c->reason, sizeof(c->reason),
				 "holds another backup: \"%s\", uuid %s, where uuid %s is recorded",
				 c->m->name, found, recorded);
		return false;
	}
	if (e->encryption == SB_EXPECT_ENCRYPTED && !sealed)
		snprintf(c->reason, sizeof(c->reason),
				 "is in the clear, but backup \"%s\" was recorded encrypted", c->m->name);
	else if (e->encryption == SB_EXPECT_PLAIN && sealed)
		snprintf(c->reason, sizeof(c->reason),
				 "is encrypted, but backup \"%s\" was recorded in the clear", c->m->name);
	else if (e->encryption == SB_EXPECT_AS_KEY && s->key != NULL && !sealed)
		snprintf(c->reason, sizeof(c->reason),
				 "is in the clear while an encryption key is in force: a backup in the clear is "
				 "read under a key only when allowed (allow_unencrypted => true, or the command's "
				 "--allow-unencrypted)");
	else
		return true;
	return false;
}

/* Is C the backup's, and what the caller expects? */
static bool
acceptable(Search *s, Candidate *c)
{
	return c->m != NULL && meets_expectation(s, c) && judge(s, c);
}

/* Where C leads: the destinations its manifest names, or its text hints at. */
static void
enqueue_candidates_of(Search *s, const Candidate *c)
{
	if (c->m != NULL)
		enqueue_destinations(s, c->m);
	else if (c->text != NULL)
		enqueue_hinted_destinations(s, c->text, c->len);
}

/* Remember why C was set aside, as a note "manifest copy "P" ...". */
static void
reject(Search *s, const Candidate *c)
{
	char		note[SB_ERROR_MESSAGE_MAX + PATH_MAX];

	if (c->m == NULL)
		snprintf(note, sizeof(note), "manifest copy \"%s\" is damaged: %s", c->path,
				 c->error.message);
	else
		snprintf(note, sizeof(note), "manifest copy \"%s\" %s", c->path, c->reason);
	if (s->nrejected < MAX_FOLDERS)
		s->rejected[s->nrejected++] = strdup(note);
}

static bool
add_note(SbArchive *a, const char *note, const char *suffix_folder, SbError *err)
{
	char	  **grown = realloc(a->notes, (a->nnotes + 1) * sizeof(char *));
	size_t		len = strlen(note) + (suffix_folder ? strlen(suffix_folder) + 32 : 0) + 1;
	char	   *text;

	if (grown == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	a->notes = grown;
	text = malloc(len);
	if (text == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory");
	if (suffix_folder != NULL)
		snprintf(text, len, "%s; using the copy in \"%s\"", note, suffix_folder);
	else
		snprintf(text, len, "%s", note);
	a->notes[a->nnotes++] = text;
	return true;
}

bool
sb_archive_add_note(SbArchive *a, const char *note, SbError *err)
{
	return add_note(a, note, NULL, err);
}

/* Use C's manifest: its stripes, from the location first. */
static bool
adopt(SbArchive *a, Candidate *c, bool authenticated, SbError *err)
{
	uint32_t	i;

	a->manifest = c->m;
	a->manifest_path = c->path;
	a->authenticated = authenticated;
	c->m = NULL;
	c->path = NULL;
	for (i = 0; i < a->manifest->nstripes; i++)
		if ((a->stripe_paths[i] = sb_archive_locate_stripe(a->location, a->s3, a->manifest, i, err)) == NULL)
			return false;
	return true;
}

/* The copies set aside become notes; the location's says which copy was used. */
static bool
note_rejected(SbArchive *a, Search *s, const char *used_folder, SbError *err)
{
	uint32_t	i;

	for (i = 0; i < s->nrejected; i++)
		if (s->rejected[i] != NULL &&
			!add_note(a, s->rejected[i], i == 0 ? used_folder : NULL, err))
			return false;
	return true;
}

/* No copy is the backup's: say what is wrong with the location's. */
static bool
refuse(Search *s, const Candidate *location_copy, SbError *err)
{
	if (location_copy->m == NULL && !s->any_witness)
	{
		*err = location_copy->error;
		sb_error_prefix(err, "%s", location_copy->path);
		return false;
	}
	return sb_error_set(err, SB_ECORRUPT, "%s%s",
						s->rejected[0] ? s->rejected[0] : "manifest copy cannot be authenticated",
						s->nothers > 0 ? "; no other copy found is the backup's either" :
						"; no other copy of it was found");
}

static void
free_search(Search *s)
{
	uint32_t	i;

	for (i = 0; i < s->nqueued; i++)
		free(s->queue[i]);
	for (i = 0; i < s->nrejected; i++)
		free(s->rejected[i]);
	free(s);
}

/*
 * The location's copy first; then, while none is the backup's, the copies
 * in every destination the manifests read so far name.
 */
static bool
search(SbArchive *a, Search *s, Candidate *location_copy, SbError *err)
{
	Candidate	c;

	s->next = 1;				/* the location's copy is read already */
	if (acceptable(s, location_copy))
		return adopt(a, location_copy, true, err);
	reject(s, location_copy);
	for (uint32_t i = 0; i < s->expect->nfolders; i++)
		enqueue(s, s->expect->folders[i]);
	enqueue_candidates_of(s, location_copy);
	while (s->next < s->nqueued)
	{
		if (!load_candidate(&c, s->queue[s->next++], s->s3, s->key, s->keep, s->spool_dir))
		{
			if (c.error.code != SB_ENOTFOUND)
				reject(s, &c);
			free_candidate(&c);
			continue;
		}
		s->nothers++;
		if (c.m == NULL && c.error.code == SB_EKEY)
		{
			/* the key is the user's to fix, not a copy's damage */
			*err = c.error;
			free_candidate(&c);
			return false;
		}
		if (acceptable(s, &c))
		{
			bool		ok = note_rejected(a, s, c.folder, err) && adopt(a, &c, true, err);

			free_candidate(&c);
			return ok;
		}
		reject(s, &c);
		enqueue_candidates_of(s, &c);
		free_candidate(&c);
	}
	/* Nothing could be authenticated because no stripe could be read. */
	if (!s->any_witness && location_copy->m != NULL && meets_expectation(s, location_copy))
		return adopt(a, location_copy, false, err);
	return refuse(s, location_copy, err);
}

bool
sb_archive_authenticate(SbArchive *a, const SbArchiveExpect *expect, SbError *err)
{
	Search	   *s = sb_alloc(sizeof(Search), err);
	Candidate	location_copy;
	bool		ok;

	if (s == NULL)
		return false;
	s->location = a->location;
	s->s3 = a->s3;
	s->key = a->key;
	s->expect = expect;
	s->keep = a->keep;
	s->spool_dir = a->spool_dir;
	/* The location's own copy must exist: else this is no backup folder. */
	if (!load_candidate(&location_copy, a->location, a->s3, a->key, a->keep, a->spool_dir) ||
		(location_copy.m == NULL && location_copy.error.code == SB_EKEY))
	{
		*err = location_copy.error;
		free_candidate(&location_copy);
		free_search(s);
		return false;
	}
	enqueue(s, a->location);
	if (s->nqueued == 0)
		ok = sb_error_set(err, SB_ENOTFOUND, "\"%s\" is not a folder", a->location);
	else
		ok = search(a, s, &location_copy, err);
	free_candidate(&location_copy);
	free_search(s);
	return ok;
}

bool
sb_archive_recheck_stripe(SbArchive *a, uint32_t i, SbError *err)
{
	SbTrailer	t;

	if (a->authenticated || !read_trailer(a->stripe_paths[i], a->s3, &t))
		return true;
	if (records(&t, a->manifest))
		a->authenticated = true;
	else if (memcmp(t.uuid, a->manifest->uuid, 16) == 0)
		return sb_error_set(err, SB_ECORRUPT,
							"manifest copy \"%s\" differs from what backup \"%s\" wrote (stripe %u, \"%s\", records another SHA-256); open the backup from another copy",
							a->manifest_path, a->manifest->name, i + 1, a->stripe_paths[i]);
	return true;
}

/* The copy in FOLDER, if there is one, is the manifest in use byte for byte; else WHY. */
static bool
copy_is_equal(const SbArchive *a, const char *folder, char *path, size_t pathlen,
			  SbError *why)
{
	uint8_t		sha[SB_SHA256_LEN];
	uint64_t	len = 0;
	bool		same;

	snprintf(path, pathlen, "%s/%s", folder, SB_MANIFEST_FILE);
	if (!sb_manifest_digest_path(path, a->s3, sha, &len, why))
		return why->code == SB_ENOTFOUND;	/* no copy there: nothing differs */
	same = len == a->manifest->json_length &&
		memcmp(sha, a->manifest->json_sha256, SB_SHA256_LEN) == 0;
	if (!same)
		sb_error_set(why, SB_ECORRUPT,
					 "differs from the one backup \"%s\" wrote (its SHA-256 is not the one the stripes record)",
					 a->manifest->name);
	return same;
}

uint64_t
sb_archive_report_copies(const SbArchive *a, SbProblemFn on_problem, void *problem_arg)
{
	Search	   *s;
	SbError		why;
	uint64_t	problems = 0;
	uint32_t	i;

	s = sb_alloc(sizeof(Search), &why);
	if (s == NULL)
		return 0;
	enqueue(s, a->location);
	enqueue_destinations(s, a->manifest);
	for (i = 0; i < s->nqueued; i++)
	{
		char		path[PATH_MAX + 32];
		char		message[SB_ERROR_MESSAGE_MAX + PATH_MAX + 64];
		SbProblem	problem;

		sb_error_clear(&why);
		if (copy_is_equal(a, s->queue[i], path, sizeof(path), &why))
			continue;
		snprintf(message, sizeof(message), "manifest copy \"%s\" %s", path, why.message);
		memset(&problem, 0, sizeof(problem));
		problem.chunk = -1;
		problem.code = SB_ECORRUPT;
		problem.message = message;
		if (on_problem != NULL)
			on_problem(problem_arg, &problem);
		problems++;
	}
	free_search(s);
	return problems;
}
