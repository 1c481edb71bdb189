/* Hierarchical reduce_scatter_block (paper, section 3.4, listing 10).
 *
 * Every node reduces all p blocks to node rank 0 (temporary of p blocks), the node
 * leaders reduce_scatter in place so that each keeps its node's group of blocks
 * (groups may differ in size), every node scatters its group.
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds; pc reduced on every node; the
 *   leaders' reduce_scatter moves about pc per leader over one lane.
 * Restrictions: consecutive ranks (then operands are combined in rank order, so
 * non-commutative operators are fine). Unequal node sizes are fine. */
#include <stdlib.h>

#include "../internal.h"

static int leaders_step(const lc_decomp *d, void *tmp, int count, MPI_Datatype type,
                        MPI_Op op)
{
    int N = d->nnodes;
    int *counts = malloc(sizeof(int) * (size_t)N);
    if (!counts) return MPI_ERR_NO_MEM;
    for (int i = 0; i < N; i++) counts[i] = d->node_sizes[i] * count;
    int err = PMPI_Reduce_scatter(MPI_IN_PLACE, tmp, counts, type, op, d->leadcomm);
    free(counts);
    return err;
}

int lc_reduce_scatter_block_hier(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                                 MPI_Op op, const lc_decomp *d)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int err;
    if (d->node_rank != 0) {
        LC_TRY(PMPI_Reduce(input, NULL, d->size * count, type, op, 0, d->nodecomm));
        return PMPI_Scatter(NULL, 0, type, rbuf, count, type, 0, d->nodecomm);
    }
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * count, type, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    err = PMPI_Reduce(input, tmp, d->size * count, type, op, 0, d->nodecomm);
    if (err == MPI_SUCCESS) err = leaders_step(d, tmp, count, type, op);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatter(tmp, count, type, rbuf, count, type, 0, d->nodecomm);
    lc_free(mem);
    return err;
}
