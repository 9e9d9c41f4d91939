/*
 * cordon-broker: the HTTP front on 127.0.0.1.  No file access, no secret
 * values: it receives the listening socket and the dashboard token from
 * cordond (or, under systemd, the socket by activation and the token as a
 * credential read before confinement), then confines itself to accepting
 * connections and talking to its peers.  The perimeter and routes are in
 * front.c, handlers in api_*.c.
 */
#include <sys/queue.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <fcntl.h>
#include <limits.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>
#include <json-c/json.h>

#include "broker.h"
#include "config.h"
#include "confine.h"
#include "daemon.h"
#include "http.h"
#include "log.h"
#include "msg.h"
#include "util.h"
#include "broker_shapes.h"

struct broker broker;

static void broker_config_h(struct ipc_conn *, struct ipc_msg *, void *);

static const struct ipc_dispatch parent_table[] = {
    DAEMON_PARENT_ROWS,
    {MSG_BROKER_CONFIG, PROC_BIT(PROC_PARENT), 2, 16384, IPC_FD_REQUIRED,
	broker_config_h, IPC_KEYS_CONFIG(config_shape)},
    IPC_END,
};

/* The broker answers no peer requests; it asks, and takes run events. */
static const struct ipc_dispatch peer_table[] = {
    {MSG_RUN_EVENT, PROC_BIT(PROC_SPAWNER), 2, IPC_MAX_PAYLOAD, IPC_FD_NONE,
	agents_run_event_h, IPC_KEYS(run_event_shape)},
    IPC_END,
};

struct ipc_conn *
broker_peer(enum proc_id p)
{
	if ((unsigned)p >= PROC_MAX || p == PROC_PARENT)
		return NULL;
	return broker.b_d.d_peers[p];
}

/* ---- listener ---- */

static void
relisten_cb(evutil_socket_t fd, short ev, void *arg)
{
	evconnlistener_enable(broker.b_listener);
}

/*
 * accept(2) failing with EMFILE means RLIMIT_NOFILE (our connection
 * bound) is reached: pause accepting briefly instead of spinning.
 */
static void
listener_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval tv = {0, 100 * 1000};

	log_debug("accept paused: %s", strerror(errno));
	evconnlistener_disable(l);
	evtimer_add(broker.b_relisten, &tv);
}

/* Serve HTTP on the listening socket fd (ours from here on). */
static void
broker_serve(int fd)
{
	int one = 1;

	/* accept(2) must never block the event loop. */
	if (evutil_make_socket_nonblocking(fd) == -1)
		fatalx("listener");
	/*
	 * Accepted sockets inherit TCP_NODELAY: libevent writes at most
	 * 16 KiB per pass, and the tail of a larger answer would otherwise
	 * wait behind Nagle for the client's delayed ACK (~40 ms).
	 */
	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) == -1)
		log_warn("TCP_NODELAY");
	broker.b_listener = evconnlistener_new(broker.b_d.d_base, NULL, NULL,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (broker.b_listener == NULL)
		fatalx("listener");
	if ((broker.b_http = evhttp_new(broker.b_d.d_base)) == NULL)
		fatalx("evhttp_new");
	evhttp_set_allowed_methods(broker.b_http, 0xffff);
	evhttp_set_max_body_size(broker.b_http, BROKER_MAX_BODY);
	evhttp_set_max_headers_size(broker.b_http, BROKER_MAX_HEADERS);
	evhttp_set_timeout(broker.b_http, BROKER_TIMEOUT_S);
	evhttp_set_gencb(broker.b_http, http_request_cb, NULL);
	conns_init(broker.b_http, broker.b_d.d_base);
	if (evhttp_bind_listener(broker.b_http, broker.b_listener) == NULL)
		fatalx("evhttp_bind_listener");
	broker.b_relisten = evtimer_new(broker.b_d.d_base, relisten_cb, NULL);
	evconnlistener_set_error_cb(broker.b_listener, listener_error_cb);
	log_debug("serving on port %u", broker.b_port);
}

/* PER-5: the sessions an earlier broker issued, as cordond kept them. */
static void
broker_sessions(struct json_object *arr)
{
	struct broker_session *s;
	const char *id, *page;
	long long created;
	size_t i, n = 0;

	for (i = 0;
	     i < json_object_array_length(arr) && n < nitems(broker.b_sessions);
	     i++) {
		struct json_object *so = json_object_array_get_idx(arr, i);

		if ((id = json_get_str(so, "id", SESSION_HEX)) == NULL ||
		    !hex_lower_n(id, SESSION_HEX) ||
		    (page = json_get_str(so, "page", PAGE_KEY_HEX)) == NULL ||
		    !hex_lower_n(page, PAGE_KEY_HEX) ||
		    json_get_int(so, "createdMs", 0, INT64_MAX, &created) ==
			-1 ||
		    (uint64_t)created > now_ms_mono())
			continue;
		s = &broker.b_sessions[n++];
		memcpy(s->bs_id, id, SESSION_HEX + 1);
		memcpy(s->bs_page, page, PAGE_KEY_HEX + 1);
		s->bs_created = (uint64_t)created;
	}
}

static void
broker_config_h(struct ipc_conn *c, struct ipc_msg *m, void *arg)
{
	struct json_object *arr, *o = m->m_obj;
	const char *tok, *code, *listen;
	long long port;
	size_t i, len;

	tok = json_shape_str(o, "token", NULL);
	port = json_shape_int(o, "port", 0);
	listen = json_shape_str(o, "listen", NULL);
	memcpy(broker.b_token, tok, TOKEN_HEX + 1);
	if ((code = json_shape_str(o, "loginCode", &len)) != NULL && len == 32)
		memcpy(broker.b_login, code, 33);
	broker.b_port = (unsigned int)port;
	snprintf(broker.b_listen, sizeof(broker.b_listen), "%s", listen);
	if (json_object_object_get_ex(o, "origins", &arr))
		for (i = 0; i < json_object_array_length(arr) &&
			    broker.b_norigins < nitems(broker.b_origins);
		     i++) {
			const char *s = json_object_get_string(
			    json_object_array_get_idx(arr, i));
			if (s != NULL)
				broker.b_origins[broker.b_norigins++] =
				    strdup(s);
		}

	if (json_object_object_get_ex(o, "sessions", &arr))
		broker_sessions(arr);

	broker_serve(m->m_fd);
	m->m_fd = -1;
}

/*
 * systemd mode, before confinement: the token from the credential
 * systemd put in $CREDENTIALS_DIRECTORY (LoadCredential=token:...), and
 * the address and port from the activated listener.  No login code: the
 * operator mints one with `cordon login` (POST /api/login-code).
 */
static void
broker_systemd_config(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	const char *dir = getenv("CREDENTIALS_DIRECTORY");
	char path[PATH_MAX], buf[TOKEN_HEX + 3];
	ssize_t n;
	int fd;

	if (dir == NULL || dir[0] != '/' ||
	    snprintf(path, sizeof(path), "%s/token", dir) >=
		(int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) == -1)
		fatalx("--systemd: no token credential "
		       "(LoadCredential=token:FILE)");
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	if (n == TOKEN_HEX + 1 && buf[TOKEN_HEX] == '\n')
		buf[--n] = '\0';
	if (n != TOKEN_HEX || !hex_lower_n(buf, TOKEN_HEX))
		fatalx("--systemd: the token credential is not 64 hex digits");
	memcpy(broker.b_token, buf, TOKEN_HEX);
	broker.b_token[TOKEN_HEX] = '\0';
	explicit_bzero(buf, sizeof(buf));
	if (getsockname(
		broker.b_d.d_listen_fd, (struct sockaddr *)&sin, &len) == -1 ||
	    sin.sin_family != AF_INET ||
	    inet_ntop(AF_INET, &sin.sin_addr, broker.b_listen,
		sizeof(broker.b_listen)) == NULL)
		fatalx("--systemd: listener address");
	broker.b_port = ntohs(sin.sin_port);
}

int
main(int argc, char **argv)
{
	struct daemon_args a;
	struct confine_spec spec;

	log_init("broker", 0);
	daemon_parse_args(argc, argv, NULL, NULL, NULL, 0, &a);
	log_init("broker", a.da_debug);
	daemon_prepare(&broker.b_d, PROC_BROKER, peer_table, &a);
	if (broker.b_d.d_systemd)
		broker_systemd_config();

	memset(&spec, 0, sizeof(spec));
	spec.cs_name = "broker";
	spec.cs_user = a.da_user;
	spec.cs_paths = NULL;
	spec.cs_npaths = 0; /* no file access at all */
	spec.cs_seccomp = CONFINE_SECCOMP_ALLOW;
	spec.cs_syscalls = SC_BASE | SC_ACCEPT | daemon_syscalls(&broker.b_d);
	spec.cs_no_net = 1; /* accepts only; never binds or connects */
	spec.cs_nofile = BROKER_NOFILE;
	confine_self(&spec);

	broker.b_d.d_arg = &broker;
	daemon_start(&broker.b_d, parent_table);
	if (broker.b_d.d_systemd)
		broker_serve(broker.b_d.d_listen_fd);
	log_debug("ready");
	return daemon_loop(&broker.b_d);
}
