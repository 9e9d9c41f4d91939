/*
 * cordon-demo-agent: a tiny stand-in for an agent CLI, so a new user sees
 * a real run at once.  Streams its answer slowly with ANSI colour (which
 * cordon's cleaner must strip) and writes one line on stderr.
 * Usage: cordon-demo-agent [--version] [PROMPT]   (or the prompt on stdin)
 *        cordon-demo-agent --env | --confinement   (the demo's read-only
 *        Control Room actions: what cordon gave it, values never shown)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void
say(const char *s)
{
	struct timespec ts = {0, 30 * 1000 * 1000};

	fputs(s, stdout);
	fflush(stdout);
	nanosleep(&ts, NULL);
}

extern char **environ;

/* The names of the variables cordon built for it (SP-4), not values. */
static int
show_env(void)
{
	char **e;
	int n = 0;

	for (e = environ; *e != NULL; e++, n++)
		printf("%.*s\n", (int)strcspn(*e, "="), *e);
	printf("(%d variables; values not shown)\n", n);
	return 0;
}

/* Who it runs as and the kernel's view of its confinement. */
static int
show_confinement(void)
{
	static const char *const keys[] = {"Uid:", "Gid:", "CapEff:",
	    "NoNewPrivs:", "Seccomp:", "Seccomp_filters:"};
	char line[256], cwd[512];
	FILE *f;
	size_t i;

	if (getcwd(cwd, sizeof(cwd)) != NULL)
		printf("cwd:\t%s\n", cwd);
	if ((f = fopen("/proc/self/status", "r")) == NULL) {
		puts("/proc/self/status: not readable here");
		return 0;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
			if (strncmp(line, keys[i], strlen(keys[i])) == 0)
				fputs(line, stdout);
	fclose(f);
	return 0;
}

int
main(int argc, char **argv)
{
	char buf[4096];
	const char *prompt = NULL;
	size_t n;
	int i;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		puts("cordon-demo-agent 0.1.0");
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "--env") == 0)
		return show_env();
	if (argc == 2 && strcmp(argv[1], "--confinement") == 0)
		return show_confinement();
	if (argc >= 2)
		prompt = argv[argc - 1];
	else {
		n = fread(buf, 1, sizeof(buf) - 1, stdin);
		buf[n] = '\0';
		prompt = buf;
	}
	fputs("demo-agent: thinking (this line is stderr)\n", stderr);
	say("\033[1;32mHello from the cordon demo agent.\033[0m\n");
	say("You asked ");
	printf("%zu characters", strlen(prompt));
	say(". Here is a short answer, streamed word by word:\n");
	const char *words[] = {"cordon ", "ran ", "me ", "with ", "argv ",
	    "only, ", "a ", "built ", "environment ", "and ", "no ",
	    "shell.\n"};
	for (i = 0; i < (int)(sizeof(words) / sizeof(words[0])); i++)
		say(words[i]);
	return 0;
}
