/* links.c - every link of an allocation at once, then the slow ones alone (after JSC's
 * linktest), and how much the fabric loses under load (bisection, all-to-all).
 *
 * Endpoints: one rank per node and lane. Nodes are lanecoll's (coll_nodes.h: MPI's shared
 * memory groups, the processor name with LANECOLL_NODE_NAME_SEP, or LANECOLL_NODE_SIZE=K
 * to emulate nodes); the lane of a rank is its node rank, so with L ranks per node (the
 * lab's per-process lanes, the simulated platforms' one host per socket and lane) lane l
 * of node a is paired with lane l of node b. Ranks past the fewest per node only join the
 * collectives.
 *
 * Phases, all in one launch:
 *  1. parallel: the node pairs of a 1-factorization (circle method: N-1 rounds for even N,
 *     N rounds with one node idle per round for odd N; in round r nodes i and j with
 *     i + j = 2r mod (M-1) are paired, and r with M-1, M = N rounded up to even) are
 *     measured at once, round after round: per pair a ping-pong of --lat-bytes (latency =
 *     half the round trip, --lat-blocks values of --lat-per-block round trips each) then
 *     of --bw-bytes (bandwidth = bytes / half the round trip, --bw-iterations values).
 *     Each round is timed as a whole (barrier, then the slowest rank's time).
 *     --sequential: the same rounds with their pairs one after another, each alone
 *     (phase "sequential"): what a parallel run's time is compared with.
 *  2. serial: the pairs whose best bandwidth or latency lies beyond the robust rule
 *     (median and MAD over all pairs: worse than the median by more than --k x 1.4826 x
 *     MAD and by more than --floor of it), plus the --retest-extra pairs of highest score
 *     (max(median bw / bw, lat / median lat)), at most --retest-max, are measured again
 *     one pair at a time, every other rank waiting: a slow pair alone is slow, a pair
 *     that is fast alone was slowed by its round. The analysis (hpcscope.analysis.links)
 *     applies the rule to the recorded samples, nodes first; this pair rule only chooses
 *     the re-tests.
 *  3. bisection (--bisection): half of the nodes stream --bw-iterations messages of
 *     --bw-bytes to the other half at once (pairing "halves": node i to node i + N/2, the
 *     two halves of the allocation's order; "random": a seeded random matching), each
 *     lane to the same lane; --bisection-reps repetitions, then every such pair alone.
 *  4. all-to-all (--alltoall-bytes > 0): MPI_Alltoall of that block over all ranks.
 *
 * Cost: (rounds + re-tests) x (lat-blocks x lat-per-block + bw-iterations + warm-ups)
 * round trips per pair, rounds run in parallel; bisection 2 x (1 + 2 x reps) streams per
 * pairing (one together, one alone per pair), all-to-all (1 + reps) calls. Memory per
 * rank: 2 x bw-bytes + 2 x p x alltoall-bytes; rank 0 holds (lat-blocks + bw-iterations)
 * doubles per rank per round and 2 doubles per pair.
 *
 * Output: JSONL (rank 0): meta, then samples (docs/records.md section 4, links):
 *   latency us / bandwidth MB/s, params {test "pingpong", phase parallel|sequential|serial,
 *     round, rank_a, rank_b, node_a, node_b, host_a, host_b, lane, bytes, ...};
 *   time us, params {test "round", phase parallel|sequential, round, pairs};
 *   bandwidth MB/s, params {test "bisection", pairing, phase together|alone, scope pair
 *     (rank_a, ...) | aggregate};
 *   time us, params {test "alltoall", bytes, p}.
 * Exit: 0 ok, 1 measurement failed, 2 bad usage.
 */
#include "coll_util.h" /* first: sets _POSIX_C_SOURCE */

#include <math.h>
#include <time.h>

#include "binding_mpi.h"
#include "coll_nodes.h"
#include "lane_bench.h"
#include "timer.h"

#define LINKS_VERSION "0.1.0"
#define HOST_MAX 64

static const char *o_out;
static int64_t o_lat_bytes, o_lat_blocks, o_lat_per_block, o_bw_bytes, o_bw_iters, o_warmup;
static int64_t o_retest_extra, o_retest_max, o_bisect_reps, o_a2a_bytes, o_a2a_reps, o_seed;
static double o_k, o_floor;
static int o_bisection, o_sequential;

static const hs_option options[] = {
    { "lat-bytes", HS_OPT_SIZE, &o_lat_bytes, "8", "latency ping-pong message size" },
    { "lat-blocks", HS_OPT_INT, &o_lat_blocks, "10", "latency values per pair" },
    { "lat-per-block", HS_OPT_INT, &o_lat_per_block, "10",
      "round trips per latency value" },
    { "bw-bytes", HS_OPT_SIZE, &o_bw_bytes, "1M", "bandwidth ping-pong message size" },
    { "bw-iterations", HS_OPT_INT, &o_bw_iters, "5",
      "bandwidth values (round trips) per pair" },
    { "warmup", HS_OPT_INT, &o_warmup, "1",
      "untimed latency blocks and bandwidth round trips before each pair's values" },
    { "k", HS_OPT_DOUBLE, &o_k, "3", "re-test rule: MADs (x 1.4826) beyond the median" },
    { "floor", HS_OPT_DOUBLE, &o_floor, "0.2",
      "re-test rule: and this share of the median" },
    { "retest-extra", HS_OPT_INT, &o_retest_extra, "3",
      "the slowest pairs re-tested alone besides those the rule flags" },
    { "retest-max", HS_OPT_INT, &o_retest_max, "64", "at most this many serial re-tests" },
    { "sequential", HS_OPT_FLAG, &o_sequential, "0",
      "phase 1 pair after pair, each alone (the reference a parallel run saves time "
      "against)" },
    { "bisection", HS_OPT_FLAG, &o_bisection, "1",
      "bisection phase (halves and random pairing; --bisection=0: off)" },
    { "bisection-reps", HS_OPT_INT, &o_bisect_reps, "3",
      "repetitions of each bisection stream" },
    { "seed", HS_OPT_INT, &o_seed, "1", "seed of the random bisection pairing" },
    { "alltoall-bytes", HS_OPT_SIZE, &o_a2a_bytes, "64K",
      "MPI_Alltoall block per rank pair (0: no all-to-all)" },
    { "alltoall-reps", HS_OPT_INT, &o_a2a_reps, "3", "timed MPI_Alltoall calls" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

static int check(int quiet)
{
    const char *why = NULL;
    if (o_lat_bytes < 1 || o_lat_bytes > INT_MAX)
        why = "--lat-bytes must be between 1 and INT_MAX";
    else if (o_bw_bytes < 1 || o_bw_bytes > INT_MAX)
        why = "--bw-bytes must be between 1 and INT_MAX";
    else if (o_lat_blocks < 1 || o_lat_per_block < 1 || o_bw_iters < 1)
        why = "--lat-blocks, --lat-per-block and --bw-iterations must be >= 1";
    else if (o_lat_blocks > 10000 || o_bw_iters > 10000 || o_bisect_reps > 10000 ||
             o_a2a_reps > 10000 || o_retest_max > 1000000)
        why = "--lat-blocks, --bw-iterations and the repetitions must be <= 10000, "
              "--retest-max <= 1000000";
    else if (o_warmup < 0 || o_retest_extra < 0 || o_retest_max < 0)
        why = "--warmup, --retest-extra and --retest-max must be >= 0";
    else if (!(o_k > 0) || !(o_floor >= 0) || !(o_floor < 1))
        why = "--k must be > 0 and --floor in [0, 1)";
    else if (o_bisect_reps < 1 || o_a2a_reps < 1)
        why = "--bisection-reps and --alltoall-reps must be >= 1";
    else if (o_a2a_bytes < 0 || o_a2a_bytes > INT_MAX)
        why = "--alltoall-bytes must be between 0 and INT_MAX";
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "links: %s (see --help)\n", why);
    return 2;
}

static hs_nodes ND;
static int N, L;                /* nodes, lanes (the fewest ranks on a node) */
static char (*hosts)[HOST_MAX]; /* rank 0: processor name of every rank */
static char *lat_buf, *bw_buf;  /* ping-pong buffers */
static int row_len;             /* lat-blocks + bw-iterations */
static double *row, *rows;      /* this rank's values, rank 0: every rank's */

/* A barrier whose waiting ranks sleep instead of spinning: before a pair measures alone
 * (re-tests, --sequential, bisection alone) every other rank waits here, and on a host
 * whose nodes share its CPUs (the lab) spinning waiters would take the CPUs the pair
 * needs, so "alone" would not be alone. Polls MPI_Ibarrier every 50 us (the wake-up
 * delay is before the timing starts). Under SimGrid a plain barrier: simulated ranks
 * use no CPU of their own, and each MPI_Test would be one more simulated event. */
static void quiet_barrier(void)
{
#ifdef SMPI_SHARED_MALLOC
    TRY(MPI_Barrier(HB.comm));
#else
    MPI_Request req;
    int done = 0;
    struct timespec nap = { 0, 50000 };
    TRY(MPI_Ibarrier(HB.comm, &req));
    for (;;) {
        TRY(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
        if (done) break;
        nanosleep(&nap, NULL);
    }
#endif
}

/* The partner node of `node` in round r (circle method), or -1 when idle (odd N). */
static int partner(int node, int r)
{
    int m = N + (N & 1), fixed = m - 1, other;
    if (node == fixed)
        other = r;
    else if (node == r)
        other = fixed;
    else
        other = ((2 * r - node) % fixed + fixed) % fixed;
    return other >= N ? -1 : other;
}

static int rounds(void) { return N + (N & 1) - 1; }

static int endpoint(int node, int lane)
{
    return hs_nodes_rank_of(&ND, HB.size, node, lane);
}

/* A ping-pong with peer: `warm` untimed then `n` timed blocks of `per` round trips of
 * `bytes`; the pinger stores each block's seconds in out[]. */
static void pingpong(int peer, int pinger, char *buf, int bytes, int64_t warm, int64_t n,
                     int64_t per, double *out)
{
    for (int64_t b = -warm; b < n; b++) {
        double t0 = hs_now_s();
        for (int64_t k = 0; k < per; k++) {
            if (pinger) {
                TRY(MPI_Send(buf, bytes, MPI_BYTE, peer, 11, HB.comm));
                TRY(MPI_Recv(buf, bytes, MPI_BYTE, peer, 11, HB.comm, MPI_STATUS_IGNORE));
            } else {
                TRY(MPI_Recv(buf, bytes, MPI_BYTE, peer, 11, HB.comm, MPI_STATUS_IGNORE));
                TRY(MPI_Send(buf, bytes, MPI_BYTE, peer, 11, HB.comm));
            }
        }
        double t1 = hs_now_s();
        if (b >= 0 && pinger) out[b] = t1 - t0;
    }
}

/* Latency then bandwidth with peer; the pinger's row gets the values in seconds. */
static void measure_pair(int peer, int pinger)
{
    for (int i = 0; i < row_len; i++) row[i] = NAN;
    pingpong(peer, pinger, lat_buf, (int)o_lat_bytes, o_warmup, o_lat_blocks,
             o_lat_per_block, row);
    pingpong(peer, pinger, bw_buf, (int)o_bw_bytes, o_warmup, o_bw_iters, 1,
             row + o_lat_blocks);
}

static void pair_params(hs_json *j, const char *test, const char *phase, int ra, int rb)
{
    hs_json_str(j, "test", test);
    hs_json_str(j, "phase", phase);
    hs_json_int(j, "rank_a", ra);
    hs_json_int(j, "rank_b", rb);
    hs_json_int(j, "node_a", ND.node_of[ra]);
    hs_json_int(j, "node_b", ND.node_of[rb]);
    hs_json_str(j, "host_a", hosts[ra]);
    hs_json_str(j, "host_b", hosts[rb]);
    hs_json_int(j, "lane", ND.rank_on[ra]);
    hs_json_int(j, "lanes", L);
    hs_nodes_params(j, &ND, HB.size);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Rank 0: the latency and bandwidth samples of one pair from its pinger's row r; the
 * lowest latency into *lat_us and the highest bandwidth into *bw (MB/s). Returns 0 or 1
 * (write failed). */
static int emit_pair(const double *r, const char *phase, int round, int ra, int rb,
                     double *lat_us, double *bw)
{
    static double lat[10000], bws[10000], reads[10000]; /* rank 0 only */
    int bad = 0;
    hs_json j;
    for (int64_t i = 0; i < o_lat_blocks; i++) {
        lat[i] = r[i] * 1e6 / (2.0 * (double)o_lat_per_block);
        reads[i] = 2;
    }
    for (int64_t i = 0; i < o_bw_iters; i++)
        bws[i] = (double)o_bw_bytes / (r[o_lat_blocks + i] / 2.0) / 1e6;
    for (int m = 0; m < 2; m++) {
        hs_json_begin(&j, "sample");
        hs_json_str(&j, "metric", m ? "bandwidth" : "latency");
        hs_json_str(&j, "unit", m ? "MB/s" : "us");
        hs_json_open_object(&j, "params");
        pair_params(&j, "pingpong", phase, ra, rb);
        hs_json_int(&j, "bytes", m ? o_bw_bytes : o_lat_bytes);
        if (round >= 0) hs_json_int(&j, "round", round);
        if (!m) hs_json_int(&j, "round_trips", o_lat_per_block);
        hs_json_close(&j);
        hs_json_double_array(&j, "values", m ? bws : lat,
                             (size_t)(m ? o_bw_iters : o_lat_blocks));
        hs_json_int(&j, "warmups", o_warmup);
        hs_timing_json(&j, m ? r + o_lat_blocks : r, reads,
                       (size_t)(m ? o_bw_iters : o_lat_blocks));
        bad |= hs_json_emit(&j, HB.out) != 0;
    }
    /* the pair's best (the analysis's pair value): a bad link is slow every time */
    *lat_us = lat[0];
    *bw = bws[0];
    for (int64_t i = 1; i < o_lat_blocks; i++)
        if (lat[i] < *lat_us) *lat_us = lat[i];
    for (int64_t i = 1; i < o_bw_iters; i++)
        if (bws[i] > *bw) *bw = bws[i];
    return bad;
}

typedef struct {
    int ra, rb;
    double lat, bw, score;
} pair_result;

static pair_result *results; /* rank 0: every pair of the parallel phase */
static int64_t npairs;

static const char *phase1(void) { return o_sequential ? "sequential" : "parallel"; }

/* Phase 1. Returns 0, or 1 when a write failed (on every rank). */
static int parallel_phase(void)
{
    int bad = 0, me_node = ND.node_index, lane = ND.node_rank;
    for (int r = 0; r < rounds(); r++) {
        int pn = lane < L ? partner(me_node, r) : -1;
        int peer = pn >= 0 ? endpoint(pn, lane) : -1;
        TRY(MPI_Barrier(HB.comm));
        double t0 = hs_now_s();
        for (int i = 0; i < row_len; i++) row[i] = NAN;
        if (!o_sequential) {
            if (peer >= 0) measure_pair(peer, me_node < pn);
        } else { /* the round's pairs one after another, in the pinger's rank order */
            for (int q = 0; q < HB.size; q++) {
                int a = ND.node_of[q], l = ND.rank_on[q], b = l < L ? partner(a, r) : -1;
                if (b < 0 || a > b) continue;
                quiet_barrier();
                if (peer >= 0 && (HB.rank == q || HB.rank == endpoint(b, l)))
                    measure_pair(peer, me_node < pn);
            }
        }
        double took = hs_now_s() - t0, slowest = 0;
        TRY(MPI_Reduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, HB.comm));
        TRY(MPI_Gather(row, row_len, MPI_DOUBLE, rows, row_len, MPI_DOUBLE, 0, HB.comm));
        if (HB.rank == 0) {
            int pairs = 0;
            for (int q = 0; q < HB.size; q++) {
                int a = ND.node_of[q], l = ND.rank_on[q];
                int b = l < L ? partner(a, r) : -1;
                if (b < 0 || a > b) continue;
                pair_result *p = &results[npairs++];
                p->ra = q;
                p->rb = endpoint(b, l);
                bad |= emit_pair(rows + (size_t)q * row_len, phase1(), r, p->ra, p->rb,
                                 &p->lat, &p->bw);
                pairs++;
            }
            double us = slowest * 1e6, one = 1;
            hs_json j;
            hs_json_begin(&j, "sample");
            hs_json_str(&j, "metric", "time");
            hs_json_str(&j, "unit", "us");
            hs_json_open_object(&j, "params");
            hs_json_str(&j, "test", "round");
            hs_json_str(&j, "phase", phase1());
            hs_json_int(&j, "round", r);
            hs_json_int(&j, "pairs", pairs);
            hs_json_int(&j, "lanes", L);
            hs_nodes_params(&j, &ND, HB.size);
            hs_json_close(&j);
            hs_json_double_array(&j, "values", &us, 1);
            hs_json_int(&j, "warmups", 0);
            hs_timing_json(&j, &slowest, &one, 1);
            bad |= hs_json_emit(&j, HB.out) != 0;
        }
    }
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* median and 1.4826 x MAD of v (copied) */
static void robust(const double *v, int64_t n, double *med, double *scale)
{
    double *w = malloc(sizeof *w * (size_t)n);
    for (int64_t i = 0; i < n; i++) w[i] = v[i];
    *med = median(w, (size_t)n);
    for (int64_t i = 0; i < n; i++) w[i] = fabs(v[i] - *med);
    *scale = 1.4826 * median(w, (size_t)n);
    free(w);
}

static int cmp_score(const void *a, const void *b)
{
    double x = ((const pair_result *)a)->score, y = ((const pair_result *)b)->score;
    return (x < y) - (x > y); /* descending */
}

/* Rank 0: the pairs to re-test into pick[2*i], pick[2*i+1]; returns how many. */
static int choose_retests(int *pick)
{
    double *lat = malloc(sizeof *lat * (size_t)npairs),
           *bw = malloc(sizeof *bw * (size_t)npairs);
    double mlat, slat, mbw, sbw;
    for (int64_t i = 0; i < npairs; i++) {
        lat[i] = results[i].lat;
        bw[i] = results[i].bw;
    }
    robust(lat, npairs, &mlat, &slat);
    robust(bw, npairs, &mbw, &sbw);
    pair_result *c = malloc(sizeof *c * (size_t)npairs);
    for (int64_t i = 0; i < npairs; i++) {
        c[i] = results[i];
        int flag = (lat[i] > mlat + o_k * slat && lat[i] > mlat * (1 + o_floor)) ||
                   (bw[i] < mbw - o_k * sbw && bw[i] < mbw * (1 - o_floor));
        double s1 = bw[i] > 0 ? mbw / bw[i] : INFINITY, s2 = mlat > 0 ? lat[i] / mlat : 0;
        c[i].score = (s1 > s2 ? s1 : s2) + (flag ? 1e9 : 0); /* flagged first */
    }
    qsort(c, (size_t)npairs, sizeof *c, cmp_score);
    int n = 0;
    int64_t extra = 0;
    for (int64_t i = 0; i < npairs && n < o_retest_max; i++) {
        if (c[i].score < 1e9 && extra++ >= o_retest_extra) break; /* flagged come first */
        pick[2 * n] = c[i].ra;
        pick[2 * n + 1] = c[i].rb;
        n++;
    }
    free(lat);
    free(bw);
    free(c);
    return n;
}

/* Phase 2. */
static int serial_phase(void)
{
    int n = 0, bad = 0;
    int *pick = malloc(sizeof *pick * 2 * (size_t)(o_retest_max + 1));
    if (HB.rank == 0) n = npairs ? choose_retests(pick) : 0;
    TRY(MPI_Bcast(&n, 1, MPI_INT, 0, HB.comm));
    TRY(MPI_Bcast(pick, 2 * n, MPI_INT, 0, HB.comm));
    for (int i = 0; i < n; i++) {
        int ra = pick[2 * i], rb = pick[2 * i + 1];
        quiet_barrier();
        if (HB.rank == ra || HB.rank == rb)
            measure_pair(HB.rank == ra ? rb : ra, HB.rank == ra);
        if (HB.rank == ra && ra != 0)
            TRY(MPI_Send(row, row_len, MPI_DOUBLE, 0, 12, HB.comm));
        if (HB.rank == 0) {
            double lat, bw;
            if (ra != 0)
                TRY(MPI_Recv(rows, row_len, MPI_DOUBLE, ra, 12, HB.comm,
                             MPI_STATUS_IGNORE));
            bad |= emit_pair(ra != 0 ? rows : row, "serial", -1, ra, rb, &lat, &bw);
        }
    }
    free(pick);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* Bisection streams: the sender sends bw-iterations messages then waits for a 1-byte ack;
 * its time is the stream's. */
static double stream(int peer, int sender)
{
    double t0 = hs_now_s();
    for (int64_t i = 0; i < o_bw_iters; i++) {
        if (sender)
            TRY(MPI_Send(bw_buf, (int)o_bw_bytes, MPI_BYTE, peer, 13, HB.comm));
        else
            TRY(MPI_Recv(bw_buf, (int)o_bw_bytes, MPI_BYTE, peer, 13, HB.comm,
                         MPI_STATUS_IGNORE));
    }
    if (sender)
        TRY(MPI_Recv(lat_buf, 1, MPI_BYTE, peer, 14, HB.comm, MPI_STATUS_IGNORE));
    else
        TRY(MPI_Send(lat_buf, 1, MPI_BYTE, peer, 14, HB.comm));
    return hs_now_s() - t0;
}

/* the pairing's partner node of every node, -1 idle; senders are those with to[i] > -1
 * and is_sender[i] */
static void pairing(int random, int *to, int *sender)
{
    int *order = malloc(sizeof *order * (size_t)N), h = N / 2;
    for (int i = 0; i < N; i++) order[i] = i;
    if (random) { /* Fisher-Yates with a 64-bit LCG (Knuth's MMIX constants) */
        uint64_t s = (uint64_t)o_seed * 2862933555777941757ULL + 3037000493ULL;
        for (int i = N - 1; i > 0; i--) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            int j = (int)((s >> 33) % (uint64_t)(i + 1)), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
    }
    for (int i = 0; i < N; i++) to[i] = -1, sender[i] = 0;
    for (int i = 0; i < h; i++) {
        int a = random ? order[2 * i] : i, b = random ? order[2 * i + 1] : i + h;
        to[a] = b;
        to[b] = a;
        sender[a] = 1;
    }
    free(order);
}

static int emit_bw(const char *pairing_name, const char *phase, int ra, int rb,
                   const double *mbs, const double *secs, int64_t n)
{
    static double reads[10000]; /* rank 0 only */
    for (int64_t i = 0; i < n; i++) reads[i] = 2;
    hs_json j;
    hs_json_begin(&j, "sample");
    hs_json_str(&j, "metric", "bandwidth");
    hs_json_str(&j, "unit", "MB/s");
    hs_json_open_object(&j, "params");
    if (ra >= 0) {
        pair_params(&j, "bisection", phase, ra, rb);
        hs_json_str(&j, "scope", "pair");
    } else {
        hs_json_str(&j, "test", "bisection");
        hs_json_str(&j, "phase", phase);
        hs_json_str(&j, "scope", "aggregate");
        hs_json_int(&j, "lanes", L);
        hs_nodes_params(&j, &ND, HB.size);
    }
    hs_json_str(&j, "pairing", pairing_name);
    hs_json_int(&j, "seed", o_seed);
    hs_json_int(&j, "bytes", o_bw_bytes);
    hs_json_int(&j, "messages", o_bw_iters);
    hs_json_close(&j);
    hs_json_double_array(&j, "values", mbs, (size_t)n);
    hs_json_int(&j, "warmups", 1);
    hs_timing_json(&j, secs, reads, (size_t)n);
    return hs_json_emit(&j, HB.out) != 0;
}

/* Phase 3: one pairing, together then alone. */
static int bisection(int random)
{
    const char *name = random ? "random" : "halves";
    int *to = malloc(sizeof *to * (size_t)N), *snd = malloc(sizeof *snd * (size_t)N),
        bad = 0;
    pairing(random, to, snd);
    int me = ND.node_index, lane = ND.node_rank;
    int peer = lane < L && to[me] >= 0 ? endpoint(to[me], lane) : -1;
    int64_t reps = o_bisect_reps;
    double *mine = calloc((size_t)reps, sizeof *mine);
    double *all = HB.rank == 0 ? calloc((size_t)reps * HB.size, sizeof *all) : NULL;
    double *agg = calloc((size_t)reps, sizeof *agg),
           *aggs = calloc((size_t)reps, sizeof *aggs);
    double bytes_all = 0;
    for (int q = 0; q < HB.size; q++)
        if (ND.rank_on[q] < L && to[ND.node_of[q]] >= 0 && snd[ND.node_of[q]])
            bytes_all += (double)o_bw_bytes * (double)o_bw_iters;
    for (int64_t r = -1; r < reps; r++) { /* r = -1: warm-up */
        TRY(MPI_Barrier(HB.comm));
        double t = peer >= 0 ? stream(peer, snd[me]) : 0, slowest = 0;
        TRY(MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, HB.comm));
        if (r >= 0) {
            mine[r] = peer >= 0 && snd[me] ? t : NAN;
            aggs[r] = slowest;
            agg[r] = bytes_all / slowest / 1e6;
        }
    }
    /* all[q * reps + r]: sender q's time in repetition r */
    TRY(MPI_Gather(mine, (int)reps, MPI_DOUBLE, all, (int)reps, MPI_DOUBLE, 0, HB.comm));
    double *mbs = calloc((size_t)reps, sizeof *mbs);
    if (HB.rank == 0) {
        bad |= emit_bw(name, "together", -1, -1, agg, aggs, reps);
        for (int q = 0; q < HB.size; q++) {
            int a = ND.node_of[q], l = ND.rank_on[q];
            if (l >= L || to[a] < 0 || !snd[a]) continue;
            for (int64_t r = 0; r < reps; r++)
                mbs[r] = (double)o_bw_bytes * (double)o_bw_iters / all[q * reps + r] / 1e6;
            bad |=
                emit_bw(name, "together", q, endpoint(to[a], l), mbs, all + q * reps, reps);
        }
    }
    /* alone: each sender in rank order, every other rank waiting */
    for (int q = 0; q < HB.size; q++) {
        int a = ND.node_of[q], l = ND.rank_on[q];
        if (l >= L || to[a] < 0 || !snd[a]) continue;
        int rb = endpoint(to[a], l);
        for (int64_t r = -1; r < reps; r++) {
            quiet_barrier();
            if (HB.rank == q || HB.rank == rb) {
                double t = stream(HB.rank == q ? rb : q, HB.rank == q);
                if (r >= 0 && HB.rank == q) mine[r] = t;
            }
        }
        if (HB.rank == q && q != 0)
            TRY(MPI_Send(mine, (int)reps, MPI_DOUBLE, 0, 15, HB.comm));
        if (HB.rank == 0) {
            if (q != 0)
                TRY(MPI_Recv(all, (int)reps, MPI_DOUBLE, q, 15, HB.comm,
                             MPI_STATUS_IGNORE));
            double *secs = q != 0 ? all : mine;
            for (int64_t r = 0; r < reps; r++)
                mbs[r] = (double)o_bw_bytes * (double)o_bw_iters / secs[r] / 1e6;
            bad |= emit_bw(name, "alone", q, rb, mbs, secs, reps);
        }
    }
    free(to);
    free(snd);
    free(mine);
    free(all);
    free(agg);
    free(aggs);
    free(mbs);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

/* Phase 4. */
static int alltoall(void)
{
    size_t block = (size_t)o_a2a_bytes, total = block * (size_t)HB.size;
    char *s = hs_alloc(total, 1), *r = hs_alloc(total, 1);
    int ok = s && r, all_ok = 0, bad = 0;
    TRY(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, HB.comm));
    if (!all_ok) {
        if (HB.rank == 0)
            hs_json_error(HB.out, "cannot allocate 2 x %zu bytes for the all-to-all",
                          total);
        free(s);
        free(r);
        return 1;
    }
    int64_t reps = o_a2a_reps;
    double *us = calloc((size_t)reps, sizeof *us),
           *secs = calloc((size_t)reps, sizeof *secs);
    double *reads = calloc((size_t)reps, sizeof *reads);
    for (int64_t i = -1; i < reps; i++) {
        TRY(MPI_Barrier(HB.comm));
        double t0 = hs_now_s();
        TRY(MPI_Alltoall(s, (int)block, MPI_BYTE, r, (int)block, MPI_BYTE, HB.comm));
        double t = hs_now_s() - t0, slowest = 0;
        TRY(MPI_Reduce(&t, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, HB.comm));
        if (i >= 0) {
            secs[i] = slowest;
            us[i] = slowest * 1e6;
            reads[i] = 2;
        }
    }
    if (HB.rank == 0) {
        hs_json j;
        hs_json_begin(&j, "sample");
        hs_json_str(&j, "metric", "time");
        hs_json_str(&j, "unit", "us");
        hs_json_open_object(&j, "params");
        hs_json_str(&j, "test", "alltoall");
        hs_json_int(&j, "bytes", o_a2a_bytes);
        hs_json_int(&j, "lanes", L);
        hs_nodes_params(&j, &ND, HB.size);
        hs_json_close(&j);
        hs_json_double_array(&j, "values", us, (size_t)reps);
        hs_json_int(&j, "warmups", 1);
        hs_timing_json(&j, secs, reads, (size_t)reps);
        bad = hs_json_emit(&j, HB.out) != 0;
    }
    free(s);
    free(r);
    free(us);
    free(secs);
    free(reads);
    TRY(MPI_Bcast(&bad, 1, MPI_INT, 0, HB.comm));
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = hs_lane_bench_start(
        argc, argv, "links", LINKS_VERSION, options, &o_out,
        "Every pair of nodes (and lanes) in parallel rounds, the slow pairs again alone, "
        "bisection and all-to-all under load.\nexample: LANECOLL_NODE_SIZE=1 mpirun -np 4 "
        "links --bw-bytes 256K",
        check, &ND);
    if (rc >= 0) return rc;
    N = ND.nodes;
    L = ND.min_ppn;
    row_len = (int)(o_lat_blocks + o_bw_iters);
    char name[MPI_MAX_PROCESSOR_NAME] = "", mine[HOST_MAX] = "";
    int len = 0;
    MPI_Get_processor_name(name, &len);
    snprintf(mine, sizeof mine, "%s", name);
    hosts = HB.rank == 0 ? malloc(sizeof *hosts * (size_t)HB.size) : NULL;
    TRY(MPI_Gather(mine, HOST_MAX, MPI_CHAR, hosts, HOST_MAX, MPI_CHAR, 0, HB.comm));
    lat_buf = hs_alloc((size_t)o_lat_bytes, 1);
    bw_buf = hs_alloc((size_t)o_bw_bytes, 1);
    row = malloc(sizeof *row * (size_t)row_len);
    if (HB.rank == 0) {
        int64_t pairs = (int64_t)N * (N - 1) / 2 * L;
        rows = malloc(sizeof *rows * (size_t)row_len * (size_t)HB.size);
        results = malloc(sizeof *results * (size_t)(pairs > 0 ? pairs : 1));
    }
    int ok = lat_buf && bw_buf && row && (HB.rank != 0 || (rows && results && hosts)),
        all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, HB.comm);
    if (!all_ok) {
        if (HB.rank == 0) hs_json_error(HB.out, "cannot allocate the ping-pong buffers");
        return hs_finish(1);
    }
    rc = parallel_phase();
    if (!rc) rc = serial_phase();
    if (!rc && o_bisection && N >= 2) rc = bisection(0);
    if (!rc && o_bisection && N >= 4) rc = bisection(1);
    if (!rc && o_a2a_bytes > 0) rc = alltoall();
    free(lat_buf);
    free(bw_buf);
    free(row);
    free(rows);
    free(results);
    free(hosts);
    hs_nodes_free(&ND);
    return hs_finish(rc);
}
