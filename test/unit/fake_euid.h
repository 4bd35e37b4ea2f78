/*
 * fake_euid.h
 *		Who the engine believes it runs as: the unit test binary is linked
 *		with --wrap=geteuid (Makefile), so that a test can make a file the
 *		test's user owns look like another user's (a non-root test cannot
 *		make a file another user owns).
 */
#ifndef SB_UNIT_FAKE_EUID_H
#define SB_UNIT_FAKE_EUID_H

#include <sys/types.h>

/* geteuid() answers UID from now on. */
extern void th_fake_euid(uid_t uid);

/* geteuid() answers the truth again. */
extern void th_real_euid(void);

#endif							/* SB_UNIT_FAKE_EUID_H */
