/* Hierarchical allgatherv (the paper's hierarchical allgather, section 3.3, listing 6,
 * with per-process counts and displacements).
 *
 * Every node gathervs its blocks to node rank 0 directly at their places in that
 * process's receive buffer; the node leaders exchange their node's blocks pairwise
 * (each leader sends one indexed datatype describing its node's blocks to every other
 * leader and receives theirs the same way: MPI_Allgatherv takes one receive type for
 * all contributions, so it cannot place another node's scattered blocks); every node
 * broadcasts all blocks with one indexed datatype over the receive buffer. Zero-copy,
 * no temporary; MPI_IN_PLACE as MPI defines it.
 *
 * Cost: ceil(log n) rounds of node gatherv, N-1 concurrent messages each way per leader
 *   (linear in the number of nodes: all t - t_node of the other nodes enters each node
 *   over one lane), a node broadcast of the total t = sum of recvcounts.
 * Restrictions: none. Unequal node sizes and any rank order are fine (the displacements
 * place every block). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c4a

static int exchange_leaders(const lc_decomp *d, const int *grid, void *rbuf,
                            const int *counts, const int *displs, MPI_Datatype rtype)
{
    int N = d->nnodes, m = d->max_ppn, me = d->node_index, nr = 0, err = MPI_SUCCESS;
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)N);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)N);
    int built = 0;
    if (!types || !reqs) err = MPI_ERR_NO_MEM;
    for (; built < N && err == MPI_SUCCESS; built++)
        err = lc_type_rank_blocks(m, grid + built * m, 1, counts, displs, rtype,
                                  &types[built]);
    if (err != MPI_SUCCESS && built > 0) built--;
    for (int i = 0; i < N && err == MPI_SUCCESS; i++) {
        if (i == me) continue;
        err = PMPI_Irecv(rbuf, 1, types[i], i, TAG, d->leadcomm, &reqs[nr++]);
        if (err == MPI_SUCCESS)
            err = PMPI_Isend(rbuf, 1, types[me], i, TAG, d->leadcomm, &reqs[nr++]);
    }
    int werr = nr ? lc_waitall(nr, reqs) : MPI_SUCCESS;
    if (err == MPI_SUCCESS) err = werr;
    for (int i = 0; i < built; i++) PMPI_Type_free(&types[i]);
    free(types);
    free(reqs);
    return err;
}

int lc_allgatherv_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       const int *rcounts, const int *displs, MPI_Datatype rtype,
                       const lc_decomp *d)
{
    int m = d->max_ppn, n = d->node_size, node = d->node_index;
    int *grid = lc_rank_grid(d);
    int *nc = malloc(2 * sizeof(int) * (size_t)m);
    MPI_Datatype all = MPI_DATATYPE_NULL;
    int err = grid && nc ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS) {
        for (int j = 0; j < n; j++) {
            nc[j] = rcounts[grid[node * m + j]];
            nc[m + j] = displs[grid[node * m + j]];
        }
        if (d->node_rank == 0)
            err =
                PMPI_Gatherv(sbuf, scount, stype, rbuf, nc, nc + m, rtype, 0, d->nodecomm);
        else if (sbuf == MPI_IN_PLACE)
            err = PMPI_Gatherv(LC_CHAR(rbuf) + displs[d->rank] * lc_extent(rtype),
                               rcounts[d->rank], rtype, NULL, NULL, NULL, rtype, 0,
                               d->nodecomm);
        else
            err =
                PMPI_Gatherv(sbuf, scount, stype, NULL, NULL, NULL, stype, 0, d->nodecomm);
    }
    if (err == MPI_SUCCESS && d->node_rank == 0 && d->nnodes > 1)
        err = exchange_leaders(d, grid, rbuf, rcounts, displs, rtype);
    if (err == MPI_SUCCESS)
        err = lc_type_rank_blocks(d->nnodes * m, grid, 1, rcounts, displs, rtype, &all);
    if (err == MPI_SUCCESS && n > 1) err = PMPI_Bcast(rbuf, 1, all, 0, d->nodecomm);
    if (all != MPI_DATATYPE_NULL) PMPI_Type_free(&all);
    free(nc);
    free(grid);
    return err;
}
