/*
 * bench_idle: the floor of bench_load's idle memory, a process that does
 * nothing.  Built twice: bench_idle maps libc alone (with ld.so and the
 * vDSO, what every one of cordon's five processes pays at least), and
 * bench_idle_libs also maps every library any cordon daemon links
 * (libevent, json-c, libyaml, libseccomp, libcap-ng, libcrypto) without
 * calling them: what mapping them costs before any use.
 */
#include <unistd.h>

int
main(void)
{
	pause();
	return 0;
}
