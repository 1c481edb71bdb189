/* out_file.h - the one way a benchmark program opens the output file the user names
 * (--out FILE), never writing through a link planted under that name. */
#ifndef HS_OUT_FILE_H
#define HS_OUT_FILE_H
#include <stdio.h>

/* stdout for "-"; else FILE as a new file: an existing regular file or symbolic link of
 * that name is removed first (a link is never followed, so its target is untouched; a
 * hard link only loses this name) and the file is created with O_CREAT | O_EXCL |
 * O_NOFOLLOW. An existing device or FIFO (/dev/null) is opened as it is, without
 * following a link. NULL with errno set on failure (the caller names the path). */
FILE *hs_create_out(const char *path);

#endif
