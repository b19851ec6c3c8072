/* hwc serve's web configuration: the file Prometheus exporters read with
 * --web.config.file (the exporter-toolkit format): TLS certificate and key,
 * and users with bcrypt password hashes, parsed with libyaml and checked
 * with crypt(3) (libxcrypt knows $2b$). */
#include "serve.h"

#include <crypt.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

static int fail(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
	return -1;
}

/* The whole of a small file (a certificate, a key) as a string; NULL and ERR. */
static char *read_text(const char *path, char *err, size_t size)
{
	FILE *f = fopen(path, "re");
	if (!f) {
		fail(err, size, "cannot read %s: %s", path, strerror(errno));
		return NULL;
	}
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char chunk[4096];
	size_t n;
	while (m && (n = fread(chunk, 1, sizeof(chunk), f)) > 0 && len < (1 << 20))
		fwrite(chunk, 1, n, m);
	bool bad = ferror(f) || !m;
	fclose(f);
	if (m)
		fclose(m);
	if (bad || !buf || !len) {
		free(buf);
		fail(err, size, "cannot read %s: %s", path, bad ? strerror(errno) : "empty file");
		return NULL;
	}
	return buf;
}

/* The text of node ID of DOC, or NULL when it is not a scalar. */
static const char *scalar(yaml_document_t *doc, int id)
{
	yaml_node_t *n = yaml_document_get_node(doc, id);
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

static int parse_tls(yaml_document_t *doc, yaml_node_t *map, struct web_config *w, const char *path,
		     char *err, size_t size)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(err, size, "%s: tls_server_config must be a mapping", path);
	const char *cert = NULL, *key = NULL;
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *k = scalar(doc, p->key);
		const char *v = scalar(doc, p->value);
		if (!k || !v)
			return fail(err, size, "%s: tls_server_config takes names and text values", path);
		if (strcmp(k, "cert_file") == 0)
			cert = v;
		else if (strcmp(k, "key_file") == 0)
			key = v;
		else
			return fail(err, size, "%s: tls_server_config: '%s' is not supported (cert_file and "
					       "key_file are)",
				    path, k);
	}
	if (!cert || !key)
		return fail(err, size, "%s: tls_server_config needs both cert_file and key_file", path);
	if (!(w->cert = read_text(cert, err, size)) || !(w->key = read_text(key, err, size)))
		return -1;
	return 0;
}

static int parse_users(yaml_document_t *doc, yaml_node_t *map, struct web_config *w, const char *path,
		       char *err, size_t size)
{
	if (map->type != YAML_MAPPING_NODE)
		return fail(err, size, "%s: basic_auth_users must be a mapping of user: bcrypt hash", path);
	size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
	w->users = calloc(n ? n : 1, sizeof(*w->users));
	if (!w->users)
		return fail(err, size, "out of memory");
	for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top; p++) {
		const char *user = scalar(doc, p->key);
		const char *hash = scalar(doc, p->value);
		if (!user || !hash || !*user)
			return fail(err, size, "%s: basic_auth_users takes user: hash pairs", path);
		/* Only bcrypt, as the exporter toolkit: a plain password here is a mistake. */
		if (strncmp(hash, "$2", 2) != 0)
			return fail(err, size, "%s: the password of '%s' is not a bcrypt hash ($2b$...): "
					       "make one with htpasswd -nBC 10 USER",
				    path, user);
		struct web_user *u = &w->users[w->nusers++];
		if (!(u->name = strdup(user)) || !(u->hash = strdup(hash)))
			return fail(err, size, "out of memory");
	}
	return 0;
}

int web_config_load(struct web_config **out, const char *path, char *err, size_t size)
{
	*out = NULL;
	struct web_config *w = calloc(1, sizeof(*w));
	if (!w)
		return fail(err, size, "out of memory");
	pthread_mutex_init(&w->lock, NULL);
	if (!crypt_gensalt_rn("$5$", 1000, NULL, 0, w->quick_salt, sizeof(w->quick_salt))) {
		free(w);
		return fail(err, size, "cannot make a salt: %s", strerror(errno));
	}
	FILE *f = fopen(path, "re");
	if (!f) {
		free(w);
		return fail(err, size, "cannot read %s: %s", path, strerror(errno));
	}
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_parser_initialize(&parser);
	yaml_parser_set_input_file(&parser, f);
	int rc = 0;
	if (!yaml_parser_load(&parser, &doc)) {
		rc = fail(err, size, "%s:%zu: %s", path, parser.problem_mark.line + 1,
			  parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		free(w);
		return rc;
	}
	yaml_node_t *root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE)
		rc = fail(err, size, "%s: the configuration must be a mapping", path);
	for (yaml_node_pair_t *p = root && !rc ? root->data.mapping.pairs.start : NULL;
	     p && p < root->data.mapping.pairs.top && !rc; p++) {
		const char *k = scalar(&doc, p->key);
		yaml_node_t *v = yaml_document_get_node(&doc, p->value);
		if (k && strcmp(k, "tls_server_config") == 0)
			rc = parse_tls(&doc, v, w, path, err, size);
		else if (k && strcmp(k, "basic_auth_users") == 0)
			rc = parse_users(&doc, v, w, path, err, size);
		else
			rc = fail(err, size, "%s: '%s' is not supported (tls_server_config and "
					     "basic_auth_users are)",
				  path, k ? k : "?");
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	if (rc) {
		web_config_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

void web_config_free(struct web_config *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->nusers; i++) {
		free(w->users[i].name);
		free(w->users[i].hash);
		free(w->users[i].verified);
	}
	pthread_mutex_destroy(&w->lock);
	free(w->users);
	free(w->cert);
	free(w->key);
	free(w);
}

/* Are A and B the same string?  All of A is compared: the time says
 * nothing of where they differ. */
static bool same(const char *a, const char *b)
{
	size_t n = strlen(a);
	if (strlen(b) != n)
		return false;
	unsigned char diff = 0;
	for (size_t k = 0; k < n; k++)
		diff |= (unsigned char)(a[k] ^ b[k]);
	return diff == 0;
}

bool web_config_check(struct web_config *w, const char *user, const char *password)
{
	if (!user || !password)
		return false;
	struct web_user *u = NULL;
	for (size_t i = 0; i < w->nusers && !u; i++)
		if (strcmp(w->users[i].name, user) == 0)
			u = &w->users[i];
	if (!u)
		return false;
	struct crypt_data cd = {0};
	const char *quick = crypt_r(password, w->quick_salt, &cd);
	char *copy = quick && quick[0] != '*' ? strdup(quick) : NULL;
	pthread_mutex_lock(&w->lock);
	bool known = copy && u->verified && same(copy, u->verified);
	pthread_mutex_unlock(&w->lock);
	if (known) {
		free(copy);
		return true;
	}
	const char *h = crypt_r(password, u->hash, &cd);
	bool ok = h && same(h, u->hash);
	if (ok && copy) {
		pthread_mutex_lock(&w->lock);
		free(u->verified);
		u->verified = copy;
		copy = NULL;
		pthread_mutex_unlock(&w->lock);
	}
	free(copy);
	return ok;
}
