/*
 * keep_label.c
 *		keep.json, a kept backup's label (sb_keep.h): put whole through the
 *		store (a local folder or a bucket alike), removed, read back.  cJSON
 *		writes it, so that a note is always escaped JSON, whatever it holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "stripebackup/sb_keep.h"
#include "backup/folder_internal.h"
#include "store/store.h"

/* The label's text, malloc'd: {"backup_uuid": ..., "kept": true, "note": ..., "at": ...}. */
static char *
label_text(const uint8_t uuid[16], const char *note)
{
	char		uuid_hex[33];
	char		at[32];
	time_t		now = time(NULL);
	struct tm	tm;
	cJSON	   *o = cJSON_CreateObject();
	char	   *text = NULL;

	sb_folder_uuid_hex(uuid, uuid_hex);
	strftime(at, sizeof(at), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&now, &tm));
	/* backup_uuid first: what proves the file the backup's to a folder's removal */
	if (o != NULL && cJSON_AddStringToObject(o, "backup_uuid", uuid_hex) != NULL &&
		cJSON_AddTrueToObject(o, "kept") != NULL &&
		(note != NULL ? cJSON_AddStringToObject(o, "note", note) : cJSON_AddNullToObject(o, "note")) != NULL &&
		cJSON_AddStringToObject(o, "at", at) != NULL)
		text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	return text;
}

/* The backup folder DEST/NAME as a store, into *FOLDER (NULL when it does not exist); *ROOT to free too. */
static bool
enter_folder(const char *dest, const SbS3Settings *s3, const char *name, SbStore **root, SbStore **folder,
			 SbError *err)
{
	*folder = NULL;
	if ((*root = sb_store_new(dest, &(SbStoreOptions) {.s3 = s3}, err)) == NULL)
		return false;
	return sb_store_enter(*root, name, false, folder, err);
}

bool
sb_keep_label_put(const char *dest, const SbS3Settings *s3, const char *name, const uint8_t uuid[16], const char *note,
				  SbError *err)
{
	SbStore    *root,
			   *folder;
	char	   *text;
	bool		ok;

	if (note != NULL && strlen(note) > SB_KEEP_LABEL_NOTE_MAX)
		return sb_error_set(err, SB_EINVAL, "a note is at most %d bytes", SB_KEEP_LABEL_NOTE_MAX);
	if ((text = label_text(uuid, note)) == NULL)
		return sb_error_set(err, SB_ENOMEM, "out of memory writing %s", SB_KEEP_LABEL_FILE);
	ok = enter_folder(dest, s3, name, &root, &folder, err);
	if (ok && folder == NULL)
		ok = sb_error_set(err, SB_ENOTFOUND, "backup folder \"%s/%s\" does not exist", dest, name);
	else if (ok)
		ok = sb_store_put(folder, SB_KEEP_LABEL_FILE, text, strlen(text), true, err) && sb_store_sync(folder, err);
	sb_store_free(folder);
	sb_store_free(root);
	free(text);
	return ok;
}

bool
sb_keep_label_remove(const char *dest, const SbS3Settings *s3, const char *name, SbError *err)
{
	SbStore    *root,
			   *folder;
	SbStoreStamp stamp;
	bool		ok = enter_folder(dest, s3, name, &root, &folder, err);

	/* no folder, or no label in it: nothing to remove */
	if (ok && folder != NULL && sb_store_stamp(folder, SB_KEEP_LABEL_FILE, &stamp))
		ok = sb_store_remove(folder, SB_KEEP_LABEL_FILE, &stamp, err) && sb_store_sync(folder, err);
	sb_store_free(folder);
	sb_store_free(root);
	return ok;
}

/* TEXT parsed, when it is an object naming the backup UUID_HEX; NULL otherwise. */
static cJSON *
parse_label(const char *text, size_t len, const char *uuid_hex)
{
	cJSON	   *o = cJSON_ParseWithLength(text, len);
	const cJSON *uuid = cJSON_GetObjectItemCaseSensitive(o, "backup_uuid");

	if (cJSON_IsString(uuid) && strcmp(uuid->valuestring, uuid_hex) == 0)
		return o;
	cJSON_Delete(o);
	return NULL;
}

bool
sb_keep_label_names(const char *text, size_t len, const char *uuid_hex)
{
	cJSON	   *o = len <= SB_KEEP_LABEL_MAX_BYTES ? parse_label(text, len, uuid_hex) : NULL;

	cJSON_Delete(o);
	return o != NULL;
}

/* The string ITEM of O into OUT (SIZE bytes, cut there); "" when absent or not a string. */
static void
copy_string(const cJSON *o, const char *item, char *out, size_t size)
{
	const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, item);

	snprintf(out, size, "%s", cJSON_IsString(s) ? s->valuestring : "");
}

bool
sb_keep_label_read(const char *location, const SbS3Settings *s3, const char *uuid_hex, SbKeepLabel *label,
				   SbError *err)
{
	char		path[4096];
	size_t		len;
	char	   *text;
	cJSON	   *o;

	memset(label, 0, sizeof(*label));
	if (snprintf(path, sizeof(path), "%s/%s", location, SB_KEEP_LABEL_FILE) >= (int) sizeof(path))
		return sb_error_set(err, SB_EINVAL, "path too long: \"%s\"", location);
	if ((text = sb_store_read_small(path, s3, SB_KEEP_LABEL_MAX_BYTES, &len, err)) == NULL)
		return false;
	o = parse_label(text, len, uuid_hex);
	free(text);
	if (o == NULL || !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "kept")))
	{
		cJSON_Delete(o);
		return sb_error_set(err, SB_ECORRUPT, "\"%s\" is not a label of backup %s", path, uuid_hex);
	}
	copy_string(o, "note", label->note, sizeof(label->note));
	copy_string(o, "at", label->at, sizeof(label->at));
	cJSON_Delete(o);
	return true;
}
