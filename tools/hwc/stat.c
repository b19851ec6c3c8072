#include "hwc.h"

#include <stdio.h>

int cmd_stat(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hwc stat: not implemented yet\n");
	return 1;
}
