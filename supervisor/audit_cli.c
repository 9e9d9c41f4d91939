/*
 * cordon audit verify|tail.  Not built yet (issue 6): says so and exits
 * 2 rather than pretending the trail verified.
 */
#include <stdio.h>

#include "cordond.h"

int
cmd_audit(int argc, char **argv)
{
	fprintf(stderr, "cordon: audit is not implemented in this build\n");
	return 2;
}
