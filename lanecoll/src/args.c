/* Checks for arguments that MPI itself would reject. Such calls go to the native
 * collective unchanged, so the user sees MPI's own error (and error handler) rather
 * than a failure deep inside a decomposition. Local checks only. */
#include "internal.h"

int lc_args_ok_rooted(MPI_Comm comm, int root)
{
    int size;
    if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS) return 0;
    return root >= 0 && root < size;
}

int lc_args_ok_count(MPI_Comm comm, int count, MPI_Datatype type)
{
    int inter = 1;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0;
    return count >= 0 && type != MPI_DATATYPE_NULL;
}

int lc_args_ok_op(MPI_Op op) { return op != MPI_OP_NULL; }

int lc_args_ok_rooted_pair(MPI_Comm comm, int root, int count, MPI_Datatype type,
                           int root_count, MPI_Datatype root_type, int in_place_at_root)
{
    int rank;
    if (!lc_args_ok_rooted(comm, root) || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 0;
    if (rank != root) return lc_args_ok_count(comm, count, type);
    return lc_args_ok_count(comm, root_count, root_type) &&
           (in_place_at_root || lc_args_ok_count(comm, count, type));
}

int lc_args_ok_counts(MPI_Comm comm, const int *counts, const int *displs,
                      MPI_Datatype type)
{
    int size;
    if (!lc_args_ok_count(comm, 0, type) || !counts || !displs ||
        PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return 0;
    for (int r = 0; r < size; r++)
        if (counts[r] < 0) return 0;
    return 1;
}

int lc_args_ok_rooted_v(MPI_Comm comm, int root, int count, MPI_Datatype type,
                        const int *root_counts, const int *root_displs,
                        MPI_Datatype root_type, int in_place_at_root)
{
    int rank;
    if (!lc_args_ok_rooted(comm, root) || PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
        return 0;
    if (rank != root) return lc_args_ok_count(comm, count, type);
    return lc_args_ok_counts(comm, root_counts, root_displs, root_type) &&
           (in_place_at_root || lc_args_ok_count(comm, count, type));
}
