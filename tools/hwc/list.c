#include "hwc.h"

#include <stdio.h>

int cmd_list(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "hwc list: not implemented yet\n");
	return 1;
}
