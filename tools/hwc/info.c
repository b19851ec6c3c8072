#include "hwc.h"

#include <stdio.h>

int cmd_info(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hwc info: not implemented yet\n");
	return 1;
}
