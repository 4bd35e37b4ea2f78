/*
 * wal_find.c
 *		Which destinations hold an archived WAL file.
 *
 * Every destination is looked at, not just until the first copy: a history
 * file is in all of them, and two copies of one name that differ mean the
 * archive holds WAL of two histories (a copy of the cluster promoted and
 * archiving into the same place), which recovery must not pick from at
 * random.  Only headers are read here; sb_wal_get reads a copy whole.
 *
 * "Not in the archive" is said only when every destination could be
 * looked at: recovery ends where the archive has nothing more, so a
 * destination that is missing (an unmounted device) must not pass for
 * one that lacks the file.  An archive written with redundancy M holds
 * every file in M + 1 destinations: with at most M missing, one of the
 * others would hold it, so "not in the archive" is said then too.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "wal/wal_internal.h"

/* What looking for one file found so far. */
typedef struct Search
{
	const SbWalDests *dests;
	const char *name;
	SbWalFound *found;
	SbWalHeader first;			/* the first good copy's header */
	SbError		damage;			/* why the first damaged copy is */
	SbError		unreachable;	/* why the first destination could not be looked at */
} Search;

/* Note destination D as one that could not be looked at, saying why. */
static void
note_unreachable(Search *s, uint32_t d, const SbError *why)
{
	if (s->found->unreachable == 0)
		s->unreachable = *why;
	s->found->unreachable |= (uint64_t) 1 << d;
}

/* A copy with a good header in destination D: the first, or one that must agree with it. */
static bool
take_copy(Search *s, uint32_t d, const SbWalHeader *h, const char *path, SbError *err)
{
	char		a[128],
				b[128];

	if (s->found->holders == 0)
	{
		s->first = *h;
		sb_wal_header_info(h, &s->found->info);
		s->found->destination = d;
	}
	else if (!sb_wal_same_contents(&s->first, h))
	{
		sb_wal_describe_contents(&s->first, a, sizeof(a));
		sb_wal_describe_contents(h, b, sizeof(b));
		return sb_error_set(err, SB_ECORRUPT,
							"the archive holds two different \"%s\": in \"%s\" (%s) and \"%s\" (%s)",
							s->name, s->dests->paths[s->found->destination], a, path, b);
	}
	s->found->holders |= (uint64_t) 1 << d;
	return true;
}

/* Look at the copy of the file in the open FOLDER of destination D. */
static bool
look_in_folder(Search *s, uint32_t d, SbWalFolder *folder, SbError *err)
{
	char		file[SB_WAL_FILE_NAME_MAX];
	SbWalFileIn in;
	SbWalHeader h;
	SbError		why;
	bool		good;

	sb_wal_file_name(s->name, file);
	if (!sb_wal_folder_open_file(folder, file, &in, &why))
	{
		if (why.code == SB_ENOTFOUND)
			return true;
		good = false;
	}
	else
	{
		good = sb_wal_file_read_header(&in.store, s->dests->key, &h, NULL, &why) &&
			sb_wal_header_is(&h, s->dests->system_identifier, s->name, &why);
		if (!good && strstr(why.message, in.path) == NULL)
			sb_error_prefix(&why, "\"%s\"", in.path);
		sb_wal_file_in_close(&in);
	}
	if (good)
		return take_copy(s, d, &h, in.path, err);
	/* A copy that cannot be used, for what it is (damaged, of another version, sealed without the key). */
	if (why.code != SB_ECORRUPT && why.code != SB_EVERSION && why.code != SB_EKEY)
	{
		note_unreachable(s, d, &why);
		return true;
	}
	if (s->found->damaged == 0)
		s->damage = why;
	s->found->damaged |= (uint64_t) 1 << d;
	return true;
}

static bool
look_in_destination(Search *s, uint32_t d, SbError *err)
{
	SbWalFolder folder;
	SbError		why;
	bool		ok;

	if (!sb_wal_folder_open(s->dests->paths[d], s->dests->s3, s->dests->system_identifier, false, &folder, &why))
	{
		note_unreachable(s, d, &why);
		return true;
	}
	ok = folder.absent || look_in_folder(s, d, &folder, err);
	sb_wal_folder_close(&folder);
	return ok;
}

/* Nothing good found: damaged copies, a destination not looked at, or none at all. */
static bool
report_not_found(const Search *s, const char *shown, SbError *err)
{
	if (s->found->damaged != 0)
	{
		*err = s->damage;
		sb_error_prefix(err, s->damage.code == SB_EKEY ? "WAL file \"%s\" cannot be read without its key" :
						"every copy of WAL file \"%s\" in the archive is damaged", shown);
		return false;
	}
	if (s->found->unreachable != 0 &&
		(uint32_t) __builtin_popcountll(s->found->unreachable) > s->dests->redundancy)
	{
		*err = s->unreachable;
		err->code = SB_EIO;
		sb_error_prefix(err, "cannot tell whether the archive holds WAL file \"%s\"", shown);
		return false;
	}
	return sb_error_set(err, SB_ENOTFOUND, "WAL file \"%s\" is not in the archive", shown);
}

bool
sb_wal_find(const SbWalDests *dests, const char *name, SbWalFound *found, SbError *err)
{
	Search		s = {.dests = dests, .name = name, .found = found};
	SbWalName	parsed;
	char		shown[SB_WAL_PRINTABLE_MAX];
	uint32_t	d;

	memset(found, 0, sizeof(*found));
	sb_error_clear(err);
	if (!sb_wal_check_dests(dests, err) || !sb_wal_name_parse(name, &parsed, err))
		return false;
	for (d = 0; d < dests->count; d++)
		if (!look_in_destination(&s, d, err))
			return false;
	if (found->holders != 0)
		return true;
	sb_wal_printable(name, shown, sizeof(shown));
	return report_not_found(&s, shown, err);
}
