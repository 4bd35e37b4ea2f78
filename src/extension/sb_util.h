/*
 * sb_util.h
 *		What the extension's files share: turning engine errors into
 *		ereport(), and finding the extension's schema.
 */
#ifndef SB_UTIL_H
#define SB_UTIL_H

#include "stripebackup/sb_error.h"

/* ereport(ERROR) an engine error, with the SQLSTATE that fits its code. */
extern void sb_raise(const SbError *err) pg_attribute_noreturn();

/* The SQLSTATE for an engine error code. */
extern int	sb_sqlstate(SbErrorCode code);

/* The extension's schema in this database; ERROR if absent. */
extern Oid	sb_schema_oid(void);

/* The same, its name quoted for SQL. */
extern char *sb_schema_quoted(void);

#endif							/* SB_UTIL_H */
