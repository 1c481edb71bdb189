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
 * stay below 2^31 such units. */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c4c

static int scatterv_root(const void *sbuf, const int *scounts, const int *displs,
                         MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                         const lc_decomp *d, const int *grid)
{
    int N = d->nnodes, m = d->max_ppn, me = d->node_index, nr = 0, n = d->node_size;
    int *nc = malloc(2 * sizeof(int) * (size_t)m);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)N);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)N);
    int err = nc && types && reqs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; i < N && err == MPI_SUCCESS; i++) {
        if (i == me) continue;
        err = lc_type_rank_blocks(m, grid + i * m, 1, scounts, displs, stype, &types[nr]);
        if (err != MPI_SUCCESS) break;
        err = PMPI_Isend(sbuf, 1, types[nr], i, TAG, d->lanecomm, &reqs[nr]);
        nr++;
    }
    if (err == MPI_SUCCESS) {
        for (int j = 0; j < n; j++) {
            nc[j] = scounts[grid[me * m + j]];
            nc[m + j] = displs[grid[me * m + j]];
        }
        err = PMPI_Scatterv(sbuf, nc, nc + m, stype, rbuf, rcount, rtype, d->node_rank,
                            d->nodecomm);
    }
    int werr = lc_waitall(nr, reqs);
    if (err == MPI_SUCCESS) err = werr;
    for (int i = 0; i < nr; i++) PMPI_Type_free(&types[i]);
    free(reqs);
    free(types);
    free(nc);
    return err;
}

/* A leader of another node: its node's sizes, its node's blocks from the root, scatter. */
static int scatterv_leader(void *rbuf, int rcount, MPI_Datatype rtype, const lc_decomp *d,
                           int root_node, long long *bytes)
{
    int n = d->node_size, size = 0;
    int *uc = malloc(2 * sizeof(int) * (size_t)n);
    void *mem = NULL, *tmp = NULL;
    PMPI_Type_size(rtype, &size);
    long long mine = (long long)rcount * size;
    int err = uc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = PMPI_Gather(&mine, 1, MPI_LONG_LONG, bytes, 1, MPI_LONG_LONG, d->node_rank,
                          d->nodecomm);
    MPI_Datatype unit = lc_v_unit(rtype, bytes, n);
    int total = err == MPI_SUCCESS ? lc_v_units(bytes, n, unit, uc, uc + n) : 0;
    if (err == MPI_SUCCESS && total < 0) err = MPI_ERR_COUNT;
    if (err == MPI_SUCCESS && !(tmp = lc_tmp_alloc(total, unit, &mem)))
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = PMPI_Recv(tmp, total, unit, root_node, TAG, d->lanecomm, MPI_STATUS_IGNORE);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatterv(tmp, uc, uc + n, unit, rbuf, rcount, rtype, d->node_rank,
                            d->nodecomm);
    lc_free(mem);
    free(uc);
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
        int size = 0;
        PMPI_Type_size(rtype, &size);
        long long mine = (long long)rcount * size;
        LC_TRY(
            PMPI_Gather(&mine, 1, MPI_LONG_LONG, NULL, 0, MPI_LONG_LONG, lr, d->nodecomm));
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
