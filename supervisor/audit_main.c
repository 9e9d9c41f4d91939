/*
 * cordon-audit: `cordon audit verify|tail` (audit_cli.c) as a program of
 * its own, which `cordon audit` executes with the same arguments.  The
 * audit chain's SHA-256 is needed here and in auditd only: without it
 * the `cordon` binary, and so cordond, maps no libcrypto and keeps none
 * of it resident (docs/PERFORMANCE.md, idle memory).
 */
#include "cordond.h"
#include "log.h"

int
main(int argc, char **argv)
{
	log_init("cordon", 0);
	return cmd_audit(argc, argv);
}
