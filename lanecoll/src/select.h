/* Selection for the interposition library: which algorithm runs for one call, and what
 * happens when its restrictions fail. Settings come from the environment and the
 * tuning file (see lanecoll.h) and are validated once. */
#ifndef LANECOLL_SELECT_H
#define LANECOLL_SELECT_H

#include "internal.h"

/* Reads and validates all settings (once; later calls return at once). On an invalid
 * setting: prints the message (only world rank 0 when `collective_abort`, i.e. when all
 * processes call this together from MPI_Init) and calls MPI_Abort(MPI_COMM_WORLD, 2). */
void lc_select_init(int collective_abort);

/* The variant to run for `call` (bytes as defined for the tuning file). Returns
 * LC_NATIVE, or LC_LANE/LC_HIER with *d set. Applies the fallback policy and writes
 * the log line. */
lc_variant lc_dispatch(const lc_call *call, long long bytes, const lc_decomp **d);

#endif
