/* Full-lane allgatherv (the paper's full-lane allgather, section 3.3, with per-process
 * counts and displacements).
 *
 * Every lane allgathervs its N blocks directly into their places in the receive buffer
 * (the lane's counts and displacements picked from recvcounts/displs); then every
 * process sends the blocks of its lane to the other n-1 processes of its node and
 * receives theirs, each lane's N blocks described by one indexed datatype over the
 * receive buffer (point-to-point on the node communicator: MPI_Allgatherv takes one
 * receive type for all contributions, so it cannot place another lane's scattered
 * blocks). Zero-copy: no temporary, MPI_IN_PLACE handled by the lane allgatherv.
 *
 * Cost: the lane allgatherv (ceil(log N) rounds or what the library picks, the lane's
 *   share of the total t = sum of recvcounts, ~t/n per lane when counts are balanced),
 *   then n-1 concurrent messages each way per process inside the node (its lane's
 *   blocks out, the other lanes' in): (t - t/n) into each process through the node.
 *   Every lane carries only its own blocks across the nodes, so irregular counts load
 *   the lanes unevenly (a lane with the big blocks is the bottleneck).
 * Restrictions: regular (every lane must reach every node). Any rank order: the
 * displacements say where every block goes, so no renumbering is needed.
 * On one node (lanes of one process) the own block is copied locally instead of an
 * MPI_Allgatherv on the lane: MPICH 4.0.2's MPI_Allgatherv on a one-process
 * communicator ignores the displacement (puts the block at offset 0). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c47

/* Node step: my lane's blocks to every other process of the node, theirs to me. */
static int exchange_lanes(const lc_decomp *d, const int *grid, void *rbuf,
                          const int *counts, const int *displs, MPI_Datatype rtype)
{
    int n = d->node_size, N = d->nnodes, m = d->max_ppn, me = d->node_rank, nr = 0, err;
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)n);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)n);
    if (!types || !reqs) {
        free(types);
        free(reqs);
        return MPI_ERR_NO_MEM;
    }
    int built = 0;
    for (err = MPI_SUCCESS; built < n && err == MPI_SUCCESS; built++)
        err = lc_type_rank_blocks(N, grid + built, m, counts, displs, rtype, &types[built]);
    if (err != MPI_SUCCESS) built--;
    for (int q = 0; q < n && err == MPI_SUCCESS; q++) {
        if (q == me) continue;
        err = PMPI_Irecv(rbuf, 1, types[q], q, TAG, d->nodecomm, &reqs[nr++]);
        if (err == MPI_SUCCESS)
            err = PMPI_Isend(rbuf, 1, types[me], q, TAG, d->nodecomm, &reqs[nr++]);
    }
    int werr = lc_waitall(nr, reqs);
    if (err == MPI_SUCCESS) err = werr;
    for (int q = 0; q < built; q++) PMPI_Type_free(&types[q]);
    free(types);
    free(reqs);
    return err;
}

int lc_allgatherv_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int *rcounts, const int *displs, MPI_Datatype rtype,
                       const lc_decomp *d)
{
    int N = d->nnodes, err;
    int *grid = lc_rank_grid(d);
    int *lc = malloc(2 * sizeof(int) * (size_t)N);
    if (!grid || !lc) {
        free(grid);
        free(lc);
        return MPI_ERR_NO_MEM;
    }
    err = lc_lane_counts(d, grid, d->node_rank, rcounts, displs, lc, lc + N);
    if (err == MPI_SUCCESS && N == 1 && sbuf != MPI_IN_PLACE) /* see the header */
        err = lc_local_copy(sbuf, scount, stype,
                            LC_CHAR(rbuf) + (MPI_Aint)displs[d->rank] * lc_extent(rtype),
                            rcounts[d->rank], rtype);
    else if (err == MPI_SUCCESS && N > 1)
        err = PMPI_Allgatherv(sbuf, scount, stype, rbuf, lc, lc + N, rtype, d->lanecomm);
    if (err == MPI_SUCCESS && d->node_size > 1)
        err = exchange_lanes(d, grid, rbuf, rcounts, displs, rtype);
    free(lc);
    free(grid);
    return err;
}
