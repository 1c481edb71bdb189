/* Cost of the interposition layer when it chooses the native collective: MPI_Allreduce
 * (intercepted by liblanecoll_pmpi.so, preloaded) against PMPI_Allreduce (the MPI
 * library directly) in ONE launch, so both see the same machine state.
 *
 *   mpirun -np 2 --bind-to core -x LD_PRELOAD=.../liblanecoll_pmpi.so overhead [blocks] [calls]
 *
 * For each count (1 int, 1000 ints) runs `blocks` rounds; each round times one block of
 * `calls` MPI_Allreduce and one block of `calls` PMPI_Allreduce, in alternating order
 * (ABBA) so a position effect hits both alike. Every block starts after a PMPI_Barrier
 * and its per-call time is the largest over the ranks (the collective finishes when the
 * slowest rank does). Prints, per count, the median per-call time of each variant, the
 * difference of the medians and the median of the paired per-round differences (less
 * sensitive to drift), in ns and %. Bookkeeping uses PMPI_ only, so nothing but the
 * measured MPI_Allreduce goes through lanecoll.
 * Cost: 2 x 2 x blocks x calls allreduce calls; defaults 2000 x 100 take ~1 s. */
#define _GNU_SOURCE /* dlsym(RTLD_DEFAULT) */
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Per-call seconds of one block, max over ranks. */
static double block(int interposed, int calls, int count, const int *s, int *r)
{
    PMPI_Barrier(MPI_COMM_WORLD);
    double t0 = PMPI_Wtime();
    if (interposed)
        for (int i = 0; i < calls; i++)
            MPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else
        for (int i = 0; i < calls; i++)
            PMPI_Allreduce(s, r, count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    double t = (PMPI_Wtime() - t0) / calls, tmax;
    PMPI_Allreduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return tmax;
}

int main(int argc, char **argv)
{
    int rank, size;
    MPI_Init(&argc, &argv);
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    int blocks = argc > 1 ? atoi(argv[1]) : 2000;
    int calls = argc > 2 ? atoi(argv[2]) : 100;
    if (blocks < 2 || calls < 1) {
        if (rank == 0) fprintf(stderr, "usage: overhead [blocks>=2] [calls>=1]\n");
        PMPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* Without the interposition library both variants are the same call: say so. */
    int lanecoll = dlsym(RTLD_DEFAULT, "LC_Allreduce_lane") != NULL;
    if (rank == 0)
        printf("overhead: ranks=%d blocks=%d calls=%d lanecoll=%s\n", size, blocks, calls,
               lanecoll ? "loaded" : "NOT LOADED (MPI_Allreduce is not intercepted)");

    const int counts[] = { 1, 1000 };
    int *s = calloc(1000, sizeof(int)), *r = calloc(1000, sizeof(int));
    double *tm = malloc(sizeof(double) * (size_t)blocks);
    double *tp = malloc(sizeof(double) * (size_t)blocks);
    double *dd = malloc(sizeof(double) * (size_t)blocks);
    for (int k = 0; k < 2; k++) {
        int count = counts[k];
        for (int w = 0; w < blocks / 10 + 1; w++) { /* warm-up, both paths */
            block(1, calls, count, s, r);
            block(0, calls, count, s, r);
        }
        for (int b = 0; b < blocks; b++) {
            if (b % 2 == 0) {
                tm[b] = block(1, calls, count, s, r);
                tp[b] = block(0, calls, count, s, r);
            } else {
                tp[b] = block(0, calls, count, s, r);
                tm[b] = block(1, calls, count, s, r);
            }
            dd[b] = tm[b] - tp[b];
        }
        double mm = median(tm, blocks) * 1e9, mp = median(tp, blocks) * 1e9;
        double md = median(dd, blocks) * 1e9;
        if (rank == 0)
            printf(
                "overhead: count=%d ints MPI_Allreduce(lanecoll) %.1f ns  PMPI_Allreduce "
                "%.1f ns  diff %+.1f ns (%+.1f %%)  paired diff %+.1f ns (%+.1f %%)\n",
                count, mm, mp, mm - mp, 100.0 * (mm - mp) / mp, md, 100.0 * md / mp);
    }
    free(s);
    free(r);
    free(tm);
    free(tp);
    free(dd);
    MPI_Finalize();
    return 0;
}
