/* Gather, scatter and allgather on communicators whose ranks are not consecutive over
 * the nodes (MPI_Comm_split with arbitrary keys, reordered or interleaved ranks).
 *
 * The lane, hier and kported bodies place blocks by rank, assuming the processes of a
 * node have consecutive ranks. Here they run on d->ordered, the same decomposition with
 * every rank renumbered to its position in node order (decompose.c), on a temporary of
 * p blocks in that order; one local permutation (an hindexed type, one MPI_Pack and
 * MPI_Unpack) moves the blocks between the temporary and the caller's buffer:
 *   gather     the root receives into the temporary, then permutes into rbuf
 *   scatter    the root permutes sbuf into the temporary, then scatters from it
 *   allgather  every process receives into the temporary, then permutes into rbuf
 * Cost over the consecutive case: a temporary of pc and a local copy of pc (packed and
 * unpacked) at the root, at every process for allgather; no extra communication. */
#include <stdlib.h>

#include "internal.h"

/* The type that places block j of a node-ordered buffer at block (rank r with
 * rank_pos[r] = j) of a rank-ordered buffer: p blocks of count x type. */
static int rank_order_type(const lc_decomp *d, int count, MPI_Datatype type,
                           MPI_Datatype *out)
{
    int p = d->size;
    MPI_Aint blk = count * lc_extent(type);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)p);
    if (!displs) return MPI_ERR_NO_MEM;
    for (int r = 0; r < p; r++) displs[d->rank_pos[r]] = r * blk;
    int err = PMPI_Type_create_hindexed_block(p, count, displs, type, out);
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(out);
    free(displs);
    return err;
}

/* tmp (node order, p x count x type) -> buf (rank order) or back (to_nodes). */
static int permute(const lc_decomp *d, void *tmp, void *buf, int count, MPI_Datatype type,
                   int to_nodes)
{
    MPI_Datatype ranked;
    LC_TRY(rank_order_type(d, count, type, &ranked));
    int err = to_nodes ? lc_local_copy(buf, 1, ranked, tmp, d->size * count, type)
                       : lc_local_copy(tmp, d->size * count, type, buf, 1, ranked);
    PMPI_Type_free(&ranked);
    return err;
}

int lc_gather_reindexed(lc_gather_body f, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        const lc_decomp *d)
{
    int root2 = d->rank_pos[root];
    if (d->rank != root)
        return f(sbuf, scount, stype, rbuf, rcount, rtype, root2, d->ordered);
    if (lc_empty(rcount, rtype)) return MPI_SUCCESS;
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * rcount, rtype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    if (sbuf == MPI_IN_PLACE) { /* the root's block, passed explicitly */
        sbuf = LC_CHAR(rbuf) + root * rcount * lc_extent(rtype);
        scount = rcount, stype = rtype;
    }
    int err = f(sbuf, scount, stype, tmp, rcount, rtype, root2, d->ordered);
    if (err == MPI_SUCCESS) err = permute(d, tmp, rbuf, rcount, rtype, 0);
    lc_free(mem);
    return err;
}

int lc_scatter_reindexed(lc_gather_body f, const void *sbuf, int scount, MPI_Datatype stype,
                         void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         const lc_decomp *d)
{
    int root2 = d->rank_pos[root];
    if (d->rank != root)
        return f(sbuf, scount, stype, rbuf, rcount, rtype, root2, d->ordered);
    if (lc_empty(scount, stype)) return MPI_SUCCESS;
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * scount, stype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    int err = permute(d, tmp, (void *)sbuf, scount, stype, 1);
    if (err == MPI_SUCCESS)
        err = f(tmp, scount, stype, rbuf, rcount, rtype, root2, d->ordered);
    lc_free(mem);
    return err;
}

int lc_allgather_reindexed(lc_allgather_body f, const void *sbuf, int scount,
                           MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                           const lc_decomp *d)
{
    if (lc_empty(rcount, rtype)) return MPI_SUCCESS;
    void *mem, *tmp = lc_tmp_alloc((MPI_Aint)d->size * rcount, rtype, &mem);
    if (!tmp) return MPI_ERR_NO_MEM;
    if (sbuf == MPI_IN_PLACE) {
        sbuf = LC_CHAR(rbuf) + d->rank * rcount * lc_extent(rtype);
        scount = rcount, stype = rtype;
    }
    int err = f(sbuf, scount, stype, tmp, rcount, rtype, d->ordered);
    if (err == MPI_SUCCESS) err = permute(d, tmp, rbuf, rcount, rtype, 0);
    lc_free(mem);
    return err;
}
