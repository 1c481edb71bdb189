/* Full-lane gatherv (the paper's full-lane gather, section 3.2, with per-process counts
 * and displacements).
 *
 * Only the root knows the counts. It first scatters to each process of its node the
 * byte sizes of that process's lane's N blocks (a node scatter of N numbers each, on the
 * root's node only). Every lane then gathervs its N blocks to its process on the root
 * node: the root's own lane straight into the receive buffer at the callers'
 * displacements (MPI_IN_PLACE too), every other root-node process into a temporary of
 * its lane's blocks. Those processes send their temporary to the root, which receives
 * each lane's blocks at once at their places with one indexed datatype per lane (the
 * receives are posted before the root's own lane gatherv, so the node step overlaps
 * it). Zero-copy at the root; one temporary of its lane's data at the other root-node
 * processes, none elsewhere. On one node (N = 1) there is nothing to forward: no size
 * scatter, every process sends its block straight to the root.
 *
 * Cost: a node scatter of N numbers per process (root node only), ceil(log N) rounds of
 *   lane gatherv (all n lanes at once: the data entering the root node, t minus the
 *   root node's own blocks, spreads over n lanes when the counts are balanced), n-1
 *   messages into the root over the node (t - its lane's share, the bottleneck as for
 *   gather_lane). Irregular counts load the lanes unevenly.
 * Restrictions: regular. Any root, any rank order (the displacements place every block).
 * The forwarding processes hold their lane's blocks in units of their own send type
 * (in bytes when its size does not divide a block: homogeneous systems only, like the
 * rest of lanecoll); a lane's total must stay below 2^31 such units.
 * Selection (interposition): choosing by size needs the root's mean block on every
 * process, one 8-byte broadcast per call, unless the tuning table gives this
 * collective one algorithm at every size for the communicator's nodes and ppn, as
 * `hpcscope tune` writes it when one algorithm is good enough at every measured size
 * (select.h, lc_bytes_shared). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c48

static int gatherv_root(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int *rcounts, const int *displs, MPI_Datatype rtype,
                        const lc_decomp *d, const int *grid, int root_node)
{
    int N = d->nnodes, me = d->node_rank;
    int *lc = malloc(2 * sizeof(int) * (size_t)N);
    lc_v_peers lanes = { 0, NULL, NULL };
    int err = lc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS && N > 1)
        err = lc_v_lane_bytes(d, grid, rcounts, rtype, me, NULL);
    if (err == MPI_SUCCESS)
        err = lc_v_peers_post(d, grid, 1, 1, rbuf, rcounts, displs, rtype, TAG, &lanes);
    if (err == MPI_SUCCESS) err = lc_lane_counts(d, grid, me, rcounts, displs, lc, lc + N);
    if (err == MPI_SUCCESS)
        err = PMPI_Gatherv(sbuf, scount, stype, rbuf, lc, lc + N, rtype, root_node,
                           d->lanecomm);
    err = lc_v_peers_finish(&lanes, err);
    free(lc);
    return err;
}

static int gatherv_forward(const void *sbuf, int scount, MPI_Datatype stype,
                           const lc_decomp *d, const int *grid, int root_node, int root_nr)
{
    int N = d->nnodes;
    if (N == 1) /* one node: the lane is this process, its block goes straight out */
        return PMPI_Send(sbuf, scount, stype, root_nr, TAG, d->nodecomm);
    long long *bytes = malloc(sizeof(long long) * (size_t)N);
    lc_v_hold h = { MPI_BYTE, 0, NULL, NULL, NULL, NULL };
    int err =
        bytes ? lc_v_lane_bytes(d, grid, NULL, stype, root_nr, bytes) : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) err = lc_v_hold_alloc(stype, bytes, N, &h);
    if (err == MPI_SUCCESS)
        err = PMPI_Gatherv(sbuf, scount, stype, h.buf, h.counts, h.displs, h.unit,
                           root_node, d->lanecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Send(h.buf, h.total, h.unit, root_nr, TAG, d->nodecomm);
    lc_v_hold_free(&h);
    free(bytes);
    return err;
}

int lc_gatherv_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                    const lc_decomp *d)
{
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    if (d->node_index != root_node)
        return PMPI_Gatherv(sbuf, scount, stype, NULL, NULL, NULL, stype, root_node,
                            d->lanecomm);
    int *grid = lc_rank_grid(d);
    if (!grid) return MPI_ERR_NO_MEM;
    int err = d->rank == root
                  ? gatherv_root(sbuf, scount, stype, rbuf, rcounts, displs, rtype, d, grid,
                                 root_node)
                  : gatherv_forward(sbuf, scount, stype, d, grid, root_node, root_nr);
    free(grid);
    return err;
}
