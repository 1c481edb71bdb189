/* Does the interposition library broadcast the root's byte count before MPI_Gatherv and
 * MPI_Scatterv? (tests/run-matrix, with liblanecoll_pmpi.so preloaded and a tuning
 * file.) This program defines PMPI_Bcast itself: the executable comes first in symbol
 * lookup, so lanecoll's PMPI_Bcast calls land here, are counted, and go on to the MPI
 * library's (dlsym RTLD_NEXT). The program itself calls no broadcast.
 *
 * After one warm-up call of each (which builds the decomposition, whose node step
 * broadcasts), it makes CALLS calls of each collective with root CALLS % p and mean
 * blocks from 0 to thousands of bytes, so a size-dependent table picks different
 * algorithms from call to call, and checks every received element. Prints from rank 0
 *   bcast_count: gatherv=G scatterv=S calls=CALLS ok
 * with the broadcasts counted on rank 0 during the measured calls; exits 1 on a wrong
 * element. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

enum { CALLS = 12 };

static long bcasts;

typedef int (*bcast_fn)(void *, int, MPI_Datatype, int, MPI_Comm);

int PMPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    static bcast_fn next;
    if (!next) next = (bcast_fn)dlsym(RTLD_NEXT, "PMPI_Bcast");
    bcasts++;
    return next(buffer, count, datatype, root, comm);
}

/* Rank q's count in call k: 0 in every fourth call, else up to 4 x 1000 ints. */
static int count_of(int q, int k)
{
    return k % 4 == 0 ? 0 : ((q + k) % 5) * (k % 2 ? 1 : 1000);
}

static int wrong;

static void expect(const char *what, int k, int got, int want)
{
    if (got != want && wrong++ < 5)
        fprintf(stderr, "bcast_count: %s call %d: got %d, expected %d\n", what, k, got,
                want);
}

/* One call of each collective with the counts of call k, their results checked; adds
 * the broadcasts made during each call to *g and *s. */
static void one_round(int k, int rank, int p, int *counts, int *displs, int *big, int *mine,
                      long *g, long *s)
{
    int root = k % p, total = 0;
    for (int q = 0; q < p; q++) {
        counts[q] = count_of(q, k);
        displs[q] = total;
        total += counts[q];
    }
    int n = counts[rank];
    for (int i = 0; i < n; i++) mine[i] = rank * 100000 + k * 1000 + i;
    long before = bcasts;
    MPI_Gatherv(mine, n, MPI_INT, big, counts, displs, MPI_INT, root, MPI_COMM_WORLD);
    *g += bcasts - before;
    for (int q = 0; q < p && rank == root; q++)
        for (int i = 0; i < counts[q]; i++) {
            expect("gatherv", k, big[displs[q] + i], q * 100000 + k * 1000 + i);
            big[displs[q] + i] = -(q * 100000 + k * 1000 + i);
        }
    before = bcasts;
    MPI_Scatterv(big, counts, displs, MPI_INT, mine, n, MPI_INT, root, MPI_COMM_WORLD);
    *s += bcasts - before;
    for (int i = 0; i < n; i++)
        expect("scatterv", k, mine[i], -(rank * 100000 + k * 1000 + i));
}

int main(int argc, char **argv)
{
    int rank, p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    int *counts = malloc(sizeof(int) * (size_t)p),
        *displs = malloc(sizeof(int) * (size_t)p);
    int *big = malloc(sizeof(int) * 4000 * (size_t)p), *mine = malloc(sizeof(int) * 4000);
    if (!counts || !displs || !big || !mine) MPI_Abort(MPI_COMM_WORLD, 2);
    long gatherv = 0, scatterv = 0;
    one_round(1, rank, p, counts, displs, big, mine, &gatherv, &scatterv); /* warm-up */
    gatherv = scatterv = 0;
    for (int k = 0; k < CALLS; k++)
        one_round(k, rank, p, counts, displs, big, mine, &gatherv, &scatterv);
    int bad = 0;
    MPI_Allreduce(&wrong, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bcast_count: gatherv=%ld scatterv=%ld calls=%d %s\n", gatherv, scatterv,
               (int)CALLS, bad ? "WRONG" : "ok");
    free(counts);
    free(displs);
    free(big);
    free(mine);
    MPI_Finalize();
    return bad ? 1 : 0;
}
