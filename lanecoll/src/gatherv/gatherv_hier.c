/* Hierarchical gatherv (the paper's hierarchical gather, section 3.2, listing 4, with
 * per-process counts and displacements).
 *
 * On every node the process with the root's node rank is the node's leader. The
 * leaders of the other nodes learn their node's block sizes (a node gather of one
 * number per process: only the root knows the counts) and gatherv their node's blocks
 * into a temporary; the root gathervs its own node's blocks straight into the receive
 * buffer (MPI_IN_PLACE too). Every other leader then sends its temporary to the root
 * over the root's lane, and the root receives each node's blocks at their places with
 * one indexed datatype per node (receives posted before the root's node gatherv, so
 * the two overlap). Zero-copy at the root; a temporary of its node's data at each other
 * leader, except a leader alone on its node, which sends its block directly.
 *
 * Cost: a node gather of one number per process (not on the root's node), ceil(log n)
 *   rounds of node gatherv, N-1 messages into the root over one lane (linear in the
 *   number of nodes; each node's data crosses the network once, t minus the root
 *   node's blocks into the root).
 * Restrictions: the root's node rank must exist on every node (always on regular
 * communicators). Unequal node sizes and any rank order are fine. The leaders hold
 * their node's blocks in units of their own send type (bytes when its size does not
 * divide a block: homogeneous systems, like the rest of lanecoll); a node's total must
 * stay below 2^31 such units.
 * Selection (interposition): choosing by size needs the root's mean block on every
 * process, one 8-byte broadcast per call, unless the tuning table gives this
 * collective one algorithm at every size for the communicator's nodes and ppn, as
 * `hpcscope tune` writes it when one algorithm is good enough at every measured size
 * (select.h, lc_bytes_shared). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c4b

static int gatherv_root(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int *rcounts, const int *displs, MPI_Datatype rtype,
                        const lc_decomp *d, const int *grid)
{
    int m = d->max_ppn, me = d->node_index, n = d->node_size;
    int *nc = malloc(2 * sizeof(int) * (size_t)m);
    lc_v_peers nodes = { 0, NULL, NULL };
    int err = nc ? lc_v_peers_post(d, grid, 0, 1, rbuf, rcounts, displs, rtype, TAG, &nodes)
                 : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        for (int j = 0; j < n; j++) {
            nc[j] = rcounts[grid[me * m + j]];
            nc[m + j] = displs[grid[me * m + j]];
        }
        err = PMPI_Gatherv(sbuf, scount, stype, rbuf, nc, nc + m, rtype, d->node_rank,
                           d->nodecomm);
    }
    err = lc_v_peers_finish(&nodes, err);
    free(nc);
    return err;
}

/* A leader of another node: its node's sizes, blocks into a temporary, on to the root. */
static int gatherv_leader(const void *sbuf, int scount, MPI_Datatype stype,
                          const lc_decomp *d, int root_node, long long *bytes)
{
    lc_v_hold h = { MPI_BYTE, 0, NULL, NULL, NULL, NULL };
    int err = lc_v_node_bytes(d, d->node_rank, scount, stype, bytes);
    if (err == MPI_SUCCESS) err = lc_v_hold_alloc(stype, bytes, d->node_size, &h);
    if (err == MPI_SUCCESS)
        err = PMPI_Gatherv(sbuf, scount, stype, h.buf, h.counts, h.displs, h.unit,
                           d->node_rank, d->nodecomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Send(h.buf, h.total, h.unit, root_node, TAG, d->lanecomm);
    lc_v_hold_free(&h);
    return err;
}

int lc_gatherv_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int *rcounts, const int *displs, MPI_Datatype rtype, int root,
                    const lc_decomp *d)
{
    int root_node = d->rank_node[root], lr = d->rank_noderank[root], err;
    if (d->node_index == root_node && d->rank != root)
        return PMPI_Gatherv(sbuf, scount, stype, NULL, NULL, NULL, stype, lr, d->nodecomm);
    if (d->node_rank != lr) {
        LC_TRY(lc_v_node_bytes(d, lr, scount, stype, NULL));
        return PMPI_Gatherv(sbuf, scount, stype, NULL, NULL, NULL, stype, lr, d->nodecomm);
    }
    if (d->rank == root) {
        int *grid = lc_rank_grid(d);
        if (!grid) return MPI_ERR_NO_MEM;
        err = gatherv_root(sbuf, scount, stype, rbuf, rcounts, displs, rtype, d, grid);
        free(grid);
        return err;
    }
    if (d->node_size == 1) /* alone on its node: its block is the node's, no temporary */
        return PMPI_Send(sbuf, scount, stype, root_node, TAG, d->lanecomm);
    long long *bytes = malloc(sizeof(long long) * (size_t)d->node_size);
    if (!bytes) return MPI_ERR_NO_MEM;
    err = gatherv_leader(sbuf, scount, stype, d, root_node, bytes);
    free(bytes);
    return err;
}
