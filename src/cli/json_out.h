/*
 * json_out.h
 *		The command's --output=json: one JSON document on standard output
 *		per command, whose every object and field docs/JSON.md describes
 *		(and test/json/output.schema.json checks).  Every document carries
 *		"version" (JSON_OUTPUT_VERSION) and "command"; a field is added in
 *		a minor change, and only a change that removes or redefines one
 *		raises the version.
 */
#ifndef SB_JSON_OUT_H
#define SB_JSON_OUT_H

#include "cli.h"
#include "list_rows.h"

#define JSON_OUTPUT_VERSION 1

/* "--output FORMAT": "text" or "json" into *JSON; false for anything else. */
extern bool cli_parse_output(const char *value, bool *json);

/* "list": the destinations given and the rows found. */
extern bool json_print_list(const char *const *dests, uint32_t ndests, const ListRows *rows);

#endif							/* SB_JSON_OUT_H */
