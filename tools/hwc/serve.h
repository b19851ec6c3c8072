/* hwc serve: the HTTP agent (serve.c) and its web configuration
 * (serve_web.c). */
#ifndef HWC_SERVE_H
#define HWC_SERVE_H

#include <stdbool.h>
#include <stddef.h>

#include <pthread.h>

struct web_user {
	char *name, *hash; /* hash: bcrypt, $2b$... */
	char *verified;    /* the last password that matched, hashed with quick_salt */
};

/* A --web.config.file: TLS when CERT and KEY (PEM text) are set, basic
 * auth when there are users.  A bcrypt check costs ~0.1 s of CPU: a
 * password that matched is remembered as a quick salted hash (SHA-256
 * crypt, a random salt of this process), so a scraper's every request
 * does not pay it again. */
struct web_config {
	char *cert, *key;
	struct web_user *users;
	size_t nusers;
	char quick_salt[192];
	pthread_mutex_t lock; /* the users' verified hashes */
};

/* Read PATH into a new *OUT: 0, or -1 with the reason in ERR. */
int web_config_load(struct web_config **out, const char *path, char *err, size_t size);
void web_config_free(struct web_config *w);
/* Is PASSWORD the password of USER (either may be NULL: no)? */
bool web_config_check(struct web_config *w, const char *user, const char *password);

#endif
