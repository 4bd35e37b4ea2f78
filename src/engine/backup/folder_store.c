/*
 * folder_store.c
 *		Removing one backup from a store whose folders are not descriptors
 *		(an object-storage destination): the files below DEST/NAME, and only
 *		if every one of them proves itself the backup's (the manifest by its
 *		backup_uuid, a stripe by the uuid and number in its header, a kept
 *		backup's label by the backup_uuid in it), as
 *		folder.c does for a folder through its descriptors.  Anything else
 *		there keeps all of it.  The manifest goes first, so that a removal
 *		cut short leaves a backup that is visibly incomplete, not one that
 *		looks whole and is not.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_keep.h"
#include "stripebackup/sb_policy.h"
#include "backup/folder_internal.h"
#include "format/format.h"
#include "store/store.h"

/* the manifest, its temporary file, a label and the stripes fit */
#define MAX_FILES (2 * SB_MAX_STRIPES + 3)
#define NAME_LEN 256

typedef struct Listing
{
	char		names[MAX_FILES][NAME_LEN];	/* relative to the backup's folder */
	uint64_t	sizes[MAX_FILES];
	unsigned	n;
	bool		too_many;
} Listing;

/* An SbStoreEntryFn: every file below the backup's folder, kept (a name too long for one is too many). */
static bool
collect(void *arg, const char *name, int64_t size, SbError *err)
{
	Listing    *l = arg;

	if (l->n == MAX_FILES || strlen(name) >= NAME_LEN)
	{
		l->too_many = true;
		return true;
	}
	snprintf(l->names[l->n], NAME_LEN, "%s", name);
	l->sizes[l->n++] = size < 0 ? 0 : (uint64_t) size;
	return true;
}

/* Reads a manifest a range at a time. */
typedef struct FileText
{
	SbStoreFile *file;
	uint64_t	offset;
} FileText;

static ssize_t
read_file_text(void *arg, char *buf, size_t len, SbError *err)
{
	FileText   *t = arg;
	ssize_t		got = sb_store_pread(t->file, buf, len, t->offset, err);

	if (got > 0)
		t->offset += (uint64_t) got;
	return got;
}

/* Is REL of backup folder S the manifest of the backup UUID_HEX? */
static bool
manifest_is_ours(SbStore *s, const char *rel, const char *uuid_hex)
{
	SbStoreFile f;
	FileText	text = {&f, 0};
	char		path[PATH_MAX + NAME_LEN + 2];
	SbError		err;
	bool		ours;

	if (!sb_store_open_in(s, rel, &f, path, sizeof(path), &err))
		return false;
	ours = sb_folder_manifest_names(read_file_text, &text, uuid_hex);
	sb_store_close(&f);
	return ours;
}

/* Is REL of backup folder S stripe NUMBER of the backup UUID? */
static bool
stripe_is_ours(SbStore *s, const char *rel, uint32_t number, const uint8_t uuid[16])
{
	uint8_t		raw[SB_STRIPE_HEADER_SIZE];
	SbStoreFile f;
	SbStripeHeader h;
	char		path[PATH_MAX + NAME_LEN + 2];
	SbError		err;
	bool		ours;

	if (!sb_store_open_in(s, rel, &f, path, sizeof(path), &err))
		return false;
	ours = sb_store_pread(&f, raw, sizeof(raw), 0, &err) == (ssize_t) sizeof(raw) &&
		sb_format_decode_header(raw, &h, &err) && memcmp(h.uuid, uuid, 16) == 0 && h.number == number;
	sb_store_close(&f);
	return ours;
}

/* Is REL of backup folder S the label (keep.json) of the backup UUID_HEX?  Read through S, with its settings. */
static bool
keep_label_is_ours(SbStore *s, const char *rel, const char *uuid_hex)
{
	char		path[PATH_MAX + NAME_LEN + 2];
	SbStoreFile f;
	char	   *text;
	ssize_t		len;
	SbError		err;
	bool		ours;

	if ((text = malloc(SB_KEEP_LABEL_MAX_BYTES + 1)) == NULL)
		return false;
	if (!sb_store_open_in(s, rel, &f, path, sizeof(path), &err))
	{
		free(text);
		return false;
	}
	/* one byte more than a label may be: a larger file reads long and is not one */
	len = sb_store_pread(&f, text, SB_KEEP_LABEL_MAX_BYTES + 1, 0, &err);
	sb_store_close(&f);
	ours = len >= 0 && len <= SB_KEEP_LABEL_MAX_BYTES && sb_keep_label_names(text, (size_t) len, uuid_hex);
	free(text);
	return ours;
}

/* Why the file REL of backup folder S is not the backup's; NULL when it is. */
static const char *
foreign(SbStore *s, const char *rel, const uint8_t uuid[16], const char *uuid_hex, char *why, size_t len)
{
	uint32_t	number;

	if (strcmp(rel, SB_MANIFEST_FILE) == 0)
	{
		if (manifest_is_ours(s, rel, uuid_hex))
			return NULL;
		snprintf(why, len, "\"%s/%s\" is not the manifest of backup %s", sb_store_path(s), rel, uuid_hex);
		return why;
	}
	if (strchr(rel, '/') == NULL && sb_policy_parse_stripe_file_name(rel, &number))
	{
		if (stripe_is_ours(s, rel, number, uuid))
			return NULL;
		snprintf(why, len, "\"%s/%s\" is not stripe %u of backup %s", sb_store_path(s), rel, number, uuid_hex);
		return why;
	}
	if (strcmp(rel, SB_KEEP_LABEL_FILE) == 0)
	{
		if (keep_label_is_ours(s, rel, uuid_hex))
			return NULL;
		snprintf(why, len, "\"%s/%s\" is not the label of backup %s", sb_store_path(s), rel, uuid_hex);
		return why;
	}
	snprintf(why, len, "\"%s/%s\" is not a file stripebackup writes", sb_store_path(s), rel);
	return why;
}

/* Remove the listing's files, the manifest first. */
static bool
remove_all(SbStore *s, const Listing *l, SbFolderRemoval *r, SbError *err)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < l->n; i++)
		{
			bool		manifest = strcmp(l->names[i], SB_MANIFEST_FILE) == 0;

			if (manifest != (pass == 0))
				continue;
			if (!sb_store_remove(s, l->names[i], NULL, err))
				return false;
			r->files++;
			r->bytes += l->sizes[i];
		}
	return true;
}

/* Judge (and unless DRY_RUN remove) what the listing of backup folder S holds. */
static bool
clear_folder(SbStore *s, const Listing *l, const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r,
			 SbError *err)
{
	char		uuid_hex[33];
	char		why[PATH_MAX + NAME_LEN + 128];

	sb_folder_uuid_hex(uuid, uuid_hex);
	for (unsigned i = 0; i < l->n; i++)
		if (foreign(s, l->names[i], uuid, uuid_hex, why, sizeof(why)) != NULL)
		{
			sb_folder_set_verdict(r, SB_FOLDER_FOREIGN, "%s; nothing was removed", why);
			return true;
		}
	sb_folder_set_verdict(r, SB_FOLDER_REMOVED, "%s", "");
	if (dry_run)
	{
		for (unsigned i = 0; i < l->n; i++)
			r->files++, r->bytes += l->sizes[i];
		return true;
	}
	return remove_all(s, l, r, err);
}

/* List backup folder S and judge it. */
static bool
judge_folder(SbStore *s, Listing *l, const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r, SbError *err)
{
	if (!sb_store_list_all(s, collect, l, err))
	{
		if (sb_store_container_missing(err))
			sb_folder_set_verdict(r, SB_FOLDER_BUCKET_MISSING, "%s; nothing was removed", err->message);
		else if (err->code == SB_ENOTFOUND)
			sb_folder_set_verdict(r, SB_FOLDER_DESTINATION_MISSING, "%s; nothing was removed", err->message);
		else
			return false;
		sb_error_clear(err);
		return true;
	}
	if (l->too_many)
		sb_folder_set_verdict(r, SB_FOLDER_FOREIGN,
							  "more files below \"%s\" than a backup writes; nothing was removed", sb_store_path(s));
	else if (l->n == 0)
		sb_folder_set_verdict(r, SB_FOLDER_ABSENT, "%s", "");
	else
		return clear_folder(s, l, uuid, dry_run, r, err);
	return true;
}

bool
sb_backup_folder_remove_store(const char *destination, const SbS3Settings *s3, const char *name,
							  const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r, SbError *err)
{
	SbStore    *root,
			   *folder = NULL;
	Listing    *l = calloc(1, sizeof(Listing));
	bool		ok;

	if (l == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing \"%s\"", destination);
	if ((root = sb_store_new(destination, &(SbStoreOptions) {.s3 = s3}, err)) == NULL)
	{
		free(l);
		return false;
	}
	ok = sb_store_enter(root, name, false, &folder, err);
	if (ok && folder == NULL)
		sb_folder_set_verdict(r, SB_FOLDER_ABSENT, "%s", "");
	else if (ok)
		ok = judge_folder(folder, l, uuid, dry_run, r, err);
	sb_store_free(folder);
	sb_store_free(root);
	free(l);
	return ok;
}
