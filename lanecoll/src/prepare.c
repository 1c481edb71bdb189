/* The step before every algorithm: are the arguments valid, is the decomposition there,
 * do the algorithm's restrictions (catalogue.c) hold for this call? The answer must be
 * the same on every process of comm (otherwise some would run the algorithm and others
 * the native collective), so it only depends on data every process shares: the
 * decomposition, the op, the root. The outcome is recorded as the communicator's last
 * fallback reason (LC_Fallback_reason). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *check(const lc_call *call, int flags, const lc_decomp *d)
{
    int commutative = 1;
    /* asked only when a flag depends on it: a call into MPI (~5 ns) */
    if (call->op != MPI_OP_NULL && (flags & (LC_R_COMMUTATIVE | LC_R_ORDER_OR_COMM)))
        PMPI_Op_commutative(call->op, &commutative);
    if ((flags & LC_R_REGULAR) && !d->regular)
        return "irregular communicator: unequal numbers of processes per node";
    if ((flags & LC_R_CONSECUTIVE) && !d->consecutive)
        return "ranks are not consecutive over the nodes";
    if ((flags & LC_R_COMMUTATIVE) && !commutative)
        return "non-commutative operator (lane reductions reorder operands)";
    if ((flags & LC_R_ORDER_OR_COMM) && !commutative && !d->consecutive)
        return "non-commutative operator on a communicator whose ranks are not "
               "consecutive over the nodes";
    if ((flags & LC_R_ROOT_LANE) && call->root >= 0 &&
        d->rank_noderank[call->root] >= d->min_ppn)
        return "root's node rank does not exist on every node (irregular communicator)";
    return NULL;
}

static void record(lc_comm_state *s, lc_alg v, const lc_call *call, const char *why)
{
    if (!s) return;
    if (!why) {
        s->reason[0] = '\0';
        return;
    }
    lc_native_only_revoke();
    snprintf(s->reason, sizeof s->reason, "%s_%s: %s", lc_coll_name(call->coll),
             lc_alg_variant(v), why);
}

const lc_decomp *lc_prepare_state(const lc_call *call, lc_alg alg, lc_comm_state *s,
                                  const char **reason)
{
    int err;
    int flags = lc_restrictions(call->coll, alg);
    *reason = NULL;
    if (flags < 0)
        *reason = "no such algorithm";
    else if (!call->args_ok)
        *reason = "invalid arguments: passed to MPI to report";
    if (*reason) {
        record(s, alg, call, *reason);
        return NULL;
    }

    const lc_decomp *d = s ? lc_decomposition_state(call->comm, s, &err) : NULL;
    *reason = d ? check(call, flags, d) : "decomposition failed";
    record(s, alg, call, *reason);
    if (*reason) return NULL;
    return d;
}

const lc_decomp *lc_prepare(const lc_call *call, lc_alg alg, const char **reason)
{
    int inter = 1;
    if (call->comm == MPI_COMM_NULL ||
        PMPI_Comm_test_inter(call->comm, &inter) != MPI_SUCCESS || inter) {
        *reason = "not an intracommunicator";
        return NULL; /* nowhere to record it */
    }
    return lc_prepare_state(call, alg, lc_state(call->comm), reason);
}
