/*
 * TLS to a credential route's upstream (EG-3): one client context, made
 * when the first routed request needs it, with the system CA store (or,
 * only in test mode, the test CA cordond names), and per connection a
 * libevent OpenSSL bufferevent with SNI and hostname verification.
 *
 * The CA file is opened once, at start, before egressd confines itself
 * (afterwards there is no file to open); its descriptor is read and
 * closed when the context is made.  Until a route is used, OpenSSL is
 * mapped but not initialised: no provider, method store or parsed
 * certificates are resident in an egressd whose runs have no routes.
 * OpenSSL's configuration file is never read: the context's settings
 * are egressd's own (TLS 1.2 at least, security level 2, peer verified),
 * the same on every host.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "egressd.h"
#include "log.h"

#define TLS_SECURITY_LEVEL 2 /* >= 112-bit keys, no SHA-1 signatures */

static int tls_ca_fd = -1; /* until the context is made */
static SSL_CTX *tls_ctx;
static int tls_failed_init; /* made once, or refused once for good */

void
tls_init(const char *test_ca)
{
	const char *ca = getenv(X509_get_default_cert_file_env());

	if (test_ca != NULL)
		ca = test_ca;
	else if (ca == NULL || ca[0] == '\0')
		ca = X509_get_default_cert_file();
	/* Opened now: after confinement there is no file to open.  Without
	 * a store every route fails verification (closed, not open). */
	if ((tls_ca_fd = open(ca, O_RDONLY | O_CLOEXEC | O_NOCTTY)) == -1)
		log_warnx("TLS: no CA store; routes will fail");
}

/* The CA file's certificates and CRLs into store; how many certificates. */
static int
tls_load_ca(X509_STORE *store, int fd)
{
	STACK_OF(X509_INFO) * infos;
	X509_INFO *xi;
	BIO *bio;
	int i, n = 0;

	if ((bio = BIO_new_fd(fd, BIO_NOCLOSE)) == NULL)
		return 0;
	infos = PEM_X509_INFO_read_bio(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (infos == NULL)
		return 0;
	for (i = 0; i < sk_X509_INFO_num(infos); i++) {
		xi = sk_X509_INFO_value(infos, i);
		if (xi->x509 != NULL &&
		    X509_STORE_add_cert(store, xi->x509) == 1)
			n++;
		if (xi->crl != NULL)
			(void)X509_STORE_add_crl(store, xi->crl);
	}
	sk_X509_INFO_pop_free(infos, X509_INFO_free);
	return n;
}

/* The client context, made on first use; NULL if it cannot be. */
static SSL_CTX *
tls_context(void)
{
	if (tls_ctx != NULL || tls_failed_init)
		return tls_ctx;
	tls_failed_init = 1;
	if (OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL) != 1 ||
	    (tls_ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_set_min_proto_version(tls_ctx, TLS1_2_VERSION) != 1) {
		log_warnx("TLS: no client context; routes will fail");
		SSL_CTX_free(tls_ctx);
		tls_ctx = NULL;
		ERR_clear_error();
		return NULL;
	}
	tls_failed_init = 0;
	SSL_CTX_set_security_level(tls_ctx, TLS_SECURITY_LEVEL);
#ifdef SSL_OP_IGNORE_UNEXPECTED_EOF
	/* OpenSSL 3 reports a close without close_notify as an error, which
	 * libevent's dirty-shutdown switch (tls_bev_new) does not see: an
	 * answer read whole would be recorded as an upstream error. */
	SSL_CTX_set_options(tls_ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
#endif
	SSL_CTX_set_verify(tls_ctx, SSL_VERIFY_PEER, NULL);
	if (tls_ca_fd != -1) {
		if (tls_load_ca(SSL_CTX_get_cert_store(tls_ctx), tls_ca_fd) ==
		    0)
			log_warnx("TLS: no CA certificate loaded; routes "
				  "will fail");
		close(tls_ca_fd);
		tls_ca_fd = -1;
	}
	ERR_clear_error();
	return tls_ctx;
}

struct bufferevent *
tls_bev_new(struct event_base *base, const struct egress_route *ro)
{
	struct bufferevent *bev;
	SSL_CTX *ctx;
	SSL *ssl;

	if ((ctx = tls_context()) == NULL || (ssl = SSL_new(ctx)) == NULL)
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
