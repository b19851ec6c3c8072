/* pctr -l: placeholder until libhwc's event listing lands (listinfo). */
#include <stdio.h>
int list_functions(void);
int list_functions(void)
{
	fprintf(stderr, "pctr: -l: not available yet\n");
	return 1;
}
