/*
 * drivers.c
 *		The store drivers a test runs on, and a destination's files read,
 *		written and removed through the store interface whatever the driver
 *		(drivers.h).
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers.h"
#include "store/s3/s3_client.h"
#include "store/store.h"

const char *
th_s3_endpoint(void)
{
	const char *e = getenv("SB_TEST_S3_ENDPOINT");

	return e != NULL && e[0] != '\0' ? e : NULL;
}

static bool
remove_item(void *arg, const SbS3Item *item, SbError *err)
{
	SbS3Client *c = arg;

	return sb_s3_delete_object(c, TH_S3_BUCKET, item->key, err);
}

/* Remove every object under D's prefix. */
static void
clean_prefix(const ThDriver *d)
{
	SbS3Client *c;
	SbError		err;
	char		prefix[80];

	if ((c = sb_s3_client_open(NULL, TH_S3_BUCKET, 1, &err)) == NULL)
	{
		th_diag_error("S3 client for the clean-up", &err);
		return;
	}
	snprintf(prefix, sizeof(prefix), "%s/", d->prefix);
	if (!sb_s3_list_objects(c, TH_S3_BUCKET, prefix, remove_item, c, &err))
		th_diag_error("clean-up of the test's objects", &err);
	sb_s3_client_free(c);
}

void
th_each_driver(void (*body) (const ThDriver *d, void *arg), void *arg)
{
	static unsigned runs;
	ThDriver	d;

	memset(&d, 0, sizeof(d));
	d.name = "posix";
	th_label(d.name);
	body(&d, arg);
	th_label(NULL);

	if (th_s3_endpoint() == NULL)
	{
		diag("s3: skipped (no S3 server: run under test/s3/with-s3.sh)");
		return;
	}
	memset(&d, 0, sizeof(d));
	d.name = "s3";
	d.s3 = true;
	snprintf(d.prefix, sizeof(d.prefix), "unit-%d-drv%u", (int) getpid(), ++runs);
	setenv("AWS_ENDPOINT_URL", th_s3_endpoint(), 1);
	th_label(d.name);
	body(&d, arg);
	th_label(NULL);
	clean_prefix(&d);
	unsetenv("AWS_ENDPOINT_URL");
}

void
th_driver_dests(const ThDriver *d, ThFixture *f, const char *tag)
{
	uint32_t	i;

	if (!d->s3)
		return;
	for (i = 0; i < f->ndests; i++)
	{
		th_path(f->dest[i], "s3://" TH_S3_BUCKET "/%s/%s/d%u", d->prefix, tag, i + 1);
		f->dests[i] = f->dest[i];
	}
}

/* The store of PATH's folder (NULL, with a diagnostic, if it cannot be opened); *NAME its last part. */
static SbStore *
parent_store(const char *path, const char **name)
{
	char		dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	SbStore    *s;
	SbError		err;

	if (slash == NULL || slash == path || (size_t) (slash - path) >= sizeof(dir))
	{
		diag("%s: not a file of a destination", path);
		return NULL;
	}
	memcpy(dir, path, (size_t) (slash - path));
	dir[slash - path] = '\0';
	*name = slash + 1;
	if ((s = sb_store_new(dir, NULL, &err)) == NULL)
		th_diag_error(dir, &err);
	return s;
}

bool
th_dest_exists(const char *path)
{
	uint64_t	size;

	return sb_store_file_size(path, NULL, &size, NULL);
}

uint8_t *
th_dest_read(const char *path, size_t *len)
{
	SbError		err;
	char	   *data = sb_store_read_small(path, NULL, (size_t) 1 << 30, len, &err);

	if (data == NULL)
		th_diag_error(path, &err);
	return (uint8_t *) data;
}

bool
th_dest_write(const char *path, const void *data, size_t len)
{
	const char *name;
	SbStore    *s;
	SbError		err;
	bool		done;

	if (strncmp(path, "s3://", 5) != 0)
		return th_write_file(path, data, len, 0600);
	if ((s = parent_store(path, &name)) == NULL)
		return false;
	if (!(done = sb_store_put(s, name, data, len, true, &err)))
		th_diag_error(path, &err);
	sb_store_free(s);
	return done;
}

bool
th_dest_remove(const char *path)
{
	const char *name;
	SbStore    *s;
	SbError		err;
	bool		done;

	if (strncmp(path, "s3://", 5) != 0)
		return unlink(path) == 0;
	if ((s = parent_store(path, &name)) == NULL)
		return false;
	if (!(done = sb_store_remove(s, name, NULL, &err)))
		th_diag_error(path, &err);
	sb_store_free(s);
	return done;
}

bool
th_dest_flip_byte(const char *path, uint64_t offset, uint8_t mask)
{
	uint8_t    *data;
	size_t		len;
	bool		done;

	if (strncmp(path, "s3://", 5) != 0)
		return th_flip_byte(path, offset, mask);
	if ((data = th_dest_read(path, &len)) == NULL)
		return false;
	if (offset >= len)
	{
		free(data);
		diag("%s: no byte %llu", path, (unsigned long long) offset);
		return false;
	}
	data[offset] ^= mask;
	done = th_dest_write(path, data, len);
	free(data);
	return done;
}

uint64_t
th_dest_size(const char *path)
{
	uint64_t	size;

	return sb_store_file_size(path, NULL, &size, NULL) ? size : 0;
}

static bool
count_entry(void *arg, const char *name, int64_t size, SbError *err)
{
	(*(int *) arg)++;
	return true;
}

int
th_dest_count_entries(const char *dir)
{
	SbStore    *s;
	SbError		err;
	int			n = 0;

	if (strncmp(dir, "s3://", 5) != 0)
		return th_count_entries(dir);
	if ((s = sb_store_new(dir, NULL, &err)) == NULL)
		return -1;
	if (!sb_store_list(s, count_entry, &n, &err))
		n = -1;
	sb_store_free(s);
	return n;
}

bool
th_dest_edit(const char *path, const char *from, const char *to)
{
	uint8_t    *data;
	char	   *text,
			   *at;
	size_t		len;
	bool		done = false;

	if (strncmp(path, "s3://", 5) != 0)
		return th_edit_file(path, from, to);
	if ((data = th_dest_read(path, &len)) == NULL)
		return false;
	text = (char *) data;		/* sb_store_read_small ends it with a NUL */
	if ((at = strstr(text, from)) != NULL)
	{
		size_t		head = (size_t) (at - text),
					tail = len - head - strlen(from);
		char	   *out = malloc(head + strlen(to) + tail);

		memcpy(out, text, head);
		memcpy(out + head, to, strlen(to));
		memcpy(out + head + strlen(to), at + strlen(from), tail);
		done = th_dest_write(path, out, head + strlen(to) + tail);
		free(out);
	}
	free(data);
	return done;
}

bool
th_dest_truncate(const char *path, uint64_t size)
{
	uint8_t    *data;
	size_t		len;
	bool		done;

	if (strncmp(path, "s3://", 5) != 0)
		return truncate(path, (off_t) size) == 0;
	if ((data = th_dest_read(path, &len)) == NULL)
		return false;
	done = size <= len && th_dest_write(path, data, (size_t) size);
	free(data);
	return done;
}

bool
th_dest_move(const char *from, const char *to)
{
	uint8_t    *data;
	size_t		len;
	bool		done;

	if (strncmp(from, "s3://", 5) != 0)
		return rename(from, to) == 0;
	if ((data = th_dest_read(from, &len)) == NULL)
		return false;
	done = th_dest_write(to, data, len) && th_dest_remove(from);
	free(data);
	return done;
}
