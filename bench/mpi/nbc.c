/* nbc.c - non-blocking, persistent and neighbourhood collectives with OSU 7.4's
 * definitions (c/mpi/collective/{non_blocking,persistent,neighborhood}, c/util), and the
 * blocking collectives they are compared with (docs/nbc.md, docs/records.md section 4).
 *
 * Per (collective, size), after --warmup discarded calls, --iterations timed calls; every
 * rank times its own calls and one MPI_Reduce(MAX) per series after the loop
 * (coll_repeat.h) gives rank 0 the slowest process of every iteration:
 *   blocking, neighbour and alltoallv_neighbors: metric time = the call;
 *   persistent: metric time = MPI_Start + MPI_Wait of a request made once per size by
 *     MPI_<Coll>_init (MPIX_<Coll>_init in Open MPI 4.1, its pcollreq extension); a build
 *     with neither writes an "unavailable" summary naming why;
 *   non-blocking (I<coll>, ineighbor_*), OSU's overlap measure in two loops:
 *     1. pure_time = post + MPI_Wait;
 *     2. each rank calibrates a dummy compute to ITS OWN pure time (--protocol osu: its
 *        mean, as OSU does; hpcscope: its median, robust to a descheduled iteration), then overall_time = post + compute + MPI_Wait, compute_time = the compute
 *        alone, without the --probes MPI_Test calls spread through it (default 0, OSU's
 *        default: no MPI_Test), and overlap (%) = max(0, 100 - (overall - compute) /
 *        pure x 100) per iteration, with (overall - compute) the slowest rank's and pure
 *        the median of loop 1's values.
 * The compute is a small float kernel run in chunks until the target time has passed
 * (OSU's way: the chunk times are summed), so it lasts the pure time plus at most one
 * chunk (about a microsecond).
 * A summary "osu" per (collective, size) holds OSU's own numbers from the same
 * iterations: per-rank means averaged over ranks (overall, compute, pure, min/max pure,
 * MPI_Test time, overlap by OSU's formula; blocking: avg/min/max latency).
 *
 * Protocols: hpcscope (default): MPI_Barrier before each timed call, sizes in --order
 * (random with --seed: the suite draws a new order per launch), clock CLOCK_MONOTONIC.
 * osu: OSU 7.4's loops: sizes ascending, MPI_Wtime, the barrier after each timed call.
 * Neighbourhood collectives run on OSU's topology: a periodic Cartesian grid of
 * --neighbor-dims dimensions (MPI_Dims_create), every rank's neighbours being the ranks
 * at offsets in [-R, R]^D except itself (R = --neighbor-radius), as a distributed graph
 * (MPI_Dist_graph_create_adjacent, weights 1, no reordering). Like OSU, R must be at most
 * (smallest dimension - 1) / 2 (no neighbour twice): otherwise they are not timed and an
 * "unavailable" summary says why (2 ranks in 1 dimension: a 3rd rank is needed).
 * Validation (--validate, default on): an untimed call of every non-blocking, persistent
 * and neighbourhood variant is compared byte for byte with its blocking counterpart
 * (alltoallv_neighbors with neighbor_alltoall); a mismatch is an error record and the
 * variant is not timed.
 * --precision F (hpcscope protocol only; coll's rule, coll_repeat.h): each loop of a size
 * repeats from 10 calls, half again as many per look, until the 95 % CI of the median of
 * the slowest-rank times is within F of it, the loop's share of --time-budget is spent,
 * or --iterations (0: OSU's count) calls are reached. Loop 1 decides on its own time
 * (time, pure_time: the guideline's number and the compute's calibration), loop 2 on
 * overall_time alone (its compute_time and overlap follow it: an overlap near 0 has no
 * relative precision to reach). Their summaries carry `precision`; every other value,
 * OSU's summary included, is over the calls each loop made.
 * Memory per process: 3 buffers of max(p, neighbours) x --max-size bytes.
 * Exit: 0 ok, 1 measurement failed (error record written), 2 bad usage.
 */
/* The shared headers hold static helpers for coll, lane_pattern and multi_coll; nbc uses
 * some of them (no count lists), so the others are not "unused" errors. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */
#include "coll_repeat.h"
#pragma GCC diagnostic pop

#include <math.h>

#include "binding_mpi.h"
#include "nbc_calls.h"
#include "timer.h"

#define NBC_VERSION "0.1.0"
#define OSU_LARGE 8192 /* OSU's LARGE_MESSAGE_SIZE: fewer iterations above */
#define SENTINEL 0x5a

static const char *o_colls, *o_out, *o_protocol, *o_order;
static int64_t o_min, o_max, o_iters, o_warmup, o_probes, o_dims, o_radius, o_seed;
static int o_validate;

static hs_option options[] = {
    { "collectives", HS_OPT_STR, &o_colls, "ibcast",
      "comma-separated: <coll>, i<coll>, <coll>_persistent for allgather, allgatherv, "
      "allreduce, alltoall, alltoallv, alltoallw, barrier, bcast, gather, gatherv, reduce, "
      "reduce_scatter, reduce_scatter_block, scatter, scatterv; neighbor_<c> and "
      "ineighbor_<c> for allgather, allgatherv, alltoall, alltoallv, alltoallw; "
      "alltoallv_neighbors" },
    { "min-size", HS_OPT_SIZE, &o_min, "1", "smallest message size in bytes" },
    { "max-size", HS_OPT_SIZE, &o_max, "1M", "largest message size (powers of two)" },
    { "iterations", HS_OPT_INT, &o_iters, "0",
      "timed calls per size (0: OSU's 1000, 100 above 8 KiB)" },
    { "warmup", HS_OPT_INT, &o_warmup, "-1",
      "discarded calls per size (-1: OSU's 100, 10)" },
    { "probes", HS_OPT_INT, &o_probes, "0",
      "MPI_Test calls spread through the compute of the overlap loop (OSU's -t; 0: none)" },
    { "neighbor-dims", HS_OPT_INT, &o_dims, "1",
      "dimensions of the Cartesian neighbourhood" },
    { "neighbor-radius", HS_OPT_INT, &o_radius, "1", "neighbourhood radius" },
    { "protocol", HS_OPT_STR, &o_protocol, "hpcscope",
      "hpcscope (barrier before each call, sizes in --order) or osu (OSU 7.4's loops)" },
    { "order", HS_OPT_STR, &o_order, "up", "size order: up, down or random (with --seed)" },
    { "seed", HS_OPT_INT, &o_seed, "0",
      "seed of --order random; 0: drawn (echoed in meta)" },
    { "validate", HS_OPT_FLAG, &o_validate, "1",
      "untimed comparison of each variant with its blocking counterpart (--validate=0: "
      "off)" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    HS_PRECISION_OPTIONS(hs_rep_precision, hs_rep_budget_s, "loop of a size",
                         "--iterations", "all timed calls of the launch"),
    { 0 }
};

static int sel[NBC_MAX];
static int osu_loops;

static int check(int quiet)
{
    const char *why = NULL;
    char bad[96] = "";
    memset(sel, 0, sizeof sel);
    for (const char *s = o_colls; *s && !why;) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int c = 0; c < nbc_n; c++)
            if (strlen(nbc_colls[c].name) == len && !strncmp(nbc_colls[c].name, s, len))
                sel[c] = found = 1;
        if (!found) {
            snprintf(bad, sizeof bad, "unknown collective '%.*s'",
                     (int)(len < 40 ? len : 40), s);
            why = "--collectives: see --help for the names";
        }
        s += len + (s[len] == ',');
    }
    int any = 0;
    for (int c = 0; c < nbc_n; c++) any |= sel[c];
    if (why)
        ;
    else if (!any)
        why = "--collectives: none selected";
    else if (o_min < 1 || o_max < o_min || o_max > INT_MAX / 64)
        why = "sizes need 1 <= --min-size <= --max-size <= 32M";
    else if (o_iters < 0 || o_warmup < -1 || o_probes < 0)
        why = "--iterations, --warmup and --probes must be >= 0";
    else if (o_dims < 1 || o_dims > 8 || o_radius < 1)
        why = "--neighbor-dims must be 1..8 and --neighbor-radius >= 1";
    else if (strcmp(o_protocol, "hpcscope") && strcmp(o_protocol, "osu"))
        why = "--protocol must be hpcscope or osu";
    else if (strcmp(o_order, "up") && strcmp(o_order, "down") && strcmp(o_order, "random"))
        why = "--order must be up, down or random";
    else if (!strcmp(o_protocol, "osu") && strcmp(o_order, "up"))
        why = "--protocol osu measures sizes ascending as OSU; drop --order";
    else if (o_seed < 0)
        why = "--seed must be >= 0";
    else if (hs_rep_precision > 0 && !strcmp(o_protocol, "osu"))
        why = "--protocol osu keeps OSU's fixed counts: drop --precision or use --protocol "
              "hpcscope";
    else
        why = hs_precision_problem(hs_rep_precision, hs_rep_budget_s, "--iterations");
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "nbc: %s%s%s (see --help)\n", bad, *bad ? ": " : "", why);
    return 2;
}

/* ---- clock and the dummy compute ----------------------------------------------------- */

static double now(void) { return osu_loops ? MPI_Wtime() : hs_now_s(); }

static float kx[32], ky[32], ka[32][32];
static volatile float ksink;

/* One chunk of float work (about a microsecond); its result is kept so it is not
 * optimised away. */
static void compute_chunk(void)
{
    for (int i = 0; i < 32; i++) {
        float acc = kx[i];
        for (int j = 0; j < 32; j++) acc += ka[i][j] * ka[j][i] + ky[j];
        kx[i] = acc * 0.5f;
    }
    ksink = kx[0];
}

/* Runs chunks until their summed time reaches `seconds`. */
static void compute_for(double seconds)
{
    double spent = 0;
    while (spent < seconds) {
        double t0 = now();
        compute_chunk();
        spent += now() - t0;
    }
}

/* The compute between post and wait: `seconds` of chunks, in --probes parts each followed
 * by a timed MPI_Test; returns the MPI_Test time (s). */
static double compute_and_probe(double seconds, MPI_Request *req)
{
    if (o_probes == 0) {
        compute_for(seconds);
        return 0;
    }
    double test_s = 0;
    for (int64_t k = 0; k < o_probes; k++) {
        compute_for(seconds / (double)o_probes);
        int flag = 0;
        double t0 = now();
        TRY(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
        test_s += now() - t0;
    }
    return test_s;
}

/* ---- state -------------------------------------------------------------------------- */

static int64_t max_iters;
static double *t_local, *t_max; /* 3 series x max_iters */
static char *sbuf, *rbuf, *refbuf;
static int *nbrs, deg, nbr_dims[8];
static const char *nbr_problem; /* why neighbourhood collectives cannot run */
static MPI_Comm graph = MPI_COMM_NULL;
static nbc_call X;

/* The fixed count, or with --precision the most calls of a loop. */
static int64_t iters_of(int64_t s)
{
    return o_iters ? o_iters : s > OSU_LARGE ? 100 : 1000;
}
static int64_t warmup_of(int64_t s)
{
    return o_warmup >= 0 ? o_warmup : s > OSU_LARGE ? 10 : 100;
}

static int is_neighbor_kind(nbc_kind k)
{
    return k == K_NEIGHBOR || k == K_INEIGHBOR || k == K_ALLTOALLV_NBRS;
}

/* OSU's neighbourhood: Cartesian grid, offsets in [-R, R]^D except the rank itself. */
static void make_neighborhood(void)
{
    int d = (int)o_dims, r = (int)o_radius, p = HB.size;
    int dims[8] = { 0 }, periods[8], me[8], at[8], off[8];
    for (int i = 0; i < d; i++) periods[i] = 1;
    TRY(MPI_Dims_create(p, d, dims));
    memcpy(nbr_dims, dims, sizeof dims);
    int min_dim = p;
    for (int i = 0; i < d; i++) min_dim = dims[i] < min_dim ? dims[i] : min_dim;
    static char why[200];
    if (r > (min_dim - 1) / 2) {
        snprintf(
            why, sizeof why,
            "neighbourhood radius %d needs a smallest dimension of at least %d, but %d "
            "ranks in %d dimension(s) give %d (OSU's rule: no neighbour twice); run "
            "more ranks or lower --neighbor-dims",
            r, 2 * r + 1, p, d, min_dim);
        nbr_problem = why;
        return;
    }
    MPI_Comm cart;
    TRY(MPI_Cart_create(HB.comm, d, dims, periods, 0, &cart));
    TRY(MPI_Cart_coords(cart, HB.rank, d, me));
    int most = 1;
    for (int i = 0; i < d; i++) most *= 2 * r + 1;
    nbrs = malloc(sizeof(int) * (size_t)most);
    deg = 0;
    for (int i = 0; i < d; i++) off[i] = -r;
    for (;;) {
        int rank;
        for (int i = 0; i < d; i++) at[i] = me[i] + off[i];
        TRY(MPI_Cart_rank(cart, at, &rank));
        if (rank != HB.rank) nbrs[deg++] = rank;
        int i = d - 1; /* next offset vector, the last dimension fastest */
        while (i >= 0 && off[i] == r) off[i--] = -r;
        if (i < 0) break;
        off[i]++;
    }
    int *w = malloc(sizeof(int) * (size_t)(deg ? deg : 1));
    for (int k = 0; k < deg; k++) w[k] = 1;
    TRY(MPI_Dist_graph_create_adjacent(HB.comm, deg, nbrs, w, deg, nbrs, w, MPI_INFO_NULL,
                                       0, &graph));
    free(w);
    TRY(MPI_Comm_free(&cart));
}

/* ---- records ------------------------------------------------------------------------ */

static void params_json(hs_json *j, const nbc_coll *c, int64_t s, int64_t iters)
{
    hs_json_open_object(j, "params");
    hs_json_str(j, "collective", c->name);
    hs_json_str(j, "family", kind_family[c->kind]);
    hs_json_int(j, "bytes", c->op == OP_BARRIER ? 0 : s);
    hs_json_int(j, "p", HB.size);
    hs_json_int(j, "iterations", iters);
    if (is_overlap_kind(c->kind)) hs_json_int(j, "probes", o_probes);
    if (is_neighbor_kind(c->kind)) {
        hs_json_int(j, "neighbors", deg);
        hs_json_int(j, "radius", o_radius);
        hs_json_int(j, "dims", o_dims);
    }
    if (osu_loops) hs_json_str(j, "protocol", "osu");
    hs_json_close(j);
}

static int emit_sample(const char *metric, const char *unit, const nbc_coll *c, int64_t s,
                       int64_t iters, int64_t warmups, const double *v)
{
    if (HB.rank != 0) return 0;
    hs_json j;
    hs_json_begin(&j, "sample");
    hs_json_str(&j, "metric", metric);
    hs_json_str(&j, "unit", unit);
    params_json(&j, c, s, iters);
    hs_json_double_array(&j, "values", v, (size_t)iters);
    hs_json_int(&j, "warmups", warmups);
    return hs_json_emit(&j, HB.out) != 0;
}

static void not_timed(const nbc_coll *c, int64_t s, const char *why)
{
    if (HB.rank != 0) return;
    hs_json j;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", "unavailable");
    params_json(&j, c, s, 0);
    hs_json_str(&j, "reason", why);
    hs_json_emit(&j, HB.out);
}

/* OSU's aggregate of one rank's sums (s over `iters`): the mean over ranks of each rank's
 * mean (MPI_Reduce SUM / p), as OSU's calculate_and_print_stats. */
static double mean_over_ranks(double sum_s, int64_t iters)
{
    double mine = sum_s * 1e6 / (double)iters, all = 0;
    TRY(MPI_Reduce(&mine, &all, 1, MPI_DOUBLE, MPI_SUM, 0, HB.comm));
    return all / HB.size;
}

static void extreme_over_ranks(double sum_s, int64_t iters, double *lo, double *hi)
{
    double mine = sum_s * 1e6 / (double)iters;
    TRY(MPI_Reduce(&mine, lo, 1, MPI_DOUBLE, MPI_MIN, 0, HB.comm));
    TRY(MPI_Reduce(&mine, hi, 1, MPI_DOUBLE, MPI_MAX, 0, HB.comm));
}

/* ---- the timed loops (hs_repeat_fn) ------------------------------------------------- */

typedef struct {
    double pure_s; /* this rank's mean pure time: the compute's target */
    double sum[4]; /* this rank's sums (s): pure, overall, compute, test */
    int64_t iters; /* timed iterations: the stride of the series in t_local */
} loop_state;

static void barrier_before(void)
{
    if (!osu_loops) TRY(MPI_Barrier(HB.comm));
}
static void barrier_after(void)
{
    if (osu_loops) TRY(MPI_Barrier(HB.comm));
}

/* A failed call ends the launch (an MPI error may leave the ranks out of step) with an
 * error record naming the collective and size: MPICH 4.0.2's persistent scatter at 3
 * ranks fails in MPI_Wait ("Invalid communicator"), osu_scatter_persistent too. */
#define TRY_CALL(call)                                                                  \
    do {                                                                                \
        int rc_ = (call);                                                               \
        if (rc_ != MPI_SUCCESS) {                                                       \
            char what_[160];                                                            \
            snprintf(what_, sizeof what_, "%.80s of %.40s size %lld", #call, X.c->name, \
                     (long long)X.s);                                                   \
            hs_fail_mpi(what_, rc_, __FILE__, __LINE__);                                \
        }                                                                               \
    } while (0)

/* One call (blocking, persistent Start+Wait, or post+Wait) on this rank, in s. */
static double one_call(void)
{
    barrier_before();
    double t0 = now();
    if (X.c->kind == K_PERSISTENT) {
        TRY_CALL(MPI_Start(&X.req));
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
    } else if (is_overlap_kind(X.c->kind)) {
        TRY_CALL(nbc_post(&X));
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
    } else {
        TRY_CALL(nbc_blocking(&X));
    }
    double t1 = now();
    barrier_after();
    return t1 - t0;
}

static void plain_reps(int64_t from, int64_t to, void *arg)
{
    loop_state *st = arg;
    for (int64_t i = from; i < to; i++) {
        double t = one_call();
        t_local[i] = t * 1e6;
        st->sum[0] += t;
    }
}

/* Loop 2 of the overlap measure: series 0 overall, 1 compute, 2 overall - compute. */
static volatile double osu_reads; /* kept so the readings are not optimised away */

static void overlap_reps(int64_t from, int64_t to, void *arg)
{
    loop_state *st = arg;
    int64_t stride = st->iters;
    for (int64_t i = from; i < to; i++) {
        barrier_before();
        double t0 = now();
        /* --protocol osu: OSU also reads MPI_Wtime around the post and around the wait
         * (its "Coll. Init" and "MPI_Wait" columns of -f), 4 readings inside overall */
        double init0 = osu_loops ? now() : 0;
        TRY_CALL(nbc_post(&X));
        if (osu_loops) osu_reads += now() - init0;
        double c0 = now();
        double test = compute_and_probe(st->pure_s, &X.req);
        double c1 = now();
        double wait0 = osu_loops ? now() : 0;
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
        if (osu_loops) osu_reads += now() - wait0;
        double t1 = now();
        barrier_after();
        double overall = t1 - t0, compute = (c1 - c0) - test;
        t_local[i] = overall * 1e6;
        t_local[stride + i] = compute * 1e6;
        t_local[2 * stride + i] = (overall - compute) * 1e6;
        st->sum[1] += overall;
        st->sum[2] += c1 - c0;
        st->sum[3] += test;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int64_t n)
{
    double *c = malloc(sizeof(double) * (size_t)n);
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

/* Rank 0: the "osu" summary of one (collective, size). */
static int emit_osu(const nbc_coll *c, int64_t s, int64_t iters, const double *v, int n)
{
    if (HB.rank != 0) return 0;
    static const char *keys[] = { "overall_us",  "compute_us", "pure_us", "pure_min_us",
                                  "pure_max_us", "test_us",    "overlap" };
    static const char *bkeys[] = { "avg_us", "min_us", "max_us" };
    hs_json j;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", "osu");
    params_json(&j, c, s, iters);
    for (int k = 0; k < n; k++) hs_json_double(&j, n == 3 ? bkeys[k] : keys[k], v[k]);
    hs_json_str(&j, "method",
                n == 3
                    ? "osu 7.4: each rank's mean over the timed iterations, averaged over "
                      "ranks (min/max: over ranks)"
                    : "osu 7.4: each rank's mean over the timed iterations, averaged over "
                      "ranks (pure min/max: over ranks); overlap = max(0, 100 - (overall "
                      "- compute) / pure x 100), compute without the MPI_Test time");
    return hs_json_emit(&j, HB.out) != 0;
}

typedef struct {
    const nbc_coll *c;
    int64_t s, iters;
} cell_arg;

static void cell_params(hs_json *j, const void *arg)
{
    const cell_arg *a = arg;
    params_json(j, a->c, a->s, a->iters);
}

/* Times one (collective, size); returns 1 when a record could not be written. */
static int measure(const nbc_coll *c, int64_t s)
{
    int64_t iters = iters_of(s), warm = warmup_of(s);
    loop_state st;
    memset(&st, 0, sizeof st);
    st.iters = iters;
    for (int64_t i = 0; i < warm; i++) one_call();
    hs_repeat_result r = hs_repeat(plain_reps, &st, 1, iters, t_local, t_max);
    int64_t n1 = r.done; /* loop 1's calls */
    cell_arg cell = { c, s, n1 };
    int bad = 0;
    if (!is_overlap_kind(c->kind)) {
        bad |= hs_repeat_emit("time", &r, t_max, warm, cell_params, &cell);
        double v[3];
        v[0] = mean_over_ranks(st.sum[0], n1);
        extreme_over_ranks(st.sum[0], n1, &v[1], &v[2]);
        bad |= emit_osu(c, s, n1, v, 3);
        TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
        return bad;
    }
    bad |= hs_repeat_emit("pure_time", &r, t_max, warm, cell_params, &cell);
    double pure_med = 0;
    if (HB.rank == 0) pure_med = median(t_max, n1);
    /* the compute's target: this rank's own mean pure time under --protocol osu (OSU's
     * rule); its own median otherwise, which one descheduled iteration does not move (a
     * 85 ms stall in 100 iterations made a 0.7 us ibcast's compute 850 us here) */
    st.pure_s = osu_loops ? st.sum[0] / (double)n1 : median(t_local, n1) * 1e-6;
    TRY(MPI_Barrier(HB.comm));
    for (int64_t i = 0; i < warm; i++) { /* warm-ups of loop 2, as OSU's skip */
        barrier_before();
        TRY_CALL(nbc_post(&X));
        compute_and_probe(st.pure_s, &X.req);
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
        barrier_after();
    }
    hs_repeat_result r2 = hs_repeat_judged(overlap_reps, &st, 3, 1, iters, t_local, t_max);
    int64_t n2 = r2.done; /* loop 2's calls */
    cell.iters = n2;
    if (HB.rank == 0) {
        double *ov = malloc(sizeof(double) * (size_t)n2);
        for (int64_t i = 0; i < n2; i++) {
            double o = pure_med > 0 ? 100 - t_max[2 * iters + i] / pure_med * 100 : 0;
            ov[i] = o > 0 ? o : 0;
        }
        hs_repeat_result follows = { n2, NULL }; /* judged by overall_time, no summary */
        bad |= hs_repeat_emit("overall_time", &r2, t_max, warm, cell_params, &cell);
        bad |= hs_repeat_emit("compute_time", &follows, t_max + iters, warm, cell_params,
                              &cell);
        bad |= emit_sample("overlap", "%", c, s, n2, warm, ov);
        free(ov);
    }
    double v[7];
    v[0] = mean_over_ranks(st.sum[1], n2);
    v[1] = mean_over_ranks(st.sum[2] - st.sum[3], n2); /* OSU prints compute - test */
    v[2] = mean_over_ranks(st.sum[0], n1);
    extreme_over_ranks(st.sum[0], n1, &v[3], &v[4]);
    v[5] = mean_over_ranks(st.sum[3], n2);
    double o = v[2] > 0 ? 100 - (v[0] - v[1]) / v[2] * 100 : 0;
    v[6] = o > 0 ? o : 0;
    bad |= emit_osu(c, s, n2, v, 7);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* ---- validation --------------------------------------------------------------------- */

static const nbc_coll *reference_of(const nbc_coll *c)
{
    nbc_kind k =
        c->kind == K_INEIGHBOR || c->kind == K_ALLTOALLV_NBRS ? K_NEIGHBOR : K_BLOCKING;
    nbc_op op = c->kind == K_ALLTOALLV_NBRS ? OP_ALLTOALL : c->op;
    for (int i = 0; i < nbc_n; i++)
        if (nbc_colls[i].kind == k && nbc_colls[i].op == op) return &nbc_colls[i];
    return NULL;
}

static void fill_inputs(const nbc_coll *c, int64_t s)
{
    int64_t send, recv;
    nbc_bytes(c, s, HB.size, deg, &send, &recv);
    for (int64_t i = 0; i < send; i++) sbuf[i] = (char)((HB.rank * 7 + i * 13) % 3 - 1);
    memset(rbuf, SENTINEL, (size_t)recv);
    if (c->op == OP_BCAST && HB.rank == 0)
        for (int64_t i = 0; i < recv; i++) rbuf[i] = (char)(i % 5);
}

/* One untimed call of X (post+wait, Start+Wait or the blocking call). */
static void untimed_call(void)
{
    if (X.c->kind == K_PERSISTENT) {
        TRY_CALL(MPI_Start(&X.req));
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
    } else if (is_overlap_kind(X.c->kind)) {
        TRY_CALL(nbc_post(&X));
        TRY_CALL(MPI_Wait(&X.req, MPI_STATUS_IGNORE));
    } else {
        TRY_CALL(nbc_blocking(&X));
    }
}

/* 1 when X (already prepared for size s) differs from its blocking counterpart. */
static int validate(int64_t s)
{
    const nbc_coll *c = X.c, *ref = reference_of(c);
    int64_t send, recv;
    nbc_bytes(c, s, HB.size, deg, &send, &recv);
    X.c = ref;
    nbc_prepare(&X, s, nbrs);
    fill_inputs(ref, s);
    TRY_CALL(nbc_blocking(&X));
    memcpy(refbuf, rbuf, (size_t)recv);
    X.c = c;
    nbc_prepare(&X, s, nbrs);
    fill_inputs(c, s);
    untimed_call();
    long long mine[2] = { 0, -1 }, all[2];
    for (int64_t i = 0; i < recv; i++)
        if (rbuf[i] != refbuf[i] && mine[0]++ == 0) mine[1] = i;
    TRY(MPI_Reduce(mine, all, 1, MPI_LONG_LONG, MPI_SUM, 0, HB.comm));
    int bad = 0;
    if (HB.rank == 0 && all[0] > 0) {
        bad = 1;
        hs_json_error(
            HB.out,
            "validation failed: %s size %lld differs from %s in %lld byte(s) over "
            "the ranks; not timed",
            c->name, (long long)s, ref->name, all[0]);
    }
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* ---- sizes -------------------------------------------------------------------------- */

static int sizes_of(const nbc_coll *c, int64_t *out)
{
    int n = 0;
    if (c->op == OP_BARRIER) {
        out[0] = 0;
        return 1;
    }
    for (int64_t s = o_min; s <= o_max; s *= 2)
        if (c->op != OP_REDUCE_SCATTER_BLOCK || s >= HB.size) out[n++] = s;
    if (!strcmp(o_order, "down"))
        for (int i = 0; i < n / 2; i++) {
            int64_t t = out[i];
            out[i] = out[n - 1 - i];
            out[n - 1 - i] = t;
        }
    else if (!strcmp(o_order, "random")) {
        /* splitmix64 of the seed and the collective, the same on every rank */
        uint64_t x = (uint64_t)o_seed * 0x9E3779B97F4A7C15ULL + (uint64_t)(c - nbc_colls);
        for (int i = n - 1; i > 0; i--) {
            x += 0x9E3779B97F4A7C15ULL;
            uint64_t z = x;
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            z ^= z >> 31;
            int j = (int)(z % (uint64_t)(i + 1));
            int64_t t = out[i];
            out[i] = out[j];
            out[j] = t;
        }
    }
    return n;
}

/* How many loops will judge a stop (hs_repeat_init: --time-budget's shares): one per
 * size of every collective that will be timed, two for the non-blocking ones. */
static int64_t judged_loops(void)
{
    int64_t n = 0, sizes[64];
    for (int c = 0; c < nbc_n; c++) {
        const nbc_coll *k = &nbc_colls[c];
        if (!sel[c] || (k->kind == K_PERSISTENT && !HS_HAVE_PERSISTENT) ||
            (is_neighbor_kind(k->kind) && nbr_problem))
            continue;
        n += sizes_of(k, sizes) * (is_overlap_kind(k->kind) ? 2 : 1);
    }
    return n;
}

static void build_summary(int any_nbr)
{
    if (HB.rank != 0) return;
    hs_json j;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", "nbc_build");
    hs_json_bool(&j, "persistent", HS_HAVE_PERSISTENT);
    hs_json_str(&j, "persistent_api", HS_PERSISTENT_API);
    if (!any_nbr) {
        hs_json_emit(&j, HB.out);
        return;
    }
    hs_json_str(&j, "neighborhood", "cartesian");
    hs_json_int(&j, "dims", o_dims);
    hs_json_int(&j, "radius", o_radius);
    hs_json_int_array(&j, "grid", nbr_dims, (size_t)o_dims);
    hs_json_int(&j, "neighbors", nbr_problem ? 0 : deg);
    if (nbrs && !nbr_problem) hs_json_int_array(&j, "rank0_neighbors", nbrs, (size_t)deg);
    if (nbr_problem) hs_json_str(&j, "neighborhood_problem", nbr_problem);
    hs_json_emit(&j, HB.out);
}

int main(int argc, char **argv)
{
    nbc_catalog_init();
    MPI_Init(&argc, &argv);
    HB.program = "nbc";
    HB.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(HB.comm, &HB.rank);
    MPI_Comm_size(HB.comm, &HB.size);
    MPI_Comm_set_errhandler(HB.comm, MPI_ERRORS_RETURN);
    int rc =
        hs_parse_quiet(options, argc, argv,
                       "Non-blocking (with OSU's overlap), persistent and neighbourhood "
                       "collectives and their blocking counterparts, as JSONL records.\n"
                       "example: mpirun -np 2 nbc --collectives ibcast,bcast "
                       "--max-size 64K",
                       check);
    if (rc >= 0) return hs_finish(rc);
    osu_loops = !strcmp(o_protocol, "osu");
    if (o_seed == 0) { /* drawn once on rank 0, shared, echoed in meta as used */
        int64_t drawn = (hs_now_ns() ^ (int64_t)getpid() << 20) & 0x7fffffff;
        o_seed = drawn ? drawn : 1;
        MPI_Bcast(&o_seed, 1, MPI_INT64_T, 0, HB.comm);
    }
    if (!hs_open_out(o_out)) return hs_finish(1);
    if (hs_write_meta_mpi(HB.out, "nbc", NBC_VERSION, options, HB.comm) != 0)
        return hs_finish(1);

    int any_nbr = 0;
    for (int c = 0; c < nbc_n; c++)
        any_nbr |= sel[c] && is_neighbor_kind(nbc_colls[c].kind);
    if (any_nbr) make_neighborhood();
    build_summary(any_nbr);

    int blocks = HB.size > deg ? HB.size : deg;
    size_t bytes = (size_t)blocks * (size_t)o_max;
    max_iters = o_iters ? o_iters : 1000;
    sbuf = hs_alloc(bytes, 1);
    rbuf = hs_alloc(bytes, 1);
    refbuf = hs_alloc(bytes, 1);
    t_local = malloc(sizeof(double) * 3 * (size_t)max_iters);
    t_max = malloc(sizeof(double) * 3 * (size_t)max_iters);
    X.counts = malloc(sizeof(int) * (size_t)blocks);
    X.displs = malloc(sizeof(int) * (size_t)blocks);
    X.rcounts = malloc(sizeof(int) * (size_t)blocks);
    X.rdispls = malloc(sizeof(int) * (size_t)blocks);
    X.zeros = malloc(sizeof(int) * (size_t)blocks);
    X.adispls = malloc(sizeof(MPI_Aint) * (size_t)blocks);
    X.types = malloc(sizeof(MPI_Datatype) * (size_t)blocks);
    int ok = sbuf && rbuf && refbuf && t_local && t_max && X.counts && X.displs &&
             X.rcounts && X.rdispls && X.zeros && X.adispls && X.types,
        all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, HB.comm);
    if (!all_ok) {
        if (HB.rank == 0)
            hs_json_error(HB.out, "cannot allocate 3 buffers of %zu bytes", bytes);
        return hs_finish(1);
    }
    X.p = HB.size;
    X.deg = deg;
    X.comm = HB.comm;
    X.graph = graph;
    X.sbuf = sbuf;
    X.rbuf = rbuf;
    hs_repeat_init(judged_loops());

    int failed = 0, write_failed = 0;
    int64_t *sizes = malloc(sizeof(int64_t) * 64);
    for (int ci = 0; ci < nbc_n && !write_failed; ci++) {
        if (!sel[ci]) continue;
        const nbc_coll *c = &nbc_colls[ci];
        if (c->kind == K_PERSISTENT && !HS_HAVE_PERSISTENT) {
            not_timed(c, 0,
                      "this MPI library has no persistent collectives: neither MPI 4's "
                      "MPI_<Coll>_init nor Open MPI's MPIX_<Coll>_init (mpi-ext.h) "
                      "compiled (bench/mpi/CMakeLists.txt checks)");
            continue;
        }
        if (is_neighbor_kind(c->kind) && nbr_problem) {
            not_timed(c, 0, nbr_problem);
            continue;
        }
        int n = sizes_of(c, sizes);
        for (int i = 0; i < n && !write_failed; i++) {
            int64_t s = sizes[i];
            X.c = c;
            nbc_prepare(&X, s, nbrs);
            if (c->kind == K_PERSISTENT) TRY_CALL(nbc_persistent_init(&X));
            if (o_validate && c->kind != K_BLOCKING && c->kind != K_NEIGHBOR &&
                validate(s)) {
                failed = 1;
            } else {
                fill_inputs(c, s);
                write_failed = measure(c, s);
            }
            if (c->kind == K_PERSISTENT) TRY(MPI_Request_free(&X.req));
        }
    }
    free(sizes);
    if (graph != MPI_COMM_NULL) MPI_Comm_free(&graph);
    free(nbrs);
    free(sbuf);
    free(rbuf);
    free(refbuf);
    free(t_local);
    free(t_max);
    return hs_finish(failed || write_failed ? 1 : 0);
}
