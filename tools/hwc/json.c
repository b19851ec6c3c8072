#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
	j->compact = false;
}

/* Length of the UTF-8 sequence at P, or 0 when it is not valid UTF-8. */
static size_t utf8_length(const unsigned char *p)
{
	size_t n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
	for (size_t k = 1; k < n; k++)
		if ((p[k] & 0xc0) != 0x80)
			return 0;
	/* No overlong forms, surrogates or code points above U+10FFFF. */
	if ((n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) ||
	    (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))))
		return 0;
	return n;
}

/* Strings come from argv, thread names and files: bytes that are not UTF-8
 * become U+FFFD, so the document stays valid JSON. */
static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (*p < 0x20) {
				fprintf(f, "\\u%04x", *p);
			} else if (*p < 0x80) {
				fputc(*p, f);
			} else {
				size_t n = utf8_length(p);
				if (n) {
					fwrite(p, 1, n, f);
					p += n - 1;
				} else {
					fputs("\\ufffd", f);
				}
			}
		}
	}
	fputc('"', f);
}

/* Comma, newline, indentation and "key": before a value. */
static void member(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0 && !j->compact) {
		fputc('\n', j->f);
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	j->need_comma[j->depth] = true;
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

static void open_scope(struct json *j, const char *key, char c)
{
	member(j, key);
	fputc(c, j->f);
	if (j->depth + 1 < (int)(sizeof(j->need_comma) / sizeof(j->need_comma[0])))
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_scope(struct json *j, char c)
{
	bool had_members = j->need_comma[j->depth];
	if (j->depth > 0)
		j->depth--;
	if (had_members && !j->compact) {
		fputc('\n', j->f);
		fprintf(j->f, "%*s", 2 * j->depth, "");
	}
	fputc(c, j->f);
}

void json_object(struct json *j, const char *key) { open_scope(j, key, '{'); }
void json_object_end(struct json *j) { close_scope(j, '}'); }
void json_array(struct json *j, const char *key) { open_scope(j, key, '['); }
void json_array_end(struct json *j) { close_scope(j, ']'); }

void json_string(struct json *j, const char *key, const char *value)
{
	member(j, key);
	if (value)
		put_string(j->f, value);
	else
		fputs("null", j->f);
}

void json_int(struct json *j, const char *key, long long value)
{
	member(j, key);
	fprintf(j->f, "%lld", value);
}

void json_uint(struct json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->f, "%" PRIu64, value);
}

/* TEXT is already a JSON value (a document read and checked elsewhere). */
void json_raw(struct json *j, const char *key, const char *text)
{
	member(j, key);
	fputs(text, j->f);
}

void json_hex(struct json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->f, "\"0x%" PRIx64 "\"", value);
}

void json_double(struct json *j, const char *key, double value)
{
	member(j, key);
	if (isfinite(value)) {
		/* The shortest form that reads back as the same double: 0.1, not
		 * 0.10000000000000001.  The tools keep LC_NUMERIC "C" for JSON. */
		char buf[32];
		for (int digits = 15; digits <= 17; digits++) {
			snprintf(buf, sizeof(buf), "%.*g", digits, value);
			if (strtod(buf, NULL) == value)
				break;
		}
		fputs(buf, j->f);
	} else
		fputs("null", j->f); /* JSON has no NaN or infinity */
}

void json_bool(struct json *j, const char *key, bool value)
{
	member(j, key);
	fputs(value ? "true" : "false", j->f);
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
}
