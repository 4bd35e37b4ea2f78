/*
 * wal_repair.c
 *		"stripebackup wal-verify --redundancy M --repair": copies made again
 *		of the files of a WAL archive that fewer destinations hold than it
 *		was written for (a destination lost and replaced, files removed).
 *
 * A file is restored whole from a good copy, as wal-get does (every check),
 * into a private folder, and pushed again with redundancy M: the push
 * keeps the copies there and writes new ones where the weights (equal
 * here) send them, durably, sealed under the key when there is one, as
 * the archiver would have.  So repair writes nothing the archive's own
 * writer does not write, and a new copy has the same contents as the old
 * (the rule of docs/FORMAT.md 8.1), whatever its compression or salt.
 * What it did goes to stdout, or to stderr under --output=json, whose
 * document stays the verify's alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "wal_args.h"
#include "wal_repair.h"

/* Does entry I start a run of copies of one file that is short of COPIES? */
static bool
short_of(const SbWalListing *l, size_t i, uint32_t ndests, uint32_t copies, size_t *run)
{
	const SbWalEntry *e = &l->entries[i];
	SbWalKind	kind = e->info.parsed.kind;

	for (*run = 1; i + *run < l->count && strcmp(l->entries[i + *run].info.name, e->info.name) == 0;)
		(*run)++;
	if (kind == SB_WAL_HISTORY || kind == SB_WAL_BACKUP)
		return *run < ndests;
	return *run < copies;
}

/* The archive a repair pushes through: the arguments' destinations and key, with their redundancy. */
static SbWalArchive *
open_repairer(const WalArgs *a, const SbWalListing *l, SbError *err)
{
	SbWalArchiveOptions o;
	size_t		i;

	memset(&o, 0, sizeof(o));
	o.destinations = (const char *const *) a->dests;
	o.ndestinations = a->ndests;
	o.system_identifier = a->sysid;
	o.balance = SB_BALANCE_WEIGHTED;
	o.codec = SB_CODEC_ZSTD;
	o.level = 1;
	o.workers = 1;
	o.redundancy = a->redundancy;
	o.encryption_key = a->has_key ? &a->key : NULL;
	for (i = 0; i < l->count && o.segment_size == 0; i++)
		if (l->entries[i].info.parsed.kind == SB_WAL_SEGMENT)
			o.segment_size = (uint32_t) l->entries[i].info.raw_bytes;
	return sb_wal_archive_open(&o, err);
}

/* Restore NAME into FOLDER and push it again; what happened is said on SAY, a failure on stderr. */
static bool
repair_one(SbWalArchive *archive, const SbWalDests *d, const char *folder, const char *name,
		   size_t had, FILE *say)
{
	SbWalGetOptions g;
	SbWalGetResult gr;
	SbWalPushResult r;
	char		path[4096 + SB_WAL_NAME_MAX + 2];
	bool		ok;

	memset(&g, 0, sizeof(g));
	g.dests = *d;
	snprintf(path, sizeof(path), "%s/%s", folder, name);
	if (!sb_wal_get(&g, name, path, &gr, &r.error))
	{
		fprintf(stderr, "%s: error: could not repair \"%s\": %s\n", progname, name, r.error.message);
		return false;
	}
	ok = sb_wal_push(archive, name, path, &r);
	unlink(path);
	if (!ok)
		fprintf(stderr, "%s: error: could not repair \"%s\": %s\n", progname, name, r.error.message);
	else
		fprintf(say, "repaired \"%s\": in %zu destination(s) before, %d now\n", name, had,
				__builtin_popcountll(r.holders));
	return ok;
}

bool
wal_repair(const WalArgs *a, const SbWalDests *d, uint64_t *repaired, uint64_t *failed, SbError *err)
{
	const char *tmp = getenv("TMPDIR");
	char		folder[4096];
	SbWalListing l;
	SbWalArchive *archive;
	size_t		i,
				run;

	*repaired = *failed = 0;
	snprintf(folder, sizeof(folder), "%s/stripebackup-repair-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
	if (!sb_wal_list(d, &l, err))
		return false;
	if ((archive = open_repairer(a, &l, err)) == NULL || mkdtemp(folder) == NULL)
	{
		if (archive != NULL)
			sb_error_set_errno(err, errno, "could not make a folder to repair in");
		sb_wal_archive_close(archive);
		sb_wal_listing_free(&l);
		return false;
	}
	for (i = 0; i < l.count; i += run)
		if (short_of(&l, i, a->ndests, a->redundancy + 1, &run))
			(*(repair_one(archive, d, folder, l.entries[i].info.name, run,
						  a->json ? stderr : stdout) ? repaired : failed))++;
	rmdir(folder);
	sb_wal_archive_close(archive);
	sb_wal_listing_free(&l);
	return true;
}
