/* Full-lane allreduce (paper, section 3.4, listing 7).
 *
 * Every node reduce-scatters the c elements over its n processes, each receiving its
 * block of about c/n directly at its place in the receive buffer (reduce_scatter_block
 * when n divides c, reduce_scatter otherwise or always with `vector`: lane_v); every lane allreduces its block in
 * place; every node allgathers the blocks in place. No temporary buffer, except one of
 * c/n with MPI_IN_PLACE (the node reduce-scatter would otherwise overwrite its input).
 *
 * Cost: 2 ceil(log n) + ceil(log N) rounds; about 2c + 2c/n per process (as the best
 *   known allreduce algorithms); 2c/n per lane crosses the network, all lanes at once.
 * Restrictions: regular; commutative operator; every process passes the same count and
 * datatype. Any rank placement. */
#include <stdlib.h>

#include "../internal.h"

int lc_allreduce_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                           MPI_Op op, const lc_decomp *d, int vector)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int n = d->node_size, nr = d->node_rank, err;
    int *counts = malloc(2 * sizeof(int) * (size_t)n);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + n, even = !vector && count % n == 0;
    lc_split_counts(count, n, counts, displs);
    /* An empty block points at rbuf: MPICH rejects recvbuf == sendbuf even when empty,
     * and one past the end of rbuf may be the caller's sendbuf. */
    char *mine = counts[nr] ? LC_CHAR(rbuf) + displs[nr] * lc_extent(type) : LC_CHAR(rbuf);

    void *mem = NULL, *tmp = NULL;
    const void *input = sbuf, *lane_in = MPI_IN_PLACE;
    void *rs_out = mine;
    if (sbuf == MPI_IN_PLACE) {
        tmp = lc_tmp_alloc(counts[nr], type, &mem);
        if (!tmp) {
            free(counts);
            return MPI_ERR_NO_MEM;
        }
        input = rbuf;
        rs_out = tmp;
        lane_in = tmp;
    }
    err = even ? PMPI_Reduce_scatter_block(input, rs_out, counts[0], type, op, d->nodecomm)
               : PMPI_Reduce_scatter(input, rs_out, counts, type, op, d->nodecomm);
    if (err == MPI_SUCCESS && counts[nr] > 0) /* empty: see lc_split_counts */
        err = PMPI_Allreduce(lane_in, mine, counts[nr], type, op, d->lanecomm);
    if (err == MPI_SUCCESS)
        err = even ? PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts[0],
                                    type, d->nodecomm)
                   : PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts,
                                     displs, type, d->nodecomm);
    lc_free(mem);
    free(counts);
    return err;
}

int lc_allreduce_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      const lc_decomp *d)
{
    return lc_allreduce_full_lane(sbuf, rbuf, count, type, op, d, 0);
}
