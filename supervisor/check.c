/*
 * cordon check: validate every manifest and mission.  Not built yet
 * (issue 3): says so and exits 2 rather than pretending all is well.
 */
#include <stdio.h>

#include "cordond.h"

int
cmd_check(int argc, char **argv)
{
	fprintf(stderr, "cordon: check is not implemented in this build\n");
	return 2;
}
