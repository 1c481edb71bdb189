/* Hierarchical scatterv (the paper's hierarchical scatter, section 3.2, with
 * per-process counts and displacements).
 *
 * On every node the process with the root's node rank is the node's leader. The root
 * sends every other leader its node's blocks straight out of the send buffer over the
 * root's lane, one indexed datatype per node, while it scattervs its own node's blocks
 * from the send buffer (MPI_IN_PLACE too). The leaders of the other nodes learn their
 * node's block sizes (a node gather of one number per process: only the root knows the
 * counts), receive their node's blocks into a temporary and scatterv them on the node.
 * Zero-copy at the root; a temporary of its node's data at each other leader, except a
 * leader alone on its node, which receives its block directly.
 *
 * Cost: N-1 messages out of the root over one lane (linear in the number of nodes;
 *   each node's data crosses the network once), a node gather of one number per process
 *   (not on the root's node, overlapping the transfer), ceil(log n) rounds of node
 *   scatterv.
 * Restrictions: the root's node rank must exist on every node (always on regular
 * communicators). Unequal node sizes and any rank order are fine. The leaders hold
 * their node's blocks in units of their own receive type (bytes when its size does not
 * divide a block: homogeneous systems, like the rest of lanecoll); a node's total must
 * stay below 2^31 such units.
 * Selection (interposition): choosing by size needs the root's mean block on every
 * process, one 8-byte broadcast per call, unless the tuning table gives this
 * collective one algorithm at every size for the communicator's nodes and ppn, as
 * `hpcscope tune` writes it when one algorithm is good enough at every measured size
 * (select.h, lc_bytes_shared). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c4c

static int scatterv_root(const void *sbuf, const int *scounts, const int *displs,
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         const lc_decomp *d, const int *grid)
{
    int m = d->max_ppn, me = d->node_index, n = d->node_size;
    int *nc = malloc(2 * sizeof(int) * (size_t)m);
    lc_v_peers nodes = { 0, NULL, NULL };
    int err = nc ? lc_v_peers_post(d, grid, 0, 0, sbuf, scounts, displs, stype, TAG, &nodes)
                 : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        for (int j = 0; j < n; j++) {
            nc[j] = scounts[grid[me * m + j]];
            nc[m + j] = displs[grid[me * m + j]];
        }
        err = PMPI_Scatterv(sbuf, nc, nc + m, stype, rbuf, rcount, rtype, d->node_rank,
                            d->nodecomm);
    }
    err = lc_v_peers_finish(&nodes, err);
    free(nc);
    return err;
}

/* A leader of another node: its node's sizes, its node's blocks from the root, scatter. */
static int scatterv_leader(void *rbuf, int rcount, MPI_Datatype rtype, const lc_decomp *d,
                           int root_node, long long *bytes)
{
    lc_v_hold h = { MPI_BYTE, 0, NULL, NULL, NULL, NULL };
    int err = lc_v_node_bytes(d, d->node_rank, rcount, rtype, bytes);
    if (err == MPI_SUCCESS) err = lc_v_hold_alloc(rtype, bytes, d->node_size, &h);
    if (err == MPI_SUCCESS)
        err = PMPI_Recv(h.buf, h.total, h.unit, root_node, TAG, d->lanecomm,
                        MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatterv(h.buf, h.counts, h.displs, h.unit, rbuf, rcount, rtype,
                            d->node_rank, d->nodecomm);
    lc_v_hold_free(&h);
    return err;
}

int lc_scatterv_hier(const void *sbuf, const int *scounts, const int *displs,
                     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                     int root, const lc_decomp *d)
{
    int root_node = d->rank_node[root], lr = d->rank_noderank[root], err;
    if (d->node_index == root_node && d->rank != root)
        return PMPI_Scatterv(NULL, NULL, NULL, rtype, rbuf, rcount, rtype, lr, d->nodecomm);
    if (d->node_rank != lr) {
        LC_TRY(lc_v_node_bytes(d, lr, rcount, rtype, NULL));
        return PMPI_Scatterv(NULL, NULL, NULL, rtype, rbuf, rcount, rtype, lr, d->nodecomm);
    }
    if (d->rank == root) {
        int *grid = lc_rank_grid(d);
        if (!grid) return MPI_ERR_NO_MEM;
        err = scatterv_root(sbuf, scounts, displs, stype, rbuf, rcount, rtype, d, grid);
        free(grid);
        return err;
    }
    if (d->node_size == 1) /* alone on its node: its block is the node's, no temporary */
        return PMPI_Recv(rbuf, rcount, rtype, root_node, TAG, d->lanecomm,
                         MPI_STATUS_IGNORE);
    long long *bytes = malloc(sizeof(long long) * (size_t)d->node_size);
    if (!bytes) return MPI_ERR_NO_MEM;
    err = scatterv_leader(rbuf, rcount, rtype, d, root_node, bytes);
    free(bytes);
    return err;
}
