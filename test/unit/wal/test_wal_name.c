/*
 * test_wal_name.c
 *		PostgreSQL's WAL file names as the archive takes them, segment
 *		numbers and names for each segment size, and the archive's own
 *		file names.
 */
#include <stdio.h>
#include <string.h>

#include "format/format.h"
#include "tests.h"
#include "wal_fixture.h"
#include "wal/wal_internal.h"

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

/* A header H encoded, EDIT applied to its bytes, sealed again, decoded: refused with MESSAGE. */
static void
expect_header_refused(const SbWalHeader *h, void (*edit) (uint8_t *raw), SbErrorCode code,
					  const char *message, const char *what)
{
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbWalHeader back;
	SbError		err;

	ok(sb_wal_header_encode(h, NULL, raw, &err), "%s: encoded", what);
	if (edit != NULL)
	{
		edit(raw);
		sb_format_seal(raw, SB_WAL_HEADER_SIZE);
	}
	ok(!sb_wal_header_decode(raw, NULL, &back, NULL, &err), "%s: refused", what);
	is_int(err.code, code, "%s: as %s", what, sb_error_code_name(code));
	like(err.message, message, "%s: saying so", what);
}

static void
unpad_name(uint8_t *raw)
{
	raw[24 + 39] = 'X';
}

static void
path_as_name(uint8_t *raw)
{
	memcpy(raw + 24, "../../etc/passwd", 17);
}

static void
header_of_64(uint8_t *raw)
{
	raw[12] = 64;
}

static void
other_magic(uint8_t *raw)
{
	raw[0] = 'X';
}

static void
version_3(uint8_t *raw)
{
	raw[8] = 3;
}

/* Headers as a writer writes them, and the ways a forged one is refused even with a good seal. */
void
test_wal_name_headers(void)
{
	SbWalHeader h,
				back,
				bad;
	uint8_t		raw[SB_WAL_HEADER_SIZE];
	SbError		err;

	memset(&h, 0, sizeof(h));
	h.major = SB_WAL_FORMAT_MAJOR;
	h.system_identifier = TH_WAL_SYSID;
	snprintf(h.name, sizeof(h.name), "000000010000000000000002.00000028.backup");
	h.raw_len = 1000;
	h.stored_len = 300;
	h.codec = SB_CODEC_ZSTD;
	h.level = -5;
	h.raw_hash = 0x1122334455667788;
	h.stored_hash = 0x99aabbccddeeff00;
	h.crc32c = 0xdeadbeef;
	h.archived_at = -1;
	ok(sb_wal_header_encode(&h, NULL, raw, &err) && sb_wal_header_decode(raw, NULL, &back, NULL, &err) &&
	   memcmp(&h, &back, sizeof(h)) == 0,
	   "a header of a 40-character name (no NUL), a negative level and time reads back whole");
	ok(sb_wal_header_is(&back, TH_WAL_SYSID, h.name, &err), "it is that file of that cluster");
	ok(!sb_wal_header_is(&back, TH_WAL_SYSID + 1, h.name, &err), "not another cluster's");
	like(err.message, "belongs to the cluster of system identifier 7301234567890123456, not 7301234567890123457",
		 "saying whose it is");
	ok(!sb_wal_header_is(&back, TH_WAL_SYSID, "00000002.history", &err), "nor another file");
	like(err.message, "names \"000000010000000000000002.00000028.backup\", not \"00000002.history\"", "naming both");

	bad = h;
	bad.raw_len = 0;
	expect_header_refused(&bad, NULL, SB_ECORRUPT, "a length of 0 bytes", "an empty file");
	bad = h;
	bad.raw_len = (uint64_t) 2 << 30;
	expect_header_refused(&bad, NULL, SB_ECORRUPT, "1 to 1073741824", "a file of 2 GB");
	bad = h;
	bad.codec = SB_CODEC_NONE;
	expect_header_refused(&bad, NULL, SB_ECORRUPT, "uncompressed, yet 300 bytes stored for 1000", "raw bytes of another length");
	bad = h;
	bad.stored_len = 1000;
	expect_header_refused(&bad, NULL, SB_ECORRUPT, "a writer keeps zstd only when smaller", "zstd no smaller");
	bad = h;
	bad.codec = 2;
	expect_header_refused(&bad, NULL, SB_ECORRUPT, "unknown codec 2", "an unknown codec");
	bad = h;
	snprintf(bad.name, sizeof(bad.name), "00000002.history");
	expect_header_refused(&bad, unpad_name, SB_ECORRUPT, "not NUL-padded", "bytes after the name");
	expect_header_refused(&bad, path_as_name, SB_ECORRUPT, "names no WAL file", "a path for a name");
	expect_header_refused(&h, header_of_64, SB_ECORRUPT, "header checksum mismatch", "another header size");
	expect_header_refused(&h, other_magic, SB_ECORRUPT, "bad magic", "another magic");
	expect_header_refused(&h, version_3, SB_EVERSION, "version 3.0 (this program reads 1.x and 2.x)", "version 3.0");
}
