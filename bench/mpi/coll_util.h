/* coll_util.h - what coll, lane_pattern and multi_coll share: quiet option parsing on
 * ranks other than 0, the output file, MPI failure handling, page-aligned buffers, count
 * lists (docs/architecture.md). The timed repetitions and their "slowest process"
 * reduction are coll_repeat.h.
 *
 * Header-only (static functions) so that bench/mpi/CMakeLists.txt, which makes every *.c
 * one program, needs no helper library.
 */
#ifndef HS_COLL_UTIL_H
#define HS_COLL_UTIL_H
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jsonl.h"
#include "options.h"
#include "out_file.h"

typedef struct {
    const char *program;
    MPI_Comm comm;
    int rank, size;
    FILE *out; /* rank 0 only */
} hs_bench;

static hs_bench HB;

/* Any MPI failure ends the run: error record from rank 0 (stderr elsewhere), exit 1. */
static void hs_fail_mpi(const char *call, int rc, const char *file, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (HB.rank == 0 && HB.out)
        hs_json_error(HB.out, "%s failed on rank 0 (%s:%d): %s", call, file, line, msg);
    else
        fprintf(stderr, "%s: %s failed on rank %d (%s:%d): %s\n", HB.program, call, HB.rank,
                file, line, msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define TRY(call)                                                            \
    do {                                                                     \
        int rc_ = (call);                                                    \
        if (rc_ != MPI_SUCCESS) hs_fail_mpi(#call, rc_, __FILE__, __LINE__); \
    } while (0)

/* Option parsing on every rank, messages from rank 0 only. `check` validates values
 * beyond their types (returns -1 to go on, 2 for bad usage, printing unless quiet). */
static int hs_parse_quiet(const hs_option *opts, int argc, char **argv, const char *descr,
                          int (*check)(int quiet))
{
    int rc = hs_options_parse_quiet(opts, argc, argv, HB.program, descr, HB.rank != 0);
    if (rc < 0 && check) rc = check(HB.rank != 0);
    return rc;
}

/* Rank 0 opens the output ("-" = stdout); every rank learns whether it worked. */
static int hs_open_out(const char *path)
{
    int ok = 1;
    if (HB.rank == 0) {
        HB.out = hs_create_out(path); /* never through a link planted under the name */
        if (!HB.out) {
            fprintf(stderr, "%s: cannot write --out %s: %s\n", HB.program, path,
                    strerror(errno));
            ok = 0;
        }
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, HB.comm);
    return ok;
}

static int hs_finish(int rc)
{
    if (HB.out && HB.out != stdout) fclose(HB.out);
    MPI_Finalize();
    return rc;
}

/* Page-aligned, every page touched (so no first-touch fault lands in a timing).
 * n elements of `elem` bytes; at least one page. NULL when allocation failed. */
static void *hs_alloc(size_t n, size_t elem)
{
    void *p = NULL;
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = n * elem;
    size_t rounded = (bytes + page - 1) / page * page;
    if (rounded == 0) rounded = page;
#ifdef SMPI_SHARED_MALLOC
    /* SimGrid SMPI: plain malloc, which smpi/auto-shared-malloc-thresh intercepts (posix_memalign
     * is not), so large buffers of simulated ranks can share memory; alignment and first touch
     * do not change simulated time. */
    p = malloc(rounded);
    if (!p) return NULL;
#else
    if (posix_memalign(&p, page, rounded) != 0) return NULL;
#endif
    memset(p, 0, rounded);
    return p;
}

/* Count lists (the same syntax in all three programs):
 *   "auto"             the program's default sweep
 *   "4,64,1p,10p"      explicit counts; a "p" suffix multiplies by the number of ranks
 *   "1p:10000p[:10]"   FROM:TO[:FACTOR], FROM*FACTOR^k up to TO (factor default 10)
 * Returns the number of counts written to *out (malloc'd), or -1 with *why set. */
static int hs_count_item(const char *s, size_t len, int p, int64_t *v)
{
    char buf[64];
    if (len == 0 || len >= sizeof buf) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    int scaled = 0;
    if (buf[len - 1] == 'p' || buf[len - 1] == 'P') {
        scaled = 1;
        buf[len - 1] = '\0';
    }
    if (!buf[0]) {
        *v = p;
        return scaled ? 0 : -1;
    } /* "p" alone = 1p */
    for (char *c = buf; *c; c++)
        if (!isdigit((unsigned char)*c)) return -1;
    long long x = strtoll(buf, NULL, 10);
    if (x < 0 || x > INT64_MAX / (p > 0 ? p : 1)) return -1;
    *v = scaled ? x * p : x;
    return 0;
}

static int hs_counts_parse(const char *spec, int p, int64_t **out, const char **why)
{
    int n = 0, cap = 16;
    int64_t *v = malloc(sizeof *v * (size_t)cap);
    *why = NULL;
    if (strchr(spec, ':')) {
        const char *a = spec, *b = strchr(a, ':') + 1, *c = strchr(b, ':');
        int64_t from, to, factor = 10;
        if (hs_count_item(a, (size_t)(b - 1 - a), p, &from) ||
            hs_count_item(b, c ? (size_t)(c - b) : strlen(b), p, &to) ||
            (c && hs_count_item(c + 1, strlen(c + 1), 1, &factor))) {
            *why = "sweep must be FROM:TO[:FACTOR], e.g. 1p:10000p:10";
        } else if (from < 1 || to < from || factor < 2) {
            *why = "sweep needs 1 <= FROM <= TO and FACTOR >= 2";
        } else {
            for (int64_t x = from; x <= to;
                 x = x > INT64_MAX / factor ? to + 1 : x * factor) {
                if (n == cap) v = realloc(v, sizeof *v * (size_t)(cap *= 2));
                v[n++] = x;
            }
        }
    } else {
        const char *s = spec;
        while (*s && !*why) {
            size_t len = strcspn(s, ",");
            int64_t x;
            if (hs_count_item(s, len, p, &x))
                *why = "counts must be integers, optionally "
                       "with a p suffix (times the ranks)";
            else {
                if (n == cap) v = realloc(v, sizeof *v * (size_t)(cap *= 2));
                v[n++] = x;
            }
            s += len + (s[len] == ',');
        }
        if (!n && !*why) *why = "no count given";
    }
    if (*why) {
        free(v);
        return -1;
    }
    *out = v;
    return n;
}

#endif
