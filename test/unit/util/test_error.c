/*
 * test_error.c
 *		Errors as values (error.c): the code an errno maps to, the message with
 *		the system's reason appended, context put in front on the way up (and
 *		a message too long for the buffer cut visibly), the codes' names.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "tests.h"

/* A full device is its own code (callers say so differently), memory too; the rest is I/O. */
void
test_error_errno(void)
{
	static const struct
	{
		int			errnum;
		SbErrorCode code;
	}			cases[] = {
		{ENOSPC, SB_ENOSPC}, {EDQUOT, SB_ENOSPC}, {ENOMEM, SB_ENOMEM}, {EACCES, SB_EIO},
		{ENOENT, SB_EIO}, {EIO, SB_EIO},
	};
	size_t		i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
	{
		SbError		err;
		char		want[200];

		ok(!sb_error_set_errno(&err, cases[i].errnum, "could not write \"%s\"", "a/b"),
		   "%s: sb_error_set_errno returns false", strerror(cases[i].errnum));
		is_int(err.code, cases[i].code, "%s: code %s", strerror(cases[i].errnum),
			   sb_error_code_name(cases[i].code));
		is_int(err.sys_errno, cases[i].errnum, "%s: errno kept", strerror(cases[i].errnum));
		snprintf(want, sizeof(want), "could not write \"a/b\": %s", strerror(cases[i].errnum));
		is_str(err.message, want, "%s: the reason follows the message", strerror(cases[i].errnum));
	}
}

/* Context in front of a message; a message that no longer fits ends with "...". */
void
test_error_prefix(void)
{
	SbError		err;
	char		longer[SB_ERROR_MESSAGE_MAX + 100];
	size_t		len;

	sb_error_set(&err, SB_ECORRUPT, "checksum mismatch in chunk %d", 7);
	sb_error_prefix(&err, "stripe %d", 2);
	is_str(err.message, "stripe 2: checksum mismatch in chunk 7", "the prefix goes in front");
	is_int(err.code, SB_ECORRUPT, "the code stays");

	memset(longer, 'x', sizeof(longer) - 1);
	longer[sizeof(longer) - 1] = '\0';
	sb_error_set(&err, SB_EIO, "%s", longer);
	len = strlen(err.message);
	is_int(len, SB_ERROR_MESSAGE_MAX - 1, "a message is cut to the buffer");
	sb_error_prefix(&err, "restoring \"%s\"", "base/1/1259");
	len = strlen(err.message);
	is_int(len, SB_ERROR_MESSAGE_MAX - 1, "with a prefix too");
	ok(strncmp(err.message, "restoring \"base/1/1259\": xxx", 28) == 0, "the prefix is kept whole");
	ok(len > 3 && strcmp(err.message + len - 3, "...") == 0, "the end says the message was cut");

	sb_error_clear(&err);
	ok(err.code == SB_OK && err.sys_errno == 0 && err.message[0] == '\0', "sb_error_clear empties it");
}

void
test_error_code_names(void)
{
	static const char *const names[] = {"ok", "invalid", "io", "no-space", "corrupt", "version",
	"not-found", "exists", "canceled", "no-memory", "key"};
	int			code;

	for (code = SB_OK; code <= SB_EKEY; code++)
		is_str(sb_error_code_name((SbErrorCode) code), names[code], "code %d is \"%s\"", code, names[code]);
	is_str(sb_error_code_name((SbErrorCode) 99), "unknown", "a code out of range is \"unknown\"");
}
