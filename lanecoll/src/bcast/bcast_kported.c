/* k-ported broadcast (paper, section 5, "Non-pipelined tree algorithms").
 *
 * The root first broadcasts to the processes of its own node; then the nodes run a
 * k-ported tree (ktree.c, k = the fewest processes on a node): node rank j acts as port
 * j and sends the c elements to node rank j of a new node (over lane j), so a node that
 * has the data informs up to k new nodes per round. The process that first receives on
 * a new node broadcasts on its node, then all k ports of that node continue.
 *
 * Cost: ceil(log_{k+1} N) rounds across the nodes, each followed on the new nodes by a
 *   node bcast (ceil(log n) rounds): at most about twice the rounds of the k-ported
 *   algorithm; c into each node once, up to kc out of a node per round over k lanes.
 * Restrictions: none (any node sizes, any rank placement, any root; processes with
 * node rank >= min_ppn only receive). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c43

int lc_bcast_kported(void *buf, int count, MPI_Datatype type, int root, const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int root_node = d->rank_node[root], err = MPI_SUCCESS, from;
    lc_ktree t;
    LC_TRY(lc_ktree_build(d, root_node, &t));
    if (d->node_index == root_node) {
        from = d->rank_noderank[root];
    } else {
        from = t.recv_port;
        if (d->node_rank == from)
            err =
                PMPI_Recv(buf, count, type, t.parent, TAG, d->lanecomm, MPI_STATUS_IGNORE);
    }
    if (err == MPI_SUCCESS) err = PMPI_Bcast(buf, count, type, from, d->nodecomm);
    for (int i = 0; i < t.nsends && err == MPI_SUCCESS; i++)
        if (t.sends[i].port == d->node_rank)
            err = PMPI_Send(buf, count, type, t.sends[i].node, TAG, d->lanecomm);
    free(t.sends);
    return err;
}
