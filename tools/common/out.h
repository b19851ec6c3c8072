/* Write errors of the tools' output, shared by every tool.  As GNU's
 * close_stdout does, standard output is flushed and closed at exit, and a
 * write error anywhere on it ends the tool with "PROGRAM: write error:
 * REASON" and a failure status, so that `tool > /dev/full` or a full disk
 * never passes for success.  Files a tool writes are closed with
 * out_close(), which says the same with the file's name. */
#ifndef TOOLS_OUT_H
#define TOOLS_OUT_H

#include <stdio.h>

/* Call first in main(): PROGRAM names the tool in messages (NULL: the
 * program's name), STATUS is the exit status of a write error on standard
 * output.  A second call renames (hwc names its subcommand). */
void out_init(const char *program, int status);

/* fflush(F), keeping the reason of F's first write error for the report
 * (glibc forgets it: the next flush succeeds).  0, or EOF. */
int out_flush(FILE *f);

/* A write(2) of the tool's own on F's descriptor failed with ERR. */
void out_failed(FILE *f, int err);

/* Flush and close F, a file the tool writes, named NAME in the message:
 * 0, or -1 after "PROGRAM: NAME: write error: REASON" on stderr ("PROGRAM:
 * write error: REASON" when NAME is NULL).  F may be stdout: it is then
 * only flushed (and closed at exit), and an error reported here is not
 * reported again at exit. */
int out_close(FILE *f, const char *name);

#endif
