/*
 * json_scan.h
 *		Scanning a JSON document as a stream, a block of text at a time: the
 *		values are delimited (strings, nesting), never parsed; whoever takes
 *		a value parses it (cJSON) or reads it as it is.
 *
 * Every byte read is fed to a SHA-256, which is what the stripes' trailers
 * record of a manifest.json.  What lies before the position is dropped as
 * more is read, so memory is the longest value, not the document.
 */
#ifndef SB_JSON_SCAN_H
#define SB_JSON_SCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stripebackup/sb_manifest.h"
#include "format/checksum.h"

/* What sb_json_peek says at the end of the text. */
#define SB_JSON_AT_END (-1)

typedef struct SbJsonScan
{
	SbManifestReadFn read;
	void	   *arg;
	char	   *buf;
	size_t		cap;
	size_t		pos;			/* the next byte to scan; what lies before it is done with */
	size_t		fill;			/* bytes in buf */
	bool		eof;
	uint64_t	total;			/* bytes read */
	size_t		max_value;		/* a value longer than this is refused (0: no bound but the text's) */
	SbSha256   *sha;			/* of every byte read */
	SbError    *err;
} SbJsonScan;

/* A scan of what READ hands over; false (ERR) if it cannot start. */
extern bool sb_json_scan_begin(SbJsonScan *s, SbManifestReadFn read, void *arg, SbError *err);

/* The SHA-256 of every byte read; the scan is done with. */
extern bool sb_json_scan_end(SbJsonScan *s, uint8_t sha256[32]);

/* What is left of a scan, after an error or instead of sb_json_scan_end. */
extern void sb_json_scan_free(SbJsonScan *s);

/* SB_ECORRUPT: "manifest is not valid JSON". */
extern bool sb_json_not_json(SbJsonScan *s);

/* The next character that is not white space, not consumed; SB_JSON_AT_END, or false on failure. */
extern bool sb_json_peek(SbJsonScan *s, int *c);

/* The next character must be C: consume it. */
extern bool sb_json_expect(SbJsonScan *s, char c);

/*
 * The value that starts at the next non-space character, whole in the
 * buffer: [*START, *START + *LEN) of S->buf, not consumed.
 */
extern bool sb_json_delimit(SbJsonScan *s, size_t *start, size_t *len);

/*
 * An object's key, with its quotes (malloc'd, *KEY_LEN bytes), and the
 * colon after it: a string written as it is, without escapes.
 */
extern bool sb_json_key(SbJsonScan *s, char **key, size_t *key_len);

/* After a value: true and *MORE at a comma (consumed), false *MORE at CLOSE (consumed). */
extern bool sb_json_next_item(SbJsonScan *s, char close, bool *more);

#endif							/* SB_JSON_SCAN_H */
