/* Full-lane exclusive scan (paper, section 3.5).
 *
 * As scan_lane.c: E = the reduction of all earlier nodes, computed block-wise over all
 * lanes (node reduce-scatter, lane exscan, node allgather); then a node-local exclusive
 * scan, and the result is E on node rank 0 and E op (node exscan) elsewhere (node 0
 * keeps its node exscan). One temporary of c per process.
 *
 * Cost: 3 ceil(log n) + ceil(log N) rounds plus one local reduction or copy.
 * Restrictions: regular, consecutive ranks, commutative operator. */
#include "../internal.h"

int lc_exscan_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                        MPI_Op op, const lc_decomp *d, int vector)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *mem, *E = lc_tmp_alloc(count, type, &mem);
    if (!E) return MPI_ERR_NO_MEM;
    int err = lc_lane_node_prefix(input, E, count, type, op, d, vector);
    if (err == MPI_SUCCESS) err = PMPI_Exscan(sbuf, rbuf, count, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && d->node_index > 0)
        err = d->node_rank == 0 ? lc_local_copy(E, count, type, rbuf, count, type)
                                : PMPI_Reduce_local(E, rbuf, count, type, op);
    lc_free(mem);
    return err;
}

int lc_exscan_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   const lc_decomp *d)
{
    return lc_exscan_full_lane(sbuf, rbuf, count, type, op, d, 0);
}
