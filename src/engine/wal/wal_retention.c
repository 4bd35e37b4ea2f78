/*
 * wal_retention.c
 *		Removing the archived WAL that no backup needs any more: every
 *		segment before a given one, as pg_archivecleanup does (whatever the
 *		timeline: only the log and segment fields are compared), but never
 *		a timeline history file, which stays needed to follow timelines.
 *
 * A file goes only if it proves it is this archive's: a ".sbw" whose header
 * is valid, of this system identifier and of its own name, or a temporary
 * file a crash left whose provisional header says the same.  Files in the
 * clear and sealed ones both go, whatever the key: an archive that came to
 * be sealed still sheds its older files; a sealed file's tag is checked
 * when the key is given, and without it the file is recognised by its
 * fields, as an encrypted backup's envelope is.  Every local
 * file is opened through the folder's descriptor without following a link,
 * checked, and removed by unlinkat() only if it is still the file that was
 * checked; a bucket's object is read, checked and deleted by its key.
 * A user's file, a link, anything unproven is kept and counted.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "wal/wal_internal.h"

typedef struct Cleaner
{
	const SbWalDests *dests;
	SbWalName	before;
	bool		dry_run;
	SbWalRemoval *r;
} Cleaner;

static void
note(SbWalRemoval *r, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* Add a note to what DETAIL says, after a "; " (as much as fits). */
static void
note(SbWalRemoval *r, const char *fmt,...)
{
	size_t		used = strlen(r->detail);
	va_list		ap;

	if (used > 0 && used + 2 < sizeof(r->detail))
		used += (size_t) snprintf(r->detail + used, sizeof(r->detail) - used, "; ");
	if (used + 1 >= sizeof(r->detail))
		return;
	va_start(ap, fmt);
	vsnprintf(r->detail + used, sizeof(r->detail) - used, fmt, ap);
	va_end(ap);
}

/* Does the open file F prove it is NAME of this archive?  WHY says what it lacks otherwise. */
static bool
proves_ours(const Cleaner *c, SbStoreFile *f, const char *name, bool temp, SbError *why)
{
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbWalHeader h;
	ssize_t		n = sb_store_pread(f, raw, sizeof(raw), 0, why);

	if (n < 0)
		return false;
	if ((size_t) n < sizeof(raw))
		return sb_error_set(why, SB_ECORRUPT, "\"%s\" holds no header", f->path);
	if (!sb_wal_header_recognise(raw, c->dests->key, temp, &h, why))
	{
		sb_error_prefix(why, "\"%s\"", f->path);
		return false;
	}
	if (!temp && f->size != SB_WAL_HEADER_SIZE + h.stored_len)
		return sb_error_set(why, SB_ECORRUPT, "\"%s\" is %" PRIu64 " bytes long; its header says %" PRIu64,
							f->path, f->size, SB_WAL_HEADER_SIZE + h.stored_len);
	return sb_wal_header_is(&h, c->dests->system_identifier, name, why);
}

/* One file of FOLDER, before the cutoff: removed if it proves it is ours, else kept and said. */
static bool
clean_file(const Cleaner *c, SbWalFolder *folder, const char *file, const char *name, bool temp,
		   SbError *err)
{
	SbWalFileIn in;
	SbWalStamp	stamp;
	SbError		why;
	bool		ours = false;

	if (!sb_wal_folder_open_file(folder, file, &in, &why))
	{
		if (why.code == SB_ENOTFOUND)
			return true;
	}
	else
	{
		/* The file checked is the one removed: its stamp is taken through the open file. */
		ours = sb_store_stamp_open(folder->store, &in.store, &stamp) &&
			proves_ours(c, &in.store, name, temp, &why);
		sb_wal_file_in_close(&in);
	}
	if (!ours)
	{
		/* The first is enough to say what to look at; the count says how many. */
		if (c->r->kept++ == 0)
			note(c->r, "kept %s", why.message);
		return true;
	}
	if (!c->dry_run && !sb_wal_folder_remove(folder, file, &stamp, err))
		return false;
	c->r->files++;
	c->r->bytes += (uint64_t) stamp.st.st_size;
	return true;
}

/* Is ENTRY a file of a segment, partial segment or backup history before the cutoff? */
static bool
before_cutoff(const Cleaner *c, const char *entry, char name[SB_WAL_NAME_MAX + 1], bool *temp)
{
	SbWalName	parsed;

	return sb_wal_parse_file_name(entry, name, &parsed, temp) && parsed.kind != SB_WAL_HISTORY &&
		sb_wal_position_before(&parsed, &c->before);
}

/* What cleaning one folder needs in its callback. */
typedef struct FolderCleaning
{
	const Cleaner *c;
	SbWalFolder *folder;
	bool		failed;			/* a file's removal failed (not the listing) */
} FolderCleaning;

/* An SbWalEntryFn: a file before the cutoff is cleaned, anything else left. */
static bool
clean_entry(void *arg, const char *entry, int64_t size, SbError *err)
{
	FolderCleaning *fc = arg;
	char		name[SB_WAL_NAME_MAX + 1];
	bool		temp;

	(void) size;
	if (!before_cutoff(fc->c, entry, name, &temp))
		return true;
	fc->failed = !clean_file(fc->c, fc->folder, entry, name, temp, err);
	return !fc->failed;
}

static bool
clean_folder(const Cleaner *c, SbWalFolder *folder, SbError *err)
{
	FolderCleaning fc = {.c = c, .folder = folder};
	uint64_t	removed_before = c->r->files;

	if (!sb_wal_folder_list(folder, clean_entry, &fc, err))
	{
		/* A lazy store (a bucket) that cannot be listed is skipped, as a local destination that is missing. */
		if (!(sb_wal_folder_features(folder) & SB_STORE_LAZY) || fc.failed)
			return false;
		note(c->r, "skipped: %s", err->message);
		sb_error_clear(err);
		return true;
	}
	/* The removals last too: a retention that said it freed space has freed it. */
	return c->dry_run || c->r->files == removed_before || sb_wal_folder_sync(folder, err);
}

static bool
clean_destination(const Cleaner *c, uint32_t d, SbError *err)
{
	SbWalFolder folder;
	SbError		why;
	bool		ok;

	if (!sb_wal_folder_open(c->dests->paths[d], c->dests->s3, c->dests->system_identifier, false, &folder, &why))
	{
		note(c->r, "nothing removed: %s", why.message);
		return true;
	}
	ok = folder.absent || clean_folder(c, &folder, err);
	sb_wal_folder_close(&folder);
	return ok;
}

bool
sb_wal_remove_before(const SbWalDests *dests, const char *before, bool dry_run, SbWalRemoval *r,
					 SbError *err)
{
	Cleaner		c = {.dests = dests, .dry_run = dry_run, .r = r};
	uint32_t	d;

	memset(r, 0, sizeof(*r));
	sb_error_clear(err);
	if (!sb_wal_check_dests(dests, err) || !sb_wal_name_parse(before, &c.before, err))
		return false;
	if (c.before.kind == SB_WAL_HISTORY)
		return sb_error_set(err, SB_EINVAL, "\"%s\" is a timeline history file, not a segment to remove WAL before",
							before);
	for (d = 0; d < dests->count; d++)
		if (!clean_destination(&c, d, err))
			return false;
	return true;
}
