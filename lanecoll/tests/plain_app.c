/* An ordinary MPI program that knows nothing of lanecoll: calls the ten collectives and
 * Allgatherv, Gatherv, Scatterv (counts 1, 2, 3 repeating over the ranks) on
 * MPI_COMM_WORLD with MPI_INT data and checks the results against closed formulas (so
 * no collective is needed to compute the expectation). Run with liblanecoll_pmpi.so
 * preloaded or linked, it exercises the interposition layer.
 * Prints "plain_app: ok" on rank 0, or one line per wrong result; exit 1 on error. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static int errors, rank, size;

static void expect(const char *what, int got, int want, int i)
{
    if (got == want) return;
    if (++errors <= 5)
        fprintf(stderr, "plain_app: rank %d: %s[%d] = %d, expected %d\n", rank, what, i,
                got, want);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm w = MPI_COMM_WORLD;
    int n = 2 * size + 1, b = 3;
    int *s = malloc(sizeof(int) * (size_t)(size * n + 8));
    int *r = malloc(sizeof(int) * (size_t)(size * n + 8));

    int root = size - 1; /* Bcast */
    for (int i = 0; i < n; i++) r[i] = rank == root ? i * 3 + root : -1;
    MPI_Bcast(r, n, MPI_INT, root, w);
    for (int i = 0; i < n; i++) expect("bcast", r[i], i * 3 + root, i);

    root = 1 % size; /* Gather */
    for (int i = 0; i < b; i++) s[i] = rank * 100 + i;
    MPI_Gather(s, b, MPI_INT, r, b, MPI_INT, root, w);
    if (rank == root)
        for (int i = 0; i < size * b; i++) expect("gather", r[i], (i / b) * 100 + i % b, i);

    for (int i = 0; i < size * b; i++) s[i] = i * 7; /* Scatter */
    MPI_Scatter(s, b, MPI_INT, r, b, MPI_INT, 0, w);
    for (int i = 0; i < b; i++) expect("scatter", r[i], (rank * b + i) * 7, i);

    for (int i = 0; i < b; i++) s[i] = rank * 100 + i; /* Allgather */
    MPI_Allgather(s, b, MPI_INT, r, b, MPI_INT, w);
    for (int i = 0; i < size * b; i++) expect("allgather", r[i], (i / b) * 100 + i % b, i);

    for (int d = 0; d < size; d++) /* Alltoall */
        for (int i = 0; i < 2; i++) s[d * 2 + i] = rank * 1000 + d * 10 + i;
    MPI_Alltoall(s, 2, MPI_INT, r, 2, MPI_INT, w);
    for (int src = 0; src < size; src++)
        for (int i = 0; i < 2; i++)
            expect("alltoall", r[src * 2 + i], src * 1000 + rank * 10 + i, i);

    root = size / 2; /* Reduce, Allreduce */
    for (int i = 0; i < n; i++) s[i] = (rank + 1) * (i + 1);
    MPI_Reduce(s, r, n, MPI_INT, MPI_SUM, root, w);
    if (rank == root)
        for (int i = 0; i < n; i++)
            expect("reduce", r[i], (i + 1) * size * (size + 1) / 2, i);
    MPI_Allreduce(s, r, n, MPI_INT, MPI_SUM, w);
    for (int i = 0; i < n; i++)
        expect("allreduce", r[i], (i + 1) * size * (size + 1) / 2, i);

    MPI_Scan(s, r, n, MPI_INT, MPI_SUM, w); /* Scan, Exscan */
    for (int i = 0; i < n; i++)
        expect("scan", r[i], (i + 1) * (rank + 1) * (rank + 2) / 2, i);
    MPI_Exscan(s, r, n, MPI_INT, MPI_SUM, w);
    if (rank > 0)
        for (int i = 0; i < n; i++)
            expect("exscan", r[i], (i + 1) * rank * (rank + 1) / 2, i);

    for (int j = 0; j < size * 2; j++) s[j] = rank + j; /* Reduce_scatter_block */
    MPI_Reduce_scatter_block(s, r, 2, MPI_INT, MPI_SUM, w);
    for (int i = 0; i < 2; i++)
        expect("reduce_scatter_block", r[i], size * (size - 1) / 2 + size * (rank * 2 + i),
               i);

    /* Allgatherv, Gatherv, Scatterv: rank q's block has q%3+1 elements q*100+i, the
     * blocks stored in reverse rank order */
    int *vc = malloc(2 * sizeof(int) * (size_t)size), *vd = vc + size, at = 0;
    for (int q = size - 1; q >= 0; q--) {
        vc[q] = q % 3 + 1;
        vd[q] = at;
        at += vc[q];
    }
    for (int i = 0; i < vc[rank]; i++) s[i] = rank * 100 + i;
    MPI_Allgatherv(s, vc[rank], MPI_INT, r, vc, vd, MPI_INT, w);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < vc[q]; i++) expect("allgatherv", r[vd[q] + i], q * 100 + i, i);
    root = size / 2;
    for (int i = 0; i < at; i++) r[i] = -1;
    MPI_Gatherv(s, vc[rank], MPI_INT, r, vc, vd, MPI_INT, root, w);
    if (rank == root)
        for (int q = 0; q < size; q++)
            for (int i = 0; i < vc[q]; i++) expect("gatherv", r[vd[q] + i], q * 100 + i, i);
    for (int q = 0; q < size; q++)
        for (int i = 0; i < vc[q]; i++) s[vd[q] + i] = q * 7 + i;
    MPI_Scatterv(s, vc, vd, MPI_INT, r, vc[rank], MPI_INT, size - 1, w);
    for (int i = 0; i < vc[rank]; i++) expect("scatterv", r[i], rank * 7 + i, i);
    free(vc);

    int total;
    PMPI_Allreduce(&errors, &total, 1, MPI_INT, MPI_SUM, w);
    if (rank == 0 && total == 0) printf("plain_app: ok\n");
    free(s);
    free(r);
    MPI_Finalize();
    return total != 0;
}
