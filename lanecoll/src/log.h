/* LANECOLL_LOG=stderr|path: one line per intercepted call, written by rank 0 of the
 * communicator:
 *   lanecoll: collective=allreduce bytes=400 nodes=2 ppn=2 algorithm=lane reason=env LANECOLL_ALL
 * ppn is the number of processes per node, or the largest one on irregular layouts
 * (written as e.g. "3*" then); nodes/ppn are "-" when unknown. */
#ifndef LANECOLL_LOG_H
#define LANECOLL_LOG_H

#include "internal.h"

#pragma GCC visibility push(hidden)

/* Opens the log named by LANECOLL_LOG; 0, or -1 with a message in err. */
int lc_log_open(char *err, size_t errlen);
int lc_log_enabled(void);
void lc_log_choice(const lc_call *call, long long bytes, const lc_decomp *d, lc_alg v,
                   const char *reason);

#pragma GCC visibility pop

#endif
