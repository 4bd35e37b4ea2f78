/*
 * sb_error.h
 *		Errors as values: every engine function that can fail fills an SbError.
 *
 * The engine never exits, longjmps or prints.  The extension turns an SbError
 * into ereport() at one boundary; the command turns it into a message and an
 * exit status (see sb_error_exit_status in src/cli).
 */
#ifndef SB_ERROR_H
#define SB_ERROR_H

#include <stdbool.h>

typedef enum SbErrorCode
{
	SB_OK = 0,
	SB_EINVAL,					/* bad argument from the caller */
	SB_EIO,						/* an operating-system call failed */
	SB_ENOSPC,					/* a device is full */
	SB_ECORRUPT,				/* checksum mismatch, bad structure */
	SB_EVERSION,				/* archive of an unknown format version */
	SB_ENOTFOUND,				/* a stripe or manifest is missing */
	SB_EEXIST,					/* target not empty, backup folder exists */
	SB_ECANCELED,				/* the caller asked to stop */
	SB_ENOMEM,					/* out of memory */
	SB_EKEY						/* an encryption key missing, unusable or not the
								 * backup's */
} SbErrorCode;

#define SB_ERROR_MESSAGE_MAX 2048

typedef struct SbError
{
	SbErrorCode code;
	int			sys_errno;		/* errno of the failed call, or 0 */
	char		message[SB_ERROR_MESSAGE_MAX];
} SbError;

/* Reset an error to "no error". */
extern void sb_error_clear(SbError *err);

/* Set an error; the message is printf-formatted. Always returns false. */
extern bool sb_error_set(SbError *err, SbErrorCode code, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Set an error from errno: message ": strerror(errno)" is appended. Returns false. */
extern bool sb_error_set_errno(SbError *err, int errnum, const char *fmt,...)
			__attribute__((format(printf, 3, 4)));

/* Put "prefix: " in front of an existing message (adds context on the way up). */
extern void sb_error_prefix(SbError *err, const char *fmt,...)
			__attribute__((format(printf, 2, 3)));

/* A short name of a code, for logs and tests ("corrupt", "io", ...). */
extern const char *sb_error_code_name(SbErrorCode code);

#endif							/* SB_ERROR_H */
