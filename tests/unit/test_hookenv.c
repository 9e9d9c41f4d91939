/*
 * Unit tests for policy/hookenv.c and env_pin (SBX-8): a Gemini CLI run
 * has every pinned variable, empty, unless its env already sets it; a
 * .env naming an LD_* variable the pins leave open is caught wherever
 * the name stands, one naming only pinned or other variables is not.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "env.h"
#include "hookenv.h"
#include "util.h"

static int
bad(const char *s)
{
	return hookenv_dotenv_bad(s, strlen(s));
}

static void
test_sbx8_dotenv_loader_names(void **state)
{
	(void)state;
	/* An application's .env, and the pinned ones: covered. */
	assert_int_equal(bad("DATABASE_URL=postgres://x\nAPI_KEY=k\n"), 0);
	assert_int_equal(bad("BASH_ENV=/w/x\nLD_PRELOAD=/w/x.so\n"
			     "export LD_LIBRARY_PATH=/w\nNODE_OPTIONS=-r x\n"),
	    0);
	assert_int_equal(bad("BUILD_DIR=out # OLD_X\n"), 0);
	assert_int_equal(bad(""), 0);
	/* Present at all, ld.so acts: never covered by a pin. */
	assert_int_equal(bad("LD_TRACE_LOADED_OBJECTS=1\n"), 1);
	assert_int_equal(bad("  export LD_SHOW_AUXV=\n"), 1);
	assert_int_equal(bad("LD_DYNAMIC_WEAK: 1"), 1);
	assert_int_equal(bad("A=1\rLD_X=1"), 1);
	assert_int_equal(bad("A=\"x\nLD_TRACE_LOADED_OBJECTS=1\""), 1);
	assert_int_equal(bad("LD_TRACE_LOADED_OBJECTS"), 1);
	/* A name inside a longer one is another variable. */
	assert_int_equal(bad("XLD_TRACE_LOADED_OBJECTS=1\n"), 0);
	assert_int_equal(bad("A.LD_X=1\nLD_PRELOADX"), 1);
	/* Bytes of any kind around it. */
	assert_int_equal(hookenv_dotenv_bad("\0LD_WHAT\0", 10), 1);
}

static void
test_sbx8_env_pin(void **state)
{
	char **e = calloc(3, sizeof(char *));
	size_t i, n;
	int seen_pre = 0, seen_bash = 0;

	(void)state;
	assert_non_null(e);
	e[0] = strdup("PATH=/usr/bin");
	e[1] = strdup("BASH_ENV=/operator/chose");
	assert_int_equal(env_pin(&e, hookenv_pinned), 0);
	for (n = 0; e[n] != NULL; n++) {
		if (strcmp(e[n], "LD_PRELOAD=") == 0)
			seen_pre++;
		if (strncmp(e[n], "BASH_ENV=", 9) == 0) {
			assert_string_equal(e[n], "BASH_ENV=/operator/chose");
			seen_bash++;
		}
	}
	assert_int_equal(seen_pre, 1);
	assert_int_equal(seen_bash, 1);
	for (i = 0; hookenv_pinned[i] != NULL; i++)
		;
	assert_int_equal(n, 2 + i - 1);
	assert_string_equal(e[0], "PATH=/usr/bin");
	strv_free(e);
}

int
main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sbx8_dotenv_loader_names),
	    cmocka_unit_test(test_sbx8_env_pin),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
