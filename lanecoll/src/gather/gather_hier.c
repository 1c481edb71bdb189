/* Hierarchical gather (paper, section 3.2, listing 4).
 *
 * Every node gathers its blocks to the process with the root's node rank (on the root
 * node directly into the root's receive buffer, elsewhere into a temporary of n
 * blocks); then that lane gathers the node groups to the root with gatherv (groups may
 * differ in size), the root's own group in place.
 *
 * Cost: ceil(log n) + ceil(log N) rounds; (p-1)c received by the root; each node's
 *   data crosses the network once, over one lane.
 * Restrictions: the root's node rank must exist on every node (always true on regular
 * communicators). Unequal node sizes are fine.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at the root. */
#include <stdlib.h>

#include "../internal.h"

static int gather_over_nodes(const lc_decomp *d, const void *tmp, int scount,
                             MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                             int root_node, int at_root)
{
    if (!at_root)
        return PMPI_Gatherv(tmp, d->node_size * scount, stype, NULL, NULL, NULL, stype,
                            root_node, d->lanecomm);
    int *counts = lc_node_blocks(d, rcount);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + d->nnodes;
    int err = PMPI_Gatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs, rtype,
                           root_node, d->lanecomm);
    free(counts);
    return err;
}

static int gather_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(rcount, rtype) : lc_empty(scount, stype))
        return MPI_SUCCESS;
    int root_node = d->rank_node[root], lr = d->rank_noderank[root], err;
    int at_root = d->rank == root;

    if (d->node_rank != lr)
        return PMPI_Gather(sbuf, scount, stype, NULL, 0, stype, lr, d->nodecomm);
    if (at_root) {
        MPI_Aint blk = rcount * lc_extent(rtype);
        LC_TRY(PMPI_Gather(sbuf, scount, stype,
                           LC_CHAR(rbuf) + d->node_first[root_node] * blk, rcount, rtype,
                           lr, d->nodecomm));
        return gather_over_nodes(d, NULL, scount, stype, rbuf, rcount, rtype, root_node, 1);
    }
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->node_size * scount, stype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Gather(sbuf, scount, stype, tmp, scount, stype, lr, d->nodecomm);
    if (err == MPI_SUCCESS)
        err = gather_over_nodes(d, tmp, scount, stype, NULL, 0, stype, root_node, 0);
    lc_free(mem);
    return err;
}

int lc_gather_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                   MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_gather_reindexed(gather_hier, sbuf, scount, stype, rbuf, rcount, rtype,
                                   root, d);
    return gather_hier(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
