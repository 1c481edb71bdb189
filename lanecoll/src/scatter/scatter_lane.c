/* Full-lane scatter (paper, section 3.2).
 *
 * The root scatters over its node: node rank j receives the N blocks destined for the
 * processes with node rank j on every node, sent straight out of the root's send
 * buffer as a strided column type (N blocks, stride n, extent one block). Every lane
 * process on the root node then scatters its N blocks over its lane. The root keeps its
 * own column in place and scatters on its lane from the send buffer with blocks spaced
 * n apart; the other root-node processes use one temporary of N blocks.
 *
 * Cost: ceil(log n) + ceil(log N) rounds; (p-1)c leaves the root (optimal); the node
 *   scatter at the root (about (p-N)c) is the bottleneck for an n-fold speed-up.
 * Restrictions: regular. Any root.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at the root. */
#include "../internal.h"

static int scatter_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(scount, stype) : lc_empty(rcount, rtype))
        return MPI_SUCCESS;
    int n = d->node_size, N = d->nnodes, err;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];

    if (d->rank == root) {
        MPI_Datatype column, spaced;
        MPI_Aint blk = scount * lc_extent(stype);
        LC_TRY(lc_type_strided_column(N, n, scount, stype, &column));
        err = PMPI_Scatter(sbuf, 1, column, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, root_nr,
                           d->nodecomm);
        PMPI_Type_free(&column);
        if (err != MPI_SUCCESS) return err;
        LC_TRY(lc_type_spaced_block(scount, stype, n, &spaced));
        err = PMPI_Scatter(LC_CCHAR(sbuf) + root_nr * blk, 1, spaced, rbuf, rcount, rtype,
                           root_node, d->lanecomm);
        PMPI_Type_free(&spaced);
        return err;
    }
    if (d->node_index != root_node)
        return PMPI_Scatter(NULL, 0, rtype, rbuf, rcount, rtype, root_node, d->lanecomm);

    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)N * rcount, rtype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Scatter(NULL, 0, rtype, tmp, N * rcount, rtype, root_nr, d->nodecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatter(tmp, rcount, rtype, rbuf, rcount, rtype, root_node, d->lanecomm);
    lc_free(mem);
    return err;
}

int lc_scatter_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_scatter_reindexed(scatter_lane, sbuf, scount, stype, rbuf, rcount, rtype,
                                    root, d);
    return scatter_lane(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
