/*
 * archive.c
 *		Opening an archive from one backup folder (archive_auth.c finds the
 *		manifest copy the stripes vouch for), and planning a restore from the
 *		manifest alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "stripebackup/sb_archive.h"
#include "restore/archive_auth.h"
#include "restore/chain.h"
#include "util/fsutil.h"
#include "store/store.h"

/* O->keep's default for the chain's older backups: a new backup reads its parent's files, never those of the parent's parents. */
static SbEntryKeep
parents_keep_of(const SbArchiveOpenOptions *o)
{
	if (o->parents_streamed)
		return SB_KEEP_STREAMED;
	return o->keep == SB_KEEP_LOOKUP ? SB_KEEP_HEAD : o->keep;
}

/* The backup at LOCATION alone, its manifest copy authenticated and as O expects. */
static SbArchive *
open_link(const char *location, const SbArchiveOpenOptions *o, SbError *err)
{
	SbArchive  *a;

	sb_error_clear(err);
	a = sb_alloc(sizeof(SbArchive), err);
	if (a == NULL)
		return NULL;
	a->key = o->key;
	a->s3 = o->s3;
	a->keep = o->keep;
	a->parents_keep = parents_keep_of(o);
	a->location = sb_strdup(location, err);
	if (a->location == NULL ||
		(o->spool_dir != NULL && (a->spool_dir = sb_strdup(o->spool_dir, err)) == NULL) ||
		!sb_archive_authenticate(a, &o->expect, err) || !sb_archive_survey(a, err))
	{
		sb_archive_close(a);
		return NULL;
	}
	return a;
}

SbArchive *
sb_archive_open_with(const char *location, const SbArchiveOpenOptions *o, SbError *err)
{
	SbArchive  *a = open_link(location, o, err);

	if (a != NULL && !o->alone && !sb_archive_open_parents(a, err))
	{
		sb_archive_close(a);
		return NULL;
	}
	return a;
}

SbArchive *
sb_archive_open(const char *location, SbError *err)
{
	return sb_archive_open_with(location, &(SbArchiveOpenOptions){0}, err);
}

SbArchive *
sb_archive_open_parent(const char *folder, const SbArchive *child, SbError *err)
{
	/* bound by the child's manifest (uuid and SHA-256), which chain.c checks: either kind will do */
	SbArchiveOpenOptions o = {.key = child->key, .keep = child->parents_keep, .alone = true,
	.spool_dir = child->spool_dir, .expect = {.encryption = SB_EXPECT_EITHER}, .s3 = child->s3};

	return sb_archive_open_with(folder, &o, err);
}

bool
sb_archive_set_stripe_dir(SbArchive *a, uint32_t number, const char *dir, SbError *err)
{
	char	   *path;

	if (number < 1 || number > a->manifest->nstripes)
		return sb_error_set(err, SB_EINVAL, "stripe %u does not exist: the backup has %u stripes",
							number, a->manifest->nstripes);
	path = sb_path_join(dir, a->manifest->stripes[number - 1].file_name, err);
	if (path == NULL)
		return false;
	free(a->stripe_paths[number - 1]);
	a->stripe_paths[number - 1] = path;
	return sb_archive_recheck_stripe(a, number - 1, err) &&
		sb_archive_survey_stripe(a, number - 1, err);
}

bool
sb_archive_check_entries(const SbArchive *a, SbError *err)
{
	for (; a != NULL; a = a->parent)
		if ((a->manifest->tally != NULL && a->manifest->streamed == NULL) || a->manifest->head_only)
			return sb_error_set(err, SB_EINVAL,
								"backup \"%s\" was opened to plan or check only: its files were %s, not kept",
								a->manifest->name, a->manifest->head_only ? "not read" : "counted");
	return true;
}

void
sb_archive_close(SbArchive *a)
{
	uint32_t	i;

	if (a == NULL)
		return;
	sb_archive_close(a->parent);
	for (i = 0; i < SB_MAX_STRIPES; i++)
	{
		free(a->stripe_paths[i]);
		free(a->lost_why[i]);
	}
	for (i = 0; i < a->nnotes; i++)
		free(a->notes[i]);
	free(a->notes);
	sb_manifest_free(a->manifest);
	free(a->manifest_path);
	free(a->location);
	free(a->spool_dir);
	free(a);
}

/*
 * Count, per stripe, the files with a piece in it: per range of chunks, the
 * files its stream bytes touch.  Ranges come in chunk order, so a stripe's
 * files come in order too and one shared with its previous range counts once.
 */
static bool
count_files_per_stripe(const SbManifest *m, SbPlan *plan, SbError *err)
{
	size_t	   *last = sb_alloc(m->nstripes * sizeof(size_t), err);
	uint32_t	r;
	uint32_t	s;

	if (last == NULL)
		return false;
	for (s = 0; s < m->nstripes; s++)
		last[s] = (size_t) -1;
	for (r = 0; r < m->nchunk_map; r++)
	{
		const SbChunkOwner *o = &m->chunk_map[r];
		uint64_t	start = o->first * m->chunk_size;
		uint64_t	end = (o->last + 1) * m->chunk_size;
		size_t		first = sb_manifest_data_entry_at(m, start);
		size_t		final = sb_manifest_data_entry_at(m, (end < m->stream_bytes ? end : m->stream_bytes) - 1);

		if (first >= m->ndata_entries)
			continue;
		plan->stripes[o->stripe].files += final - first + 1 - (last[o->stripe] == first ? 1 : 0);
		last[o->stripe] = final;
	}
	free(last);
	return true;
}

static void
count_entries(const SbManifest *m, SbPlan *plan)
{
	size_t		i;

	for (i = 0; i < m->nentries; i++)
	{
		const SbEntry *e = &m->entries[i];

		if (e->type == SB_ENTRY_FILE)
		{
			plan->files++;
			plan->logical_bytes += e->size;
		}
		else if (e->type == SB_ENTRY_DIR)
			plan->directories++;
		else
			plan->symlinks++;
	}
}

/* The same counts, made as the manifest was read (SB_KEEP_COUNTS). */
static void
plan_from_tally(const SbEntryTally *t, SbPlan *plan)
{
	uint32_t	s;

	plan->files = t->files;
	plan->directories = t->directories;
	plan->symlinks = t->symlinks;
	plan->logical_bytes = t->logical_bytes;
	for (s = 0; s < plan->nstripes; s++)
		plan->stripes[s].files = t->stripe_files[s];
}

/*
 * A lost stripe is not read: each of its chunks is recovered from K others
 * of its group, about a record from every stripe that is not lost (all of
 * them with M = 1), so each of those reads about the lost one's share
 * more.
 */
static void
plan_lost_stripes(const SbArchive *a, SbPlan *plan)
{
	uint32_t	s,
				t;

	for (s = 0; s < plan->nstripes; s++)
	{
		if (!plan->stripes[s].recoverable)
			continue;
		for (t = 0; t < plan->nstripes; t++)
			if (a->lost_why[t] == NULL)
				plan->stripes[t].recovery_bytes += plan->stripes[s].stored_bytes;
	}
}

bool
sb_archive_plan(const SbArchive *a, SbPlan *plan, SbError *err)
{
	const SbManifest *m = a->manifest;
	uint32_t	s;

	memset(plan, 0, sizeof(*plan));
	plan->nstripes = m->nstripes;
	for (s = 0; s < m->nstripes; s++)
	{
		const SbStripeInfo *info = &m->stripes[s];
		SbPlanStripe *p = &plan->stripes[s];
		uint64_t	size = 0;

		p->number = info->number;
		p->path = a->stripe_paths[s];
		p->present = sb_store_file_size(p->path, a->s3, &size, NULL) && size == info->file_bytes;
		p->file_bytes = info->file_bytes;
		p->chunks = info->chunks;
		p->raw_bytes = info->raw_bytes;
		p->stored_bytes = info->stored_bytes;
		p->write_seconds = info->seconds;
		p->lost_why = a->lost_why[s];
		p->recoverable = p->lost_why != NULL && a->nlost <= m->redundancy.parity;
	}
	plan_lost_stripes(a, plan);
	plan->raw_bytes = m->stream_bytes;
	plan->stored_bytes = m->stored_bytes;
	plan->chunks = m->total_chunks;
	sb_plan_estimate(plan, NULL, NULL, NULL);
	if (m->tally != NULL)
	{
		plan_from_tally(m->tally, plan);
		return true;
	}
	count_entries(m, plan);
	return count_files_per_stripe(m, plan, err);
}

void
sb_plan_estimate(SbPlan *plan, const double *read_mbps, const SbEstimateFrom *from,
				 const SbRestoreCosts *costs)
{
	double		slowest = 0;
	bool		every_speed = read_mbps != NULL;
	uint32_t	s;

	plan->estimate_from = SB_ESTIMATE_NONE;
	for (s = 0; s < plan->nstripes; s++)
	{
		SbPlanStripe *p = &plan->stripes[s];

		p->expected_mbps = read_mbps ? read_mbps[s] : 0;
		p->estimate_from = SB_ESTIMATE_NONE;
		p->estimated_seconds = -1;
		if (p->recoverable)
			continue;			/* not read: the others read its share (recovery_bytes) */
		if (p->expected_mbps > 0)
		{
			p->estimate_from = from ? from[s] : SB_ESTIMATE_RESTORE;
			p->estimated_seconds = (double) (p->stored_bytes + p->recovery_bytes) / 1e6 /
				p->expected_mbps;
			if (p->estimate_from > plan->estimate_from)
				plan->estimate_from = p->estimate_from;
		}
		else if (p->stored_bytes > 0)
			every_speed = false;
		if (p->estimated_seconds > slowest)
			slowest = p->estimated_seconds;
	}
	/*
	 * The stripes are read at once, by CPUs the whole run shares, while the
	 * device written to takes what they give it: the slowest of the three.
	 */
	if (costs != NULL && costs->cpu_per_byte > 0 && costs->cpus > 0 &&
		costs->cpu_per_byte * (double) plan->raw_bytes / costs->cpus > slowest)
		slowest = costs->cpu_per_byte * (double) plan->raw_bytes / costs->cpus;
	if (costs != NULL && costs->write_per_byte * (double) plan->raw_bytes > slowest)
		slowest = costs->write_per_byte * (double) plan->raw_bytes;
	plan->fixed_seconds = costs != NULL && costs->setup_per_file >= 0 && costs->finish_per_byte >= 0 ?
		costs->setup_per_file * (double) plan->files + costs->finish_per_byte * (double) plan->raw_bytes : -1;
	plan->estimated_seconds = every_speed ? slowest + (plan->fixed_seconds > 0 ? plan->fixed_seconds : 0) : -1;
	if (!every_speed)
		plan->estimate_from = SB_ESTIMATE_NONE;
}

const char *
sb_estimate_from_name(SbEstimateFrom from)
{
	return from == SB_ESTIMATE_RESTORE ? "restore" :
		from == SB_ESTIMATE_CALIBRATION ? "calibration" : NULL;
}

bool
sb_archive_has_manifest(const char *location, const SbS3Settings *s3, SbError *err)
{
	char	   *path;
	uint64_t	size;
	bool		found;

	if ((path = sb_path_join(location, SB_MANIFEST_FILE, err)) == NULL)
		return false;
	found = sb_store_file_size(path, s3, &size, err);
	free(path);
	return found;
}
