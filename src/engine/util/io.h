/*
 * io.h
 *		Asynchronous file I/O for one thread: io_uring when the kernel allows
 *		it, plain pread/pwrite otherwise, behind one interface.
 *
 * A caller starts operations (each owned by the caller until it completes)
 * and reaps completions.  Short transfers are continued here, so an
 * operation completes only when all its bytes moved, at end of file (a
 * read), or on an error.  The synchronous method runs each operation when it
 * is started and hands it back at the next reap.
 */
#ifndef SB_IO_H
#define SB_IO_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "stripebackup/sb_io_method.h"

#define SB_IO_MAX_IOV 2

typedef enum SbIoKind
{
	SB_IO_READ,
	SB_IO_WRITE
} SbIoKind;

typedef struct SbIoOp
{
	SbIoKind	kind;
	int			fd;
	struct iovec iov[SB_IO_MAX_IOV];
	int			iovcnt;
	uint64_t	offset;
	void	   *tag;			/* the caller's */
	bool		short_is_eof;	/* a short read ends it (O_DIRECT past the end) */
	/* set by the I/O layer */
	size_t		length;			/* total bytes asked for */
	size_t		done;			/* bytes moved so far */
	int			error;			/* errno of a failure, or 0 */
	struct SbIoOp *next;		/* completion list */
} SbIoOp;

typedef struct SbIo SbIo;

/*
 * An I/O context with up to DEPTH operations in flight.  SB_IO_AUTO takes
 * io_uring and falls back to synchronous I/O when the kernel refuses it
 * (ENOSYS, EPERM, io_uring_disabled); *USED says which one runs.
 */
extern SbIo *sb_io_new(SbIoMethod method, unsigned depth, SbIoMethod *used, SbError *err);
extern void sb_io_free(SbIo *io);

/* Start OP (iov, iovcnt, fd, offset, kind, tag filled in). */
extern bool sb_io_start(SbIo *io, SbIoOp *op, SbError *err);

/*
 * Wait until at least MIN operations have completed (MIN may be 0), and
 * return the completed ones (up to MAX) in DONE.  Returns how many, or -1 on
 * a failure of the I/O context itself.
 */
extern int	sb_io_reap(SbIo *io, SbIoOp **done, int max, int min, SbError *err);

/* Operations started and not yet reaped. */
extern unsigned sb_io_in_flight(const SbIo *io);

/*
 * The error message behind the last failed operation of a backend that has
 * more to say than an errno (object storage), or NULL.
 */
extern const char *sb_io_error_detail(const SbIo *io);

/*
 * I/O done by something other than the kernel's file calls (object storage,
 * io_s3.c), behind the same start/reap interface.  START begins OP and, when
 * it ends, hands it to sb_io_backend_complete; WAIT returns once at least
 * MIN operations are complete and not reaped.
 */
typedef struct SbIoBackend
{
	bool		(*start) (void *state, SbIo *io, SbIoOp *op, SbError *err);
	bool		(*wait) (void *state, SbIo *io, unsigned min, SbError *err);
	void		(*free) (void *state);
} SbIoBackend;

/* An I/O context over BACKEND (its STATE freed with it), DEPTH operations at once. */
extern SbIo *sb_io_new_backend(const SbIoBackend *backend, void *state, unsigned depth,
							   SbError *err);

/* Operation OP of a backend is finished (OP->error set when it failed; ERR, if any, the detail). */
extern void sb_io_backend_complete(SbIo *io, SbIoOp *op, const SbError *err);

/* Operations complete and not yet reaped. */
extern unsigned sb_io_completed(const SbIo *io);

#endif							/* SB_IO_H */
