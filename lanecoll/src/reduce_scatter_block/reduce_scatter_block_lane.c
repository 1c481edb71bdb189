/* Full-lane reduce_scatter_block (paper, section 3.4, listing 8).
 *
 * The p input blocks are first permuted locally into lane order (all blocks for node
 * rank 0 of every node, then node rank 1, ...; one typed copy through a strided column
 * type), so that a reduce_scatter_block on the node (in place, N blocks per process)
 * leaves every process with the node's partial results for the N processes of its
 * lane, and a reduce_scatter_block on the lane delivers each process its block.
 * One temporary of p blocks.
 *
 * Cost: ceil(log n) + ceil(log N) rounds; about (n-1)Nc + (N-1)c per process; (N-1)c
 *   per lane crosses the network, all lanes at once.
 * Restrictions: regular, consecutive ranks, commutative operator. */
#include "../internal.h"

int lc_reduce_scatter_block_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int n = d->node_size, N = d->nnodes, err;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    MPI_Datatype column;
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * count, type, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;

    err = lc_type_strided_column(N, n, count, type, &column);
    if (err == MPI_SUCCESS) {
        err = lc_local_copy(input, n, column, tmp, d->size * count, type);
        PMPI_Type_free(&column);
    }
    if (err == MPI_SUCCESS)
        err =
            PMPI_Reduce_scatter_block(MPI_IN_PLACE, tmp, N * count, type, op, d->nodecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Reduce_scatter_block(tmp, rbuf, count, type, op, d->lanecomm);
    lc_free(mem);
    return err;
}
