/*
 * policy_numbers.c
 *		Numbers as users write them: lists of rates and weights, integers,
 *		sizes.  One strict grammar each, for the command's options and the
 *		extension's settings alike.
 *
 * The C library's strtod and strtol accept far more than anyone means to
 * write ("nan", "inf", "0x1p4", " 12", "+3", "1e3"), and a tokenizer that
 * skips empty items turns "1,,2" into two rates: so the text is checked
 * character by character first, and converted only when it is plainly a
 * number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "stripebackup/sb_policy.h"

#define MAX_RATE 1e12			/* MB/s: far above any device */

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of a decimal number at TEXT, digits with an optional fraction ("12", "0.5"); 0 if none. */
static size_t
decimal_length(const char *text)
{
	size_t		n = strspn(text, "0123456789");

	if (n > 0 && text[n] == '.' && is_digit(text[n + 1]))
		n += 1 + strspn(text + n + 1, "0123456789");
	return n;
}

/*
 * One item of a list, ITEM_LEN bytes at ITEM, into *VALUE; WHAT is "rate" or
 * "weight".  Blanks around it are allowed ("50, 200" reads as a DBA writes
 * it in postgresql.conf); an item of blanks only is empty.
 */
static bool
parse_list_item(const char *text, const char *item, size_t item_len, const char *what,
				double *value, SbError *err)
{
	char		copy[64];

	while (item_len > 0 && (*item == ' ' || *item == '\t'))
	{
		item++;
		item_len--;
	}
	while (item_len > 0 && (item[item_len - 1] == ' ' || item[item_len - 1] == '\t'))
		item_len--;

	if (item_len == 0)
		return sb_error_set(err, SB_EINVAL, "\"%s\" has an empty %s: write numbers separated by single commas",
							text, what);
	if (decimal_length(item) != item_len || item_len >= sizeof(copy))
		return sb_error_set(err, SB_EINVAL, "%s \"%.*s\" in \"%s\" is not a number (digits, optionally with a decimal point)",
							what, (int) item_len, item, text);
	memcpy(copy, item, item_len);
	copy[item_len] = '\0';
	*value = strtod(copy, NULL);
	return true;
}

/* "N" or "N1,N2,...": WHAT names an item in errors. */
static bool
parse_number_list(const char *text, const char *what, SbNumberList *list, SbError *err)
{
	const char *p = text;

	memset(list, 0, sizeof(*list));
	for (;;)
	{
		size_t		len = strcspn(p, ",");

		if (list->count == SB_MAX_STRIPES)
			return sb_error_set(err, SB_EINVAL, "\"%s\" has more than %d %ss", text, SB_MAX_STRIPES, what);
		if (!parse_list_item(text, p, len, what, &list->values[list->count], err))
			return false;
		list->count++;
		if (p[len] == '\0')
			return true;
		p += len + 1;
	}
}

bool
sb_policy_parse_rates(const char *text, SbNumberList *rates, SbError *err)
{
	uint32_t	i;

	if (!parse_number_list(text, "rate", rates, err))
		return false;
	for (i = 0; i < rates->count; i++)
		if (rates->values[i] > MAX_RATE)
			return sb_error_set(err, SB_EINVAL, "rate %g MB/s in \"%s\" is too large (at most %g)",
								rates->values[i], text, MAX_RATE);
	return true;
}

bool
sb_policy_parse_weights(const char *text, SbNumberList *weights, SbError *err)
{
	uint32_t	i;

	if (!parse_number_list(text, "weight", weights, err))
		return false;
	for (i = 0; i < weights->count; i++)
		if (weights->values[i] <= 0 || weights->values[i] > MAX_RATE)
			return sb_error_set(err, SB_EINVAL, "weight %g in \"%s\" is not a positive number (at most %g)",
								weights->values[i], text, MAX_RATE);
	return true;
}

double
sb_policy_rate_of(const SbNumberList *rates, uint32_t index)
{
	if (rates->count == 1)
		return rates->values[0];
	return index < rates->count ? rates->values[index] : 0;
}

bool
sb_policy_parse_int(const char *text, long min, long max, long *value, SbError *err)
{
	const char *digits = text[0] == '-' ? text + 1 : text;
	long		v;

	if (digits[0] == '\0' || strspn(digits, "0123456789") != strlen(digits))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a whole number", text);
	errno = 0;
	v = strtol(text, NULL, 10);
	if (errno == ERANGE || v < min || v > max)
		return sb_error_set(err, SB_EINVAL, "%s is out of range (%ld to %ld)", text, min, max);
	*value = v;
	return true;
}

bool
sb_policy_parse_uint64(const char *text, uint64_t *value, SbError *err)
{
	unsigned long long v;

	if (text[0] == '\0' || strspn(text, "0123456789") != strlen(text))
		return sb_error_set(err, SB_EINVAL, "\"%s\" is not a whole number (digits only)", text);
	errno = 0;
	v = strtoull(text, NULL, 10);
	if (errno == ERANGE)
		return sb_error_set(err, SB_EINVAL, "%s is out of range (0 to %llu)", text,
							(unsigned long long) UINT64_MAX);
	*value = (uint64_t) v;
	return true;
}

/* The multiplier of a unit suffix, or 0 if SUFFIX is not one. */
static uint64_t
unit_of(const char *suffix)
{
	static const char units[] = "kmgt";
	const char *u;
	uint64_t	factor = 1024;

	if (suffix[0] == '\0')
		return 1;
	for (u = units; *u != '\0'; u++, factor *= 1024)
		if ((suffix[0] | 0x20) == *u)
			break;
	if (*u == '\0' || (suffix[1] != '\0' && strcmp(suffix + 1, "B") != 0 &&
					   strcmp(suffix + 1, "iB") != 0))
		return 0;
	return factor;
}

bool
sb_policy_parse_size(const char *text, uint64_t *bytes, SbError *err)
{
	size_t		ndigits = strspn(text, "0123456789");
	uint64_t	unit = unit_of(text + ndigits);
	unsigned long long v;

	if (ndigits == 0 || unit == 0)
		return sb_error_set(err, SB_EINVAL,
							"\"%s\" is not a size (bytes, or a number followed by k, M, G or T)",
							text);
	errno = 0;
	v = strtoull(text, NULL, 10);
	if (errno == ERANGE || v > UINT64_MAX / unit)
		return sb_error_set(err, SB_EINVAL, "size \"%s\" is too large", text);
	*bytes = (uint64_t) v * unit;
	return true;
}
