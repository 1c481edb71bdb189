/* The choice log (log.h). One fprintf per line on a stream opened once in append mode,
 * so lines of concurrent writers (threads or processes) do not interleave. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static FILE *log_stream;

int lc_log_open(char *err, size_t errlen)
{
    const char *s = getenv("LANECOLL_LOG");
    if (!s || !*s) return 0;
    if (strcmp(s, "stderr") == 0) {
        log_stream = stderr;
        return 0;
    }
    /* Appended to, created if missing, never through a symbolic link (a link planted under
     * the name would make every rank write into its target) and only a regular file
     * (O_NONBLOCK: a FIFO does not block the open; cleared below). */
    int fd =
        open(s, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0666);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
        errno = EINVAL;
    }
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    log_stream = fd >= 0 ? fdopen(fd, "a") : NULL;
    if (!log_stream) {
        snprintf(
            err, errlen,
            "lanecoll: LANECOLL_LOG=%s: cannot open for appending (%s; a symbolic link "
            "or anything but a regular file is refused)",
            s, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    setvbuf(log_stream, NULL, _IOLBF, 0);
    return 0;
}

int lc_log_enabled(void) { return log_stream != NULL; }

void lc_log_choice(const lc_call *call, long long bytes, const lc_decomp *d, lc_alg v,
                   const char *reason)
{
    int rank = 0;
    if (!log_stream) return;
    if (call->comm != MPI_COMM_NULL) PMPI_Comm_rank(call->comm, &rank);
    if (rank != 0) return;
    char nodes[16] = "-", ppn[16] = "-";
    if (d) {
        snprintf(nodes, sizeof nodes, "%d", d->nnodes);
        snprintf(ppn, sizeof ppn, d->regular ? "%d" : "%d*", d->max_ppn);
    }
    fprintf(log_stream,
            "lanecoll: collective=%s bytes=%lld nodes=%s ppn=%s algorithm=%s "
            "reason=%s\n",
            lc_coll_name(call->coll), bytes, nodes, ppn, lc_alg_variant(v), reason);
    fflush(log_stream);
}
