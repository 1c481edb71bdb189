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
 * stay below 2^31 such units. */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c4b

static int gatherv_root(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                        const int *rcounts, const int *displs, MPI_Datatype rtype,
                        const lc_decomp *d, const int *grid)
{
    int N = d->nnodes, m = d->max_ppn, me = d->node_index, nr = 0, n = d->node_size;
    int *nc = malloc(2 * sizeof(int) * (size_t)m);
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)N);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)N);
    int err = nc && types && reqs ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; i < N && err == MPI_SUCCESS; i++) {
        if (i == me) continue;
        err = lc_type_rank_blocks(m, grid + i * m, 1, rcounts, displs, rtype, &types[nr]);
        if (err != MPI_SUCCESS) break;
        err = PMPI_Irecv(rbuf, 1, types[nr], i, TAG, d->lanecomm, &reqs[nr]);
        nr++;
    }
    if (err == MPI_SUCCESS) {
        for (int j = 0; j < n; j++) {
            nc[j] = rcounts[grid[me * m + j]];
            nc[m + j] = displs[grid[me * m + j]];
        }
        err = PMPI_Gatherv(sbuf, scount, stype, rbuf, nc, nc + m, rtype, d->node_rank,
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

/* A leader of another node: its node's sizes, blocks into a temporary, on to the root. */
static int gatherv_leader(const void *sbuf, int scount, MPI_Datatype stype,
                          const lc_decomp *d, int root_node, long long *bytes)
{
    int n = d->node_size, size = 0;
    int *uc = malloc(2 * sizeof(int) * (size_t)n);
    void *mem = NULL, *tmp = NULL;
    PMPI_Type_size(stype, &size);
    long long mine = (long long)scount * size;
    int err = uc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = PMPI_Gather(&mine, 1, MPI_LONG_LONG, bytes, 1, MPI_LONG_LONG, d->node_rank,
                          d->nodecomm);
    MPI_Datatype unit = lc_v_unit(stype, bytes, n);
    int total = err == MPI_SUCCESS ? lc_v_units(bytes, n, unit, uc, uc + n) : 0;
    if (err == MPI_SUCCESS && total < 0) err = MPI_ERR_COUNT;
    if (err == MPI_SUCCESS && !(tmp = lc_tmp_alloc(total, unit, &mem)))
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS)
        err = PMPI_Gatherv(sbuf, scount, stype, tmp, uc, uc + n, unit, d->node_rank,
                           d->nodecomm);
    if (err == MPI_SUCCESS) err = PMPI_Send(tmp, total, unit, root_node, TAG, d->lanecomm);
    lc_free(mem);
    free(uc);
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
        int size = 0;
        PMPI_Type_size(stype, &size);
        long long mine = (long long)scount * size;
        LC_TRY(
            PMPI_Gather(&mine, 1, MPI_LONG_LONG, NULL, 0, MPI_LONG_LONG, lr, d->nodecomm));
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
