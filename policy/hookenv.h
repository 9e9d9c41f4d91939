/*
 * SBX-8: the environment of Gemini CLI's gate hook.  Gemini CLI loads a
 * .env file it finds (the project, the dirs above it, its home) into its
 * own environment, every variable it does not have yet, and runs each
 * hook as `bash -c` with that environment.  So the spawner gives a
 * Gemini CLI run every variable of hookenv_pinned, empty: a .env that
 * names one changes nothing.  What an empty value cannot make harmless
 * (a dynamic-loader variable that acts by being present at all, such as
 * LD_TRACE_LOADED_OBJECTS, which makes ld.so list libraries and exit 0
 * in place of running the hook) is refused: hookenv_dotenv_bad.  Pure.
 */
#ifndef CORDON_POLICY_HOOKENV_H
#define CORDON_POLICY_HOOKENV_H

#include <stddef.h>

/*
 * The names set to "" in a Gemini CLI run's environment (NULL-ended):
 * what ld.so, glibc's iconv, bash and node read at start to load or run
 * other code.
 */
extern const char *const hookenv_pinned[];

/*
 * 1 if the text of a .env file (len bytes, any content) could name a
 * variable the pins do not cover: any LD_* name not in hookenv_pinned.
 * Every maximal run of [A-Za-z0-9_.-] counts as a name wherever it
 * stands (a key, a value, a comment), a superset of the keys the dotenv
 * parser finds.  0 otherwise.
 */
int hookenv_dotenv_bad(const char *buf, size_t len);

#endif
