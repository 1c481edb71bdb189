/* Buffer and datatype helpers shared by the algorithms: block splits, typed temporary
 * buffers (allocated with the true extent so any derived datatype fits), local typed
 * copies, and the strided datatypes that make allgather/gather/scatter/alltoall
 * zero-copy (paper, section 3.3). */
#include <stdlib.h>

#include "internal.h"

void lc_split_counts(int count, int parts, int *counts, int *displs)
{
    int base = count / parts, extra = count % parts, at = 0;
    for (int i = 0; i < parts; i++) {
        counts[i] = base + (i < extra);
        displs[i] = at;
        at += counts[i];
    }
}

int *lc_node_blocks(const lc_decomp *d, int per_rank)
{
    int N = d->nnodes;
    int *counts = malloc(2 * sizeof(int) * (size_t)N);
    if (!counts) return NULL;
    for (int i = 0; i < N; i++) {
        counts[i] = d->node_sizes[i] * per_rank;
        counts[N + i] = d->node_first[i] * per_rank;
    }
    return counts;
}

void *lc_tmp_alloc(MPI_Aint count, MPI_Datatype type, void **mem)
{
    MPI_Aint lb, extent, true_lb, true_extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    MPI_Aint bytes = count > 0 ? true_extent + (count - 1) * extent : 0;
    *mem = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!*mem) return NULL;
    return LC_CHAR(*mem) - true_lb;
}

void lc_free(void *mem) { free(mem); }

int lc_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                  MPI_Datatype rtype)
{
    int bytes, pos = 0;
    LC_TRY(PMPI_Pack_size(scount, stype, MPI_COMM_SELF, &bytes));
    void *packed = malloc(bytes > 0 ? (size_t)bytes : 1);
    if (!packed) return MPI_ERR_NO_MEM;
    int err = PMPI_Pack(src, scount, stype, packed, bytes, &pos, MPI_COMM_SELF);
    if (err == MPI_SUCCESS) {
        int upos = 0;
        err = PMPI_Unpack(packed, pos, &upos, dst, rcount, rtype, MPI_COMM_SELF);
    }
    free(packed);
    return err;
}

int lc_empty(int count, MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    return count == 0 || size == 0;
}

MPI_Aint lc_extent(MPI_Datatype type)
{
    MPI_Aint lb, extent;
    PMPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

int lc_type_spaced_block(int count, MPI_Datatype type, int extent_blocks, MPI_Datatype *out)
{
    MPI_Datatype block;
    MPI_Aint lb, extent;
    LC_TRY(PMPI_Type_contiguous(count, type, &block));
    LC_TRY(PMPI_Type_get_extent(block, &lb, &extent));
    int err = PMPI_Type_create_resized(block, lb, extent * extent_blocks, out);
    PMPI_Type_free(&block);
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(out);
    return err;
}

int lc_type_strided_column(int nblocks, int stride, int count, MPI_Datatype type,
                           MPI_Datatype *out)
{
    MPI_Datatype block, column;
    MPI_Aint lb, extent;
    LC_TRY(PMPI_Type_contiguous(count, type, &block));
    LC_TRY(PMPI_Type_get_extent(block, &lb, &extent));
    int err = PMPI_Type_vector(nblocks, 1, stride, block, &column);
    PMPI_Type_free(&block);
    if (err != MPI_SUCCESS) return err;
    err = PMPI_Type_create_resized(column, lb, extent, out);
    PMPI_Type_free(&column);
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(out);
    return err;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
int lc_waitall(int n, MPI_Request *reqs)
{
    return PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
}
#pragma GCC diagnostic pop
