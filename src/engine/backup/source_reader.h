/*
 * source_reader.h
 *		Reading the source files of a backup ahead of the copy: several
 *		transfers in flight (io_uring), aligned buffers so files can be read
 *		with O_DIRECT, and the blocks handed out in file order.
 */
#ifndef SB_SOURCE_READER_H
#define SB_SOURCE_READER_H

#include <stdint.h>

#include "stripebackup/sb_manifest.h"
#include "util/io.h"

typedef struct SbSourceReader SbSourceReader;

/* DEPTH transfers of BLOCK bytes in flight; DIRECT reads with O_DIRECT. */
extern SbSourceReader *sb_source_reader_new(SbIoMethod method, uint32_t depth, uint32_t block,
											bool direct, SbError *err);
extern void sb_source_reader_free(SbSourceReader *r);

/*
 * Open NAME in the directory open at DIRFD (PATH in messages) for reading,
 * its access time left alone where the kernel allows (with direct I/O,
 * blocks not in the page cache are read O_DIRECT through a second
 * descriptor the reader keeps).  Returns the descriptor, or -1 with ERR set
 * (SB_ENOTFOUND if it is gone).  Safe on any thread.
 */
extern int	sb_source_reader_open(int dirfd, const char *name, const char *path, SbError *err);

/*
 * The file open at FD opened again with O_DIRECT, through /proc so that it
 * is the very file; -1 when the file system refuses (EINVAL) or /proc is not
 * there: then reads go through the cache.  Transfers through it are whole
 * 4 kB pages into buffers aligned so (a short last one at the end of the
 * file).
 */
extern int	sb_source_open_direct(int fd);

/* Start reading FD over RANGES (file offsets and lengths, ascending). */
extern bool sb_source_reader_begin(SbSourceReader *r, int fd, const char *what,
								   const SbExtent *ranges, uint32_t nranges, SbError *err);

/*
 * The next block of the file, in order: LEN bytes at OFFSET in DATA (a
 * buffer that stays valid until the next call; the caller may write to it).
 * Bytes past the end of the file (it shrank) read as zeros.  Returns false
 * at the end of the ranges (*DATA NULL) or on an error (ERR set).
 */
extern bool sb_source_reader_next(SbSourceReader *r, uint8_t **data, uint64_t *offset,
								  size_t *len, SbError *err);

/* Done with the file: wait for what is in flight; drop what it brought into the cache. */
extern void sb_source_reader_end(SbSourceReader *r);

#endif							/* SB_SOURCE_READER_H */
