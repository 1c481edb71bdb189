/* Full-lane reduce (paper, section 3.4).
 *
 * Every node reduce-scatters the c elements over its n processes (reduce_scatter_block
 * when n divides c, reduce_scatter otherwise or always with `vector`: lane_v); every lane reduces its block of about
 * c/n to the root's node (at the root directly into its place in the receive buffer);
 * the root's node gathers the n reduced blocks to the root, the root's own in place.
 * One temporary of c/n per process, two on the root node's other processes (the lane
 * reduce is not in place: MPICH 4.0.2 crashes on in-place MPI_Reduce to a root != 0).
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds; about 2c + c/n per process;
 *   c/n per lane into the root node, over all n lanes at once.
 * Restrictions: regular; commutative operator (operands are combined node by node, not
 * in rank order); every process passes the same count and datatype. Any root, any rank
 * placement. */
#include <stdlib.h>

#include "../internal.h"

int lc_reduce_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                        MPI_Op op, int root, const lc_decomp *d, int vector)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int n = d->node_size, nr = d->node_rank, err;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    int at_root = d->rank == root, on_root_node = d->node_index == root_node;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    int *counts = malloc(2 * sizeof(int) * (size_t)n);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + n, even = !vector && count % n == 0;
    lc_split_counts(count, n, counts, displs);
    /* tmp: this process's block of the node reduction; out: its lane reduction (the
     * root's goes straight into rbuf; lanes not on the root node produce none). */
    void *mem, *tmp = lc_tmp_alloc(counts[nr], type, &mem);
    void *omem = NULL, *out = at_root ? LC_CHAR(rbuf) + displs[nr] * lc_extent(type) : NULL;
    if (tmp && on_root_node && !at_root) out = lc_tmp_alloc(counts[nr], type, &omem);
    if (!tmp || (on_root_node && !out)) {
        lc_free(mem);
        free(counts);
        return MPI_ERR_NO_MEM;
    }

    err = even ? PMPI_Reduce_scatter_block(input, tmp, counts[0], type, op, d->nodecomm)
               : PMPI_Reduce_scatter(input, tmp, counts, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && counts[nr] > 0) /* empty: see lc_split_counts */
        err = PMPI_Reduce(tmp, out, counts[nr], type, op, root_node, d->lanecomm);
    if (err == MPI_SUCCESS && on_root_node) {
        const void *sb = at_root ? MPI_IN_PLACE : out;
        err = even ? PMPI_Gather(sb, counts[0], type, rbuf, counts[0], type, root_nr,
                                 d->nodecomm)
                   : PMPI_Gatherv(sb, counts[nr], type, rbuf, counts, displs, type, root_nr,
                                  d->nodecomm);
    }
    lc_free(omem);
    lc_free(mem);
    free(counts);
    return err;
}

int lc_reduce_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   int root, const lc_decomp *d)
{
    return lc_reduce_full_lane(sbuf, rbuf, count, type, op, root, d, 0);
}
