/*
 * wal_name.c
 *		PostgreSQL's WAL file names, checked to the letter.
 *
 * A name comes from restore_command's %f or an archive callback, and
 * becomes a file name in the archive: anything but one of PostgreSQL's own
 * forms (src/include/access/xlog_internal.h: XLogFileName,
 * TLHistoryFileName, BackupHistoryFileName, and ".partial" segments) is
 * refused, so no name can hold a "/", a "..", or a byte PostgreSQL would
 * not write.
 */
#include <stdio.h>
#include <string.h>

#include "stripebackup/sb_wal.h"
#include "wal/wal_internal.h"

#define HEX_DIGITS "0123456789ABCDEF"
#define SEGMENT_NAME_LEN 24

/* Are the LEN characters at P upper-case hex digits, as PostgreSQL prints them? */
static bool
is_hex(const char *p, size_t len)
{
	return strspn(p, HEX_DIGITS) >= len;
}

static uint32_t
hex8(const char *p)
{
	uint32_t	v = 0;
	int			i;

	for (i = 0; i < 8; i++)
		v = (v << 4) | (uint32_t) (p[i] <= '9' ? p[i] - '0' : p[i] - 'A' + 10);
	return v;
}

/* The timeline, log and seg fields of the 24 hex digits at P. */
static void
parse_segment_fields(const char *p, SbWalName *n)
{
	n->timeline = hex8(p);
	n->log = hex8(p + 8);
	n->seg = hex8(p + 16);
}

static bool
ends_with(const char *s, size_t len, const char *suffix)
{
	size_t		n = strlen(suffix);

	return len >= n && memcmp(s + len - n, suffix, n) == 0;
}

/* Which of PostgreSQL's forms NAME (LEN bytes) has; false if none. */
static bool
classify(const char *name, size_t len, SbWalName *n)
{
	memset(n, 0, sizeof(*n));
	if (len == SEGMENT_NAME_LEN && is_hex(name, len))
		n->kind = SB_WAL_SEGMENT;
	else if (len == SEGMENT_NAME_LEN + 8 && is_hex(name, SEGMENT_NAME_LEN) &&
			 ends_with(name, len, ".partial"))
		n->kind = SB_WAL_PARTIAL;
	else if (len == 16 && is_hex(name, 8) && ends_with(name, len, ".history"))
	{
		n->kind = SB_WAL_HISTORY;
		n->timeline = hex8(name);
		return true;
	}
	else if (len == SB_WAL_NAME_MAX && is_hex(name, SEGMENT_NAME_LEN) &&
			 name[SEGMENT_NAME_LEN] == '.' && is_hex(name + SEGMENT_NAME_LEN + 1, 8) &&
			 ends_with(name, len, ".backup"))
		n->kind = SB_WAL_BACKUP;
	else
		return false;
	parse_segment_fields(name, n);
	return true;
}

bool
sb_wal_name_parse(const char *name, SbWalName *parsed, SbError *err)
{
	size_t		len = strnlen(name, SB_WAL_NAME_MAX + 1);
	char		shown[SB_WAL_PRINTABLE_MAX];

	if (classify(name, len, parsed) && parsed->timeline != 0)
		return true;
	sb_wal_printable(name, shown, sizeof(shown));
	if (len > 0 && len <= SB_WAL_NAME_MAX && parsed->timeline == 0 && classify(name, len, parsed))
		return sb_error_set(err, SB_EINVAL,
							"WAL file name \"%s\" has timeline 0, which PostgreSQL never uses", shown);
	return sb_error_set(err, SB_EINVAL,
						"\"%s\" is not a WAL file name (24 upper-case hex digits, that followed by \".partial\", "
						"\"TTTTTTTT.history\", or \"<segment>.XXXXXXXX.backup\")", shown);
}

bool
sb_wal_segment_size_valid(uint64_t size)
{
	return size >= SB_WAL_MIN_SEGMENT_SIZE && size <= SB_WAL_MAX_SEGMENT_SIZE &&
		(size & (size - 1)) == 0;
}

uint32_t
sb_wal_segment_size_of(uint32_t option)
{
	return option ? option : SB_WAL_DEFAULT_SEGMENT_SIZE;
}

uint32_t
sb_wal_piece_size(uint32_t segment_size)
{
	return segment_size < SB_WAL_PIECE_SIZE ? segment_size : SB_WAL_PIECE_SIZE;
}

/* Segments per "log" (XLogSegmentsPerXLogId): the log field counts 4 GB of WAL. */
static uint64_t
segments_per_log(uint32_t segment_size)
{
	return ((uint64_t) 1 << 32) / segment_size;
}

uint64_t
sb_wal_segment_number(const SbWalName *name, uint32_t segment_size)
{
	return (uint64_t) name->log * segments_per_log(segment_size) + name->seg;
}

void
sb_wal_segment_name(uint32_t timeline, uint64_t segno, uint32_t segment_size,
					char out[SB_WAL_NAME_MAX + 1])
{
	uint64_t	per_log = segments_per_log(segment_size);

	snprintf(out, SB_WAL_NAME_MAX + 1, "%08X%08X%08X", timeline,
			 (uint32_t) (segno / per_log), (uint32_t) (segno % per_log));
}

/* Does segment-like A (segment, partial, backup) come before B, whatever their timelines? */
bool
sb_wal_position_before(const SbWalName *a, const SbWalName *b)
{
	return a->log < b->log || (a->log == b->log && a->seg < b->seg);
}

bool
sb_wal_kind_is_segment(SbWalKind kind)
{
	return kind == SB_WAL_SEGMENT || kind == SB_WAL_PARTIAL;
}

void
sb_wal_printable(const char *text, char *out, size_t size)
{
	size_t		i,
				o = 0;

	for (i = 0; text[i] != '\0' && i < SB_WAL_NAME_MAX * 2 && o + 5 < size; i++)
	{
		unsigned char c = (unsigned char) text[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			out[o++] = (char) c;
		else
			o += (size_t) snprintf(out + o, size - o, "\\x%02x", c);
	}
	if (text[i] != '\0' && o + 4 < size)
		o += (size_t) snprintf(out + o, size - o, "...");
	out[o] = '\0';
}

void
sb_wal_error_about(SbError *err, const char *what, const char *name)
{
	char		shown[SB_WAL_PRINTABLE_MAX];

	sb_wal_printable(name, shown, sizeof(shown));
	sb_error_prefix(err, "could not %s WAL file \"%s\"", what, shown);
}
