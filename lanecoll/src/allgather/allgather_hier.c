/* Hierarchical allgather (paper, section 3.3, listing 6).
 *
 * Every node gathers its blocks to node rank 0, directly at their final place in that
 * process's receive buffer; the node leaders allgatherv the node groups in place
 * (groups may differ in size); every node broadcasts the full p blocks. Zero-copy
 * without derived datatypes.
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds; pc broadcast on every node;
 *   (p - n)c into each node over one lane.
 * Restrictions: consecutive ranks. Unequal node sizes are fine. */
#include <stdlib.h>

#include "../internal.h"

static int allgather_leaders(const lc_decomp *d, void *rbuf, int rcount, MPI_Datatype rtype)
{
    int *counts = lc_node_blocks(d, rcount);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + d->nnodes;
    int err = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs,
                              rtype, d->leadcomm);
    free(counts);
    return err;
}

int lc_allgather_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, const lc_decomp *d)
{
    if (lc_empty(rcount, rtype)) return MPI_SUCCESS;
    MPI_Aint blk = rcount * lc_extent(rtype);
    if (d->node_rank == 0) {
        LC_TRY(PMPI_Gather(sbuf, scount, stype, LC_CHAR(rbuf) + d->rank * blk, rcount,
                           rtype, 0, d->nodecomm));
        LC_TRY(allgather_leaders(d, rbuf, rcount, rtype));
    } else if (sbuf == MPI_IN_PLACE) {
        LC_TRY(PMPI_Gather(LC_CHAR(rbuf) + d->rank * blk, rcount, rtype, NULL, 0, rtype, 0,
                           d->nodecomm));
    } else {
        LC_TRY(PMPI_Gather(sbuf, scount, stype, NULL, 0, stype, 0, d->nodecomm));
    }
    return PMPI_Bcast(rbuf, d->size * rcount, rtype, 0, d->nodecomm);
}
