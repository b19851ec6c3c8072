#include "json.h"

#include <inttypes.h>
#include <math.h>

void json_init(struct json *j, FILE *f)
{
	j->f = f;
	j->depth = 0;
	j->need_comma[0] = false;
}

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
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

/* Comma, newline, indentation and "key": before a value. */
static void member(struct json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	if (j->depth > 0) {
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
	if (had_members) {
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

void json_hex(struct json *j, const char *key, uint64_t value)
{
	member(j, key);
	fprintf(j->f, "\"0x%" PRIx64 "\"", value);
}

void json_double(struct json *j, const char *key, double value)
{
	member(j, key);
	if (isfinite(value))
		fprintf(j->f, "%.17g", value);
	else
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
