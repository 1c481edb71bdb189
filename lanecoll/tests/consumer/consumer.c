/* Uses the installed lanecoll: an allreduce through LC_Allreduce_lane and the catalogue. */
#include <lanecoll.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size, x, sum = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    x = rank + 1;
    LC_Allreduce_lane(&x, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    int ok = sum == size * (size + 1) / 2 && LC_Catalogue_size() > 0;
    if (rank == 0)
        printf("consumer: %s (sum %d, %d algorithms)\n", ok ? "ok" : "WRONG", sum,
               LC_Catalogue_size());
    MPI_Finalize();
    return ok ? 0 : 1;
}
