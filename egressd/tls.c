/*
 * TLS to a credential route's upstream (EG-3): one client context made
 * before egressd confines itself, with the system CA store (or, only in
 * test mode, the test CA cordond names), and per connection a libevent
 * OpenSSL bufferevent with SNI and hostname verification.  Touches only
 * the CA file, once, at start.
 */
#include <stdlib.h>
#include <string.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "egressd.h"
#include "log.h"

static SSL_CTX *tls_ctx;

void
tls_init(const char *test_ca)
{
	const char *ca = getenv(X509_get_default_cert_file_env());

	if (OPENSSL_init_ssl(OPENSSL_INIT_LOAD_SSL_STRINGS, NULL) != 1 ||
	    (tls_ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(tls_ctx, TLS1_2_VERSION) != 1)
		fatalx("TLS: no client context");
	SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
	if (test_ca != NULL)
		ca = test_ca;
	else if (ca == NULL || ca[0] == '\0')
		ca = X509_get_default_cert_file();
	/* Read now: after confinement there is no file to read.  Without
	 * a store every route fails verification (closed, not open). */
	if (SSL_CTX_load_verify_file(tls_ctx, ca) != 1) {
		log_warnx("TLS: no CA store loaded; routes will fail");
		ERR_clear_error();
	}
}

struct bufferevent *
tls_bev_new(struct event_base *base, const struct egress_route *ro)
{
	struct bufferevent *bev;
	SSL *ssl;

	if (tls_ctx == NULL || (ssl = SSL_new(tls_ctx)) == NULL)
		return NULL;
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	if ((ro->ro_ip == 0 &&
		(SSL_set_tlsext_host_name(ssl, ro->ro_host) != 1 ||
		    SSL_set1_host(ssl, ro->ro_host) != 1)) ||
	    (ro->ro_ip != 0 && X509_VERIFY_PARAM_set1_ip_asc(
				   SSL_get0_param(ssl), ro->ro_host) != 1)) {
		SSL_free(ssl);
		return NULL;
	}
	if ((bev = bufferevent_openssl_socket_new(base, -1, ssl,
		 BUFFEREVENT_SSL_CONNECTING, BEV_OPT_CLOSE_ON_FREE)) == NULL) {
		SSL_free(ssl);
		return NULL;
	}
	/* A response has its own framing: an upstream that closes without
	 * close_notify ends it, and the agent sees a short body if any. */
	bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
	return bev;
}

int
tls_failed(struct bufferevent *bev)
{
	int failed = 0;

	while (bufferevent_get_openssl_error(bev) != 0)
		failed = 1;
	ERR_clear_error();
	return failed;
}
