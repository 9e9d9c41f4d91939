/*
 * Tunnel throughput through a real cordon-egressd (EG-1), started here
 * on a socketpair as cordond does, with this program as its spawner and
 * its auditd: a CONNECT tunnel from a client to a sink on 127.0.0.2
 * (allowed by the test-only testAllowAddress, so egressd runs with
 * --test-egress 1), N MiB pushed through it.  Floor, in the same run: the
 * same N MiB written straight to the same sink over loopback.  Prints
 * both rates and the ratio (target >= 0.5).
 *
 * Then the latency a credential route adds (EG-3): REQS requests, each on
 * a fresh connection, to a TLS mock on 127.0.0.2 (a certificate made
 * here, handed to a second egressd with --test-ca), routed (plain HTTP
 * to egressd, which rewrites the head and speaks TLS upstream) and, as
 * the floor, direct (this process's own TLS client to the same mock).
 * Prints both p50s and the difference (target <= 1 ms).
 *
 * usage: bench_egress [MIB [REQS]]   (defaults 256, 300)
 */
#include <sys/socket.h>
#include <sys/wait.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "bench_util.h"
#include "ipc.h"
#include "msg.h"
#include "util.h"

#define CHUNK (256 * 1024)

static int
listen_on(const char *addr, int *port)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	inet_pton(AF_INET, addr, &sin.sin_addr);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 16) == -1 ||
	    getsockname(fd, (struct sockaddr *)&sin, &len) == -1)
		return -1;
	*port = ntohs(sin.sin_port);
	return fd;
}

static int
dial(int port)
{
	struct sockaddr_in sin;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd == -1 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
		return -1;
	return fd;
}

/* The sink: accepts one connection at a time and reads it to EOF. */
static void *
sink(void *arg)
{
	int lfd = *(int *)arg, fd;
	char *buf = malloc(CHUNK);

	while (buf != NULL && (fd = accept(lfd, NULL, NULL)) != -1) {
		while (read(fd, buf, CHUNK) > 0)
			;
		/* Tell the writer it is all in: close. */
		close(fd);
	}
	free(buf);
	return NULL;
}

/* Write mib MiB on fd, half-close, wait for the sink's close: seconds. */
static double
push(int fd, long mib)
{
	static char buf[CHUNK];
	double t0 = bench_now();
	long i;
	char c;

	for (i = 0; i < mib * (1024 * 1024 / CHUNK); i++)
		if (write_full(fd, buf, sizeof(buf)) == -1)
			return -1;
	shutdown(fd, SHUT_WR);
	while (read(fd, &c, 1) > 0)
		;
	close(fd);
	return bench_now() - t0;
}

/* One frame, its fd with its first byte alone (as the codec sends). */
static int
send_frame(int fd, uint32_t type, const char *json, int passfd)
{
	struct ipc_hdr h = {
	    type, 0, (uint32_t)strlen(json), passfd >= 0 ? IPC_FLAG_FD : 0, 0};
	uint8_t out[IPC_HDR_LEN + 1024];
	size_t len = IPC_HDR_LEN + strlen(json);

	if (len > sizeof(out))
		return -1;
	ipc_hdr_encode(&h, out);
	memcpy(out + IPC_HDR_LEN, json, strlen(json));
	if (ipc_sendmsg_fd(fd, out, 1, passfd) != 1)
		return -1;
	return write_full(fd, out + 1, len - 1);
}

/* egressd on a socketpair, with us as its spawner and auditd. */
static pid_t
start_egressd(const char *bin, const char *ca, int *spawner, int *auditd)
{
	char *argv[] = {(char *)bin, "--test-egress", "1",
	    ca != NULL ? "--test-ca" : NULL, (char *)ca, NULL};
	int ctl[2], s[2], a[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s) == -1 ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, a) == -1)
		return -1;
	if ((pid = bench_child(bin, argv, ctl[1])) == -1)
		return -1;
	close(ctl[1]);
	if (send_frame(ctl[0], MSG_PEER_FD, "{\"peer\":\"spawner\"}", s[1]) ==
		-1 ||
	    send_frame(ctl[0], MSG_PEER_FD, "{\"peer\":\"auditd\"}", a[1]) ==
		-1)
		return -1;
	close(s[1]);
	close(a[1]);
	*spawner = s[0];
	*auditd = a[0];
	return pid;
}

/* ---- EG-3: the latency a route adds ---- */

#define ROUTE_HOST "mock.test"
#define ROUTE_REQ  "POST /r/v1/x HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
#define ROUTE_ANS  "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"

/* A self-signed P-256 certificate for ROUTE_HOST, its own trust anchor. */
static int
make_cert(EVP_PKEY **key, X509 **crt)
{
	X509_EXTENSION *ext;

	if ((*key = EVP_EC_gen("P-256")) == NULL || (*crt = X509_new()) == NULL)
		return -1;
	ASN1_INTEGER_set(X509_get_serialNumber(*crt), 1);
	X509_gmtime_adj(X509_getm_notBefore(*crt), -60);
	X509_gmtime_adj(X509_getm_notAfter(*crt), 86400);
	X509_set_pubkey(*crt, *key);
	X509_NAME_add_entry_by_txt(X509_get_subject_name(*crt), "CN",
	    MBSTRING_ASC, (const unsigned char *)ROUTE_HOST, -1, -1, 0);
	X509_set_issuer_name(*crt, X509_get_subject_name(*crt));
	if ((ext = X509V3_EXT_conf_nid(NULL, NULL, NID_subject_alt_name,
		 "DNS:" ROUTE_HOST)) == NULL ||
	    X509_add_ext(*crt, ext, -1) != 1)
		return -1;
	X509_EXTENSION_free(ext);
	return X509_sign(*crt, *key, EVP_sha256()) > 0 ? 0 : -1;
}

/* The mock: one TLS request per connection, answered, then closed. */
static void *
tls_mock(void *arg)
{
	SSL_CTX *ctx = arg;
	char buf[4096];
	int lfd = *(int *)SSL_CTX_get_app_data(ctx), fd;
	size_t got;
	SSL *ssl;
	int n;

	while ((fd = accept(lfd, NULL, NULL)) != -1) {
		if ((ssl = SSL_new(ctx)) == NULL || SSL_set_fd(ssl, fd) != 1 ||
		    SSL_accept(ssl) != 1) {
			SSL_free(ssl);
			close(fd);
			continue;
		}
		for (got = 0; got < sizeof(buf) - 1; got += (size_t)n) {
			if ((n = SSL_read(ssl, buf + got,
				 (int)(sizeof(buf) - 1 - got))) <= 0)
				break;
			buf[got + (size_t)n] = '\0';
			if (strstr(buf, "\r\n\r\n{}") != NULL)
				break;
		}
		SSL_write(ssl, ROUTE_ANS, (int)strlen(ROUTE_ANS));
		SSL_shutdown(ssl);
		SSL_free(ssl);
		close(fd);
	}
	return NULL;
}

/* Read fd (or ssl) to EOF: 0 if the answer was a 200. */
static int
answer(int fd, SSL *ssl)
{
	char buf[512];
	size_t got = 0;
	int n;

	while (
	    (n = ssl ? SSL_read(ssl, buf + got, (int)(sizeof(buf) - 1 - got))
		     : (int)read(fd, buf + got, sizeof(buf) - 1 - got)) > 0 &&
	    got + (size_t)n < sizeof(buf) - 1)
		got += (size_t)n;
	buf[got] = '\0';
	return strncmp(buf, "HTTP/1.1 200", 12) == 0 ? 0 : -1;
}

/* One direct request: connect, verified TLS, request, answer; seconds. */
static double
direct_once(SSL_CTX *cctx, int port)
{
	struct sockaddr_in sin;
	double t0 = bench_now();
	SSL *ssl = NULL;
	int fd, ok = -1;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)port);
	inet_pton(AF_INET, "127.0.0.2", &sin.sin_addr);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) != -1 &&
	    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    (ssl = SSL_new(cctx)) != NULL &&
	    SSL_set_tlsext_host_name(ssl, ROUTE_HOST) == 1 &&
	    SSL_set1_host(ssl, ROUTE_HOST) == 1 && SSL_set_fd(ssl, fd) == 1 &&
	    SSL_connect(ssl) == 1 &&
	    SSL_write(ssl, ROUTE_REQ, (int)strlen(ROUTE_REQ)) > 0)
		ok = answer(fd, ssl);
	SSL_free(ssl);
	if (fd != -1)
		close(fd);
	return ok == 0 ? bench_now() - t0 : -1;
}

/* One routed request: plain HTTP to egressd's listener; seconds. */
static double
routed_once(int lport)
{
	double t0 = bench_now();
	int fd, ok = -1;

	if ((fd = dial(lport)) != -1 &&
	    write_full(fd, ROUTE_REQ, strlen(ROUTE_REQ)) == 0)
		ok = answer(fd, NULL);
	if (fd != -1)
		close(fd);
	return ok == 0 ? bench_now() - t0 : -1;
}

static int
route_latency(const char *bin, long reqs)
{
	char ca[] = "/tmp/cordon-bench-ca-XXXXXX", json[512];
	double *d = calloc((size_t)reqs, sizeof(double));
	double *r = calloc((size_t)reqs, sizeof(double));
	SSL_CTX *sctx = SSL_CTX_new(TLS_server_method());
	SSL_CTX *cctx = SSL_CTX_new(TLS_client_method());
	int mfd, mport, lfd, lport, sp, ad, cfd, st;
	EVP_PKEY *key = NULL;
	X509 *crt = NULL;
	pthread_t th;
	FILE *f;
	pid_t pid;
	long i;

	if (d == NULL || r == NULL || sctx == NULL || cctx == NULL ||
	    make_cert(&key, &crt) == -1 ||
	    SSL_CTX_use_certificate(sctx, crt) != 1 ||
	    SSL_CTX_use_PrivateKey(sctx, key) != 1 ||
	    X509_STORE_add_cert(SSL_CTX_get_cert_store(cctx), crt) != 1 ||
	    (cfd = mkstemp(ca)) == -1 || (f = fdopen(cfd, "w")) == NULL ||
	    PEM_write_X509(f, crt) != 1 || fclose(f) != 0 ||
	    (mfd = listen_on("127.0.0.2", &mport)) == -1)
		return -1;
	SSL_CTX_set_verify(cctx, SSL_VERIFY_PEER, NULL);
	SSL_CTX_set_app_data(sctx, &mfd);
	if (pthread_create(&th, NULL, tls_mock, sctx) != 0 ||
	    (pid = start_egressd(bin, ca, &sp, &ad)) == -1 ||
	    (lfd = listen_on("127.0.0.1", &lport)) == -1)
		return -1;
	snprintf(json, sizeof(json),
	    "{\"runId\":\"0123456789abcdee\",\"agent\":\"bench\",\"allow\":"
	    "[\"" ROUTE_HOST ":%d\"],\"maxConnections\":4,\"maxBytes\":"
	    "1073741824,\"idleTimeoutSec\":60,\"testAllowAddress\":"
	    "\"127.0.0.2\",\"testResolve\":{\"" ROUTE_HOST "\":\"127.0.0.2\"},"
	    "\"routes\":[{\"name\":\"r\",\"upstream\":\"https://" ROUTE_HOST
	    ":%d\",\"auth\":\"bearer\",\"key\":\"bench-key\"}]}",
	    mport, mport);
	if (send_frame(sp, MSG_EGRESS_OPEN, json, lfd) == -1)
		return -1;
	close(lfd);
	usleep(200 * 1000); /* egressd takes the listener */
	/* Interleaved, so both see the same machine. */
	for (i = 0; i < reqs; i++)
		if ((d[i] = direct_once(cctx, mport)) < 0 ||
		    (r[i] = routed_once(lport)) < 0) {
			fprintf(
			    stderr, "bench_egress: request %ld failed\n", i);
			return -1;
		}
	bench_sort(d, reqs);
	bench_sort(r, reqs);
	printf("floor  direct TLS request to the mock:  p50 %7.3f ms\n",
	    bench_pct(d, reqs, 50) * 1e3);
	printf("egress routed request (egressd, TLS): p50 %7.3f ms = +%.3f ms, "
	       "%4.2fx the floor\n",
	    bench_pct(r, reqs, 50) * 1e3,
	    (bench_pct(r, reqs, 50) - bench_pct(d, reqs, 50)) * 1e3,
	    bench_pct(r, reqs, 50) / bench_pct(d, reqs, 50));
	printf("(%ld requests each, a fresh connection and TLS handshake "
	       "each)\n",
	    reqs);
	fflush(stdout);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	unlink(ca);
	close(ad);
	close(sp);
	return 0;
}

int
main(int argc, char **argv)
{
	long mib = argc > 1 ? atol(argv[1]) : 256;
	long reqs = argc > 2 ? atol(argv[2]) : 300;
	char bin[4200], self[4096], json[512], head[256], *slash;
	int sink_fd, sink_port, lfd, lport, sp, ad, fd, st;
	double floor_s, tun_s;
	pthread_t th;
	ssize_t n;
	pid_t pid;

	if (mib < 1)
		mib = 1;
	if ((n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0)
		return 1;
	self[n] = '\0';
	if ((slash = strrchr(self, '/')) != NULL)
		*slash = '\0';
	if (snprintf(bin, sizeof(bin), "%s/../cordon-egressd", self) >=
	    (int)sizeof(bin))
		return 1;
	signal(SIGPIPE, SIG_IGN);
	if ((sink_fd = listen_on("127.0.0.2", &sink_port)) == -1 ||
	    pthread_create(&th, NULL, sink, &sink_fd) != 0)
		return 1;

	/* Floor: straight to the sink. */
	{
		struct sockaddr_in sin;

		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_port = htons((uint16_t)sink_port);
		inet_pton(AF_INET, "127.0.0.2", &sin.sin_addr);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd == -1 ||
		    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			return 1;
		floor_s = push(fd, mib);
	}

	if ((pid = start_egressd(bin, NULL, &sp, &ad)) == -1 ||
	    (lfd = listen_on("127.0.0.1", &lport)) == -1)
		return 1;
	snprintf(json, sizeof(json),
	    "{\"runId\":\"0123456789abcdef\",\"agent\":\"bench\",\"allow\":"
	    "[\"127.0.0.2:%d\"],\"maxConnections\":4,\"maxBytes\":%lld,"
	    "\"idleTimeoutSec\":60,\"testAllowAddress\":\"127.0.0.2\"}",
	    sink_port, (long long)(mib + 16) * 1024 * 1024);
	if (send_frame(sp, MSG_EGRESS_OPEN, json, lfd) == -1)
		return 1;
	close(lfd);
	usleep(200 * 1000); /* egressd takes the listener */
	if ((fd = dial(lport)) == -1)
		return 1;
	n = snprintf(head, sizeof(head),
	    "CONNECT 127.0.0.2:%d HTTP/1.1\r\n\r\n", sink_port);
	if (write_full(fd, head, (size_t)n) == -1 ||
	    (n = read(fd, head, sizeof(head) - 1)) <= 0 ||
	    strncmp(head, "HTTP/1.1 200", 12) != 0) {
		fprintf(stderr, "bench_egress: the tunnel was refused\n");
		return 1;
	}
	tun_s = push(fd, mib);

	printf("floor  loopback copy to the sink:   %8.1f MiB/s\n",
	    (double)mib / floor_s);
	printf("egress CONNECT tunnel (egressd):    %8.1f MiB/s = %4.2fx the "
	       "floor\n",
	    (double)mib / tun_s, floor_s / tun_s);
	printf("(%ld MiB each way, one connection)\n", mib);
	fflush(stdout);
	kill(pid, SIGTERM);
	waitpid(pid, &st, 0);
	close(ad);
	close(sp);
	return route_latency(bin, reqs < 10 ? 10 : reqs) == 0 ? 0 : 1;
}
