/* Full-lane scan (paper, section 3.5, listing 11).
 *
 * Every node reduce-scatters its inputs so that each process holds the node total of a
 * block of about c/n elements; every lane computes the exclusive scan of its block over
 * the nodes; the nodes allgather these blocks, giving each process E = the reduction of
 * all earlier nodes (c elements); a node-local scan then gives the result as E op
 * (node scan). Node 0 needs no E. One temporary of c per process. The node
 * reduce-scatter and allgather are the _block/regular ones when n divides c, the
 * vector ones otherwise or always with `vector` (lane_v).
 *
 * Cost: 3 ceil(log n) + ceil(log N) rounds plus one local reduction; about 3c per
 *   process on the node, c/n per lane over the network.
 * Restrictions: regular, consecutive ranks, commutative operator. */
#include <stdlib.h>

#include "../internal.h"

/* E = exclusive scan over the nodes of the node totals (undefined on node 0), computed
 * over all lanes at once. Shared with exscan_lane.c. */
int lc_lane_node_prefix(const void *input, void *E, int count, MPI_Datatype type, MPI_Op op,
                        const lc_decomp *d, int vector)
{
    int n = d->node_size, nr = d->node_rank, err;
    int *counts = malloc(2 * sizeof(int) * (size_t)n);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + n, even = !vector && count % n == 0;
    lc_split_counts(count, n, counts, displs);
    char *mine = counts[nr] ? LC_CHAR(E) + displs[nr] * lc_extent(type) : LC_CHAR(E);

    err = even ? PMPI_Reduce_scatter_block(input, mine, counts[0], type, op, d->nodecomm)
               : PMPI_Reduce_scatter(input, mine, counts, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && counts[nr] > 0) /* empty: see lc_split_counts */
        err = PMPI_Exscan(MPI_IN_PLACE, mine, counts[nr], type, op, d->lanecomm);
    if (err == MPI_SUCCESS && d->node_index > 0)
        err = even ? PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, E, counts[0], type,
                                    d->nodecomm)
                   : PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, E, counts, displs,
                                     type, d->nodecomm);
    free(counts);
    return err;
}

int lc_scan_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      const lc_decomp *d, int vector)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    const void *input = sbuf == MPI_IN_PLACE ? rbuf : sbuf;
    void *mem, *E = lc_tmp_alloc(count, type, &mem);
    if (!E) return MPI_ERR_NO_MEM;
    int err = lc_lane_node_prefix(input, E, count, type, op, d, vector);
    if (err == MPI_SUCCESS) err = PMPI_Scan(sbuf, rbuf, count, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && d->node_index > 0)
        err = PMPI_Reduce_local(E, rbuf, count, type, op);
    lc_free(mem);
    return err;
}

int lc_scan_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                 const lc_decomp *d)
{
    return lc_scan_full_lane(sbuf, rbuf, count, type, op, d, 0);
}
