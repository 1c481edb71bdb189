/* multi_coll.c - how many collectives can run over the lanes at once at no extra cost?
 * (Träff & Hunold, "Decomposing MPI collectives for exploiting multi-lane communication",
 * section 2, "multi-collective benchmark").
 *
 * The communicator is split into lane communicators (lanecomm i = process i of every
 * node, ranked by node). With k virtual lanes, the first k lane communicators run
 * MPI_Alltoall concurrently, each process sending c elements in total (c/N to each of
 * the N nodes of its lane; c is rounded down to a multiple of N). Each repetition starts
 * after MPI_Barrier on the whole communicator and is timed as the completion time of the
 * slowest process (MPI_Reduce MAX after the loop, or per look with --precision:
 * coll_repeat.h). A system with L physical lanes should
 * sustain about L concurrent alltoalls at the time of one: t(k) ~ t(1) for k <= L, and
 * about k/L times t(1) beyond (the analysis reports t(k)/t(1)).
 *
 * Nodes are lanecoll's (LANECOLL_NODE_SIZE=K emulates nodes of K consecutive ranks); k
 * runs over 1..(fewest processes on a node); a lane needs at least 2 nodes to be more than
 * a local copy, so 1 node is refused. An untimed pass per (k, c) checks every received
 * element (--validate). Memory per process: 2*c ints. Cost: one MPI_Comm_split.
 *
 * Output: JSONL (rank 0, flushed per record): meta, then one sample per (c, k): metric
 * "time", unit "us", params {pattern: "multi_alltoall", lanes, count, bytes (c*4 per
 * process), block, nodes, ppn, p, regular, node_override}.
 * Exit: 0 ok, 1 measurement failed, 2 bad usage.
 */
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */

#include "binding_mpi.h"
#include "coll_nodes.h"
#include "coll_repeat.h"
#include "lane_bench.h"
#include "timer.h"

#define MULTI_COLL_VERSION "0.1.0"

static const char *o_counts, *o_lanes, *o_out;
static int64_t o_reps, o_warmup;
static int o_validate;

static const hs_option options[] = {
    { "counts", HS_OPT_STR, &o_counts, "auto",
      "elements per process in total: auto (1p:10000p:10), a list (1p,10p,4096) or a sweep "
      "FROM:TO[:FACTOR]; p = number of ranks" },
    { "lanes", HS_OPT_STR, &o_lanes, "all",
      "concurrent lane alltoalls k: all (1..ppn) or 1,2" },
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
    if (o_reps < 1)
        why = "--repetitions must be >= 1";
    else if (o_warmup < 0)
        why = "--warmup must be >= 0";
    else
        why = hs_repeat_problem();
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "multi_coll: %s (see --help)\n", why);
    return 2;
}

static hs_nodes ND;
static MPI_Comm lanecomm;
static int *sbuf, *rbuf;
static double *t_local, *t_max;

/* Element i of the block that `rank` sends to lane position `to`. */
static inline int value_at(int rank, int to, int64_t i)
{
    return (int)(((uint64_t)rank * 7919u + (uint64_t)to * 31u + (uint64_t)i * 104729u) %
                 2001u) -
           1000;
}

static void fill(int block)
{
    for (int j = 0; j < ND.nodes; j++)
        for (int i = 0; i < block; i++)
            sbuf[(size_t)j * block + i] = value_at(HB.rank, j, i);
}

static int validate(int k, int64_t c, int block)
{
    long long bad = 0, any = 0;
    fill(block);
    for (int64_t i = 0; i < (int64_t)block * ND.nodes; i++) rbuf[i] = 0x5a5a5a5a;
    TRY(MPI_Barrier(HB.comm));
    if (ND.node_rank < k) {
        TRY(MPI_Alltoall(sbuf, block, MPI_INT, rbuf, block, MPI_INT, lanecomm));
        for (int j = 0; j < ND.nodes; j++) {
            int src = hs_nodes_rank_of(&ND, HB.size, j, ND.node_rank);
            for (int i = 0; i < block; i++)
                if (rbuf[(size_t)j * block + i] != value_at(src, ND.node_index, i)) bad++;
        }
    }
    TRY(MPI_Allreduce(&bad, &any, 1, MPI_LONG_LONG, MPI_SUM, HB.comm));
    if (any && HB.rank == 0)
        hs_json_error(HB.out,
                      "validation failed: %d concurrent lane alltoalls, count %lld: "
                      "%lld wrong elements received",
                      k, (long long)c, any);
    return any != 0;
}

typedef struct {
    int k, block;
    int64_t c;
} multi_cell;

/* Repetitions [from, to) of one (k, c) (hs_repeat_fn): each after a barrier on the whole
 * communicator; the first k lane communicators run MPI_Alltoall. */
static void time_reps(int64_t from, int64_t to, void *arg)
{
    const multi_cell *x = arg;
    for (int64_t i = from; i < to; i++) {
        TRY(MPI_Barrier(HB.comm));
        double t0 = hs_now_s();
        if (ND.node_rank < x->k)
            TRY(MPI_Alltoall(sbuf, x->block, MPI_INT, rbuf, x->block, MPI_INT, lanecomm));
        double t1 = hs_now_s();
        t_local[i] = (t1 - t0) * 1e6;
    }
}

static void cell_params(hs_json *j, const void *arg)
{
    const multi_cell *x = arg;
    hs_json_open_object(j, "params");
    hs_json_str(j, "pattern", "multi_alltoall");
    hs_json_int(j, "lanes", x->k);
    hs_json_int(j, "count", x->c);
    hs_json_int(j, "bytes", x->c * (int64_t)sizeof(int));
    hs_json_int(j, "block", x->block);
    hs_nodes_params(j, &ND, HB.size);
    hs_json_close(j);
}

static int measure(int k, int64_t c)
{
    int block = (int)(c / ND.nodes);
    multi_cell x = { k, block, (int64_t)block * ND.nodes };
    if (o_validate && validate(k, x.c, block)) return 1;
    for (int64_t i = 0; i < o_warmup; i++) {
        TRY(MPI_Barrier(HB.comm));
        if (ND.node_rank < k)
            TRY(MPI_Alltoall(sbuf, block, MPI_INT, rbuf, block, MPI_INT, lanecomm));
    }
    hs_repeat_result r = hs_repeat(time_reps, &x, 1, o_reps, t_local, t_max);
    int bad = hs_repeat_emit("time", &r, t_max, o_warmup, cell_params, &x);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = hs_lane_bench_start(
        argc, argv, "multi_coll", MULTI_COLL_VERSION, options, &o_out,
        "Multi-collective benchmark (Traff & Hunold, section 2): k lane "
        "communicators run MPI_Alltoall concurrently.\nexample: "
        "LANECOLL_NODE_SIZE=2 mpirun -np 4 multi_coll --counts 1p:1000p",
        check, &ND);
    if (rc >= 0) return rc;
    TRY(MPI_Comm_split(HB.comm, ND.node_rank, ND.node_index, &lanecomm));

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
    sbuf = hs_alloc((size_t)maxc, sizeof(int));
    rbuf = hs_alloc((size_t)maxc, sizeof(int));
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
        if (counts[i] < ND.nodes) continue; /* less than one element per destination */
        fill((int)(counts[i] / ND.nodes));
        for (int l = 0; l < nlanes && !rc; l++) rc = measure((int)lanes[l], counts[i]);
    }
    MPI_Comm_free(&lanecomm);
    free(sbuf);
    free(rbuf);
    free(t_local);
    free(t_max);
    free(lanes);
    free(counts);
    hs_nodes_free(&ND);
    return hs_finish(rc);
}
