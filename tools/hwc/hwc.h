/* Shared by the hwc subcommands. */
#ifndef HWC_TOOL_H
#define HWC_TOOL_H

#include <hwc/hwc.h>

int cmd_stat(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_annotate(int argc, char **argv);
/* In the program hwc-serve only (serve_main.c). */
int cmd_serve(int argc, char **argv);

#endif
