/* Hierarchical allgather (paper, section 3.3, listing 6).
 *
 * Every node gathers its blocks to node rank 0, directly at their final place in that
 * process's receive buffer; the node leaders allgatherv the node groups (groups may
 * differ in size) as bytes; every node broadcasts the full p blocks.
 *
 * The leaders' allgatherv exchanges bytes, never the caller's receive type
 * (lc_allgatherv_in_place: processes may pass different receive datatypes with one
 * type signature, which MPICH 4.0.2's ring MPI_Allgatherv mishandles). A gap-free
 * predefined receive type is exchanged in place; any other goes through a contiguous
 * temporary of p blocks (pack nc, unpack (p-n)c bytes locally).
 *
 * Cost: ceil(log n) + ceil(log N) + ceil(log n) rounds; pc broadcast on every node;
 *   (p - n)c into each node over one lane; zero-copy for gap-free predefined receive
 *   types, one local pack/unpack of pc at the leaders otherwise.
 * Restrictions: none. Unequal node sizes are fine.
 * Other rank orders (ranks not consecutive over the nodes) run the same on a renumbered
 * view through reindex.c: a temporary of pc and one local permutation of pc at every
 * process. */
#include <stdlib.h>

#include "../internal.h"

/* The node groups' blocks among the node leaders, in place (allgatherv_bytes.c). */
static int allgather_leaders(const lc_decomp *d, void *rbuf, int rcount, MPI_Datatype rtype)
{
    int *blocks = lc_node_blocks(d, rcount);
    if (!blocks) return MPI_ERR_NO_MEM;
    int err = lc_allgatherv_in_place(rbuf, blocks, blocks + d->nnodes, rtype, d->leadcomm);
    free(blocks);
    return err;
}

static int allgather_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
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

int lc_allgather_hier(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_allgather_reindexed(allgather_hier, sbuf, scount, stype, rbuf, rcount,
                                      rtype, d);
    return allgather_hier(sbuf, scount, stype, rbuf, rcount, rtype, d);
}
