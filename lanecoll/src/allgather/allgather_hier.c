/* Hierarchical allgather (paper, section 3.3, listing 6).
 *
 * Every node gathers its blocks to node rank 0, directly at their final place in that
 * process's receive buffer; the node leaders allgatherv the node groups (groups may
 * differ in size) as bytes; every node broadcasts the full p blocks.
 *
 * The leaders' allgatherv always uses MPI_BYTE with byte counts, the same type and
 * counts on every leader, never the caller's receive type: processes may pass
 * different receive datatypes with the same type signature (legal MPI), and MPICH
 * 4.0.2's ring MPI_Allgatherv cuts messages into chunks by each process's own receive
 * type extent, so such calls truncate ("Message truncated", 2 processes from 106,245
 * ints per block) or hang (node sizes 3,1 at 39,024 ints). A leader whose receive type
 * is a predefined type (or a contiguous run of one) without gaps uses its receive
 * buffer directly; any other type goes through a contiguous temporary of p blocks
 * (MPI_Pack of its node group, MPI_Unpack of the other groups: (p-n)c + nc bytes copied
 * locally). Packed data are exchanged as bytes: this assumes a homogeneous system, as
 * the rest of lanecoll does.
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

/* 1 when `type` is a predefined type or a contiguous run of one, without gaps: its data
 * are its bytes in order, so they can be exchanged as MPI_BYTE in place. */
static int plain_bytes(MPI_Datatype type)
{
    int ni, na, nd, comb, size;
    MPI_Aint lb, extent, tlb, textent;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &comb);
    if (comb == MPI_COMBINER_CONTIGUOUS) {
        int cnt;
        MPI_Aint a;
        MPI_Datatype base;
        PMPI_Type_get_contents(type, 1, 0, 1, &cnt, &a, &base);
        PMPI_Type_get_envelope(base, &ni, &na, &nd, &comb);
        if (comb != MPI_COMBINER_NAMED) PMPI_Type_free(&base);
    }
    if (comb != MPI_COMBINER_NAMED) return 0;
    PMPI_Type_size(type, &size);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &tlb, &textent);
    return lb == 0 && tlb == 0 && extent == size && textent == size;
}

static int allgather_leaders(const lc_decomp *d, void *rbuf, int rcount, MPI_Datatype rtype)
{
    int N = d->nnodes, me = d->node_index, err, bsize;
    MPI_Aint blk = rcount * lc_extent(rtype);
    LC_TRY(PMPI_Pack_size(rcount, rtype, d->leadcomm, &bsize)); /* bytes of one block */
    int *counts = malloc(2 * sizeof(int) * (size_t)N);
    if (!counts) return MPI_ERR_NO_MEM;
    int *displs = counts + N;
    for (int i = 0; i < N; i++) {
        counts[i] = d->node_sizes[i] * bsize;
        displs[i] = d->node_first[i] * bsize;
    }
    if (plain_bytes(rtype)) {
        err = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, counts, displs,
                              MPI_BYTE, d->leadcomm);
        free(counts);
        return err;
    }
    char *packed = malloc((size_t)d->size * (size_t)bsize + 1);
    if (!packed) {
        free(counts);
        return MPI_ERR_NO_MEM;
    }
    int pos = displs[me];
    err = PMPI_Pack(LC_CHAR(rbuf) + d->node_first[me] * blk, d->node_size * rcount, rtype,
                    packed, counts[me] + displs[me], &pos, d->leadcomm);
    if (err == MPI_SUCCESS)
        err = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packed, counts, displs,
                              MPI_BYTE, d->leadcomm);
    for (int i = 0; i < N && err == MPI_SUCCESS; i++) {
        if (i == me) continue;
        pos = displs[i];
        err = PMPI_Unpack(packed, counts[i] + displs[i], &pos,
                          LC_CHAR(rbuf) + d->node_first[i] * blk, d->node_sizes[i] * rcount,
                          rtype, d->leadcomm);
    }
    free(packed);
    free(counts);
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
