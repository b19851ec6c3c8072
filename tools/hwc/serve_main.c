/* hwc-serve: the program `hwc serve` runs.  Its HTTP and TLS libraries
 * (libmicrohttpd, GnuTLS and theirs) are loaded only here: linked into hwc,
 * they doubled the peak RSS of every `hwc stat`. */
#include "hwc.h"
#include "out.h"

int main(int argc, char **argv)
{
	out_init("hwc serve", 1);
	return cmd_serve(argc, argv);
}
