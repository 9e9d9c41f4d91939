/*
 * The command gate's tables (DATA.md "Command gate defaults" and the
 * option lists behind its extra rules), and the lookups on them.  Data
 * only: no I/O, nothing mutable.
 */
#include <string.h>
#include <strings.h>

#include "charset.h"
#include "gate_impl.h"

/* AutoCoder's 29. */
const char *const g_allow[] = {"ls", "cat", "head", "tail", "wc", "grep", "cp",
    "mkdir", "chmod", "pwd", "echo", "npm", "npx", "pnpm", "node", "git",
    "docker", "ps", "lsof", "sleep", "kill", "pkill", "curl", "mv", "rm",
    "touch", "sh", "bash", "init.sh", NULL};
/* Never, whatever the manifest says. */
const char *const g_refused[] = {"dd", "mkfs", "fdisk", "parted", "shutdown",
    "reboot", "poweroff", "halt", "init", "chown", "chgrp", "systemctl",
    "service", "iptables", "ufw", "sudo", "su", "doas", "aws", "gcloud", "az",
    "kubectl", "docker-compose", NULL};
/* Shell builtins the gate understands itself (cd: target inside). */
const char *const g_builtins[] = {"cd", NULL};
/* Run text the gate cannot see. */
const char *const g_opaque[] = {"eval", "exec", "source", ".", NULL};
/* Prefixes that run the rest of the words as a command. */
const char *const g_wrappers[] = {"sudo", "doas", "su", "nohup", "nice", "time",
    "command", "builtin", "exec", "env", "xargs", "timeout", "stdbuf", "ionice",
    "setsid", "chroot", "do", "then", "else", "!", NULL};
/* A download piped into one of these runs it. */
const char *const g_shells[] = {"sh", "bash", "zsh", "dash", "ksh", "ash",
    "fish", "csh", "tcsh", "python", "python3", "perl", "ruby", "node", NULL};
/* Every non-option word of these is a file. */
const char *const g_filecmds[] = {"ls", "cat", "head", "tail", "wc", "cp",
    "mkdir", "mv", "rm", "touch", "chmod", "grep", "lsof", NULL};
/* rm -r/-f on one of these is destructive (after "./" and "/" trim). */
const char *const g_rm_targets[] = {"/", "~", "*", ".*", ".", "..", "src",
    "tests", "dist", "build", "node_modules", "target", ".git", NULL};
const char *const g_chmod_wide[] = {"777", "0777", "a+rwx", "ugo+rwx", "a=rwx",
    "ugo=rwx", "=rwx", "+rwx", NULL};
/* Block devices and memory: writing them is destructive. */
const char *const g_blockdev[] = {"/dev/sd", "/dev/hd", "/dev/vd", "/dev/xvd",
    "/dev/nvme", "/dev/mmcblk", "/dev/dm-", "/dev/md", "/dev/loop",
    "/dev/mapper/", "/dev/disk/", "/dev/sr", "/dev/mem", "/dev/kmem",
    "/dev/port", NULL};
const char *const g_pkill_names[] = {
    "node", "npm", "npx", "vite", "next", NULL};
const char *const g_pkill_opts[] = {"-f", "-x", "-e", "-9", "-15", "-2",
    "-TERM", "-KILL", "-INT", "-HUP", "-SIGTERM", "-SIGKILL", "-SIGINT", NULL};
/* Variables that change what runs or where lookups go (with env.h's). */
const char *const g_env_exact[] = {"PATH", "IFS", "HOME", "SHELL", "SHELLOPTS",
    "BASHOPTS", "PS4", "PROMPT_COMMAND", "CDPATH", "GLOBIGNORE", "PAGER",
    "EDITOR", "VISUAL", "BROWSER", "LESSOPEN", "LESSCLOSE", "MANPAGER",
    "SSH_ASKPASS", "SUDO_ASKPASS", "KUBECONFIG", "CURL_HOME", "WGETRC", "NETRC",
    "XDG_CONFIG_HOME", "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
    "ALL_PROXY", "all_proxy", NULL};
const char *const g_env_prefix[] = {"GIT_", "BASH_FUNC_", "NPM_CONFIG_",
    "npm_config_", "DOCKER_", "SSH_", NULL};
/* git: global options whose value is the next word. */
const char *const g_git_globarg[] = {"-C", "-c", "--git-dir", "--work-tree",
    "--namespace", "--super-prefix", "--config-env", "--exec-path", NULL};
/* git: the only global options without a value (others are refused). */
const char *const g_git_globflag[] = {"-p", "--paginate", "-P", "--no-pager",
    "--no-replace-objects", "--bare", "--literal-pathspecs", "--glob-pathspecs",
    "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
    "--no-advice", "-v", "--version", "-h", "--help", NULL};
/* git: option prefixes that run programs (any position). */
const char *const g_git_badopt[] = {"--upload-pack", "--receive-pack", "--exec",
    "--config", "--extcmd", "--tool", "--open-files-in-pager", "-O",
    "--template", NULL};
/* git: words starting so (any case) name programs, hooks or transports. */
const char *const g_git_badkey[] = {"core.pager", "core.sshcommand",
    "core.editor", "core.fsmonitor", "core.hookspath", "core.gitproxy",
    "core.askpass", "core.worktree", "alias.", "pager.", "diff.", "merge.",
    "filter.", "credential.", "sequence.", "gpg.", "protocol.", "uploadpack.",
    "receive.", "remote.", "include", "ssh.", "url.", "submodule.", "http.",
    "ext::", "fd::", NULL};
/* git config: the only keys it may set. */
const char *const g_git_config_ok[] = {"user.", "init.", "color.", "pull.",
    "push.default", "advice.", "fetch.prune", NULL};
/* git subcommands that run arbitrary programs by design. */
const char *const g_git_badsub[] = {"filter-branch", "filter-repo", "difftool",
    "mergetool", "daemon", "instaweb", "web--browse", "bisect", "submodule",
    "credential", "upload-pack", "receive-pack", "send-email", NULL};
/* curl: short options taking a value. */
const char g_curl_short[] = "AbcCdDeEFHKmoPQrtTuUwxXyYz";
const char *const g_curl_long[] = {"--data", "--data-ascii", "--data-binary",
    "--data-raw", "--data-urlencode", "--form", "--form-string", "--header",
    "--output", "--user", "--user-agent", "--referer", "--request",
    "--upload-file", "--config", "--cookie", "--cookie-jar", "--max-time",
    "--connect-timeout", "--proxy", "--url", "--cacert", "--capath", "--cert",
    "--key", "--write-out", "--retry", "--retry-delay", "--range",
    "--dump-header", "--resolve", "--connect-to", "--interface", "--limit-rate",
    "--max-filesize", "--output-dir", "--proxy-user", "--json", "--unix-socket",
    "--abstract-unix-socket", "--netrc-file", "--trace", "--trace-ascii",
    "--stderr", "--continue-at", "--time-cond", "--oauth2-bearer", "--variable",
    "--url-query", "--preproxy", "--doh-url", NULL};
/* wget: short options taking a value. */
const char g_wget_short[] = "OoaPeiUtTwQlARDIXB";
const char *const g_wget_long[] = {"--output-document", "--output-file",
    "--append-output", "--directory-prefix", "--execute", "--input-file",
    "--user-agent", "--tries", "--timeout", "--wait", "--header", "--post-data",
    "--post-file", "--body-data", "--body-file", "--method", "--user",
    "--password", "--http-user", "--http-password", "--load-cookies",
    "--save-cookies", "--ca-certificate", "--certificate", "--private-key",
    "--config", "--use-askpass", "--base", NULL};
/* Options that re-route the request or read a config/credentials file. */
const char *const g_curl_bad[] = {"-K", "--config", "-x", "--proxy",
    "--preproxy", "--resolve", "--connect-to", "--unix-socket",
    "--abstract-unix-socket", "-n", "--netrc", "--netrc-file",
    "--netrc-optional", "--doh-url", "--variable", NULL};
const char *const g_wget_bad[] = {
    "-e", "--execute", "-i", "--input-file", "--config", "--use-askpass", NULL};
/* docker options that hand out the host. */
const char *const g_docker_bad[] = {"--privileged", "--cap-add", "--device",
    "--security-opt", "--pid", "--ipc", "--uts", "--userns", "--cgroupns",
    "--volumes-from", "-H", "--host", "--context", "-c", NULL};
/* docker: subcommands that hand the host out (a compose file may bind /,
 * a plugin or context runs elsewhere) or manage the daemon itself. */
const char *const g_docker_badsub[] = {"compose", "plugin", "context", "swarm",
    "stack", "service", "secret", "config", "trust", "system", NULL};
/* Names a glob must not be able to match (with protect.h's lists). */
const char *const g_secret_samples[] = {".env", ".env.local", "x.pem", "x.key",
    "id_rsa", "id_ed25519", "id_ecdsa", "id_dsa", "private_key", ".secret",
    "secret", "x_secret_y", "credentials", "x_credentials_y", NULL};

/* ---- lookups ---- */

int
gate_in_vec(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return 1;
	return 0;
}

int
gate_has_prefix(const char *s, const char *p)
{
	return strncmp(s, p, strlen(p)) == 0;
}

/* s starts with one of the prefixes in l */
int
gate_prefix_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (gate_has_prefix(s, *l))
			return 1;
	return 0;
}

int
gate_caseprefix_list(const char *const *l, const char *s)
{
	for (; *l != NULL; l++)
		if (strncasecmp(s, *l, strlen(*l)) == 0)
			return 1;
	return 0;
}

/* ^[A-Za-z0-9._+-]{1,64}$ */
int
gate_name_ok(const char *s)
{
	return charset_shape(
	    s, strlen(s), "A-Za-z0-9._+-", "A-Za-z0-9._+-", 1, 64);
}

const char *
gate_base_name(const char *s)
{
	const char *q = strrchr(s, '/');

	return q != NULL ? q + 1 : s;
}

/* path is dir or beneath it (both absolute, resolved) */
int
gate_path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (n == 0 || strncmp(path, dir, n) != 0)
		return 0;
	return path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/';
}
