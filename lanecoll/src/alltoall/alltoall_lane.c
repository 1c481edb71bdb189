/* Full-lane alltoall (paper, section 3.6, listing 13).
 *
 * Lane step: process (node m', rank r) sends to its lane peer on node m the n blocks
 * destined for node m (consecutive in the send buffer) and receives, from every node,
 * the n blocks that node's rank-r process has for this node, into a temporary of p
 * blocks ordered [source node][destination node rank]. Node step: node rank j receives
 * from every node peer r the column of N blocks that came in over lane r, sent from the
 * temporary and received into the final receive buffer with strided column types
 * (N blocks, stride n, extent one block). In place: the receive buffer is the send
 * buffer of the lane step.
 *
 * Cost (linear component algorithms): (N-1)nc + (n-1)Nc per process sent and received,
 *   more than the direct (p-1)c, as for every indirect alltoall; (N-1)nc per process
 *   crosses the network, over all n lanes at once; one temporary of pc.
 * Restrictions: regular, consecutive ranks. */
#include "../internal.h"

int lc_alltoall_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                     int rcount, MPI_Datatype rtype, const lc_decomp *d)
{
    if (lc_empty(rcount, rtype)) return MPI_SUCCESS;
    int n = d->node_size, N = d->nnodes, err;
    if (sbuf == MPI_IN_PLACE) {
        sbuf = rbuf;
        scount = rcount;
        stype = rtype;
    }

    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * rcount, rtype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Alltoall(sbuf, n * scount, stype, tmp, n * rcount, rtype, d->lanecomm);
    if (err == MPI_SUCCESS) {
        MPI_Datatype column;
        err = lc_type_strided_column(N, n, rcount, rtype, &column);
        if (err == MPI_SUCCESS) {
            err = PMPI_Alltoall(tmp, 1, column, rbuf, 1, column, d->nodecomm);
            PMPI_Type_free(&column);
        }
    }
    lc_free(mem);
    return err;
}
