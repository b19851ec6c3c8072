/*
 * libhwc: output files that never clobber what they should not (see
 * hwc_output(3)).  Every file a hwc tool writes goes through these calls:
 * the data goes to a new temporary file next to the target, created with
 * O_CREAT|O_EXCL|O_NOFOLLOW, and replaces the target only when it is
 * complete.  A symbolic link, FIFO, device or directory at the target's
 * name is refused, never followed, truncated or removed.
 */
#ifndef HWC_OUTPUT_H
#define HWC_OUTPUT_H

#include <hwc/hwc.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwc_output hwc_output;

/* hwc_output_create() flags. */
#define HWC_OUTPUT_KEEP_OLD 0x1u /* the commit renames a previous PATH to PATH.old */
#define HWC_OUTPUT_PRIVATE 0x2u  /* mode 0600 (else 0666 less the umask) */

/* Start writing PATH: refuses (-ELOOP, -EISDIR, -EINVAL, with the detail
 * saying what is there) a PATH, or with HWC_OUTPUT_KEEP_OLD a PATH.old,
 * that exists and is not a regular file, then creates a temporary file
 * "PATH.tmp-XXXXXX" in PATH's directory.  PATH itself is untouched until
 * hwc_output_commit(). */
int hwc_output_create(hwc_output **out, const char *path, unsigned flags);

/* The temporary file's descriptor (open for reading and writing, close-on-
 * exec); it stays the output's: never close it. */
int hwc_output_fd(const hwc_output *o);

/* The temporary file's name, for a reader that follows the output as it
 * grows (it is PATH's name only after the commit). */
const char *hwc_output_tmpname(const hwc_output *o);

/* A stdio stream on the descriptor, made at the first call (NULL with errno
 * and the detail set if that fails); the output closes it. */
FILE *hwc_output_stream(hwc_output *o);

/* Finish: flush and close the stream or descriptor, then (with
 * HWC_OUTPUT_KEEP_OLD) rename a previous regular file PATH to PATH.old and
 * rename the temporary file to PATH.  A write error removes the temporary
 * file and leaves PATH as it was; a rename that fails leaves the data in
 * the temporary file, which the detail names.  Frees O either way. */
int hwc_output_commit(hwc_output *o);

/* Give up: close and remove the temporary file (and nothing else) and free
 * O.  NULL is allowed. */
void hwc_output_discard(hwc_output *o);

#ifdef __cplusplus
}
#endif
#endif
