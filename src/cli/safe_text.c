/*
 * safe_text.c
 *		Text that others wrote (a kept backup's note) printed to a terminal:
 *		a control character in it could move the cursor, rewrite what was
 *		printed before or change the terminal's settings, so each is shown
 *		as an escape instead ("\n", "\x1b", "\u009b").
 */
#include <stdio.h>

#include "cli.h"

/* Is the two-byte UTF-8 sequence at P a C1 control character (U+0080 to U+009F)? */
static bool
is_c1(const unsigned char *p)
{
	return p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f;
}

void
cli_print_safe(FILE *out, const char *text)
{
	const unsigned char *p = (const unsigned char *) text;

	for (; *p != '\0'; p++)
	{
		if (*p == '\\')
			fputs("\\\\", out);
		else if (*p == '\n')
			fputs("\\n", out);
		else if (*p == '\t')
			fputs("\\t", out);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\x%02x", *p);
		else if (is_c1(p))
			fprintf(out, "\\u%04x", *++p);
		else
			fputc(*p, out);
	}
}
