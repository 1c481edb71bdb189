/* startup.c - MPI start-up as a user waits for it: MPI_Init per rank, and the time from
 * the launch to every rank having said hello (OSU 7.4 osu_init and osu_hello's questions).
 *
 * init: each rank reads CLOCK_MONOTONIC just before and just after MPI_Init (a clock that
 *   exists before MPI does; OSU reads CLOCK_REALTIME and reports whole milliseconds). One
 *   value per rank, in rank order: the min, max and mean over ranks are OSU's numbers.
 * hello: each rank reads CLOCK_REALTIME once MPI_Init has returned and it knows its rank
 *   and the size of MPI_COMM_WORLD (what osu_hello prints). The launch's start is
 *   HPCSCOPE_LAUNCH_EPOCH (CLOCK_REALTIME seconds, set by hpcscope just before it starts
 *   mpirun or srun); hello = the last rank's hello minus that epoch ("from": "launch").
 *   Without a usable epoch (a program started by hand) the start is the earliest rank's
 *   clock before MPI_Init ("from": "first_process"), which leaves out the launcher's own
 *   start. Across nodes CLOCK_REALTIME differs by the nodes' clock offset (NTP: usually
 *   well under a millisecond, small against start-up times of 100 ms and more).
 * Under SimGrid SMPI (smpicc) every reading is SMPI's simulated MPI_Wtime ("clock":
 *   "simulated"): init and hello are then what the simulator charges (SMPI models no
 *   process start-up), and hello is always from the first process (the epoch is real
 *   time, not simulated).
 *
 * Measured first, then the meta record (bindings, timer probe: tens of ms), so neither
 * is inside a number; the harness's own wall time of the launch (hpcscope's store) does
 * include them. Cost: one MPI_Gather of 3 doubles per rank.
 *
 * Output: JSONL (rank 0): meta, then samples of metric "time", unit "us", params
 * {phase: "init", ranks, clock: "CLOCK_MONOTONIC"} (values: one per rank) and
 * {phase: "hello", ranks, from: "launch"|"first_process"} (one value).
 * Exit: 0 ok, 1 measurement failed, 2 bad usage.
 */
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */

#include <math.h>
#include <time.h>

#include "binding_mpi.h"

#define STARTUP_VERSION "0.1.0"

static const char *o_out;

static const hs_option options[] = {
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" }, { 0 }
};

#ifdef SMPI_SHARED_MALLOC
/* SimGrid SMPI: clock_gettime reads the real clock before MPI_Init and the simulated one
 * after it, while SMPI's MPI_Wtime is the simulated clock throughout (0 at the start). */
#define INIT_CLOCK "simulated"
static double clock_s(clockid_t id)
{
    (void)id;
    return MPI_Wtime();
}
#else
#define INIT_CLOCK "CLOCK_MONOTONIC"
static double clock_s(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
#endif

/* HPCSCOPE_LAUNCH_EPOCH as seconds, or NAN when absent or not a positive number. */
static double launch_epoch(void)
{
#ifdef SMPI_SHARED_MALLOC
    return NAN; /* real time, while clock_gettime reads the simulated clock */
#else
    const char *text = getenv("HPCSCOPE_LAUNCH_EPOCH");
    char *end = NULL;
    if (!text || !*text) return NAN;
    double v = strtod(text, &end);
    return (end && *end == '\0' && v > 0) ? v : NAN;
#endif
}

/* One sample of metric "time" (us) of `phase`, with one more param (key = value).
 * 0, or 1 when the write failed. */
static int emit(const char *phase, const char *key, const char *value, const double *us,
                int n)
{
    hs_json j;
    hs_json_begin(&j, "sample");
    hs_json_str(&j, "benchmark", "startup");
    hs_json_str(&j, "metric", "time");
    hs_json_str(&j, "unit", "us");
    hs_json_open_object(&j, "params");
    hs_json_str(&j, "phase", phase);
    hs_json_int(&j, "ranks", HB.size);
    hs_json_str(&j, key, value);
    hs_json_close(&j);
    hs_json_double_array(&j, "values", us, (size_t)n);
    hs_json_int(&j, "warmups", 0);
    return hs_json_emit(&j, HB.out) != 0;
}

int main(int argc, char **argv)
{
    (void)hs_alloc; /* coll_util.h's helpers this program does not need */
    (void)hs_counts_parse;
    double real_before = clock_s(CLOCK_REALTIME);
    double mono_before = clock_s(CLOCK_MONOTONIC);
    MPI_Init(&argc, &argv);
    double mono_after = clock_s(CLOCK_MONOTONIC);
    HB.program = "startup";
    HB.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(HB.comm, &HB.rank);
    MPI_Comm_size(HB.comm, &HB.size);
    double hello = clock_s(CLOCK_REALTIME); /* rank and size known: hello */
    MPI_Comm_set_errhandler(HB.comm, MPI_ERRORS_RETURN);

    int rc =
        hs_parse_quiet(options, argc, argv,
                       "MPI start-up: MPI_Init time per rank and the time from the launch "
                       "to every rank's hello.\nexample: HPCSCOPE_LAUNCH_EPOCH=$(date "
                       "+%s.%N) mpirun -np 4 startup",
                       NULL);
    if (rc >= 0) return hs_finish(rc);
    double mine[3] = { mono_after - mono_before, real_before, hello };
    double *all = HB.rank == 0 ? malloc(sizeof(double) * 3 * (size_t)HB.size) : NULL;
    if (HB.rank == 0 && !all) {
        fprintf(stderr, "startup: cannot allocate %d doubles\n", 3 * HB.size);
        MPI_Abort(HB.comm, 1);
    }
    TRY(MPI_Gather(mine, 3, MPI_DOUBLE, all, 3, MPI_DOUBLE, 0, HB.comm));
    if (!hs_open_out(o_out)) return hs_finish(1);
    if (hs_write_meta_mpi(HB.out, "startup", STARTUP_VERSION, options, HB.comm) != 0)
        return hs_finish(1);
    if (HB.rank != 0) return hs_finish(0);

    double *init_us = malloc(sizeof(double) * (size_t)HB.size);
    if (!init_us) {
        hs_json_error(HB.out, "cannot allocate %d doubles", HB.size);
        return hs_finish(1);
    }
    double first = all[1], last_hello = all[2];
    for (int r = 0; r < HB.size; r++) {
        init_us[r] = 1e6 * all[3 * r];
        if (all[3 * r + 1] < first) first = all[3 * r + 1];
        if (all[3 * r + 2] > last_hello) last_hello = all[3 * r + 2];
    }
    double epoch = launch_epoch();
    /* an epoch after a rank's own start is not this launch's: the harness's clock or
     * variable is wrong, so the in-program start is used and the record says so */
    int from_launch = !isnan(epoch) && epoch <= first;

    double hello_us = 1e6 * (last_hello - (from_launch ? epoch : first));
    rc = emit("init", "clock", INIT_CLOCK, init_us, HB.size);
    rc |= emit("hello", "from", from_launch ? "launch" : "first_process", &hello_us, 1);
    free(init_us);
    free(all);
    return hs_finish(rc);
}
