#include "binding_mpi.h"
#include "cacheline_mpi.h"
#include "transport_mpi.h"
#include "timer.h"
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The cache-line probe of 2-rank launches (cacheline_mpi.h): long enough for ~10^5 round
 * trips at 60-90 ns, short against a launch. */
#define CACHELINE_BUDGET_MS 20.0

/* ---- MPI library identification ---------------------------------------------------- */

/* Known names, most specific first (Cray's and MVAPICH's strings also contain "MPICH"). */
static const struct {
    const char *needle, *name;
} known[] = { { "Intel(R) MPI", "Intel MPI" },
              { "CRAY MPICH", "Cray MPICH" },
              { "MVAPICH", "MVAPICH2" },
              { "Open MPI", "Open MPI" },
              { "MPICH", "MPICH" },
              { NULL, NULL } };

/* First "digits.digits[.more]" at or after p, copied to out; "" if there is none. */
static void first_dotted_number(const char *p, char *out, size_t cap)
{
    out[0] = '\0';
    for (; *p; p++) {
        if (!isdigit((unsigned char)*p)) continue;
        const char *q = p;
        while (isdigit((unsigned char)*q)) q++;
        if (*q != '.' || !isdigit((unsigned char)q[1])) {
            p = q - 1;
            continue;
        }
        while (isdigit((unsigned char)*q) || (*q == '.' && isdigit((unsigned char)q[1])))
            q++;
        /* keep suffixes such as "a2" or "rc1" that directly follow the last digit */
        while (isalnum((unsigned char)*q)) q++;
        size_t n = (size_t)(q - p) < cap - 1 ? (size_t)(q - p) : cap - 1;
        memcpy(out, p, n);
        out[n] = '\0';
        return;
    }
}

void hs_mpi_library_parse(const char *text, hs_mpi_library *lib)
{
    memset(lib, 0, sizeof *lib);
    size_t line = strcspn(text, "\r\n");
    if (line >= sizeof lib->full) line = sizeof lib->full - 1;
    memcpy(lib->full, text, line);
    lib->full[line] = '\0';
    const char *after = lib->full;
    for (int i = 0; known[i].needle; i++) {
        const char *hit = strstr(lib->full, known[i].needle);
        if (hit) {
            snprintf(lib->library, sizeof lib->library, "%s", known[i].name);
            after = hit + strlen(known[i].needle);
            break;
        }
    }
    if (!lib->library[0]) {
        /* Unknown library: its name is the text before the first digit or comma. */
        size_t n = strcspn(lib->full, "0123456789,:");
        while (n > 0 &&
               (isspace((unsigned char)lib->full[n - 1]) || lib->full[n - 1] == 'v'))
            n--;
        if (n >= sizeof lib->library) n = sizeof lib->library - 1;
        memcpy(lib->library, lib->full, n);
        lib->library[n] = '\0';
    }
    first_dotted_number(after, lib->version, sizeof lib->version);
}

void hs_mpi_library_get(hs_mpi_library *lib)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(text, &len);
    text[len < MPI_MAX_LIBRARY_VERSION_STRING ? len : MPI_MAX_LIBRARY_VERSION_STRING - 1] =
        '\0';
    hs_mpi_library_parse(text, lib);
}

void hs_mpi_library_json(hs_json *j, const char *key, const hs_mpi_library *lib)
{
    hs_json_open_object(j, key);
    hs_json_str(j, "library", lib->library);
    hs_json_str(j, "version", lib->version);
    hs_json_str(j, "full", lib->full);
    hs_json_close(j);
}

/* ---- binding of every rank ---------------------------------------------------------- */

/* Fixed part of one rank's binding as it travels (MPI_BYTE: all ranks share one build).
 * The CPU lists follow in an MPI_Gatherv, so no CPU count limit is built in. */
typedef struct {
    int ok, err, ncpus, core, socket, numa;
    char host[HS_HOST_MAX];
    char lane[HS_LANE_MAX];
} wire;

#ifdef SMPI_SHARED_MALLOC
/* SimGrid SMPI (smpicc defines SMPI_SHARED_MALLOC): every simulated rank is a thread of
 * the one simulator process, so this machine's affinity mask says nothing about it. Its
 * place is the simulated host (MPI_Get_processor_name); it has no CPUs, core, socket or
 * NUMA node of this machine. Skipping hwloc also saves its topology load per rank (about
 * 12 ms each: 14 s of CPU at 1152 simulated ranks). */
static int read_own_binding(hs_binding *b, int rank)
{
    memset(b, 0, sizeof *b);
    b->rank = rank;
    b->core = b->socket = b->numa = -1;
    char name[MPI_MAX_PROCESSOR_NAME];
    int len = 0;
    MPI_Get_processor_name(name, &len);
    snprintf(b->host, sizeof b->host, "%.*s", len, name);
    return 0;
}
#else
static int read_own_binding(hs_binding *b, int rank) { return hs_binding_read(b, rank); }
#endif

int hs_binding_gather(MPI_Comm comm, hs_binding **all, int *n)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    *all = NULL;
    *n = 0;

    hs_binding mine;
    wire w;
    memset(&w, 0, sizeof w);
    w.ok = read_own_binding(&mine, rank) == 0;
    w.err = w.ok ? 0 : errno;
    w.ncpus = mine.ncpus;
    w.core = mine.core;
    w.socket = mine.socket;
    w.numa = mine.numa;
    memcpy(w.host, mine.host, sizeof w.host);
    memcpy(w.lane, mine.lane, sizeof w.lane);

    wire *ws = rank == 0 ? malloc(sizeof *ws * (size_t)size) : NULL;
    int *counts = rank == 0 ? malloc(sizeof *counts * (size_t)size) : NULL;
    int *displs = rank == 0 ? malloc(sizeof *displs * (size_t)size) : NULL;
    MPI_Gather(&w, (int)sizeof w, MPI_BYTE, ws, (int)sizeof w, MPI_BYTE, 0, comm);
    int total = 0;
    if (rank == 0)
        for (int r = 0; r < size; r++) {
            counts[r] = ws[r].ncpus;
            displs[r] = total;
            total += ws[r].ncpus;
        }
    int *cpus = rank == 0 ? malloc(sizeof *cpus * (size_t)(total > 0 ? total : 1)) : NULL;
    MPI_Gatherv(mine.cpus, mine.ncpus, MPI_INT, cpus, counts, displs, MPI_INT, 0, comm);
    hs_binding_free(&mine);

    int ok = w.ok, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (rank == 0 && all_ok) {
        hs_binding *b = calloc((size_t)size, sizeof *b);
        for (int r = 0; r < size; r++) {
            b[r].rank = r;
            memcpy(b[r].host, ws[r].host, sizeof b[r].host);
            b[r].host[sizeof b[r].host - 1] = '\0';
            memcpy(b[r].lane, ws[r].lane, sizeof b[r].lane);
            b[r].lane[sizeof b[r].lane - 1] = '\0';
            b[r].ncpus = ws[r].ncpus;
            b[r].cpus = malloc(sizeof(int) * (size_t)(ws[r].ncpus > 0 ? ws[r].ncpus : 1));
            memcpy(b[r].cpus, cpus + displs[r], sizeof(int) * (size_t)ws[r].ncpus);
            b[r].core = ws[r].core;
            b[r].socket = ws[r].socket;
            b[r].numa = ws[r].numa;
        }
        *all = b;
        *n = size;
    } else if (rank == 0) {
        /* Leave the first failing rank's errno where the caller can report it. */
        for (int r = 0; r < size; r++)
            if (!ws[r].ok) {
                errno = ws[r].err;
                *n = r;
                break;
            }
    }
    free(ws);
    free(counts);
    free(displs);
    free(cpus);
    return all_ok ? 0 : -1;
}

void hs_bindings_free(hs_binding *all, int n)
{
    if (!all) return;
    for (int r = 0; r < n; r++) hs_binding_free(&all[r]);
    free(all);
}

/* ---- MPI's clock -------------------------------------------------------------------- */

/* Mean cost of one MPI_Wtime call in ns: a loop of calls, doubled until it lasts at least
 * a millisecond (so the two hs_now_s readings around it are below 0.01 % of it), then the
 * lowest mean of 5 such loops (the least disturbed). Timed with CLOCK_MONOTONIC, so an
 * MPI_Wtime on CLOCK_REALTIME (MPICH) cannot distort its own measurement. ~10 ms. */
double hs_mpi_wtime_cost_ns(void)
{
    volatile double sink = 0;
    long n = 1000;
    for (;;) {
        double t0 = hs_now_s();
        for (long i = 0; i < n; i++) sink += MPI_Wtime();
        if (hs_now_s() - t0 >= 1e-3 || n >= (1L << 26)) break;
        n *= 2;
    }
    double best = INFINITY;
    for (int k = 0; k < 5; k++) {
        double t0 = hs_now_s();
        for (long i = 0; i < n; i++) sink += MPI_Wtime();
        double ns = (hs_now_s() - t0) * 1e9 / (double)n;
        if (ns < best) best = ns;
    }
    (void)sink;
    return best;
}

/* ---- meta record -------------------------------------------------------------------- */

int hs_write_meta_mpi(FILE *out, const char *benchmark, const char *version,
                      const hs_option *options, MPI_Comm comm)
{
    int rank;
    MPI_Comm_rank(comm, &rank);
    hs_binding *all;
    int n, rc = 0;
    if (hs_binding_gather(comm, &all, &n) != 0) {
        if (rank == 0)
            hs_json_error(out, "cannot read the binding of rank %d: %s", n,
                          strerror(errno));
        return -1;
    }
    if (rank == 0) {
        hs_mpi_library lib;
        hs_mpi_library_get(&lib);
        hs_json j;
        hs_json_begin(&j, "meta");
        hs_meta_begin(&j, benchmark, version);
        hs_mpi_library_json(&j, "mpi", &lib);
        char text[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(text, &len);
        text[len < MPI_MAX_LIBRARY_VERSION_STRING ? len
                                                  : MPI_MAX_LIBRARY_VERSION_STRING - 1] =
            '\0';
        hs_mpi_transport_json(&j, text); /* "mpi_t", "mpi_transport" (transport_mpi.h) */
        hs_json_open_array(&j, "ranks");
        for (int r = 0; r < n; r++) hs_binding_json(&j, NULL, &all[r]);
        hs_json_close(&j);
        double wtick = MPI_Wtick(), cost = hs_mpi_wtime_cost_ns();
        hs_meta_end_mpi(&j, options, wtick, cost);
        rc = hs_json_emit(&j, out);
        hs_bindings_free(all, n);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    return rc;
}

/* ---- cpu_pair record ---------------------------------------------------------------- */

int hs_write_cpu_pair(FILE *out, MPI_Comm comm)
{
    int rank, rc = 0;
    MPI_Comm_rank(comm, &rank);
    hs_cacheline pair;
    if (hs_cacheline_measure(comm, CACHELINE_BUDGET_MS, &pair) != 0) return 0;
    if (rank == 0) {
        hs_json j;
        hs_json_begin(&j, "cpu_pair");
        hs_json_double(&j, "cacheline_ns", pair.one_way_ns);
        hs_json_int(&j, "round_trips", pair.round_trips);
        rc = hs_json_emit(&j, out);
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, comm);
    return rc;
}
