/*
 * arena.h
 *		Memory handed out in pieces from large blocks and given back all at
 *		once: the strings of a manifest's entries (a path a file), without
 *		the header and rounding a malloc of each would cost.
 */
#ifndef SB_ARENA_H
#define SB_ARENA_H

#include <stddef.h>

#include "stripebackup/sb_error.h"

typedef struct SbArena SbArena;

/* SIZE bytes aligned for any scalar, from *ARENA (a new block when it has no room). */
extern void *sb_arena_alloc(SbArena **arena, size_t size, SbError *err);

/* A copy of S in *ARENA. */
extern char *sb_arena_strdup(SbArena **arena, const char *s, SbError *err);

/* Every block of ARENA (NULL allowed). */
extern void sb_arena_free(SbArena *arena);

#endif							/* SB_ARENA_H */
