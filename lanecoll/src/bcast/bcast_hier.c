/* Hierarchical broadcast (paper, section 3.1, listing 2).
 *
 * The lane of the root's node rank broadcasts the c elements over the nodes (one
 * process per node), then every node broadcasts from that node rank.
 *
 * Cost: ceil(log N) + ceil(log n) rounds, c per process; c crosses into each node once,
 * over a single lane.
 * Restrictions: the root's node rank must exist on every node (always true on regular
 * communicators). Any rank placement. */
#include "../internal.h"

int lc_bcast_hier(void *buf, int count, MPI_Datatype type, int root, const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    if (d->node_rank == root_nr)
        LC_TRY(PMPI_Bcast(buf, count, type, root_node, d->lanecomm));
    return PMPI_Bcast(buf, count, type, root_nr, d->nodecomm);
}
