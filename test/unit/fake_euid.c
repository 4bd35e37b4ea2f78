/*
 * fake_euid.c
 *		The wrapper behind fake_euid.h.
 */
#include <stdbool.h>
#include <unistd.h>

#include "fake_euid.h"

extern uid_t __real_geteuid(void);
extern uid_t __wrap_geteuid(void);

/* Set and read by one test at a time, before and after the calls it fakes. */
static volatile bool faking = false;
static volatile uid_t fake_uid;

uid_t
__wrap_geteuid(void)
{
	return faking ? fake_uid : __real_geteuid();
}

void
th_fake_euid(uid_t uid)
{
	fake_uid = uid;
	faking = true;
}

void
th_real_euid(void)
{
	faking = false;
}
