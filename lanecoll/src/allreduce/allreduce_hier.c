/* Hierarchical allreduce (paper, section 3.4, listing 9).
 *
 * Every node reduces to node rank 0 (into its receive buffer), the node leaders
 * allreduce in place, every node broadcasts the result. No temporary buffer.
 *
 * Cost: 2 ceil(log n) + ceil(log N) rounds (node steps) plus the leaders' allreduce;
 *   the reduced c crosses the network per node over one lane.
 * Restrictions: a non-commutative operator needs consecutive ranks (operands are then
 * combined in rank order). Unequal node sizes are fine. */
#include "../internal.h"

int lc_allreduce_hier(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    if (d->node_rank == 0) {
        LC_TRY(PMPI_Reduce(sbuf, rbuf, count, type, op, 0, d->nodecomm));
        LC_TRY(PMPI_Allreduce(MPI_IN_PLACE, rbuf, count, type, op, d->leadcomm));
    } else {
        LC_TRY(PMPI_Reduce(sbuf == MPI_IN_PLACE ? rbuf : sbuf, NULL, count, type, op, 0,
                           d->nodecomm));
    }
    return PMPI_Bcast(rbuf, count, type, 0, d->nodecomm);
}
