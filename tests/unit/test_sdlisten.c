/*
 * Unit tests for common/sdlisten.c (SU-4): the socket-activation
 * variables, hostile values first, and sdl_take() on real sockets.
 */
#include <sys/socket.h>
#include <sys/un.h>

#include <netinet/in.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "sdlisten.h"

static void
test_check_table(void **state)
{
	static const struct {
		const char *pid, *fds, *names;
		int ok;
	} rows[] = {
	    {"1234", "1", NULL, 1},
	    {"1234", "1", "ipc", 1},
	    {NULL, "1", NULL, 0}, /* unset */
	    {"1234", NULL, NULL, 0},
	    {"", "1", NULL, 0},	     /* empty */
	    {"1235", "1", NULL, 0},  /* another process */
	    {"01234", "1", NULL, 0}, /* leading zero */
	    {"+1234", "1", NULL, 0}, /* sign */
	    {" 1234", "1", NULL, 0}, /* space */
	    {"1234 ", "1", NULL, 0},
	    {"1234x", "1", NULL, 0},
	    {"-1234", "1", NULL, 0},
	    {"99999999999999999999", "1", NULL, 0}, /* overflow */
	    {"4294968530", "1", NULL, 0},	    /* 1234 + 2^32 */
	    {"1234", "0", NULL, 0},		    /* none */
	    {"1234", "2", NULL, 0},		    /* more than ours */
	    {"1234", "01", NULL, 0},
	    {"1234", "1 ", NULL, 0},
	    {"1234", "", NULL, 0},
	    {"1234", "-1", NULL, 0},
	    {"1234", "1", "http", 0}, /* someone else's socket */
	    {"1234", "1", "ipc:ipc", 0},
	    {"1234", "1", "", 0},
	    {"1234", "1", "IPC", 0},
	};
	const char *why;
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		why = NULL;
		int r = sdl_check(
		    rows[i].pid, rows[i].fds, rows[i].names, 1234, "ipc", &why);
		if (rows[i].ok)
			assert_int_equal(r, 0);
		else {
			assert_int_equal(r, -1);
			/* a fixed reason, never the value itself */
			assert_non_null(why);
			if (rows[i].pid != NULL && rows[i].pid[0] != '\0')
				assert_null(strstr(why, rows[i].pid));
		}
	}
}

/* Put fd on 3 and the variables in the environment, as systemd would. */
static void
activate(int fd, const char *names)
{
	char pid[32];

	assert_int_equal(dup2(fd, SDL_FD_START), SDL_FD_START);
	if (fd != SDL_FD_START)
		close(fd);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	setenv("LISTEN_PID", pid, 1);
	setenv("LISTEN_FDS", "1", 1);
	if (names)
		setenv("LISTEN_FDNAMES", names, 1);
	else
		unsetenv("LISTEN_FDNAMES");
}

static int
unix_listener(int listening)
{
	struct sockaddr_un sun;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	assert_true(fd >= 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	/* abstract: nothing on disk */
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "cordon-test-sdl-%d", (int)getpid());
	assert_int_equal(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	if (listening)
		assert_int_equal(listen(fd, 4), 0);
	return fd;
}

static void
test_take(void **state)
{
	const char *why;
	int fd;

	(void)state;
	/* A listening unix stream socket named ipc: taken, env cleared. */
	activate(unix_listener(1), "ipc");
	assert_int_equal(sdl_take("ipc", AF_UNIX, &why), SDL_FD_START);
	assert_null(getenv("LISTEN_PID"));
	assert_null(getenv("LISTEN_FDS"));
	assert_null(getenv("LISTEN_FDNAMES"));
	close(SDL_FD_START);

	/* The wrong family for the broker. */
	activate(unix_listener(1), NULL);
	assert_int_equal(sdl_take("http", AF_INET, &why), -1);
	close(SDL_FD_START);

	/* Bound but not listening. */
	activate(unix_listener(0), NULL);
	assert_int_equal(sdl_take("ipc", AF_UNIX, &why), -1);
	close(SDL_FD_START);

	/* Not a socket at all. */
	fd = dup(STDIN_FILENO);
	activate(fd, NULL);
	assert_int_equal(sdl_take("ipc", AF_UNIX, &why), -1);
	close(SDL_FD_START);

	/* No activation: nothing taken. */
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	assert_int_equal(sdl_take("ipc", AF_UNIX, &why), -1);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check_table),
	    cmocka_unit_test(test_take),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
