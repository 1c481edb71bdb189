/* Selection for the interposition library: which algorithm runs for one call, and what
 * happens when its restrictions fail. Settings come from the environment and the
 * tuning file (see lanecoll.h) and are validated once. */
#ifndef LANECOLL_SELECT_H
#define LANECOLL_SELECT_H

#include "internal.h"

#pragma GCC visibility push(hidden)

/* Reads and validates all settings (once; later calls return at once). On an invalid
 * setting: prints the message (only world rank 0 when `collective_abort`, i.e. when all
 * processes call this together from MPI_Init) and calls MPI_Abort(MPI_COMM_WORLD, 2). */
void lc_select_init(int collective_abort);

/* The variant to run for `call` (bytes as defined for the tuning file). Returns
 * LC_NATIVE, or LC_LANE/LC_HIER with *d set. Applies the fallback policy and writes
 * the log line. */
lc_variant lc_dispatch(const lc_call *call, long long bytes, const lc_decomp **d);

/* Second shortcut, after the byte count is known: 1 when the settings make this call
 * native whatever the communicator (no log, no fallback reason recorded yet, not forced
 * to lane/hier, no lane/hier rule of c covers `bytes`), so neither the argument checks
 * nor the decomposition (an attribute lookup) are needed. Same answer on every process
 * (bytes agree by MPI's type-signature rules), so the collective decomposition build
 * is skipped by all of them together. */
int lc_native_for_bytes(lc_coll c, long long bytes);

/* Fast path of every wrapper: 1 when the settings alone make this collective native
 * (no LANECOLL_<COLL>/LANECOLL_ALL other than native, no tuning rule for it that picks
 * lane or hier, no LANECOLL_LOG), computed once in MPI_Init. The wrapper then calls
 * PMPI_ at once: one load and one branch, no argument checks (MPI does its own), no
 * attribute lookup. 0 before the settings are read and after any fallback reason was
 * recorded (LC_Fallback_reason must then be cleared by a native call as before), so
 * those calls take lc_dispatch.  */
extern int lc_native_only[LC_NCOLL];
#define LC_NATIVE_ONLY(c) __builtin_expect(__atomic_load_n(&lc_native_only[(c)], __ATOMIC_RELAXED), 1)

#pragma GCC visibility pop

#endif
