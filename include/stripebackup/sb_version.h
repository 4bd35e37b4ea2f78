/*
 * sb_version.h
 *		The version of stripebackup (library, command and archive writer).
 */
#ifndef SB_VERSION_H
#define SB_VERSION_H

#define SB_VERSION "0.1.0"
#define SB_TOOL_NAME "stripebackup " SB_VERSION

#endif							/* SB_VERSION_H */
