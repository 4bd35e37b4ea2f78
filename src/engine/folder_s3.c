/*
 * folder_s3.c
 *		Removing one backup from an object-storage destination: the objects
 *		under prefix/NAME/, and only if every one of them proves itself the
 *		backup's (the manifest by its backup_uuid, a stripe by the uuid and
 *		number in its header), as folder.c does for a folder.  Anything else
 *		under that prefix keeps all of it.  The manifest goes first, so that
 *		a removal cut short leaves a backup that is visibly incomplete, not
 *		one that looks whole and is not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_policy.h"
#include "folder_internal.h"
#include "format.h"
#include "store/s3/s3_client.h"

#define MAX_OBJECTS (2 * SB_MAX_STRIPES)

typedef struct Listing
{
	char		keys[MAX_OBJECTS][SB_S3_KEY_MAX];
	uint64_t	sizes[MAX_OBJECTS];
	unsigned	n;
	bool		too_many;
} Listing;

static bool
collect(void *arg, const SbS3Item *item, SbError *err)
{
	Listing    *l = arg;

	if (l->n == MAX_OBJECTS)
	{
		l->too_many = true;
		return true;
	}
	snprintf(l->keys[l->n], SB_S3_KEY_MAX, "%s", item->key);
	l->sizes[l->n++] = item->size;
	return true;
}

/* Reads a manifest object a range at a time. */
typedef struct ObjectText
{
	SbS3Client *client;
	const char *bucket;
	const char *key;
	uint64_t	offset;
	uint64_t	size;			/* as the listing gave it */
} ObjectText;

static ssize_t
read_object_text(void *arg, char *buf, size_t len, SbError *err)
{
	ObjectText *t = arg;
	SbS3Request req = {0};
	uint64_t	got;
	bool		ok;

	if (t->offset >= t->size)
		return 0;
	req.method = "GET";
	snprintf(req.bucket, sizeof(req.bucket), "%s", t->bucket);
	snprintf(req.key, sizeof(req.key), "%s", t->key);
	req.range_offset = t->offset;
	req.range_length = t->size - t->offset < len ? t->size - t->offset : len;
	req.into = (uint8_t *) buf;
	req.into_len = len;
	ok = sb_s3_run(t->client, &req, err) && req.got > 0;
	got = ok ? req.got : 0;
	t->offset += got;
	sb_s3_request_reset(&req);
	return ok ? (ssize_t) got : -1;
}

/* Why the object REL (its name under the backup's prefix) is not the backup's; NULL when it is. */
static const char *
foreign(SbS3Client *c, const char *bucket, const char *key, uint64_t size, const char *rel,
		const uint8_t uuid[16], const char *uuid_hex, char *why, size_t len)
{
	uint32_t	number;
	SbError		err;

	if (strcmp(rel, SB_MANIFEST_FILE) == 0)
	{
		ObjectText	text = {c, bucket, key, 0, size};
		bool		ours = sb_folder_manifest_names(read_object_text, &text, uuid_hex);

		if (!ours)
			snprintf(why, len, "\"%s\" is not the manifest of backup %s", key, uuid_hex);
		return ours ? NULL : why;
	}
	if (strchr(rel, '/') == NULL && sb_policy_parse_stripe_file_name(rel, &number))
	{
		uint8_t		raw[SB_STRIPE_HEADER_SIZE];
		SbS3Request req = {0};
		SbStripeHeader h;
		bool		ours;

		req.method = "GET";
		snprintf(req.bucket, sizeof(req.bucket), "%s", bucket);
		snprintf(req.key, sizeof(req.key), "%s", key);
		req.range_length = sizeof(raw);
		req.into = raw;
		req.into_len = sizeof(raw);
		ours = sb_s3_run(c, &req, &err) && req.got == sizeof(raw) &&
			sb_format_decode_header(raw, &h, &err) && memcmp(h.uuid, uuid, 16) == 0 && h.number == number;
		sb_s3_request_reset(&req);
		if (!ours)
			snprintf(why, len, "\"%s\" is not stripe %u of backup %s", key, number, uuid_hex);
		return ours ? NULL : why;
	}
	snprintf(why, len, "\"%s\" is not an object stripebackup writes", key);
	return why;
}

/* Delete the listing's objects, the manifest first. */
static bool
delete_all(SbS3Client *c, const char *bucket, const Listing *l, SbFolderRemoval *r, SbError *err)
{
	for (int pass = 0; pass < 2; pass++)
		for (unsigned i = 0; i < l->n; i++)
		{
			const char *slash = strrchr(l->keys[i], '/');
			bool		manifest = strcmp(slash ? slash + 1 : l->keys[i], SB_MANIFEST_FILE) == 0;

			if (manifest != (pass == 0))
				continue;
			if (!sb_s3_delete_object(c, bucket, l->keys[i], err))
				return false;
			r->files++;
			r->bytes += l->sizes[i];
		}
	return true;
}

/* Judge (and unless DRY_RUN remove) what LISTING holds under PREFIX. */
static bool
clear_prefix(SbS3Client *c, const SbS3Location *loc, const char *prefix, const Listing *l,
			 const uint8_t uuid[16], bool dry_run, SbFolderRemoval *r, SbError *err)
{
	char		uuid_hex[33];
	char		why[SB_S3_KEY_MAX + 128];

	sb_folder_uuid_hex(uuid, uuid_hex);
	for (unsigned i = 0; i < l->n; i++)
		if (foreign(c, loc->bucket, l->keys[i], l->sizes[i], l->keys[i] + strlen(prefix), uuid,
					uuid_hex, why, sizeof(why)) != NULL)
		{
			sb_folder_set_verdict(r, SB_FOLDER_FOREIGN, "in bucket \"%s\", %s; nothing was removed",
								  loc->bucket, why);
			return true;
		}
	sb_folder_set_verdict(r, SB_FOLDER_REMOVED, "%s", "");
	if (dry_run)
	{
		for (unsigned i = 0; i < l->n; i++)
			r->files++, r->bytes += l->sizes[i];
		return true;
	}
	return delete_all(c, loc->bucket, l, r, err);
}

bool
sb_backup_folder_remove_s3(const char *destination, const char *name, const uint8_t uuid[16],
						   bool dry_run, SbFolderRemoval *r, SbError *err)
{
	SbS3Location loc;
	SbS3Client *c = NULL;
	Listing    *l = calloc(1, sizeof(Listing));
	char		prefix[SB_S3_KEY_MAX];
	bool		ok;

	if (l == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory listing \"%s\"", destination);
	ok = sb_s3_parse_location(destination, &loc, err) && (c = sb_s3_client_open(loc.bucket, 1, err)) != NULL;
	snprintf(prefix, sizeof(prefix), "%s%s%s/", loc.prefix, loc.prefix[0] ? "/" : "", name);
	if (ok && !sb_s3_list_objects(c, loc.bucket, prefix, collect, l, err))
	{
		ok = err->code == SB_ENOTFOUND;
		if (ok)
			sb_folder_set_verdict(r, SB_FOLDER_DESTINATION_MISSING, "%s; nothing was removed", err->message);
	}
	else if (ok && l->too_many)
		sb_folder_set_verdict(r, SB_FOLDER_FOREIGN,
							  "in bucket \"%s\", more objects under \"%s\" than a backup writes; nothing was removed",
							  loc.bucket, prefix);
	else if (ok && l->n == 0)
		sb_folder_set_verdict(r, SB_FOLDER_ABSENT, "%s", "");
	else if (ok)
		ok = clear_prefix(c, &loc, prefix, l, uuid, dry_run, r, err);
	sb_s3_client_free(c);
	free(l);
	return ok;
}
