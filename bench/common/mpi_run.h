/* mpi_run.h - the run-time plumbing every MPI benchmark program repeats: a failed MPI call
 * ends the run with one error record, the output file opened on rank 0 with every rank
 * told, a seed drawn once and shared, and the size order of a sweep.
 *
 *   hs_mpi_run_init("rma", &out, &json);   // after the output is open
 *   HS_TRY(MPI_Win_fence(0, win));         // error record (or stderr) and MPI_Abort on failure
 *
 * Collective functions say so. Costs: none on the measured path (HS_TRY is one compare).
 */
#ifndef HS_MPI_RUN_H
#define HS_MPI_RUN_H
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>

/* Where HS_TRY reports: the program's name, its output (rank 0; NULL elsewhere) and
 * whether that output takes JSONL records (0: a text format, errors to stderr). */
void hs_mpi_run_init(const char *program, FILE *const *out, const int *json);
/* Writes "CALL failed on rank R (FILE:LINE): MPI's message" as an error record on rank 0
 * (JSONL output) or to stderr, then MPI_Abort(MPI_COMM_WORLD, 1). Does not return. */
void hs_mpi_fail(const char *call, int rc, const char *file, int line);
#define HS_TRY(call)                                                               \
    do {                                                                           \
        int hs_rc_ = (call);                                                       \
        if (hs_rc_ != MPI_SUCCESS) hs_mpi_fail(#call, hs_rc_, __FILE__, __LINE__); \
    } while (0)

/* Rank 0 creates `path` (hs_create_out; "-" = stdout) and every rank learns the outcome.
 * Collective. Returns the stream on rank 0, stdout-or-NULL elsewhere (never written), and
 * *ok = 0 on every rank when rank 0 could not create it (rank 0 said why on stderr). */
FILE *hs_mpi_open_out(const char *program, const char *path, MPI_Comm comm, int *ok);
/* *seed == 0: rank 0 draws one from the clock and pid and every rank gets it (so the
 * meta record's echo says which was used). Collective. */
void hs_mpi_draw_seed(int64_t *seed, MPI_Comm comm);
/* Puts sizes[0..count) in `order`: "up" (as given), "down" (reversed) or "random"
 * (xorshift64 from seed and salt: the same on every rank, another per salt). */
void hs_order_sizes(int *sizes, int count, const char *order, int64_t seed, int salt);
#endif
