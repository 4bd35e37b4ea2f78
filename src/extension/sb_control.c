/*
 * sb_control.c
 *		Control of a running job, and engine errors as ereport().
 *
 * SIGTERM (pg_terminate_backend, a fast shutdown, the checkpointer
 * invalidating a backup's WAL slot) sets a flag and a query cancel; a
 * cancel request (stripe_cancel(), the caller interrupted) sets a flag in
 * shared memory and sends SIGINT, which PostgreSQL's background workers
 * take as a query cancel.  Our own loops poll the flags every 100 ms; the
 * query cancel ends whatever PostgreSQL code the job waits in (a spread
 * start checkpoint), and the worker turns its ERROR into the stop reason.
 *
 * The engine's S3 requests ask sbx_control_interrupted() every 100 ms, in a
 * session's own thread and in the engine's threads alike: it reads the
 * signal flags and nothing else, so that a cancel, a statement timeout or a
 * terminate ends a request that no server answers.  The error the engine
 * then returns is raised as PostgreSQL's own (sbx_raise serves the pending
 * interrupt first).
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/pmsignal.h"
#include "utils/guc.h"

#include "sb_control.h"
#include "sb_shmem.h"

static volatile sig_atomic_t got_sigterm = false;

/* The job this process runs, once a worker has attached to it. */
static const SbJob *current_job = NULL;
static SbStopReasonFn current_stop_reason = NULL;
static SbAbortCheckFn current_abort_check = NULL;

int
sbx_sqlstate(const SbError *err)
{
	switch (err->code)
	{
		case SB_EINVAL:
			return ERRCODE_INVALID_PARAMETER_VALUE;
		case SB_ENOSPC:
			return ERRCODE_DISK_FULL;
		case SB_ECORRUPT:
		case SB_EVERSION:
			return ERRCODE_DATA_CORRUPTED;
		case SB_ENOTFOUND:
			return ERRCODE_UNDEFINED_FILE;
		case SB_EEXIST:
			return ERRCODE_DUPLICATE_FILE;
		case SB_ECANCELED:
			return ERRCODE_QUERY_CANCELED;
		case SB_ENOMEM:
			return ERRCODE_OUT_OF_MEMORY;
		case SB_EKEY:
			return ERRCODE_INVALID_AUTHORIZATION_SPECIFICATION;
		case SB_EIO:
		case SB_OK:
			break;
	}
	/* An operating-system call failed: what PostgreSQL says for its errno. */
	switch (err->sys_errno)
	{
		case EPERM:
		case EACCES:
		case EROFS:
			return ERRCODE_INSUFFICIENT_PRIVILEGE;
		case ENOENT:
			return ERRCODE_UNDEFINED_FILE;
		case EEXIST:
			return ERRCODE_DUPLICATE_FILE;
		case ENOTDIR:
		case EISDIR:
		case ENOTEMPTY:
			return ERRCODE_WRONG_OBJECT_TYPE;
		case ENOSPC:
		case EDQUOT:
			return ERRCODE_DISK_FULL;
		case ENFILE:
		case EMFILE:
			return ERRCODE_INSUFFICIENT_RESOURCES;
	}
	return ERRCODE_IO_ERROR;
}

/* A cancel, statement timeout or terminate waits for CHECK_FOR_INTERRUPTS(). */
static inline bool
interrupt_pending(void)
{
	/* sig_atomic_t flags that signal handlers set: safe to read from any thread */
	return InterruptPending && (QueryCancelPending || ProcDiePending);
}

/*
 * The archiver gets SIGTERM (ShutdownRequestPending) when it must start no
 * more archiving: its S3 requests end then too, the segment staying ready.
 */
bool
sbx_control_interrupted(void)
{
	return got_sigterm || ShutdownRequestPending || interrupt_pending();
}

void
sbx_raise(const SbError *err)
{
	/*
	 * An engine operation that stopped for a pending cancel, statement
	 * timeout or terminate fails with whatever it was doing then: the
	 * interrupt is what the user must see, as PostgreSQL says it.
	 */
	if (interrupt_pending())
		CHECK_FOR_INTERRUPTS();
	ereport(ERROR, (errcode(sbx_sqlstate(err)), errmsg("%s", err->message)));
	pg_unreachable();
}

bool
sbx_control_session_tick(void *arg, const SbProgress *progress)
{
	return !interrupt_pending();
}

void
sbx_control_handle_sigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	if (!proc_exit_inprogress)
	{
		InterruptPending = true;
		QueryCancelPending = true;
	}
	SetLatch(MyLatch);
	errno = save_errno;
}

void
sbx_control_begin(const SbJob *job, SbStopReasonFn stop_reason)
{
	current_job = job;
	current_stop_reason = stop_reason;
}

void
sbx_control_set_abort_check(SbAbortCheckFn check)
{
	current_abort_check = check;
}

static const char *
abort_reason(void)
{
	return current_abort_check != NULL ? current_abort_check() : NULL;
}

bool
sbx_control_stop_requested(void)
{
	return got_sigterm || sbx_shmem_cancel_requested(NULL, 0) || !PostmasterIsAlive() ||
		abort_reason() != NULL;
}

int
sbx_control_stop_cause(const char **reason)
{
	static char cancel_reason[SB_MESSAGE_LEN];
	int			sqlstate = ERRCODE_QUERY_CANCELED;

	if (!PostmasterIsAlive())
		*reason = "canceled: the server stopped";
	else if (sbx_shmem_cancel_requested(cancel_reason, sizeof(cancel_reason)))
		*reason = cancel_reason;
	else if ((*reason = abort_reason()) != NULL)
		return ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE;
	else if (got_sigterm && current_stop_reason != NULL &&
			 (*reason = current_stop_reason(current_job, &sqlstate)) != NULL)
		return sqlstate;
	else
		*reason = "canceled: the worker was asked to terminate (server shutdown or pg_terminate_backend)";
	return ERRCODE_QUERY_CANCELED;
}

void
sbx_control_raise_stop(void)
{
	const char *reason;
	int			sqlstate = sbx_control_stop_cause(&reason);

	ereport(ERROR, (errcode(sqlstate), errmsg("%s", reason)));
	pg_unreachable();
}

void
sbx_control_raise(const SbError *err)
{
	if (err->code == SB_ECANCELED && current_job != NULL)
		sbx_control_raise_stop();
	sbx_raise(err);
}

bool
sbx_control_worker_tick(void *arg, const SbProgress *progress)
{
	sbx_shmem_progress_update(progress);
	return !sbx_control_stop_requested();
}

void
sbx_control_check_stop(void)
{
	if (sbx_control_stop_requested())
		sbx_control_raise_stop();
}

/*
 * A worker connected to a database runs with the settings of ALTER DATABASE
 * ... SET, chosen by the database's owner, who need not be a superuser.
 * Those that could redirect or stall what it runs are pinned, as
 * PostgreSQL's autovacuum workers pin theirs.
 */
static const struct
{
	const char *name;
	const char *value;
}			pinned_settings[] = {
	{"search_path", "pg_catalog, pg_temp"},
	{"role", "none"},
	{"statement_timeout", "0"},
	{"lock_timeout", "0"},
	{"idle_in_transaction_session_timeout", "0"},
	{"default_transaction_read_only", "off"},
	{"default_transaction_isolation", "read committed"},
	{"default_transaction_deferrable", "off"},
	{"session_replication_role", "origin"},
	{"synchronous_commit", "local"},
	{"transform_null_equals", "off"},
	{"check_function_bodies", "on"},
	{NULL, NULL}
};

void
sbx_control_pin_settings(void)
{
	int			i;

	for (i = 0; pinned_settings[i].name != NULL; i++)
		SetConfigOption(pinned_settings[i].name, pinned_settings[i].value, PGC_SUSET,
						PGC_S_OVERRIDE);
}

