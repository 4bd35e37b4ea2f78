/*
 * sb_io_method.h
 *		How the engine does its file I/O.
 */
#ifndef SB_IO_METHOD_H
#define SB_IO_METHOD_H

#include <stdbool.h>

#include "stripebackup/sb_error.h"

typedef enum SbIoMethod
{
	SB_IO_AUTO = 0,				/* io_uring when the kernel allows it, else sync */
	SB_IO_URING,				/* io_uring, or fail */
	SB_IO_SYNC					/* pread / pwrite */
} SbIoMethod;

/* "auto", "io_uring", "sync" */
extern const char *sb_io_method_name(SbIoMethod method);
extern bool sb_io_method_parse(const char *name, SbIoMethod *method);

/*
 * Can this process use io_uring?  Probed once; when not, *WHY says why
 * ("io_uring is disabled by the kernel (io_uring_disabled = 2)", ...).
 */
extern bool sb_io_uring_available(const char **why);

#endif							/* SB_IO_METHOD_H */
