/*
 * sb_key.c
 *		The encryption key in force (sb_key.h).
 *
 * The setting names a file, never the secret, so that the secret is in no
 * setting, log line or history row.  Only a superuser may set it: the server
 * reads the file it names.  A job's worker is told the file its caller's
 * session had (a SET in that session counts), and reads it itself: the key
 * never passes through shared memory.
 */
#include "postgres.h"

#include "utils/memutils.h"

#include "sb_control.h"
#include "sb_guc.h"
#include "sb_handle.h"
#include "sb_key.h"

static char job_key_file[MAXPGPATH];
static bool in_job = false;

static const char *
key_file_in_force(void)
{
	const char *path = in_job ? job_key_file : sb_guc_encryption_key_file;

	return path != NULL && path[0] != '\0' ? path : NULL;
}

static void
free_key(void *object)
{
	sb_key_clear(object);
	free(object);
}

const SbKey *
sbx_key_current(void)
{
	const char *path = key_file_in_force();
	SbHandle   *h;
	SbKey	   *key;
	SbError		err;

	if (path == NULL)
		return NULL;
	h = sbx_handle_new(free_key);
	key = malloc(sizeof(SbKey));
	if (key == NULL)
		ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY), errmsg("out of memory")));
	sbx_handle_own(h, key);
	if (!sb_key_load(path, key, &err))
		ereport(ERROR,
				(errcode(sbx_sqlstate(&err)), errmsg("%s", err.message),
				 errhint("stripebackup.encryption_key_file names a file of 32 or more bytes of secret "
						 "that only the server's user may read, e.g. made with: openssl rand -base64 48")));
	return key;
}

void
sbx_key_file_capture(char *buf, size_t len)
{
	const char *path = key_file_in_force();

	buf[0] = '\0';
	if (path == NULL)
		return;
	(void) sbx_key_current();
	if (strlen(path) >= len)
		ereport(ERROR,
				(errcode(ERRCODE_NAME_TOO_LONG),
				 errmsg("stripebackup.encryption_key_file is longer than %zu bytes", len - 1)));
	strlcpy(buf, path, len);
}

void
sbx_key_file_use_for_job(const char *path)
{
	strlcpy(job_key_file, path, sizeof(job_key_file));
	in_job = true;
}
