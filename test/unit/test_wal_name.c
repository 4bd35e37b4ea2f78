/*
 * test_wal_name.c
 *		PostgreSQL's WAL file names as the archive takes them, segment
 *		numbers and names for each segment size, and the archive's own
 *		file names.
 */
#include <stdio.h>
#include <string.h>

#include "tests.h"
#include "wal_fixture.h"
#include "wal_internal.h"

/* Every form PostgreSQL writes, parsed into its fields. */
void
test_wal_name_forms(void)
{
	static const struct
	{
		const char *name;
		SbWalKind	kind;
		uint32_t	timeline,
					log,
					seg;
	}			good[] = {
		{"0000000100000000000000FF", SB_WAL_SEGMENT, 1, 0, 0xFF},
		{"0000000A0000001B000000C0.partial", SB_WAL_PARTIAL, 10, 0x1B, 0xC0},
		{"00000002.history", SB_WAL_HISTORY, 2, 0, 0},
		{"FFFFFFFF.history", SB_WAL_HISTORY, 0xFFFFFFFF, 0, 0},
		{"000000010000000000000002.00000028.backup", SB_WAL_BACKUP, 1, 0, 2},
	};
	SbWalName	n;
	SbError		err;
	char		shown[SB_WAL_PRINTABLE_MAX];
	size_t		i;

	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ok(sb_wal_name_parse(good[i].name, &n, &err) && n.kind == good[i].kind &&
		   n.timeline == good[i].timeline && n.log == good[i].log && n.seg == good[i].seg,
		   "\"%s\" parses, its fields read", good[i].name);
	ok(!sb_wal_name_parse("00000000.history", &n, &err), "timeline 0 is refused");
	like(err.message, "timeline 0", "saying so");
	ok(!sb_wal_name_parse("0000000100000000000000ff", &n, &err), "lower-case hex is refused");
	sb_wal_printable("a\nb\x01\\", shown, sizeof(shown));
	is_str(shown, "a\\x0ab\\x01\\x5c", "control bytes and backslashes are shown as \\xNN in messages");
}

/* Segment numbers and names for 16 MB, 1 MB and 1 GB segments, as XLogFileName makes them. */
void
test_wal_name_segments(void)
{
	char		name[SB_WAL_NAME_MAX + 1];
	SbWalName	n;
	SbError		err;

	sb_wal_segment_name(1, 0x100, 16 << 20, name);
	is_str(name, "000000010000000100000000", "16 MB: segment 256 starts log 1");
	sb_wal_name_parse(name, &n, &err);
	is_int(sb_wal_segment_number(&n, 16 << 20), 0x100, "and parses back to 256");
	sb_wal_segment_name(3, 0x1005, 1 << 20, name);
	is_str(name, "000000030000000100000005", "1 MB: 4096 segments a log");
	sb_wal_segment_name(2, 9, 1 << 30, name);
	is_str(name, "000000020000000200000001", "1 GB: 4 segments a log");
	ok(sb_wal_segment_size_valid(1 << 20) && sb_wal_segment_size_valid(1u << 30) &&
	   !sb_wal_segment_size_valid(1 << 19) && !sb_wal_segment_size_valid(3 << 20) &&
	   !sb_wal_segment_size_valid((uint64_t) 2 << 30), "sizes: powers of two from 1 MB to 1 GB");
}

/* The archive's file names: "<name>.sbw" and its temporary files, nothing else. */
void
test_wal_name_files(void)
{
	char		name[SB_WAL_NAME_MAX + 1];
	SbWalName	n;
	bool		temp;

	ok(sb_wal_parse_file_name("00000002.history.sbw", name, &n, &temp) && !temp &&
	   strcmp(name, "00000002.history") == 0, "an archived history file");
	ok(sb_wal_parse_file_name("000000010000000000000003.sbw.tmp.123.4", name, &n, &temp) && temp &&
	   n.kind == SB_WAL_SEGMENT, "a temporary file of a segment");
	ok(!sb_wal_parse_file_name("000000010000000000000003.sbw.tmp.123", name, &n, &temp) &&
	   !sb_wal_parse_file_name("000000010000000000000003.sbw.tmp.1.x", name, &n, &temp) &&
	   !sb_wal_parse_file_name("000000010000000000000003.sbwx", name, &n, &temp) &&
	   !sb_wal_parse_file_name("000000010000000000000003", name, &n, &temp) &&
	   !sb_wal_parse_file_name(".sbw", name, &n, &temp) &&
	   !sb_wal_parse_file_name("README.sbw", name, &n, &temp), "anything else is not the archive's");
}
