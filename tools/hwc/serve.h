/* hwc serve: the HTTP agent (serve.c) and its web configuration
 * (serve_web.c). */
#ifndef HWC_SERVE_H
#define HWC_SERVE_H

#include <stdbool.h>
#include <stddef.h>

struct web_user {
	char *name, *hash; /* hash: bcrypt, $2b$... */
};

/* A --web.config.file: TLS when CERT and KEY (PEM text) are set, basic
 * auth when there are users. */
struct web_config {
	char *cert, *key;
	struct web_user *users;
	size_t nusers;
};

/* Read PATH into a new *OUT: 0, or -1 with the reason in ERR. */
int web_config_load(struct web_config **out, const char *path, char *err, size_t size);
void web_config_free(struct web_config *w);
/* Is PASSWORD the password of USER (either may be NULL: no)? */
bool web_config_check(const struct web_config *w, const char *user, const char *password);

#endif
