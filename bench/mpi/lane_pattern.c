/* lane_pattern.c - can this system move data over several lanes at once? (Träff & Hunold,
 * "Decomposing MPI collectives for exploiting multi-lane communication", section 2,
 * "lane pattern benchmark").
 *
 * Every node sends and receives c elements (MPI_INT) per step. With k virtual lanes the c
 * elements are divided evenly over the first k processes of each node (the first c%k get
 * one more); process i of node j sends its share to process i of node j+1 and receives
 * from process i of node j-1 (cyclically) with one blocking MPI_Sendrecv. A repetition is
 * --steps such steps back to back without barriers (as pipelined algorithms would use the
 * lanes); repetitions are separated by MPI_Barrier and timed as the completion time of
 * the slowest process (MPI_Reduce MAX after the loop, or per look with --precision:
 * coll_repeat.h). Value = repetition time / steps.
 * A system with L physical lanes should move c elements up to L times faster with k >= L
 * than with k = 1; the analysis reports that factor t(k=1)/t(k) (hpcscope.analysis).
 *
 * Nodes are lanecoll's (LANECOLL_NODE_SIZE=K emulates nodes of K consecutive ranks; see
 * coll_nodes.h). k runs over 1..(fewest processes on a node); needs at least 2 nodes.
 * An untimed pass per (k, c) checks every received element (--validate, on by default).
 * Memory per process: 2*(c/k+1) ints. Cost per step: one Sendrecv of c/k elements.
 *
 * Output: JSONL (rank 0, flushed per record): meta, then one sample per (c, k): metric "time_per_step", unit "us", params {pattern, lanes, count,
 * bytes (c*4: per node and step), share, nodes, ppn, p, steps, regular, node_override}.
 * Exit: 0 ok, 1 measurement failed, 2 bad usage.
 */
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */

#include "binding_mpi.h"
#include "coll_nodes.h"
#include "coll_repeat.h"
#include "lane_bench.h"
#include "timer.h"

#define LANE_PATTERN_VERSION "0.1.0"

static const char *o_counts, *o_lanes, *o_out;
static int64_t o_reps, o_warmup, o_steps;
static int o_validate;

static const hs_option options[] = {
    { "counts", HS_OPT_STR, &o_counts, "auto",
      "elements per node and step: auto (1p:10000p:10), a list (1p,10p,4096) or a sweep "
      "FROM:TO[:FACTOR]; p = number of ranks" },
    { "lanes", HS_OPT_STR, &o_lanes, "all",
      "virtual lanes k: all (1..ppn) or a list 1,2,4" },
    { "steps", HS_OPT_INT, &o_steps, "10", "Sendrecv steps per repetition (no barriers)" },
    { "repetitions", HS_OPT_INT, &o_reps, "100", "timed repetitions per (count, lanes)" },
    { "warmup", HS_OPT_INT, &o_warmup, "5", "discarded repetitions first" },
    { "validate", HS_OPT_FLAG, &o_validate, "1",
      "untimed pass checking every received element (--validate=0: off)" },
    HS_REPEAT_OPTIONS,
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

static int check(int quiet)
{
    const char *why = NULL;
    if (o_steps < 1)
        why = "--steps must be >= 1";
    else if (o_reps < 1)
        why = "--repetitions must be >= 1";
    else if (o_warmup < 0)
        why = "--warmup must be >= 0";
    else
        why = hs_repeat_problem();
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "lane_pattern: %s (see --help)\n", why);
    return 2;
}

static hs_nodes ND;
static int *sbuf, *rbuf;
static double *t_local, *t_max;

static inline int value_at(int rank, int64_t i)
{
    return (int)(((uint64_t)rank * 7919u + (uint64_t)i * 104729u) % 2001u) - 1000;
}

typedef struct {
    int active, share, to, from;
} lane_role;

static lane_role role(int k, int64_t c)
{
    lane_role r = { 0, 0, MPI_PROC_NULL, MPI_PROC_NULL };
    if (ND.node_rank >= k) return r;
    r.active = 1;
    r.share = (int)(c / k + (ND.node_rank < c % k ? 1 : 0));
    r.to = hs_nodes_rank_of(&ND, HB.size, (ND.node_index + 1) % ND.nodes, ND.node_rank);
    r.from = hs_nodes_rank_of(&ND, HB.size, (ND.node_index + ND.nodes - 1) % ND.nodes,
                              ND.node_rank);
    return r;
}

static void step(const lane_role *r)
{
    if (!r->active) return;
    TRY(MPI_Sendrecv(sbuf, r->share, MPI_INT, r->to, 7, rbuf, r->share, MPI_INT, r->from, 7,
                     HB.comm, MPI_STATUS_IGNORE));
}

/* One untimed step with fresh data; returns 1 when any rank received wrong elements
 * (rank 0 wrote the error record). */
static int validate(int k, int64_t c, const lane_role *r)
{
    long long bad = 0, any = 0;
    for (int i = 0; i < r->share; i++) {
        sbuf[i] = value_at(HB.rank, i);
        rbuf[i] = ~sbuf[i];
    }
    TRY(MPI_Barrier(HB.comm));
    step(r);
    for (int i = 0; i < r->share; i++)
        if (rbuf[i] != value_at(r->from, i)) bad++;
    TRY(MPI_Allreduce(&bad, &any, 1, MPI_LONG_LONG, MPI_SUM, HB.comm));
    if (any && HB.rank == 0)
        hs_json_error(HB.out,
                      "validation failed: lane pattern with %d lanes, count %lld: "
                      "%lld wrong elements received",
                      k, (long long)c, any);
    return any != 0;
}

typedef struct {
    int k;
    int64_t c;
    lane_role r;
} lane_cell;

/* Repetitions [from, to) of one (k, c) (hs_repeat_fn): each after a barrier, --steps
 * steps back to back, the time per step on this rank. */
static void time_reps(int64_t from, int64_t to, void *arg)
{
    lane_cell *x = arg;
    for (int64_t i = from; i < to; i++) {
        TRY(MPI_Barrier(HB.comm));
        double t0 = hs_now_s();
        for (int64_t s = 0; s < o_steps; s++) step(&x->r);
        double t1 = hs_now_s();
        t_local[i] = (t1 - t0) * 1e6 / (double)o_steps;
    }
}

static void cell_params(hs_json *j, const void *arg)
{
    const lane_cell *x = arg;
    hs_json_open_object(j, "params");
    hs_json_str(j, "pattern", "lane");
    hs_json_int(j, "lanes", x->k);
    hs_json_int(j, "count", x->c);
    hs_json_int(j, "bytes", x->c * (int64_t)sizeof(int));
    hs_json_int(j, "share", x->c / x->k);
    hs_json_int(j, "steps", o_steps);
    hs_nodes_params(j, &ND, HB.size);
    hs_json_close(j);
}

static int measure(int k, int64_t c)
{
    lane_cell x = { k, c, role(k, c) };
    if (o_validate && validate(k, c, &x.r)) return 1;
    for (int64_t i = 0; i < o_warmup; i++) {
        TRY(MPI_Barrier(HB.comm));
        for (int64_t s = 0; s < o_steps; s++) step(&x.r);
    }
    hs_repeat_result r = hs_repeat(time_reps, &x, 1, o_reps, t_local, t_max);
    int bad = hs_repeat_emit("time_per_step", &r, t_max, o_warmup, cell_params, &x);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = hs_lane_bench_start(
        argc, argv, "lane_pattern", LANE_PATTERN_VERSION, options, &o_out,
        "Lane pattern benchmark (Traff & Hunold, section 2): c elements "
        "per node and step spread over k virtual lanes.\nexample: "
        "LANECOLL_NODE_SIZE=2 mpirun -np 4 lane_pattern --counts 1p:1000p",
        check, &ND);
    if (rc >= 0) return rc;
    int64_t *lanes = NULL, *counts = NULL;
    const char *why = NULL;
    int nlanes = hs_lane_bench_lanes(o_lanes, ND.min_ppn, &lanes);
    if (nlanes < 0) return hs_finish(2);
    int ncounts = hs_counts_parse(strcmp(o_counts, "auto") ? o_counts : "1p:10000p:10",
                                  HB.size, &counts, &why);
    if (ncounts < 0) {
        if (HB.rank == 0) hs_json_error(HB.out, "--counts '%s': %s", o_counts, why);
        return hs_finish(2);
    }
    int64_t maxc = 1;
    for (int i = 0; i < ncounts; i++) {
        if (counts[i] > INT_MAX) {
            if (HB.rank == 0)
                hs_json_error(HB.out, "--counts: %lld is above INT_MAX",
                              (long long)counts[i]);
            return hs_finish(2);
        }
        if (counts[i] > maxc) maxc = counts[i];
    }
    sbuf = hs_alloc((size_t)maxc + 1, sizeof(int));
    rbuf = hs_alloc((size_t)maxc + 1, sizeof(int));
    t_local = malloc(sizeof(double) * (size_t)o_reps);
    t_max = malloc(sizeof(double) * (size_t)o_reps);
    int ok = sbuf && rbuf && t_local && t_max, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, HB.comm);
    if (!all_ok) {
        if (HB.rank == 0)
            hs_json_error(HB.out, "cannot allocate 2 x %lld ints", (long long)maxc);
        return hs_finish(1);
    }
    hs_repeat_init((int64_t)ncounts * nlanes);
    rc = 0;
    for (int i = 0; i < ncounts && !rc; i++) {
        for (int64_t e = 0; e <= counts[i]; e++) sbuf[e] = value_at(HB.rank, e);
        for (int l = 0; l < nlanes && !rc; l++) rc = measure((int)lanes[l], counts[i]);
    }
    free(sbuf);
    free(rbuf);
    free(t_local);
    free(t_max);
    free(lanes);
    free(counts);
    hs_nodes_free(&ND);
    return hs_finish(rc);
}
