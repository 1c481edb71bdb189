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

/* What the settings alone say about a call of collective c moving `bytes` (as defined
 * for the tuning file), before anything of the communicator is looked at:
 *   LC_ROUTE_NATIVE  native whatever the communicator: no log, no fallback reason
 *                    recorded yet, not forced to lane/hier, no lane/hier rule of c
 *                    covers `bytes`. The wrapper calls PMPI_ at once: no argument
 *                    checks, no decomposition (an attribute lookup).
 *   LC_ROUTE_RULES   the same except that a lane/hier rule covers `bytes`: lc_dispatch
 *                    needs only the rule lookup for this communicator's nodes and ppn.
 *   LC_ROUTE_FULL    anything else (settings not read yet, log, recorded fallback
 *                    reason, forced variant): lc_dispatch does everything.
 * Same answer on every process (bytes agree by MPI's type-signature rules, settings are
 * shared), so the collective decomposition build is skipped or done by all together. */
typedef enum { LC_ROUTE_NATIVE, LC_ROUTE_RULES, LC_ROUTE_FULL } lc_route;
lc_route lc_route_for_bytes(lc_coll c, long long bytes);

/* The variant to run for `call` (bytes as defined for the tuning file; route from
 * lc_route_for_bytes, not LC_ROUTE_NATIVE). Returns LC_NATIVE, or the algorithm
 * (LC_A_<coll>_<variant>) with *d set. Applies the fallback policy and writes the log line. */
lc_alg lc_dispatch(const lc_call *call, long long bytes, lc_route route,
                   const lc_decomp **d);

/* Gatherv and scatterv: only the root knows the counts, so their byte measure (the mean
 * block over all processes, as for allgatherv) must be broadcast from the root before
 * the choice whenever the choice depends on it. What the wrapper does with the bytes:
 *   LC_BYTES_LOCAL      no log, and the settings alone make the choice independent of
 *                       bytes (c forced, or no tuning rule of c picks lane/hier): each
 *                       process uses its own view (the root's value at the root, 0
 *                       elsewhere); nothing of the communicator is looked at.
 *   LC_BYTES_ANY        no log, and the tuning table gives c one algorithm at every byte
 *                       count on this communicator's shape (nodes, ppn), e.g. the single
 *                       rule `hpcscope tune` writes when one algorithm is good at every
 *                       measured size: every process passes bytes = 0 to the choice,
 *                       which picks what the root's true value would.
 *   LC_BYTES_NATIVE_HERE the same when that one algorithm is native: the wrapper calls
 *                       PMPI_ at once (the comm's fallback reason is cleared here),
 *                       sparing lc_dispatch's second state lookup.
 *   LC_BYTES_BROADCAST  a log is written (it reports the bytes), or the table's choice
 *                       for this shape depends on bytes: the root broadcasts its value
 *                       (one extra MPI_Bcast of 8 bytes per call).
 * Every process gets the same answer: the settings are shared, and the shape comes from
 * the decomposition (built collectively on first use, which all processes reach
 * together because the earlier cases depend on the settings only; the answer for the
 * shape is cached in the communicator's state). The cost of LC_BYTES_ANY and
 * LC_BYTES_NATIVE_HERE is one attribute lookup (~40 ns on Open MPI 4.1, ~8 on MPICH 4.0) instead of a broadcast. */
typedef enum {
    LC_BYTES_LOCAL,
    LC_BYTES_ANY,
    LC_BYTES_NATIVE_HERE,
    LC_BYTES_BROADCAST
} lc_bytes_need;
lc_bytes_need lc_bytes_shared(lc_coll c, MPI_Comm comm);

/* Fast path of every wrapper: 1 when the settings alone make this collective native
 * (no LANECOLL_<COLL>/LANECOLL_ALL other than native, no tuning rule for it that picks
 * lane or hier, no LANECOLL_LOG), computed once in MPI_Init. The wrapper then calls
 * PMPI_ at once: one load and one branch, no argument checks (MPI does its own), no
 * attribute lookup. 0 before the settings are read and after any fallback reason was
 * recorded (LC_Fallback_reason must then be cleared by a native call as before), so
 * those calls take lc_dispatch. */
extern int lc_native_only[LC_NCOLL];
#define LC_NATIVE_ONLY(c) \
    __builtin_expect(__atomic_load_n(&lc_native_only[(c)], __ATOMIC_RELAXED), 1)

/* Second fast path, once the byte count is known: bytes outside [lc_pick_lo[c],
 * lc_pick_hi[c]] (the hull of c's lane/hier rules) are native, two compares and no
 * call. The hull is everything whenever lc_route_for_bytes would not say native for
 * other reasons (settings not read, forced, log, recorded fallback reason). */
extern long long lc_pick_lo[LC_NCOLL], lc_pick_hi[LC_NCOLL];
#define LC_NATIVE_BYTES(c, b)                                     \
    ((b) < __atomic_load_n(&lc_pick_lo[(c)], __ATOMIC_RELAXED) || \
     (b) > __atomic_load_n(&lc_pick_hi[(c)], __ATOMIC_RELAXED))

#pragma GCC visibility pop

#endif
