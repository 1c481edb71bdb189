/* Hierarchical exclusive scan (paper, section 3.5).
 *
 * Node-local exclusive scan; the last process of every node forms its node's total
 * (its exscan result op its own input; a copy of the input is kept first because
 * MPI_IN_PLACE overwrites it) and takes part in an exclusive scan of the totals over
 * the nodes; the result E is broadcast on the node and becomes the result of node
 * rank 0 and is combined as E op (node exscan) elsewhere. Node 0 keeps its node exscan.
 * Temporaries of c (two on the last process of a node).
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds plus one local reduction.
 * Restrictions: consecutive ranks (non-commutative operators are fine). Unequal node
 * sizes are fine. */
#include "../internal.h"

/* On the last process of a node: T = (node exscan) op (own input), the node total;
 * then E = exclusive scan of the node totals over the nodes. */
static int node_total_prefix(const void *node_ex, void *T, void *E, int count,
                             MPI_Datatype type, MPI_Op op, const lc_decomp *d)
{
    if (d->node_size > 1) LC_TRY(PMPI_Reduce_local(node_ex, T, count, type, op));
    return PMPI_Exscan(T, E, count, type, op, d->lastcomm);
}

int lc_exscan_hier(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int last = d->node_size - 1, is_last = d->node_rank == last, err = MPI_SUCCESS;
    void *emem, *E = lc_tmp_alloc(count, type, &emem);
    void *tmem = NULL, *T = NULL;
    if (E && is_last) T = lc_tmp_alloc(count, type, &tmem);
    if (!E || (is_last && !T)) {
        lc_free(emem);
        lc_free(tmem);
        return MPI_ERR_NO_MEM;
    }

    if (is_last) err = lc_local_copy(input, count, type, T, count, type);
    if (err == MPI_SUCCESS) err = PMPI_Exscan(sbuf, rbuf, count, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && is_last)
        err = node_total_prefix(rbuf, T, E, count, type, op, d);
    if (err == MPI_SUCCESS && d->node_index > 0) {
        err = PMPI_Bcast(E, count, type, last, d->nodecomm);
        if (err == MPI_SUCCESS)
            err = d->node_rank == 0 ? lc_local_copy(E, count, type, rbuf, count, type)
                                    : PMPI_Reduce_local(E, rbuf, count, type, op);
    }
    lc_free(tmem);
    lc_free(emem);
    return err;
}
