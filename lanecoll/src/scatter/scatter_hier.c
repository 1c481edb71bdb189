/* Hierarchical scatter (paper, section 3.2).
 *
 * The lane of the root's node rank scatters node groups (scatterv: groups may differ in
 * size) from the root to one process per node, each receiving into a temporary of n
 * blocks (the root's own group stays in its send buffer); every node then scatters its
 * group from that process.
 *
 * Cost: ceil(log N) + ceil(log n) rounds; (p-1)c leaves the root; each node's data
 *   crosses the network once, over one lane.
 * Restrictions: the root's node rank must exist on every node (always true on regular
 * communicators). Unequal node sizes are fine.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at the root. */
#include <stdlib.h>

#include "../internal.h"

static int scatter_from_root(const lc_decomp *d, const void *sbuf, int scount,
                             MPI_Datatype stype, int root_node)
{
    int *counts = lc_node_blocks(d, scount);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + d->nnodes;
    int err = PMPI_Scatterv(sbuf, counts, displs, stype, MPI_IN_PLACE, 0, MPI_DATATYPE_NULL,
                            root_node, d->lanecomm);
    free(counts);
    return err;
}

static int scatter_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(scount, stype) : lc_empty(rcount, rtype))
        return MPI_SUCCESS;
    int root_node = d->rank_node[root], lr = d->rank_noderank[root], err;

    if (d->node_rank != lr)
        return PMPI_Scatter(NULL, 0, rtype, rbuf, rcount, rtype, lr, d->nodecomm);
    if (d->rank == root) {
        MPI_Aint blk = scount * lc_extent(stype);
        LC_TRY(scatter_from_root(d, sbuf, scount, stype, root_node));
        return PMPI_Scatter(LC_CCHAR(sbuf) + d->node_first[root_node] * blk, scount, stype,
                            rbuf, rcount, rtype, lr, d->nodecomm);
    }
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->node_size * rcount, rtype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Scatterv(NULL, NULL, NULL, rtype, tmp, d->node_size * rcount, rtype,
                        root_node, d->lanecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatter(tmp, rcount, rtype, rbuf, rcount, rtype, lr, d->nodecomm);
    lc_free(mem);
    return err;
}

int lc_scatter_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_scatter_reindexed(scatter_hier, sbuf, scount, stype, rbuf, rcount, rtype,
                                    root, d);
    return scatter_hier(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
