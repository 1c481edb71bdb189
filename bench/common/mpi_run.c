/* mpi_run.c - see mpi_run.h. */
#define _POSIX_C_SOURCE 200809L
#include "mpi_run.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "out_file.h"
#include "timer.h"

static const char *run_program = "hpcscope";
static FILE *const *run_out;
static const int *run_json;

void hs_mpi_run_init(const char *program, FILE *const *out, const int *json)
{
    run_program = program;
    run_out = out;
    run_json = json;
}

void hs_mpi_fail(const char *call, int rc, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0, rank = -1;
    const char *base = strrchr(file, '/');
    MPI_Error_string(rc, msg, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    FILE *out = run_out ? *run_out : NULL;
    if (rank == 0 && out && run_json && *run_json)
        hs_json_error(out, "%s failed on rank 0 (%s:%d): %s", call, base ? base + 1 : file,
                      line, msg);
    else
        fprintf(stderr, "%s: %s failed on rank %d (%s:%d): %s\n", run_program, call, rank,
                base ? base + 1 : file, line, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

FILE *hs_mpi_open_out(const char *program, const char *path, MPI_Comm comm, int *ok)
{
    int rank = 0;
    FILE *out = NULL;
    *ok = 1;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        out = hs_create_out(path); /* never through a link planted under the name */
        if (!out) {
            fprintf(stderr, "%s: cannot write --out %s: %s\n", program, path,
                    strerror(errno));
            *ok = 0;
        }
    }
    MPI_Bcast(ok, 1, MPI_INT, 0, comm);
    return out;
}

void hs_mpi_draw_seed(int64_t *seed, MPI_Comm comm)
{
    if (*seed != 0) return;
    int64_t drawn = (hs_now_ns() ^ (int64_t)getpid() << 20) & 0x7fffffff;
    *seed = drawn ? drawn : 1;
    MPI_Bcast(seed, 1, MPI_INT64_T, 0, comm);
}

void hs_order_sizes(int *sizes, int count, const char *order, int64_t seed, int salt)
{
    if (!strcmp(order, "down")) {
        for (int i = 0; i < count / 2; i++) {
            int t = sizes[i];
            sizes[i] = sizes[count - 1 - i];
            sizes[count - 1 - i] = t;
        }
    } else if (!strcmp(order, "random")) {
        uint64_t x = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + (uint64_t)salt + 1;
        for (int i = count - 1; i > 0; i--) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            int j = (int)(x % (uint64_t)(i + 1));
            int t = sizes[i];
            sizes[i] = sizes[j];
            sizes[j] = t;
        }
    }
}
