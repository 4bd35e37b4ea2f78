/*
 * test_io.c
 *		The I/O layer (io.c) with each method the kernel allows: writes and
 *		reads over two buffers, several in flight, reads that end at the end
 *		of the file (or at a short read, for O_DIRECT), and failures returned
 *		as the operation's errno; the method names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "util/io.h"
#include "tests.h"

/* Start OP alone and wait for it; false if the I/O layer itself failed. */
static bool
run_one(SbIo *io, SbIoOp *op)
{
	SbIoOp	   *done[2];
	SbError		err;

	if (!sb_io_start(io, op, &err) || sb_io_reap(io, done, 2, 1, &err) != 1 || done[0] != op)
	{
		th_diag_error("io", &err);
		return false;
	}
	return true;
}

static void
set_op(SbIoOp *op, SbIoKind kind, int fd, uint64_t offset, void *buf, size_t len)
{
	memset(op, 0, sizeof(*op));
	op->kind = kind;
	op->fd = fd;
	op->offset = offset;
	op->iov[0].iov_base = buf;
	op->iov[0].iov_len = len;
	op->iovcnt = 1;
}

/* Two writes in flight, then reads of what they wrote. */
static void
io_write_read(SbIo *io, const char *method, const char *dir)
{
	char		path[PATH_MAX];
	char		head[] = "0123456789abcdef";
	uint8_t    *block = malloc(4096);
	uint8_t    *back = calloc(1, 20000);
	SbIoOp		a,
				b,
				c;
	SbIoOp	   *done[4];
	SbError		err;
	int			fd = open(th_path(path, "%s/io-%s", dir, method), O_RDWR | O_CREAT | O_TRUNC, 0600);
	int			n;
	size_t		i;
	bool		zeros = true;

	th_fill(block, 4096, 5, false);
	set_op(&a, SB_IO_WRITE, fd, 0, head, 10);
	a.iov[1].iov_base = head + 10;	/* two buffers: "0123456789" and "abcdef" */
	a.iov[1].iov_len = 6;
	a.iovcnt = 2;
	set_op(&b, SB_IO_WRITE, fd, 8192, block, 4096);
	ok(sb_io_start(io, &a, &err) && sb_io_start(io, &b, &err), "%s: two writes started", method);
	is_int(sb_io_in_flight(io), 2, "%s: two in flight", method);
	n = sb_io_reap(io, done, 4, 10, &err);
	is_int(n, 2, "%s: waiting for 10 returns the 2 there are", method);
	ok(a.error == 0 && a.done == 16 && b.error == 0 && b.done == 4096,
	   "%s: both wrote all their bytes (%zu, %zu)", method, a.done, b.done);
	is_int(sb_io_in_flight(io), 0, "%s: none in flight", method);

	/* A read past the end stops there: 8192 + 4096 bytes, the hole as zeros. */
	set_op(&c, SB_IO_READ, fd, 0, back, 10);
	c.iov[1].iov_base = back + 10;
	c.iov[1].iov_len = 19990;
	c.iovcnt = 2;
	ok(run_one(io, &c), "%s: a read of 20000 bytes", method);
	ok(c.error == 0 && c.done == 12288, "%s: ends at the end of the file (%zu bytes)", method, c.done);
	ok(memcmp(back, head, 16) == 0, "%s: both buffers of the first write read back", method);
	for (i = 16; i < 8192; i++)
		zeros = zeros && back[i] == 0;
	ok(zeros, "%s: the gap reads as zeros", method);
	ok(memcmp(back + 8192, block, 4096) == 0, "%s: the second write reads back", method);

	set_op(&c, SB_IO_READ, fd, 12000, back, 4096);
	c.short_is_eof = true;
	ok(run_one(io, &c) && c.error == 0 && c.done == 288,
	   "%s: a short read ends a read that expects one (%zu bytes)", method, c.done);
	set_op(&c, SB_IO_READ, fd, 1 << 20, back, 4096);
	ok(run_one(io, &c) && c.error == 0 && c.done == 0, "%s: a read beyond the end reads nothing",
	   method);
	close(fd);
	free(block);
	free(back);
}

/* Failures are the operation's errno; the I/O context goes on. */
static void
io_failures(SbIo *io, const char *method, const char *dir)
{
	char		buf[4096] = {0};
	SbIoOp		op;
	int			full = open("/dev/full", O_WRONLY);
	int			dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	int			rdonly = open(dir, O_RDONLY | O_DIRECTORY);

	if (full >= 0)
	{
		set_op(&op, SB_IO_WRITE, full, 0, buf, sizeof(buf));
		ok(run_one(io, &op), "%s: a write to /dev/full completes", method);
		is_int(op.error, ENOSPC, "%s: with ENOSPC", method);
		close(full);
	}
	set_op(&op, SB_IO_READ, dirfd, 0, buf, sizeof(buf));
	ok(run_one(io, &op), "%s: a read of a directory completes", method);
	is_int(op.error, EISDIR, "%s: with EISDIR", method);
	set_op(&op, SB_IO_WRITE, rdonly, 0, buf, sizeof(buf));
	ok(run_one(io, &op), "%s: a write to a descriptor open for reading completes", method);
	is_int(op.error, EBADF, "%s: with EBADF", method);
	close(dirfd);
	close(rdonly);
}

/* What SB_IO_AUTO gives: io_uring when available, unless the run forces sync (io.c). */
static SbIoMethod
auto_resolves_to(bool uring)
{
	const char *env = getenv("STRIPEBACKUP_IO_METHOD");
	SbIoMethod	forced;

	if (env != NULL && sb_io_method_parse(env, &forced) && forced == SB_IO_SYNC)
		return SB_IO_SYNC;
	return uring ? SB_IO_URING : SB_IO_SYNC;
}

void
test_io_methods(void)
{
	static const SbIoMethod methods[] = {SB_IO_SYNC, SB_IO_URING, SB_IO_AUTO};
	char		dir[PATH_MAX];
	const char *why = NULL;
	bool		uring = sb_io_uring_available(&why);
	size_t		i;

	th_tempdir(dir, "io");
	if (!uring)
		diag("io_uring is not available (%s): only the synchronous method is tested", why);
	for (i = 0; i < sizeof(methods) / sizeof(methods[0]); i++)
	{
		const char *name = sb_io_method_name(methods[i]);
		SbIoMethod	used = SB_IO_AUTO;
		SbError		err;
		SbIo	   *io = sb_io_new(methods[i], 4, &used, &err);

		if (methods[i] == SB_IO_URING && !uring)
		{
			ok(io == NULL && err.code == SB_EINVAL, "io_uring refused when the kernel refuses it");
			like(err.message, "io_method io_uring is not available", "and says so");
			continue;
		}
		if (!ok(io != NULL, "%s: an I/O context", name))
		{
			th_diag_error("sb_io_new", &err);
			continue;
		}
		if (methods[i] == SB_IO_AUTO)
			is_int(used, auto_resolves_to(uring),
				   "auto: io_uring when available, else sync (or as STRIPEBACKUP_IO_METHOD says)");
		else
			is_int(used, methods[i], "%s: used as asked", name);
		io_write_read(io, name, dir);
		io_failures(io, name, dir);
		sb_io_free(io);
	}
	th_rmtree(dir);
}

void
test_io_method_names(void)
{
	static const char *const names[] = {"auto", "io_uring", "sync"};
	static const char *const bad[] = {"", "uring", "Sync", "io_uring ", "psync"};
	size_t		i;

	for (i = 0; i < 3; i++)
	{
		SbIoMethod	m = (SbIoMethod) 99;

		ok(sb_io_method_parse(names[i], &m), "\"%s\" is a method", names[i]);
		is_str(sb_io_method_name(m), names[i], "and its name reads back");
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
	{
		SbIoMethod	m;

		ok(!sb_io_method_parse(bad[i], &m), "\"%s\" is not a method", bad[i]);
	}
}
