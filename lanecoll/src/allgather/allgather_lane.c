/* Full-lane allgather (paper, section 3.3, listing 5).
 *
 * Every lane allgathers its N blocks directly into the receive buffer (blocks spaced n
 * apart, starting at the process's node rank), then every node allgathers in place
 * with strided column types (N blocks, stride n, extent one block) so that the n
 * columns tile the buffer. Completely zero-copy, no temporary buffer.
 *
 * Cost: ceil(log N) + ceil(log n) rounds; (p-1)c sent and received per process
 *   (optimal); (p-n)c into each node over n lanes; the node allgather ((p-N)c per
 *   process) limits the n-fold speed-up.
 * Restrictions: regular.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at every
 * process. */
#include "../internal.h"

static int allgather_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, const lc_decomp *d)
{
    if (lc_empty(rcount, rtype)) return MPI_SUCCESS;
    int n = d->node_size, N = d->nnodes, err;
    MPI_Aint blk = rcount * lc_extent(rtype);
    MPI_Datatype spaced, column;

    LC_TRY(lc_type_spaced_block(rcount, rtype, n, &spaced));
    err = PMPI_Allgather(sbuf, scount, stype, LC_CHAR(rbuf) + d->node_rank * blk, 1, spaced,
                         d->lanecomm);
    PMPI_Type_free(&spaced);
    if (err != MPI_SUCCESS) return err;
    LC_TRY(lc_type_strided_column(N, n, rcount, rtype, &column));
    err = PMPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 1, column, d->nodecomm);
    PMPI_Type_free(&column);
    return err;
}

int lc_allgather_lane(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_allgather_reindexed(allgather_lane, sbuf, scount, stype, rbuf, rcount,
                                      rtype, d);
    return allgather_lane(sbuf, scount, stype, rbuf, rcount, rtype, d);
}
