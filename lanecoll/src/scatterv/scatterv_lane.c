/* Full-lane scatterv (the paper's full-lane scatter, section 3.2, with per-process
 * counts and displacements).
 *
 * Only the root knows the counts. It scatters to each process of its node the byte
 * sizes of that process's lane's N blocks (a node scatter of N numbers each, root node
 * only), then sends every other process of its node the blocks of its lane straight out
 * of the send buffer, one indexed datatype per lane (no packing), while it scatters its
 * own lane's blocks over its lane from the send buffer at the callers' displacements
 * (MPI_IN_PLACE too). Each of those processes receives its lane's blocks into a
 * temporary and scatters them over its lane. Zero-copy at the root; one temporary of
 * its lane's data at the other root-node processes, none elsewhere. On one node (N = 1)
 * there is nothing to forward: no size scatter, every process receives its block
 * straight from the root.
 *
 * Cost: a node scatter of N numbers per process (root node only), n-1 messages out of
 *   the root over the node (t minus its own lane's share: the bottleneck as for
 *   scatter_lane), ceil(log N) rounds of lane scatterv on all n lanes at once (the data
 *   leaving the root node spreads over n lanes when counts are balanced; irregular
 *   counts load the lanes unevenly).
 * Restrictions: regular. Any root, any rank order (the displacements place every block).
 * The forwarding processes hold their lane's blocks in units of their own receive type
 * (in bytes when its size does not divide a block: homogeneous systems only, like the
 * rest of lanecoll); a lane's total must stay below 2^31 such units.
 * Selection (interposition): choosing by size needs the root's mean block on every
 * process, one 8-byte broadcast per call, unless the tuning table gives this
 * collective one algorithm at every size for the communicator's nodes and ppn, as
 * `hpcscope tune` writes it when one algorithm is good enough at every measured size
 * (select.h, lc_bytes_shared). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c49

static int scatterv_root(const void *sbuf, const int *scounts, const int *displs,
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         const lc_decomp *d, const int *grid, int root_node)
{
    int N = d->nnodes, me = d->node_rank;
    int *lc = malloc(2 * sizeof(int) * (size_t)N);
    lc_v_peers lanes = { 0, NULL, NULL };
    int err = lc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS && N > 1)
        err = lc_v_lane_bytes(d, grid, scounts, stype, me, NULL);
    if (err == MPI_SUCCESS)
        err = lc_v_peers_post(d, grid, 1, 0, sbuf, scounts, displs, stype, TAG, &lanes);
    if (err == MPI_SUCCESS) err = lc_lane_counts(d, grid, me, scounts, displs, lc, lc + N);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatterv(sbuf, lc, lc + N, stype, rbuf, rcount, rtype, root_node,
                            d->lanecomm);
    err = lc_v_peers_finish(&lanes, err);
    free(lc);
    return err;
}

static int scatterv_forward(void *rbuf, int rcount, MPI_Datatype rtype, const lc_decomp *d,
                            const int *grid, int root_node, int root_nr)
{
    int N = d->nnodes;
    if (N == 1) /* one node: the lane is this process, its block comes straight in */
        return PMPI_Recv(rbuf, rcount, rtype, root_nr, TAG, d->nodecomm, MPI_STATUS_IGNORE);
    long long *bytes = malloc(sizeof(long long) * (size_t)N);
    lc_v_hold h = { MPI_BYTE, 0, NULL, NULL, NULL, NULL };
    int err =
        bytes ? lc_v_lane_bytes(d, grid, NULL, rtype, root_nr, bytes) : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) err = lc_v_hold_alloc(rtype, bytes, N, &h);
    if (err == MPI_SUCCESS)
        err =
            PMPI_Recv(h.buf, h.total, h.unit, root_nr, TAG, d->nodecomm, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatterv(h.buf, h.counts, h.displs, h.unit, rbuf, rcount, rtype,
                            root_node, d->lanecomm);
    lc_v_hold_free(&h);
    free(bytes);
    return err;
}

int lc_scatterv_lane(const void *sbuf, const int *scounts, const int *displs,
                     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, const lc_decomp *d)
{
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    if (d->node_index != root_node)
        return PMPI_Scatterv(NULL, NULL, NULL, rtype, rbuf, rcount, rtype, root_node,
                             d->lanecomm);
    int *grid = lc_rank_grid(d);
    if (!grid) return MPI_ERR_NO_MEM;
    int err = d->rank == root
                  ? scatterv_root(sbuf, scounts, displs, stype, rbuf, rcount, rtype, d,
                                  grid, root_node)
                  : scatterv_forward(rbuf, rcount, rtype, d, grid, root_node, root_nr);
    free(grid);
    return err;
}
