/* Hierarchical reduce_scatter_block (paper, section 3.4, listing 10).
 *
 * Every node reduces all p blocks to node rank 0 (temporary of p blocks), the node
 * leaders reduce_scatter (groups may differ in size) from that temporary into a second
 * one of n blocks, their node's group, and every node scatters its group.
 *
 * The leaders' reduce_scatter is deliberately NOT in place: MPICH 4.0.2 aborts in its
 * in-place MPI_Reduce_scatter with unequal counts once the message reaches 512 KiB
 * ("memcpy argument memory ranges overlap" in typerep_yaksa_pack.c; counts {c, 2c} on
 * 2 processes for c >= 43,691), which irregular layouts with a later node larger than
 * all earlier ones together hit (node sizes 1,2 / 1,3 / 2,3). The separate receive
 * buffer costs n blocks of memory at each leader and nothing in communication.
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds; pc reduced on every node; the
 *   leaders' reduce_scatter moves about pc per leader over one lane. Memory at a node
 *   leader: p + n blocks.
 * Restrictions: consecutive ranks (then operands are combined in rank order, so
 * non-commutative operators are fine). Unequal node sizes are fine. */
#include <stdlib.h>

#include "../internal.h"

static int leaders_step(const lc_decomp *d, const void *tmp, void *group, int count,
                        MPI_Datatype type, MPI_Op op)
{
    int N = d->nnodes;
    int *counts = malloc(sizeof(int) * (size_t)N);
    if (!counts) return MPI_ERR_NO_MEM;
    for (int i = 0; i < N; i++) counts[i] = d->node_sizes[i] * count;
    int err = PMPI_Reduce_scatter(tmp, group, counts, type, op, d->leadcomm);
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
    void *mem, *gmem = NULL, *group = NULL;
    void *tmp = lc_tmp_alloc((MPI_Aint)d->size * count, type, &mem);
    if (tmp) group = lc_tmp_alloc((MPI_Aint)d->node_size * count, type, &gmem);
    if (!group) {
        lc_free(mem);
        lc_free(gmem);
        return MPI_ERR_NO_MEM;
    }
    err = PMPI_Reduce(input, tmp, d->size * count, type, op, 0, d->nodecomm);
    if (err == MPI_SUCCESS) err = leaders_step(d, tmp, group, count, type, op);
    if (err == MPI_SUCCESS)
        err = PMPI_Scatter(group, count, type, rbuf, count, type, 0, d->nodecomm);
    lc_free(gmem);
    lc_free(mem);
    return err;
}
