/*
 * io.c
 *		io_uring (liburing) and synchronous backends of the engine's I/O.
 *
 * Following liburing's io-cp example: keep the queue full up to its depth,
 * reap completions, continue short reads and writes with the iovec advanced,
 * retry EAGAIN and EINTR.  Errors are errno values on the operation.
 */
#include <errno.h>
#include <liburing.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/fsutil.h"
#include "util/io.h"

struct SbIo
{
	const SbIoBackend *backend; /* or the kernel's: */
	void	   *backend_state;
	char		detail[SB_ERROR_MESSAGE_MAX];	/* a backend's last failure */
	bool		uring;
	struct io_uring ring;
	unsigned	depth;
	unsigned	in_flight;		/* started, not yet reaped */
	SbIoOp	   *completed;		/* finished, waiting for reap (LIFO is fine) */
	unsigned	ncompleted;
};

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static bool probe_ok;
static char probe_why[160];

const char *
sb_io_method_name(SbIoMethod method)
{
	return method == SB_IO_URING ? "io_uring" : method == SB_IO_SYNC ? "sync" : "auto";
}

bool
sb_io_method_parse(const char *name, SbIoMethod *method)
{
	if (strcmp(name, "auto") == 0)
		*method = SB_IO_AUTO;
	else if (strcmp(name, "io_uring") == 0)
		*method = SB_IO_URING;
	else if (strcmp(name, "sync") == 0)
		*method = SB_IO_SYNC;
	else
		return false;
	return true;
}

static void
probe(void)
{
	struct io_uring ring;
	FILE	   *f = fopen("/proc/sys/kernel/io_uring_disabled", "r");
	int			disabled = 0;
	int			rc;

	if (f != NULL)
	{
		if (fscanf(f, "%d", &disabled) != 1)
			disabled = 0;
		fclose(f);
	}
	rc = io_uring_queue_init(2, &ring, 0);
	probe_ok = rc == 0;
	if (probe_ok)
		io_uring_queue_exit(&ring);
	else if (disabled > 0)
		snprintf(probe_why, sizeof(probe_why),
				 "io_uring is disabled by the kernel (kernel.io_uring_disabled = %d)", disabled);
	else
		snprintf(probe_why, sizeof(probe_why), "the kernel refused io_uring: %s", strerror(-rc));
}

bool
sb_io_uring_available(const char **why)
{
	pthread_once(&probe_once, probe);
	if (why != NULL)
		*why = probe_ok ? NULL : probe_why;
	return probe_ok;
}

/*
 * STRIPEBACKUP_IO_METHOD=sync (or io_uring) overrides "auto" for the whole
 * process: how the test suite runs everything with each method.
 */
static SbIoMethod
method_from_environment(SbIoMethod method)
{
	const char *env = getenv("STRIPEBACKUP_IO_METHOD");
	SbIoMethod	forced;

	if (method == SB_IO_AUTO && env != NULL && sb_io_method_parse(env, &forced))
		return forced;
	return method;
}

SbIo *
sb_io_new(SbIoMethod method, unsigned depth, SbIoMethod *used, SbError *err)
{
	SbIo	   *io = sb_alloc(sizeof(SbIo), err);
	const char *why;
	int			rc;

	if (io == NULL)
		return NULL;
	method = method_from_environment(method);
	io->depth = depth ? depth : 1;
	io->uring = method != SB_IO_SYNC && sb_io_uring_available(&why);
	if (method == SB_IO_URING && !io->uring)
	{
		free(io);
		sb_error_set(err, SB_EINVAL, "io_method io_uring is not available: %s", why);
		return NULL;
	}
	if (io->uring && (rc = io_uring_queue_init(io->depth, &io->ring, 0)) < 0)
	{
		free(io);
		sb_error_set_errno(err, -rc, "could not set up io_uring with %u entries", depth);
		return NULL;
	}
	if (used != NULL)
		*used = io->uring ? SB_IO_URING : SB_IO_SYNC;
	return io;
}

SbIo *
sb_io_new_backend(const SbIoBackend *backend, void *state, unsigned depth, SbError *err)
{
	SbIo	   *io = sb_alloc(sizeof(SbIo), err);

	if (io == NULL)
	{
		backend->free(state);
		return NULL;
	}
	io->backend = backend;
	io->backend_state = state;
	io->depth = depth ? depth : 1;
	return io;
}

void
sb_io_free(SbIo *io)
{
	if (io == NULL)
		return;
	if (io->backend != NULL)
		io->backend->free(io->backend_state);
	if (io->uring)
		io_uring_queue_exit(&io->ring);
	free(io);
}

unsigned
sb_io_in_flight(const SbIo *io)
{
	return io->in_flight;
}

static void
complete(SbIo *io, SbIoOp *op)
{
	op->next = io->completed;
	io->completed = op;
	io->ncompleted++;
}

void
sb_io_backend_complete(SbIo *io, SbIoOp *op, const SbError *err)
{
	if (op->error != 0 && err != NULL)
		snprintf(io->detail, sizeof(io->detail), "%s", err->message);
	complete(io, op);
}

unsigned
sb_io_completed(const SbIo *io)
{
	return io->ncompleted;
}

const char *
sb_io_error_detail(const SbIo *io)
{
	return io->detail[0] != '\0' ? io->detail : NULL;
}

/* Move past N transferred bytes: advance the iovec and the offset. */
static void
advance(SbIoOp *op, size_t n)
{
	op->done += n;
	op->offset += n;
	while (n > 0 && op->iovcnt > 0)
	{
		size_t		step = n < op->iov[0].iov_len ? n : op->iov[0].iov_len;

		op->iov[0].iov_base = (char *) op->iov[0].iov_base + step;
		op->iov[0].iov_len -= step;
		n -= step;
		if (op->iov[0].iov_len == 0)
		{
			memmove(&op->iov[0], &op->iov[1], sizeof(struct iovec) * (size_t) (op->iovcnt - 1));
			op->iovcnt--;
		}
	}
}

/* Synchronous: run the whole operation now. */
static void
run_sync(SbIoOp *op)
{
	while (op->done < op->length)
	{
		ssize_t		n = op->kind == SB_IO_READ ?
		preadv(op->fd, op->iov, op->iovcnt, (off_t) op->offset) :
		pwritev(op->fd, op->iov, op->iovcnt, (off_t) op->offset);

		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
		{
			op->error = errno;
			return;
		}
		if (n == 0)
		{
			if (op->kind == SB_IO_WRITE)
				op->error = EIO;	/* a write that makes no progress */
			return;				/* a read at end of file */
		}
		advance(op, (size_t) n);
		if (op->short_is_eof && op->kind == SB_IO_READ)
			return;
	}
}

/* Queue OP's remaining bytes on the ring and submit. */
static bool
submit_uring(SbIo *io, SbIoOp *op, SbError *err)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&io->ring);
	int			rc;

	if (sqe == NULL)
	{
		io_uring_submit(&io->ring);
		sqe = io_uring_get_sqe(&io->ring);
		if (sqe == NULL)
			return sb_error_set(err, SB_EIO, "io_uring submission queue is full");
	}
	if (op->kind == SB_IO_READ)
		io_uring_prep_readv(sqe, op->fd, op->iov, (unsigned) op->iovcnt, op->offset);
	else
		io_uring_prep_writev(sqe, op->fd, op->iov, (unsigned) op->iovcnt, op->offset);
	io_uring_sqe_set_data(sqe, op);
	do
		rc = io_uring_submit(&io->ring);
	while (rc == -EINTR);
	if (rc < 0)
		return sb_error_set_errno(err, -rc, "could not submit to io_uring");
	return true;
}

bool
sb_io_start(SbIo *io, SbIoOp *op, SbError *err)
{
	int			i;

	op->length = 0;
	for (i = 0; i < op->iovcnt; i++)
		op->length += op->iov[i].iov_len;
	op->done = 0;
	op->error = 0;
	op->next = NULL;
	io->in_flight++;
	if (io->backend != NULL)
	{
		if (io->backend->start(io->backend_state, io, op, err))
			return true;
		io->in_flight--;
		return false;
	}
	if (!io->uring)
	{
		run_sync(op);
		complete(io, op);
		return true;
	}
	return submit_uring(io, op, err);
}

/* One completion from the ring: finish the operation or continue it. */
static bool
handle_cqe(SbIo *io, struct io_uring_cqe *cqe, SbError *err)
{
	SbIoOp	   *op = io_uring_cqe_get_data(cqe);
	int			res = cqe->res;

	io_uring_cqe_seen(&io->ring, cqe);
	if (res == -EAGAIN || res == -EINTR)
		return submit_uring(io, op, err);
	if (res < 0)
		op->error = -res;
	else if (res == 0 && op->kind == SB_IO_WRITE)
		op->error = EIO;
	else if (res > 0)
	{
		advance(op, (size_t) res);
		if (op->done < op->length && !(op->short_is_eof && op->kind == SB_IO_READ))
			return submit_uring(io, op, err);	/* short: continue */
	}
	complete(io, op);
	return true;
}

static bool
wait_uring(SbIo *io, int min, SbError *err)
{
	while (io->ncompleted < (unsigned) min)
	{
		struct io_uring_cqe *cqe;
		int			rc = io_uring_wait_cqe(&io->ring, &cqe);

		if (rc == -EINTR)
			continue;
		if (rc < 0)
			return sb_error_set_errno(err, -rc, "could not wait for io_uring");
		if (!handle_cqe(io, cqe, err))
			return false;
	}
	/* Take what else is ready, without waiting. */
	for (;;)
	{
		struct io_uring_cqe *cqe;

		if (io_uring_peek_cqe(&io->ring, &cqe) != 0)
			return true;
		if (!handle_cqe(io, cqe, err))
			return false;
	}
}

int
sb_io_reap(SbIo *io, SbIoOp **done, int max, int min, SbError *err)
{
	int			n = 0;

	if ((unsigned) min > io->in_flight)
		min = (int) io->in_flight;
	if (io->uring && !wait_uring(io, min, err))
		return -1;
	if (io->backend != NULL && !io->backend->wait(io->backend_state, io, (unsigned) min, err))
		return -1;
	while (n < max && io->completed != NULL)
	{
		SbIoOp	   *op = io->completed;

		io->completed = op->next;
		io->ncompleted--;
		io->in_flight--;
		done[n++] = op;
	}
	return n;
}
