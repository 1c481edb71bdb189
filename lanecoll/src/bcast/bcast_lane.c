/* Full-lane broadcast (paper, section 3.1).
 *
 * The root's node scatters the c elements over its n processes (scatter when n divides
 * c, scatterv otherwise, or always with `vector`: the paper's lane_v variant; the root keeps its own block in place), every process of the
 * root node broadcasts its block of about c/n elements on its lane communicator (all n
 * lanes at once), and every node reassembles the c elements with an in-place
 * allgather(v) on its node communicator. The allgatherv exchanges bytes
 * (lc_allgatherv_in_place: processes may pass different types of one signature, which
 * MPICH 4.0.2's ring MPI_Allgatherv mishandles); no temporary buffer unless the type has
 * gaps (then one of c bytes, c packed and unpacked locally).
 *
 * Cost (p = N nodes x n per node, best-case component algorithms):
 *   rounds  ceil(log n) + ceil(log N) + ceil(log n)
 *   volume  about 2c per process (c/n over the lane, (n-1)c/n twice on the node)
 *   per node c into and out of each node, spread over n lanes
 * Restrictions: regular communicator (same n on every node); every process passes the
 * same count and datatype. Any root, any rank placement (the root is located through
 * the rank tables of the decomposition). */
#include <stdlib.h>

#include "../internal.h"

int lc_bcast_full_lane(void *buf, int count, MPI_Datatype type, int root,
                       const lc_decomp *d, int vector)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int n = d->node_size, nr = d->node_rank;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    int *counts = malloc(2 * sizeof(int) * (size_t)n);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + n, err = MPI_SUCCESS, even = !vector && count % n == 0;
    lc_split_counts(count, n, counts, displs);
    char *mine = LC_CHAR(buf) + displs[nr] * lc_extent(type);

    if (d->node_index == root_node) {
        int at_root = nr == root_nr;
        void *rb = at_root ? MPI_IN_PLACE : mine;
        err = even ? PMPI_Scatter(buf, counts[0], type, rb, counts[0], type, root_nr,
                                  d->nodecomm)
                   : PMPI_Scatterv(buf, counts, displs, type, rb, counts[nr], type, root_nr,
                                   d->nodecomm);
    }
    if (err == MPI_SUCCESS && counts[nr] > 0) /* empty: see lc_split_counts */
        err = PMPI_Bcast(mine, counts[nr], type, root_node, d->lanecomm);
    if (err == MPI_SUCCESS)
        err = even ? PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts[0],
                                    type, d->nodecomm)
                   : lc_allgatherv_in_place(buf, counts, displs, type, d->nodecomm);
    free(counts);
    return err;
}

int lc_bcast_lane(void *buf, int count, MPI_Datatype type, int root, const lc_decomp *d)
{
    return lc_bcast_full_lane(buf, count, type, root, d, 0);
}
