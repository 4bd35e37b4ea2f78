/*
 * error.c
 *		Formatting of SbError values.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "stripebackup/sb_error.h"

void
sb_error_clear(SbError *err)
{
	err->code = SB_OK;
	err->sys_errno = 0;
	err->message[0] = '\0';
}

bool
sb_error_set(SbError *err, SbErrorCode code, const char *fmt,...)
{
	va_list		ap;

	err->code = code;
	err->sys_errno = 0;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return false;
}

/* ENOSPC and EDQUOT get their own code: callers report a full device differently. */
static SbErrorCode
code_from_errno(int errnum)
{
	switch (errnum)
	{
		case ENOSPC:
		case EDQUOT:
			return SB_ENOSPC;
		case ENOMEM:
			return SB_ENOMEM;
		default:
			return SB_EIO;
	}
}

bool
sb_error_set_errno(SbError *err, int errnum, const char *fmt,...)
{
	va_list		ap;
	size_t		len;

	err->code = code_from_errno(errnum);
	err->sys_errno = errnum;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	len = strlen(err->message);
	snprintf(err->message + len, sizeof(err->message) - len, ": %s",
			 strerror(errnum));
	return false;
}

void
sb_error_prefix(SbError *err, const char *fmt,...)
{
	char		prefix[SB_ERROR_MESSAGE_MAX];
	char		old[SB_ERROR_MESSAGE_MAX];
	va_list		ap;

	va_start(ap, fmt);
	vsnprintf(prefix, sizeof(prefix), fmt, ap);
	va_end(ap);
	memcpy(old, err->message, sizeof(old));
	/* Too long for the buffer: the message loses its end, and says so. */
	if (snprintf(err->message, sizeof(err->message), "%s: %s", prefix, old) >=
		(int) sizeof(err->message))
		memcpy(err->message + sizeof(err->message) - 4, "...", 4);
}

const char *
sb_error_code_name(SbErrorCode code)
{
	switch (code)
	{
		case SB_OK:
			return "ok";
		case SB_EINVAL:
			return "invalid";
		case SB_EIO:
			return "io";
		case SB_ENOSPC:
			return "no-space";
		case SB_ECORRUPT:
			return "corrupt";
		case SB_EVERSION:
			return "version";
		case SB_ENOTFOUND:
			return "not-found";
		case SB_EEXIST:
			return "exists";
		case SB_ECANCELED:
			return "canceled";
		case SB_ENOMEM:
			return "no-memory";
		case SB_EKEY:
			return "key";
	}
	return "unknown";
}
