/*
 * arena.c
 *		Blocks of memory handed out in pieces (arena.h).
 */
#include <stdalign.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/arena.h"

/* Large enough that the blocks' own headers are nothing, small enough to waste little. */
#define BLOCK_SIZE ((size_t) 256 * 1024)
#define ALIGN (alignof(max_align_t))

struct SbArena
{
	SbArena    *next;			/* the block filled before this one */
	size_t		used;
	size_t		size;
	alignas(max_align_t) char data[];
};

/* SIZE bytes at a multiple of ALIGNMENT (a power of two, at most ALIGN). */
static void *
take(SbArena **arena, size_t size, size_t alignment, SbError *err)
{
	SbArena    *a = *arena;
	size_t		start = a ? (a->used + alignment - 1) & ~(alignment - 1) : 0;
	void	   *p;

	if (size > SIZE_MAX / 2)
	{
		sb_error_set(err, SB_ENOMEM, "out of memory (allocating %zu bytes)", size);
		return NULL;
	}
	if (a == NULL || start > a->size || a->size - start < size)
	{
		size_t		block = size > BLOCK_SIZE ? size : BLOCK_SIZE;

		a = malloc(sizeof(SbArena) + block);
		if (a == NULL)
		{
			sb_error_set(err, SB_ENOMEM, "out of memory (allocating %zu bytes)", size);
			return NULL;
		}
		a->next = *arena;
		a->used = 0;
		a->size = block;
		*arena = a;
		start = 0;
	}
	p = a->data + start;
	a->used = start + size;
	return p;
}

void *
sb_arena_alloc(SbArena **arena, size_t size, SbError *err)
{
	return take(arena, size, ALIGN, err);
}

char *
sb_arena_strdup(SbArena **arena, const char *s, SbError *err)
{
	size_t		len = strlen(s) + 1;
	char	   *p = take(arena, len, 1, err);

	if (p != NULL)
		memcpy(p, s, len);
	return p;
}

void
sb_arena_free(SbArena *arena)
{
	while (arena != NULL)
	{
		SbArena    *next = arena->next;

		free(arena);
		arena = next;
	}
}
