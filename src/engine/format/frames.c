/*
 * frames.c
 *		The frame table of a compressed chunk (frames.h).
 *
 *		u32 0x184D2A5B   zstd's skippable-frame magic (any of 0x184D2A50..5F)
 *		u32 length       of the rest of the table
 *		"SBFT"
 *		u32 frame size   raw bytes of each frame but the last
 *		u32 count        frames
 *		count x { u32 stored length, u64 XXH3-64 of the frame's raw bytes }
 */
#include <string.h>

#include "format/format.h"
#include "format/frames.h"

#define SKIPPABLE_MAGIC 0x184D2A5BU
#define TABLE_TAG "SBFT"

uint32_t
sb_frame_count(size_t raw_len, uint32_t frame_size)
{
	return raw_len == 0 ? 1 : (uint32_t) ((raw_len + frame_size - 1) / frame_size);
}

size_t
sb_frame_table_len(uint32_t count)
{
	return SB_FRAME_TABLE_HEAD + (size_t) count * SB_FRAME_ENTRY;
}

void
sb_frame_table_begin(uint8_t *payload, uint32_t count, uint32_t frame_size)
{
	sb_format_put32(payload, SKIPPABLE_MAGIC);
	sb_format_put32(payload + 4, (uint32_t) (sb_frame_table_len(count) - 8));
	memcpy(payload + 8, TABLE_TAG, 4);
	sb_format_put32(payload + 12, frame_size);
	sb_format_put32(payload + 16, count);
}

void
sb_frame_table_set(uint8_t *payload, uint32_t i, uint32_t stored_len, uint64_t raw_hash)
{
	uint8_t    *e = payload + SB_FRAME_TABLE_HEAD + (size_t) i * SB_FRAME_ENTRY;

	sb_format_put32(e, stored_len);
	sb_format_put64(e + 4, raw_hash);
}

bool
sb_frame_table_read(const uint8_t *payload, size_t available, size_t payload_len, size_t raw_len,
					SbFrameTable *t)
{
	uint64_t	stored = 0;
	uint32_t	i;

	memset(t, 0, sizeof(*t));
	if (available < SB_FRAME_TABLE_HEAD || sb_format_get32(payload) != SKIPPABLE_MAGIC ||
		memcmp(payload + 8, TABLE_TAG, 4) != 0)
		return false;
	t->frame_size = sb_format_get32(payload + 12);
	t->count = sb_format_get32(payload + 16);
	t->raw_len = (uint32_t) raw_len;
	if (t->frame_size < SB_FRAME_MIN || t->count != sb_frame_count(raw_len, t->frame_size))
		return false;
	t->data_offset = sb_frame_table_len(t->count);
	if (sb_format_get32(payload + 4) != t->data_offset - 8 || available < t->data_offset ||
		payload_len < t->data_offset)
		return false;
	t->entries = payload + SB_FRAME_TABLE_HEAD;
	for (i = 0; i < t->count; i++)
		stored += sb_frame_stored_len(t, i);
	return stored == payload_len - t->data_offset;
}

size_t
sb_frame_offset(const SbFrameTable *t, uint32_t i)
{
	size_t		at = t->data_offset;
	uint32_t	k;

	for (k = 0; k < i; k++)
		at += sb_frame_stored_len(t, k);
	return at;
}

uint32_t
sb_frame_stored_len(const SbFrameTable *t, uint32_t i)
{
	return sb_format_get32(t->entries + (size_t) i * SB_FRAME_ENTRY);
}

uint32_t
sb_frame_raw_len(const SbFrameTable *t, uint32_t i)
{
	size_t		start = (size_t) i * t->frame_size;

	return (uint32_t) (t->raw_len - start < t->frame_size ? t->raw_len - start : t->frame_size);
}

uint64_t
sb_frame_raw_hash(const SbFrameTable *t, uint32_t i)
{
	return sb_format_get64(t->entries + (size_t) i * SB_FRAME_ENTRY + 4);
}
