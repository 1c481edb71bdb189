/* Hierarchical scan (paper, section 3.5, listing 12).
 *
 * Node-local scan; the last process of every node (which holds its node's total)
 * takes part in an exclusive scan over the nodes; the result E (reduction of all
 * earlier nodes) is broadcast on the node and combined as E op (node scan). Node 0
 * skips the broadcast and the combination. One temporary of c per process.
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds plus one local reduction;
 *   c per node over one lane.
 * Restrictions: consecutive ranks (operands stay in rank order, so non-commutative
 * operators are fine). Unequal node sizes are fine. */
#include "../internal.h"

int lc_scan_hier(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                 const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int err = PMPI_Scan(sbuf, rbuf, count, type, op, d->nodecomm);
    if (err != MPI_SUCCESS) return err;
    void *mem, *E = lc_tmp_alloc(count, type, &mem);
    if (!E) return MPI_ERR_NO_MEM;
    int last = d->node_size - 1;
    if (d->node_rank == last) err = PMPI_Exscan(rbuf, E, count, type, op, d->lastcomm);
    if (err == MPI_SUCCESS && d->node_index > 0) {
        err = PMPI_Bcast(E, count, type, last, d->nodecomm);
        if (err == MPI_SUCCESS) err = PMPI_Reduce_local(E, rbuf, count, type, op);
    }
    lc_free(mem);
    return err;
}
