/* Full-lane gather (paper, section 3.2, listing 3).
 *
 * Every lane gathers its N blocks to the lane's process on the root node; the root
 * node then gathers those n groups to the root. At the root both steps receive directly
 * into the receive buffer with derived datatypes: the lane gather uses blocks spaced n
 * blocks apart, the node gather strided columns (N blocks, stride n) with an extent of
 * one block, so the n columns tile the buffer in rank order. The other processes of the
 * root node use one temporary of N blocks; all others send their block only.
 *
 * Cost: ceil(log N) + ceil(log n) rounds; (p-1)c received by the root, as for an
 *   optimal gather; (p-n)c enters the root node spread over n lanes, but the node
 *   gather at the root (about (p-N)c) is the bottleneck.
 * Restrictions: regular. Any root.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at the root. */
#include "../internal.h"

static int gather_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(rcount, rtype) : lc_empty(scount, stype))
        return MPI_SUCCESS;
    int n = d->node_size, N = d->nnodes, err;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];

    if (d->rank == root) {
        MPI_Datatype spaced, column;
        MPI_Aint blk = rcount * lc_extent(rtype);
        LC_TRY(lc_type_spaced_block(rcount, rtype, n, &spaced));
        err = PMPI_Gather(sbuf, scount, stype, LC_CHAR(rbuf) + root_nr * blk, 1, spaced,
                          root_node, d->lanecomm);
        PMPI_Type_free(&spaced);
        if (err != MPI_SUCCESS) return err;
        LC_TRY(lc_type_strided_column(N, n, rcount, rtype, &column));
        err = PMPI_Gather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 1, column, root_nr,
                          d->nodecomm);
        PMPI_Type_free(&column);
        return err;
    }
    if (d->node_index != root_node)
        return PMPI_Gather(sbuf, scount, stype, NULL, 0, stype, root_node, d->lanecomm);

    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)N * scount, stype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Gather(sbuf, scount, stype, tmp, scount, stype, root_node, d->lanecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Gather(tmp, N * scount, stype, NULL, 0, stype, root_nr, d->nodecomm);
    lc_free(mem);
    return err;
}

int lc_gather_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_gather_reindexed(gather_lane, sbuf, scount, stype, rbuf, rcount, rtype,
                                   root, d);
    return gather_lane(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
