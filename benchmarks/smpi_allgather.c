/* smpi_allgather.c - MPI_Allgather checked element by element against what it must
 * deliver, with the datatypes lanecoll passes (benchmarks/smpi_allgather runs it under
 * SimGrid SMPI with one forced allgather algorithm, or SMPI's ompi selector).
 *
 * Communicators: world (p ranks), node (the ppn consecutive ranks of a node) and lane
 * (the ranks with the same index on every node, p/ppn of them), as lanecoll splits them.
 * Cases, per block of b ints:
 *   contig       send b MPI_INT, receive b MPI_INT per rank
 *   in_place     MPI_IN_PLACE, b MPI_INT per rank
 *   spaced       send b MPI_INT, receive one block resized to SPACE blocks, at an offset
 *                of one block (lanecoll's allgather_lane across the lane:
 *                lc_type_spaced_block, extent > size)
 *   column       MPI_IN_PLACE, receive one column of ROWS blocks at a stride of q blocks
 *                resized to one block's extent (allgather_lane inside the node:
 *                lc_type_strided_column, true extent > extent, interleaved)
 *   column_send  send ROWS*b MPI_INT, receive one column (send and receive types differ)
 * The whole receive buffer is checked, the parts no rank writes too (they must keep their
 * sentinel). One JSON line per (communicator, case, count) from rank 0:
 *   {"comm":"lane","size":3,"case":"spaced","count":10,"ok":true,"mismatches":0,...}
 * Usage: smpi_allgather --ppn N [--counts 1,10,100]
 * Exit 0 when every case is right, 1 when one is not. */
#include <limits.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SPACE 3
#define ROWS 3
#define SENTINEL (-1)

enum { CONTIG, IN_PLACE, SPACED, COLUMN, COLUMN_SEND, NCASE };
static const char *case_names[NCASE] = { "contig", "in_place", "spaced", "column",
                                         "column_send" };

static int value(int rank, long idx) { return (int)(rank * 100003L + idx + 1); }

/* The receive buffer's length in ints and the value expected at each element. */
static long recv_len(int c, int q, int b)
{
    return c == SPACED   ? (long)(1 + q * SPACE) * b
           : c >= COLUMN ? (long)ROWS * q * b
                         : (long)q * b;
}

static int expected(int c, int q, int b, long i)
{
    long block = i / b, j = i % b;
    switch (c) {
    case CONTIG:
    case IN_PLACE: return value((int)block, j);
    case SPACED:
        if (block == 0 || (block - 1) % SPACE) return SENTINEL;
        return value((int)((block - 1) / SPACE), j);
    default: /* column: block = row * q + rank; the rank's row-th block */
        return value((int)(block % q), (block / q) * b + j);
    }
}

/* One allgather of case c on comm; returns MPI's error code, counts mismatches. */
static int run_case(int c, MPI_Comm comm, int b, long *bad, long first[3])
{
    int q, r, err;
    MPI_Comm_size(comm, &q);
    MPI_Comm_rank(comm, &r);
    long n = recv_len(c, q, b);
    int *rbuf = malloc(sizeof(int) * (size_t)n);
    int *sbuf = malloc(sizeof(int) * (size_t)ROWS * (size_t)b);
    MPI_Datatype block, type = MPI_DATATYPE_NULL;
    MPI_Aint lb, ext;
    for (long i = 0; i < n; i++) rbuf[i] = SENTINEL;
    for (long i = 0; i < (long)ROWS * b; i++) sbuf[i] = value(r, i);
    MPI_Type_contiguous(b, MPI_INT, &block);
    MPI_Type_get_extent(block, &lb, &ext);
    switch (c) {
    case CONTIG: err = MPI_Allgather(sbuf, b, MPI_INT, rbuf, b, MPI_INT, comm); break;
    case IN_PLACE:
        for (long j = 0; j < b; j++) rbuf[(long)r * b + j] = value(r, j);
        err = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, b, MPI_INT, comm);
        break;
    case SPACED:
        MPI_Type_create_resized(block, lb, ext * SPACE, &type);
        MPI_Type_commit(&type);
        err = MPI_Allgather(sbuf, b, MPI_INT, rbuf + b, 1, type, comm);
        break;
    default: {
        MPI_Datatype column;
        MPI_Type_vector(ROWS, 1, q, block, &column);
        MPI_Type_create_resized(column, lb, ext, &type);
        MPI_Type_free(&column);
        MPI_Type_commit(&type);
        if (c == COLUMN) {
            for (long row = 0; row < ROWS; row++)
                for (long j = 0; j < b; j++)
                    rbuf[(row * q + r) * b + j] = value(r, row * b + j);
            err = MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, rbuf, 1, type, comm);
        } else {
            err = MPI_Allgather(sbuf, ROWS * b, MPI_INT, rbuf, 1, type, comm);
        }
    }
    }
    for (long i = 0; i < n; i++) {
        int want = expected(c, q, b, i);
        if (rbuf[i] != want && (*bad)++ == 0) {
            first[0] = i;
            first[1] = rbuf[i];
            first[2] = want;
        }
    }
    if (type != MPI_DATATYPE_NULL) MPI_Type_free(&type);
    MPI_Type_free(&block);
    free(rbuf);
    free(sbuf);
    return err;
}

int main(int argc, char **argv)
{
    int ppn = 0, rank, size;
    const char *counts = "1,10,100";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--ppn"))
            ppn = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--counts"))
            counts = argv[i + 1];
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (ppn < 1 || size % ppn) {
        if (rank == 0)
            fprintf(stderr, "smpi_allgather: --ppn must divide %d ranks\n", size);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm comms[3];
    const char *comm_names[3] = { "world", "node", "lane" };
    comms[0] = MPI_COMM_WORLD;
    MPI_Comm_split(MPI_COMM_WORLD, rank / ppn, rank, &comms[1]);
    MPI_Comm_split(MPI_COMM_WORLD, rank % ppn, rank, &comms[2]);
    for (int k = 0; k < 3; k++) MPI_Comm_set_errhandler(comms[k], MPI_ERRORS_RETURN);
    int failed = 0;
    for (int k = 0; k < 3; k++) {
        int q;
        MPI_Comm_size(comms[k], &q);
        for (int c = 0; c < NCASE; c++) {
            /* not strtok: SMPI's ranks are threads sharing libc's state */
            for (const char *tok = counts; tok;
                 tok = strchr(tok, ',') ? strchr(tok, ',') + 1 : NULL) {
                int b = atoi(tok);
                long bad = 0, first[3] = { -1, 0, 0 };
                int err = run_case(c, comms[k], b, &bad, first);
                /* mismatches, error code, then the first mismatch of each rank */
                long mine[5] = { bad, err != MPI_SUCCESS, first[0], first[1], first[2] };
                long *all = rank == 0 ? malloc(sizeof(long) * 5 * (size_t)size) : NULL;
                MPI_Gather(mine, 5, MPI_LONG, all, 5, MPI_LONG, 0, MPI_COMM_WORLD);
                if (rank == 0) {
                    long total = 0, errors = 0, ranks = 0;
                    int who = -1;
                    for (int i = 0; i < size; i++) {
                        total += all[5 * i];
                        errors += all[5 * i + 1];
                        if (all[5 * i] > 0 && ranks++ == 0) who = i;
                    }
                    int ok = total == 0 && errors == 0;
                    failed |= !ok;
                    printf("{\"comm\":\"%s\",\"size\":%d,\"case\":\"%s\",\"count\":%d,"
                           "\"ok\":%s,\"mismatches\":%ld,\"ranks\":%ld,\"errors\":%ld",
                           comm_names[k], q, case_names[c], b, ok ? "true" : "false", total,
                           ranks, errors);
                    if (who >= 0)
                        printf(",\"first\":{\"rank\":%d,\"element\":%ld,\"got\":%ld,"
                               "\"expected\":%ld}",
                               who, all[5 * who + 2], all[5 * who + 3], all[5 * who + 4]);
                    printf("}\n");
                    fflush(stdout);
                    free(all);
                }
            }
        }
    }
    MPI_Comm_free(&comms[1]);
    MPI_Comm_free(&comms[2]);
    MPI_Bcast(&failed, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    return failed;
}
