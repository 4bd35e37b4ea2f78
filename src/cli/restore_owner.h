/*
 * restore_owner.h
 *		Who owns what a command restore writes when it runs as root: the
 *		owner of the target's parent folder, or --owner USER; never root,
 *		which no PostgreSQL server runs as.
 */
#ifndef SB_RESTORE_OWNER_H
#define SB_RESTORE_OWNER_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

#include "stripebackup/sb_archive.h"
#include "stripebackup/sb_error.h"

typedef struct CliOwner
{
	bool		active;			/* running as root: the files are handed over */
	uid_t		uid;
	gid_t		gid;
	char		name[64];		/* the user's name, or its uid */
	char		from[PATH_MAX]; /* the folder it was taken from; "" for --owner */
} CliOwner;

/*
 * Before anything is written: as root, the owner the restore into TARGET
 * hands its files to (OWNER, the --owner USER, or else the owner of the
 * nearest folder there above TARGET), refused when that is root; not as
 * root, --owner may only name this very user.  SB_EINVAL naming the user or
 * the folder.
 */
extern bool cli_owner_choose(const char *owner, const char *target, CliOwner *o, SbError *err);

/*
 * After the restore: hand TARGET, the N places of RELOCS and the folders
 * made above each of them (those from the nearest one that was there
 * before the restore, which TOPS gives, one per place, the target first)
 * to O's user, links themselves and not what they point to; then sync.
 */
extern bool cli_owner_apply(const CliOwner *o, const char *target, const SbRelocation *relocs,
							uint32_t n, char (*tops)[PATH_MAX], SbError *err);

/* The nearest folder of PATH's ancestors-or-self that is there, into TOP (PATH_MAX). */
extern void cli_owner_existing_top(const char *path, char *top);

#endif							/* SB_RESTORE_OWNER_H */
