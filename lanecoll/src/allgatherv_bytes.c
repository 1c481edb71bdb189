/* In-place allgatherv of typed blocks, exchanged as bytes.
 *
 * Processes may pass different datatypes with one type signature (legal MPI: 2
 * contiguous ints on one process, a gapped vector of 2 ints on another). MPICH 4.0.2's
 * ring MPI_Allgatherv (picked for non-power-of-two communicators and large messages)
 * cuts every block into chunks of MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE / extent
 * elements of each process's own type, so such calls truncate ("Message truncated", 2
 * processes from 106,245 ints per block), hang (node sizes 3,1 at 39,024 ints) or
 * abort ("Failure during collective", nodes of 3 at 60,000 pairs of ints). Exchanged as
 * MPI_BYTE with byte counts, every process passes the same type and counts.
 *
 * A type whose data are its bytes in order (a predefined type or a contiguous run of
 * one, without gaps) is exchanged in place: no copy. Any other type goes through a
 * contiguous temporary of all blocks: MPI_Pack of the own block, MPI_Unpack of the
 * others (sum of counts x type size copied locally, and that much memory). Packed data
 * are exchanged as bytes: this assumes a homogeneous system, as the rest of lanecoll
 * does. Blocks whose byte offsets do not fit in an int take the typed MPI_Allgatherv
 * instead (correct wherever the library handles per-process types). */
#include <limits.h>
#include <stdlib.h>

#include "internal.h"

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

/* Byte counts and displacements of the packed blocks, laid out in the order of displs
 * (displs[i] x size), so a plain type's blocks are where they already are. 0 when one
 * does not fit in an int. */
static int byte_blocks(int n, const int *counts, const int *displs, int size, int *bcounts,
                       int *bdispls)
{
    for (int i = 0; i < n; i++) {
        long long c = (long long)counts[i] * size, at = (long long)displs[i] * size;
        if (at < 0 || at + c > INT_MAX) return 0;
        bcounts[i] = (int)c;
        bdispls[i] = (int)at;
    }
    return 1;
}

int lc_allgatherv_in_place(void *buf, const int *counts, const int *displs,
                           MPI_Datatype type, MPI_Comm comm)
{
    int n, me, size, err;
    LC_TRY(PMPI_Comm_size(comm, &n));
    LC_TRY(PMPI_Comm_rank(comm, &me));
    LC_TRY(PMPI_Type_size(type, &size));
    int *bcounts = malloc(2 * sizeof(int) * (size_t)n);
    if (!bcounts) return MPI_ERR_NO_MEM;
    int *bdispls = bcounts + n;
    if (!byte_blocks(n, counts, displs, size, bcounts, bdispls)) {
        free(bcounts);
        return PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, counts, displs,
                               type, comm);
    }
    if (plain_bytes(type)) {
        err = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, bcounts, bdispls,
                              MPI_BYTE, comm);
        free(bcounts);
        return err;
    }
    int total = 0;
    for (int i = 0; i < n; i++)
        if (bdispls[i] + bcounts[i] > total) total = bdispls[i] + bcounts[i];
    char *packed = malloc((size_t)total + 1);
    if (!packed) {
        free(bcounts);
        return MPI_ERR_NO_MEM;
    }
    MPI_Aint extent = lc_extent(type);
    int pos = bdispls[me];
    err = PMPI_Pack(LC_CHAR(buf) + displs[me] * extent, counts[me], type, packed, total,
                    &pos, comm);
    if (err == MPI_SUCCESS)
        err = PMPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, packed, bcounts, bdispls,
                              MPI_BYTE, comm);
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        if (i == me) continue;
        pos = bdispls[i];
        err = PMPI_Unpack(packed, total, &pos, LC_CHAR(buf) + displs[i] * extent, counts[i],
                          type, comm);
    }
    free(packed);
    free(bcounts);
    return err;
}
