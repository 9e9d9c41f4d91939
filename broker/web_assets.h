/*
 * Dashboard assets compiled into the broker (DA-3, PER-6): generated
 * into web_assets.c by scripts/embed_assets.py from broker/web/.
 */
#ifndef CORDON_WEB_ASSETS_H
#define CORDON_WEB_ASSETS_H

#include <stddef.h>

#define WEB_NONCE_MARK "{{NONCE}}" /* replaced per response in .html */

struct web_asset {
	const char *wa_path; /* "/ui/app.js" */
	const char *wa_type; /* MIME with charset */
	const unsigned char *wa_data;
	size_t wa_len;
	int wa_templated; /* 1 for .html: contains {{NONCE}} */
};

extern const struct web_asset web_assets[];
extern const size_t web_nassets;

#endif
