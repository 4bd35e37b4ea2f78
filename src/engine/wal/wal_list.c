/*
 * wal_list.c
 *		What a WAL archive holds, from the headers alone, and a verify that
 *		reads every file whole.
 *
 * A listing reads 128 bytes per file, so it is cheap enough for a view.
 * Only "<walname>.sbw" files are listed; temporary files and anything else
 * a folder holds are not the archive's and are passed over.  What cannot
 * be listed (a damaged header, a missing destination, a link where a
 * folder or file should be) is a problem of the listing, named, and the
 * rest is still listed.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/parallel.h"
#include "wal/wal_internal.h"

#define MAX_VERIFIERS 8

typedef struct Lister
{
	const SbWalDests *dests;
	SbWalListing *l;
	size_t		entries_cap;
	size_t		problems_cap;
} Lister;

/* A problem of file NAME ("" for a destination's), of CODE. */
static bool
add_problem(Lister *ls, const char *name, SbErrorCode code, SbError *err, const char *fmt,...)
			__attribute__((format(printf, 5, 6)));

static bool
add_problem(Lister *ls, const char *name, SbErrorCode code, SbError *err, const char *fmt,...)
{
	char		text[SB_ERROR_MESSAGE_MAX];
	SbWalProblem *p;
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (!sb_grow((void **) &ls->l->problems, &ls->problems_cap, ls->l->nproblems, sizeof(SbWalProblem), err))
		return false;
	p = &ls->l->problems[ls->l->nproblems];
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->code = code;
	if ((p->message = sb_strdup(text, err)) == NULL)
		return false;
	ls->l->nproblems++;
	return true;
}

static bool
add_entry(Lister *ls, uint32_t d, const SbWalHeader *h, SbError *err)
{
	SbWalEntry *e;

	if (!sb_grow((void **) &ls->l->entries, &ls->entries_cap, ls->l->count, sizeof(SbWalEntry), err))
		return false;
	e = &ls->l->entries[ls->l->count++];
	sb_wal_header_info(h, &e->info);
	e->destination = d;
	return true;
}

/* One "<name>.sbw" of FOLDER in destination D: its header, or a problem. */
static bool
list_file(Lister *ls, uint32_t d, SbWalFolder *folder, const char *file, const char *name,
		  SbError *err)
{
	SbWalFileIn in;
	SbWalHeader h;
	SbError		why;
	bool		good;

	if (!sb_wal_folder_open_file(folder, file, &in, &why))
	{
		if (why.code == SB_ENOTFOUND)
			return true;		/* removed meanwhile */
		return add_problem(ls, name, why.code, err, "%s", why.message);
	}
	good = sb_wal_file_read_header(&in.store, ls->dests->key, &h, NULL, &why) &&
		sb_wal_header_is(&h, ls->dests->system_identifier, name, &why);
	sb_wal_file_in_close(&in);
	if (good)
		return add_entry(ls, d, &h, err);
	return add_problem(ls, name, why.code, err, "%s%s%s", strstr(why.message, in.path) ? "" : in.path,
					   strstr(why.message, in.path) ? "" : ": ", why.message);
}

/* What listing one folder needs in its callback. */
typedef struct FolderListing
{
	Lister	   *ls;
	uint32_t	d;
	SbWalFolder *folder;
} FolderListing;

/* An SbWalEntryFn: "<walname>.sbw" entries are listed, everything else passed over. */
static bool
list_entry(void *arg, const char *entry, int64_t size, SbError *err)
{
	FolderListing *fl = arg;
	char		name[SB_WAL_NAME_MAX + 1];
	SbWalName	parsed;
	bool		temp;

	(void) size;
	if (!sb_wal_parse_file_name(entry, name, &parsed, &temp) || temp)
		return true;
	return list_file(fl->ls, fl->d, fl->folder, entry, name, err);
}

static bool
list_destination(Lister *ls, uint32_t d, SbError *err)
{
	SbWalFolder folder;
	FolderListing fl = {.ls = ls, .d = d, .folder = &folder};
	SbError		why;
	bool		ok;

	if (!sb_wal_folder_open(ls->dests->paths[d], ls->dests->s3, ls->dests->system_identifier, false, &folder, &why))
		return add_problem(ls, "", why.code, err, "%s", why.message);
	sb_error_clear(&why);
	ok = folder.absent || sb_wal_folder_list(&folder, list_entry, &fl, &why);
	sb_wal_folder_close(&folder);
	/*
	 * The listing's own failure (out of memory, a cancel) stops it; so does
	 * a server whose listing cannot be read to its end (one that loops, a
	 * page too large: SB_ECORRUPT), since what the folder holds is then
	 * unknown, and "not in the archive" would end a recovery early.  Any
	 * other failure of the folder is a problem of it.
	 */
	if (!ok && (why.code == SB_ENOMEM || why.code == SB_ECANCELED || why.code == SB_ECORRUPT))
		return (*err = why, false);
	if (!ok)
		return add_problem(ls, "", why.code, err, "%s", why.message);
	return true;
}

static int
compare_entries(const void *a, const void *b)
{
	const SbWalEntry *x = a;
	const SbWalEntry *y = b;
	int			c = strcmp(x->info.name, y->info.name);

	if (c != 0)
		return c;
	return x->destination < y->destination ? -1 : x->destination > y->destination;
}

bool
sb_wal_list(const SbWalDests *dests, SbWalListing *l, SbError *err)
{
	Lister		ls = {.dests = dests, .l = l};
	uint32_t	d;

	memset(l, 0, sizeof(*l));
	sb_error_clear(err);
	if (!sb_wal_check_dests(dests, err))
		return false;
	for (d = 0; d < dests->count; d++)
		if (!list_destination(&ls, d, err))
		{
			sb_wal_listing_free(l);
			return false;
		}
	if (l->count > 1)
		qsort(l->entries, l->count, sizeof(SbWalEntry), compare_entries);
	return true;
}

void
sb_wal_listing_free(SbWalListing *l)
{
	size_t		i;

	for (i = 0; i < l->nproblems; i++)
		free(l->problems[i].message);
	free(l->problems);
	free(l->entries);
	memset(l, 0, sizeof(*l));
}

/* ---------- verify ---------- */

typedef struct Verify
{
	const SbWalDests *dests;
	const SbWalListing *l;
	SbWalFolder *folders;		/* one per destination */
	SbWalWorker *workers;
	char	  **problem;		/* per entry: what reading it whole found, or NULL */
	bool	   *failed;			/* per entry: the check failed (even if its message could not be kept) */
} Verify;

/* Read entry I whole, as a get would, writing nothing; a problem is kept for the caller's thread. */
static void
verify_task(void *arg, size_t i, uint32_t slot)
{
	Verify	   *v = arg;
	const SbWalEntry *e = &v->l->entries[i];
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFileIn in;
	SbWalHeader h;
	SbError		err;
	bool		ok;

	sb_wal_file_name(e->info.name, file);
	ok = sb_wal_folder_open_file(&v->folders[e->destination], file, &in, &err);
	if (ok)
	{
		ok = sb_wal_file_read(&v->workers[slot], &in.store, v->dests->system_identifier,
							  e->info.name, &h, NULL, NULL, &err);
		sb_wal_file_in_close(&in);
	}
	if (!ok)
	{
		v->failed[i] = true;
		v->problem[i] = strdup(err.message);
	}
}

/* Entries I and I + 1 are copies of one file: do they agree? */
static bool
copies_differ(const SbWalEntry *a, const SbWalEntry *b)
{
	return strcmp(a->info.name, b->info.name) == 0 &&
		(a->info.raw_bytes != b->info.raw_bytes || a->info.raw_hash != b->info.raw_hash ||
		 a->info.crc32c != b->info.crc32c);
}

static void
report(SbWalProblemFn fn, void *arg, uint64_t *problems, const char *fmt,...)
			__attribute__((format(printf, 4, 5)));

static void
report(SbWalProblemFn fn, void *arg, uint64_t *problems, const char *fmt,...)
{
	char		text[SB_ERROR_MESSAGE_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	(*problems)++;
	if (fn != NULL)
		fn(arg, text);
}

/*
 * A history file is in every destination, a segment in M + 1 with the
 * redundancy M the archive was written with: say where one has fewer
 * copies ("under-replicated": a destination lost, or removed from).
 */
static void
report_spread(const Verify *v, size_t first, size_t n, SbWalProblemFn fn, void *arg,
			  uint64_t *problems)
{
	const SbWalEntry *e = &v->l->entries[first];
	uint32_t	copies = v->dests->redundancy + 1;

	if (e->info.parsed.kind == SB_WAL_HISTORY || e->info.parsed.kind == SB_WAL_BACKUP)
	{
		if (n < v->dests->count)
			report(fn, arg, problems, "\"%s\" is in %zu of the %u destinations; every destination should hold it",
				   e->info.name, n, v->dests->count);
	}
	else if (v->dests->redundancy > 0 && n < copies)
		report(fn, arg, problems, "\"%s\" is under-replicated: in %zu of the %u destinations; "
			   "WAL archive redundancy %u asks for %u", e->info.name, n, v->dests->count,
			   v->dests->redundancy, copies);
}

/* Problems the listing met, then each file's, copies that differ, history files not everywhere. */
static void
report_all(const Verify *v, SbWalProblemFn fn, void *arg, uint64_t *problems)
{
	size_t		i,
				run = 0;

	for (i = 0; i < v->l->nproblems; i++)
		report(fn, arg, problems, "%s", v->l->problems[i].message);
	for (i = 0; i < v->l->count; i++)
	{
		const SbWalEntry *e = &v->l->entries[i];

		if (v->failed[i])
			report(fn, arg, problems, "%s", v->problem[i] ? v->problem[i] :
				   "a file failed its check (out of memory to say more)");
		if (i + 1 < v->l->count && copies_differ(e, e + 1))
			report(fn, arg, problems, "\"%s\" differs between \"%s\" and \"%s\"", e->info.name,
				   v->dests->paths[e->destination], v->dests->paths[e[1].destination]);
		run++;
		if (i + 1 == v->l->count || strcmp(e->info.name, e[1].info.name) != 0)
		{
			report_spread(v, i + 1 - run, run, fn, arg, problems);
			run = 0;
		}
	}
}

static bool
open_verify(Verify *v, uint32_t nworkers, SbError *err)
{
	uint32_t	d;

	if ((v->folders = sb_alloc(v->dests->count * sizeof(SbWalFolder), err)) == NULL)
		return false;
	for (d = 0; d < v->dests->count; d++)
		sb_wal_folder_none(&v->folders[d], v->dests->paths[d]);
	if ((v->problem = sb_alloc((v->l->count + 1) * sizeof(char *), err)) == NULL ||
		(v->failed = sb_alloc((v->l->count + 1) * sizeof(bool), err)) == NULL ||
		(v->workers = sb_alloc(nworkers * sizeof(SbWalWorker), err)) == NULL)
		return false;
	/* A folder the listing could not open has no entries: a failure here changes nothing. */
	for (d = 0; d < v->dests->count; d++)
		if (!sb_wal_folder_open(v->dests->paths[d], v->dests->s3, v->dests->system_identifier, false,
								&v->folders[d], err))
		{
			sb_wal_folder_none(&v->folders[d], v->dests->paths[d]);
			sb_error_clear(err);
		}
	for (d = 0; d < nworkers; d++)
		if (!sb_wal_worker_init(&v->workers[d], SB_CODEC_ZSTD, 1, SB_WAL_PIECE_SIZE, v->dests->key, err))
			return false;
	return true;
}

static void
close_verify(Verify *v, uint32_t nworkers)
{
	size_t		i;

	for (i = 0; v->folders != NULL && i < v->dests->count; i++)
		sb_wal_folder_close(&v->folders[i]);
	for (i = 0; v->problem != NULL && i < v->l->count; i++)
		free(v->problem[i]);
	for (i = 0; v->workers != NULL && i < nworkers; i++)
		if (v->workers[i].in != NULL)
			sb_wal_worker_free(&v->workers[i]);
	free(v->problem);
	free(v->failed);
	free(v->workers);
	free(v->folders);
}

/* Keep in L only the files within FROM and TO (NULL: no bound), and the timeline history files. */
static void
keep_range(SbWalListing *l, const SbWalName *from, const SbWalName *to)
{
	size_t		i,
				n = 0;

	for (i = 0; i < l->count; i++)
	{
		const SbWalName *p = &l->entries[i].info.parsed;

		if (p->kind == SB_WAL_HISTORY ||
			((from == NULL || !sb_wal_position_before(p, from)) &&
			 (to == NULL || !sb_wal_position_before(to, p))))
			l->entries[n++] = l->entries[i];
	}
	l->count = n;
}

/* Parse segment NAME of a range; NULL stays NULL. */
static bool
range_end(const char *name, SbWalName *parsed, const SbWalName **end, SbError *err)
{
	*end = NULL;
	if (name == NULL)
		return true;
	if (!sb_wal_name_parse(name, parsed, err))
		return false;
	if (parsed->kind != SB_WAL_SEGMENT)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a WAL segment", name);
	*end = parsed;
	return true;
}

bool
sb_wal_verify(const SbWalDests *dests, SbWalProblemFn fn, void *arg, uint64_t *files,
			  uint64_t *problems, SbError *err)
{
	return sb_wal_verify_range(dests, NULL, NULL, fn, arg, files, problems, err);
}

bool
sb_wal_verify_range(const SbWalDests *dests, const char *from, const char *to, SbWalProblemFn fn,
					void *arg, uint64_t *files, uint64_t *problems, SbError *err)
{
	SbWalListing l;
	Verify		v = {.dests = dests, .l = &l};
	SbWalName	a,
				b;
	const SbWalName *first,
			   *last;
	uint32_t	nworkers;
	bool		ok;

	*files = *problems = 0;
	if (!range_end(from, &a, &first, err) || !range_end(to, &b, &last, err))
		return false;
	if (!sb_wal_list(dests, &l, err))
		return false;
	keep_range(&l, first, last);
	/* Files of different destinations are read at once: each destination is its own device. */
	nworkers = dests->count < MAX_VERIFIERS ? dests->count : MAX_VERIFIERS;
	ok = open_verify(&v, nworkers, err);
	if (ok)
	{
		sb_parallel_run(l.count, nworkers, verify_task, &v);
		report_all(&v, fn, arg, problems);
		*files = l.count;
	}
	close_verify(&v, nworkers);
	sb_wal_listing_free(&l);
	return ok;
}
