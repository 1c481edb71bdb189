/* out_file.c - see out_file.h. The same rule as hpcscope's safe_write.py: a named
 * output is a file this call creates, not whatever the name points to. Unlike
 * safe_write there is no temporary and rename: the output is streamed while the program
 * runs (a killed run keeps its records), and a half-written file is what a killed
 * program leaves either way. */
#define _GNU_SOURCE
#include "out_file.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

FILE *hs_create_out(const char *path)
{
    if (!strcmp(path, "-")) return stdout;
    struct stat st;
    int fd;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        /* a device or FIFO the user named (a folder fails with EISDIR) */
        fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
    } else {
        if (unlink(path) != 0 && errno != ENOENT) return NULL;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    }
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}
