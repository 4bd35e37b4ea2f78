/*
 * store_file.c
 *		Reading files or objects by path (store.h): the driver that keeps
 *		what the path names reads it.
 */
#include <string.h>

#include "store/store_driver.h"

bool
sb_store_open(SbStoreFile *f, const char *path, const SbS3Settings *s3, SbError *err)
{
	memset(f, 0, sizeof(*f));
	f->path = path;
	f->s3 = s3;
	f->fd = -1;
	f->driver = sb_store_driver_of(path);
	if (f->driver->file_open(f, err))
		return true;
	sb_store_close(f);
	return false;
}

ssize_t
sb_store_pread(SbStoreFile *f, void *buf, size_t len, uint64_t offset, SbError *err)
{
	return f->driver->file_pread(f, buf, len, offset, err);
}

SbIo *
sb_store_reader_io(SbStoreFile *f, SbIoMethod method, unsigned depth, SbError *err)
{
	return f->driver->file_io(f, method, depth, err);
}

void
sb_store_close(SbStoreFile *f)
{
	if (f->driver != NULL)
		f->driver->file_close(f);
	f->driver = NULL;
}

char *
sb_store_read_small(const char *path, const SbS3Settings *s3, size_t max, size_t *len, SbError *err)
{
	return sb_store_driver_of(path)->read_small(path, s3, max, len, err);
}

bool
sb_store_file_size(const char *path, const SbS3Settings *s3, uint64_t *size, SbError *err)
{
	SbError		ignored;

	return sb_store_driver_of(path)->file_size(path, s3, size, err != NULL ? err : &ignored);
}

bool
sb_store_is_folder(const char *path)
{
	return sb_store_driver_of(path)->is_folder(path);
}
