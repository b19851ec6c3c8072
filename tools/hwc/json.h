/* A small JSON writer for --json output: values are escaped, commas and
 * indentation are handled here.  Keys are NULL inside arrays. */
#ifndef HWC_TOOL_JSON_H
#define HWC_TOOL_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct json {
	FILE *f;
	int depth;
	bool need_comma[32];
	bool compact; /* everything on one line (JSON lines, large exports) */
};

void json_init(struct json *j, FILE *f);
void json_object(struct json *j, const char *key);
void json_object_end(struct json *j);
void json_array(struct json *j, const char *key);
void json_array_end(struct json *j);
/* A string; NULL writes null. */
void json_string(struct json *j, const char *key, const char *value);
void json_int(struct json *j, const char *key, long long value);
void json_uint(struct json *j, const char *key, uint64_t value);
/* A 64-bit word as a "0x..." string: JSON numbers lose bits above 2^53 in many readers. */
void json_hex(struct json *j, const char *key, uint64_t value);
/* A value given as JSON text, written as it is. */
void json_raw(struct json *j, const char *key, const char *text);
void json_double(struct json *j, const char *key, double value);
void json_bool(struct json *j, const char *key, bool value);
void json_null(struct json *j, const char *key);
/* Finish the document with a newline. */
void json_end(struct json *j);

#endif
