/* Hierarchical reduce (paper, section 3.4).
 *
 * Every node reduces to the process with the root's node rank, into a temporary of c;
 * that lane reduces the temporaries into the root's receive buffer. (Reducing in place
 * at the root would save the root's temporary, but see the MPICH note below.)
 *
 * Cost: ceil(log n) + ceil(log N) rounds; c crosses the network per node, over one lane.
 * Restrictions: the root's node rank must exist on every node (always true on regular
 * communicators); a non-commutative operator needs consecutive ranks (operands are
 * then combined in rank order: node by node, nodes in order). */
#include "../internal.h"

int lc_reduce_hier(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   int root, const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int root_node = d->rank_node[root], lr = d->rank_noderank[root], err;
    if (d->node_rank != lr)
        return PMPI_Reduce(sbuf, NULL, count, type, op, lr, d->nodecomm);
    /* No MPI_IN_PLACE towards a non-zero root: MPICH 4.0.2 crashes on in-place
     * MPI_Reduce with root != 0 on non-power-of-two communicators (> 2 KiB). */
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *mem, *tmp = lc_tmp_alloc(count, type, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Reduce(input, tmp, count, type, op, lr, d->nodecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Reduce(tmp, d->rank == root ? rbuf : NULL, count, type, op, root_node,
                          d->lanecomm);
    lc_free(mem);
    return err;
}
