/*
 * list_rows.c
 *		The rows of "stripebackup list" (list_rows.h): each destination
 *		walked (catalog_walk.c), each backup's manifest opened once, from
 *		the first destination that holds a copy; its other folders, which
 *		the manifest names as where its stripes are, join its row without
 *		being opened again.  A folder without a manifest is a backup that
 *		did not complete, unless it is where an opened backup's stripe is
 *		(that backup's manifest copy is missing there: it is damaged).
 *		A backup kept by stripe_keep() has a label beside the manifest that
 *		was opened (keep.json): shown, never acted on, since nothing
 *		authenticates it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "catalog_walk.h"
#include "list_rows.h"
#include "stripebackup/sb_keep.h"
#include "stripebackup/sb_pgmeta.h"

typedef struct Gather
{
	ListRows   *rows;
	bool		oom;
} Gather;

static char *
dup_or_null(Gather *g, const char *s)
{
	char	   *d;

	if (s == NULL)
		return NULL;
	if ((d = strdup(s)) == NULL)
		g->oom = true;
	return d;
}

static bool
has_string(char *const *list, uint32_t n, const char *s)
{
	uint32_t	i;

	for (i = 0; i < n; i++)
		if (strcmp(list[i], s) == 0)
			return true;
	return false;
}

/* LOCATION among ROW's folders, once. */
static void
add_folder(Gather *g, ListRow *row, const char *location)
{
	if (row->nfolders < SB_MAX_STRIPES && !has_string(row->folders, row->nfolders, location))
		row->folders[row->nfolders++] = dup_or_null(g, location);
}

/* A new, empty row; NULL when out of memory. */
static ListRow *
new_row(Gather *g, const char *location)
{
	ListRows   *r = g->rows;
	ListRow    *grown = realloc(r->rows, (r->count + 1) * sizeof(ListRow));
	const char *slash = strrchr(location, '/');
	ListRow    *row;

	if (grown == NULL)
		return (g->oom = true), NULL;
	r->rows = grown;
	row = &r->rows[r->count++];
	memset(row, 0, sizeof(*row));
	row->name = dup_or_null(g, slash != NULL ? slash + 1 : location);
	add_folder(g, row, location);
	return row;
}

/* The row whose backup has a stripe, or a folder, at LOCATION; NULL if none. */
static ListRow *
row_at(ListRows *r, const char *location, bool opened_only)
{
	size_t		i;

	for (i = 0; i < r->count; i++)
	{
		ListRow    *row = &r->rows[i];

		if (opened_only && row->uuid[0] == '\0')
			continue;
		if (has_string(row->stripe_folders, row->nstripe_folders, location) ||
			has_string(row->folders, row->nfolders, location))
			return row;
	}
	return NULL;
}

/* A catalog walk's "wanted": a folder already in an opened backup's row joins it, unopened. */
static bool
wanted(void *arg, const char *location)
{
	Gather	   *g = arg;
	ListRow    *row = row_at(g->rows, location, true);

	if (row == NULL)
		return true;
	add_folder(g, row, location);
	return false;
}

/* What the manifest says: name, type, chain, times, WAL. */
static void
fill_from_manifest(Gather *g, ListRow *row, const SbManifest *m)
{
	SbPgMeta	meta;
	SbError		err;

	free(row->name);
	row->name = dup_or_null(g, m->name);
	cli_format_id(m->uuid, row->uuid);
	row->label = dup_or_null(g, m->label);
	row->type = m->type;
	if (m->parent != NULL)
	{
		row->parent_name = dup_or_null(g, m->parent->name);
		cli_format_id(m->parent->uuid, row->parent_uuid);
	}
	row->started_at = dup_or_null(g, m->started_at);
	row->finished_at = dup_or_null(g, m->finished_at);
	row->encrypted = m->encrypted;
	row->nstripes = m->nstripes;
	if (!sb_pgmeta_read(m, &meta, &err))
		return;
	row->system_identifier = dup_or_null(g, meta.system_identifier);
	row->start_lsn = dup_or_null(g, meta.start_lsn);
	row->stop_lsn = dup_or_null(g, meta.stop_lsn);
	row->timeline = meta.timeline;
	sb_pgmeta_free(&meta);
}

/* Sizes, where the stripes are, and the cheap checks. */
static void
fill_from_plan(Gather *g, ListRow *row, const SbArchive *a)
{
	SbPlan		plan;
	SbError		err;
	char		problem[1024];
	uint32_t	i;

	if (!sb_archive_plan(a, &plan, &err))
	{
		row->status = LIST_DAMAGED;
		row->problem = dup_or_null(g, err.message);
		return;
	}
	row->data_bytes = plan.raw_bytes;
	row->stored_bytes = plan.stored_bytes;
	for (i = 0; i < plan.nstripes && i < SB_MAX_STRIPES; i++)
	{
		const char *slash = strrchr(plan.stripes[i].path, '/');

		if (slash == NULL)
			continue;
		if ((row->stripe_folders[row->nstripe_folders] =
			 strndup(plan.stripes[i].path, (size_t) (slash - plan.stripes[i].path))) == NULL)
			g->oom = true;
		else
			row->nstripe_folders++;
	}
	row->status = sb_catalog_check_backup(a, &plan, problem, sizeof(problem)) ? LIST_COMPLETE : LIST_DAMAGED;
	if (row->status != LIST_COMPLETE)
		row->problem = dup_or_null(g, problem);
}

static void
free_row(ListRow *row)
{
	uint32_t	i;

	free(row->name);
	free(row->label);
	free(row->parent_name);
	free(row->problem);
	free(row->note);
	free(row->started_at);
	free(row->finished_at);
	free(row->system_identifier);
	free(row->start_lsn);
	free(row->stop_lsn);
	for (i = 0; i < row->nfolders; i++)
		free(row->folders[i]);
	for (i = 0; i < row->nstripe_folders; i++)
		free(row->stripe_folders[i]);
}

/*
 * Rows without a manifest whose every folder is where OPENED's stripes are
 * were that backup's folders missing their manifest copy: they join it.
 */
static void
absorb_unopened(Gather *g, ListRow *opened)
{
	ListRows   *r = g->rows;
	size_t		i = 0;
	uint32_t	k;

	while (i < r->count)
	{
		ListRow    *row = &r->rows[i];
		bool		inside = row != opened && row->uuid[0] == '\0' && row->nfolders > 0;

		for (k = 0; inside && k < row->nfolders; k++)
			inside = has_string(opened->stripe_folders, opened->nstripe_folders, row->folders[k]);
		if (!inside)
		{
			i++;
			continue;
		}
		for (k = 0; k < row->nfolders; k++)
			add_folder(g, opened, row->folders[k]);
		free_row(row);
		/* the rows after it move down one, OPENED among them if it was after */
		memmove(row, row + 1, (r->count - i - 1) * sizeof(ListRow));
		r->count--;
		if (opened > row)
			opened--;
	}
}

/* The status of a folder whose manifest could not be read (F->open_error), or that has none. */
static ListStatus
unopened_status(const CliFolder *f)
{
	if (f->open_error == NULL)
		return LIST_INCOMPLETE;
	return f->open_error->code == SB_EKEY ? LIST_UNKNOWN : LIST_DAMAGED;
}

/* A folder whose manifest could not be read, or that has none. */
static void
found_unopened(Gather *g, const CliFolder *f)
{
	ListRow    *row;
	char		problem[1024];

	if (f->open_error == NULL && (row = row_at(g->rows, f->location, false)) != NULL)
	{
		add_folder(g, row, f->location);
		return;
	}
	/*
	 * The same backup in another destination, its manifest unread (it did
	 * not complete, or no key opens it): one row, by its folder's name, as
	 * one backup's folders are named alike in every destination.
	 */
	for (row = g->rows->rows; row < g->rows->rows + g->rows->count; row++)
		if (row->uuid[0] == '\0' && row->status == unopened_status(f) && strcmp(row->name, f->entry->name) == 0)
		{
			add_folder(g, row, f->location);
			return;
		}
	if ((row = new_row(g, f->location)) == NULL)
		return;
	if (f->open_error != NULL)
	{
		row->status = unopened_status(f);
		row->encrypted = f->open_error->code == SB_EKEY;
		row->problem = dup_or_null(g, f->open_error->message);
		return;
	}
	row->status = LIST_INCOMPLETE;
	snprintf(problem, sizeof(problem), "stripe files and no %s: a backup that did not complete",
			 SB_MANIFEST_FILE);
	row->problem = dup_or_null(g, problem);
}

/* The label of ROW's backup in the folder at LOCATION, if there is one of that backup. */
static void
fill_from_label(Gather *g, ListRow *row, const char *location)
{
	SbKeepLabel *label = malloc(sizeof(SbKeepLabel));
	SbError		err;

	if (label == NULL)
	{
		g->oom = true;
		return;
	}
	if (sb_keep_label_read(location, NULL, row->uuid, label, &err))
	{
		row->kept = true;
		row->note = label->note[0] != '\0' ? dup_or_null(g, label->note) : NULL;
	}
	else if (err.code != SB_ENOTFOUND)
		fprintf(stderr, "%s: warning: %s\n", progname, err.message);
	free(label);
}

/* A catalog walk's "found": a folder with its manifest opened, or not. */
static void
found(void *arg, const CliFolder *f)
{
	Gather	   *g = arg;
	ListRow    *row;

	if (f->archive == NULL)
	{
		found_unopened(g, f);
		return;
	}
	if ((row = new_row(g, f->location)) == NULL)
		return;
	fill_from_manifest(g, row, f->archive->manifest);
	fill_from_plan(g, row, f->archive);
	fill_from_label(g, row, f->location);
	absorb_unopened(g, row);
}

/* An LSN "X/Y" as a number; 0 for none. */
static unsigned long long
lsn_value(const char *lsn)
{
	unsigned	hi,
				lo;

	if (lsn == NULL || sscanf(lsn, "%X/%X", &hi, &lo) != 2)
		return 0;
	return ((unsigned long long) hi << 32) | lo;
}

/*
 * Newest first: by start time, which is to the second, then by stop LSN
 * (backups of one second), then by name, the later first; rows without a
 * manifest last.
 */
static int
compare_rows(const void *a, const void *b)
{
	const ListRow *x = a,
			   *y = b;
	unsigned long long lx,
				ly;

	if ((x->started_at == NULL) != (y->started_at == NULL))
		return x->started_at == NULL ? 1 : -1;
	if (x->started_at != NULL && strcmp(x->started_at, y->started_at) != 0)
		return strcmp(y->started_at, x->started_at);
	lx = lsn_value(x->stop_lsn);
	ly = lsn_value(y->stop_lsn);
	if (lx != ly)
		return lx < ly ? 1 : -1;
	return strcmp(y->name ? y->name : "", x->name ? x->name : "");
}

bool
list_rows_gather(const char *const *dests, uint32_t ndests, const SbKey *key, ListRows *rows)
{
	Gather		g = {.rows = rows};
	CliWalk		w = {.key = key, .wanted = wanted, .found = found, .arg = &g};
	SbError		err;
	uint32_t	i;

	memset(rows, 0, sizeof(*rows));
	for (i = 0; i < ndests && !g.oom; i++)
	{
		if (cli_catalog_walk(dests[i], &w, &err))
			continue;
		fprintf(stderr, "%s: warning: %s\n", progname, err.message);
		if (err.code == SB_ENOTFOUND)
			rows->missing_destinations++;
		else
			rows->unlisted_destinations++;
	}
	if (rows->count > 1)
		qsort(rows->rows, rows->count, sizeof(ListRow), compare_rows);
	return !g.oom;
}

void
list_rows_free(ListRows *rows)
{
	size_t		i;

	for (i = 0; i < rows->count; i++)
		free_row(&rows->rows[i]);
	free(rows->rows);
	memset(rows, 0, sizeof(*rows));
}

const char *
list_status_name(ListStatus status)
{
	static const char *const names[] = {"complete", "incomplete", "damaged", "unknown"};

	return names[status];
}
