/* The choice log (log.h). One fprintf per line on a stream opened once in append mode,
 * so lines of concurrent writers (threads or processes) do not interleave. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    log_stream = fopen(s, "a");
    if (!log_stream) {
        snprintf(err, errlen, "lanecoll: LANECOLL_LOG=%s: cannot open for appending", s);
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
