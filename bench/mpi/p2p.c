/* p2p.c - MPI point-to-point benchmark between exactly two ranks, OSU definitions.
 *
 * Tests (the OSU Micro-Benchmarks program each one reproduces in brackets, docs/architecture.md):
 *   latency  [osu_latency]  blocking MPI_Send/MPI_Recv ping-pong; half a round trip, in us
 *   bw       [osu_bw]       rank 0 posts a window of W MPI_Isend + MPI_Waitall, rank 1 W
 *                           MPI_Irecv, then a 1-byte ack; bytes*W*iterations/time in MB/s
 *   bibw     [osu_bibw]     both ranks post W MPI_Irecv and W MPI_Isend, then wait;
 *                           2*bytes*W*iterations/time in MB/s
 *   mbw_mr   [osu_mbw_mr]   bw with one pair and an untimed MPI_Barrier before every
 *                           iteration (as OSU 7 does); W*iterations/time in messages/s
 * and, as IMB-MPI1 defines them (opt-in: not in the default --tests):
 *   pingping [IMB PingPing] both ranks MPI_Isend to each other, MPI_Recv, MPI_Wait;
 *                           t = time per iteration in us, bandwidth = bytes/t
 *   sendrecv [IMB Sendrecv] periodic chain: each rank MPI_Sendrecv to its right neighbour
 *                           and from its left (with 2 ranks both are the other rank);
 *                           t per iteration, bandwidth = 2*bytes/t
 *   exchange [IMB Exchange] each rank MPI_Isend to its right and left neighbours, MPI_Recv
 *                           from left then right, MPI_Waitall; t per iteration,
 *                           bandwidth = 4*bytes/t
 *   Their sample values are t (metric time, us); the summary adds IMB's Mbytes/sec as
 *   bandwidth_mb_per_s (IMB: scale_bw*bytes/t, MB = 10^6). IMB takes t as the maximum
 *   over ranks of each rank's own loop time; here rank 0's clock times the loop, as for
 *   every test here (with 2 ranks in lockstep the two differ by the last iteration's
 *   skew). Counts: osu_latency's (10000, >8K 1000; IMB runs 1000, fewer above 40 KB).
 *   They have no OSU counterpart: --format osu and --protocol osu refuse them.
 * and OSU 7.4's other two-rank programs (opt-in as well):
 *   latency_persistent, bw_persistent, bibw_persistent [osu_*_persistent]  latency, bw
 *                           and bibw with requests made once per size (MPI_Send_init /
 *                           MPI_Recv_init) and MPI_Start(all) + MPI_Wait(all) per
 *                           iteration; bibw_persistent waits for its sends, then its
 *                           receives, on both ranks (OSU's order); same metrics
 *   latency_mt [osu_latency_mt]  latency with --threads M:N: M threads on rank 0 and
 *                           N on rank 1 (OSU -t M:N, default 1:2), under
 *                           MPI_THREAD_MULTIPLE (asked for only when latency_mt runs; a
 *                           library that provides less is refused before anything is
 *                           measured, the level it gave in the error record). Iteration i
 *                           of a block is thread i mod M's (rank 0) and i mod N's (rank 1);
 *                           with M > 1 the tag is i, as OSU. The block is timed on rank
 *                           0 from releasing its threads to their last reply, and
 *                           latency = t * M / (2 * count): each sender thread's half round
 *                           trip. The threads share the rank's CPUs (its binding), as in OSU.
 *   latency_mp [osu_latency_mp]  latency while rank 0 has M and rank 1 N children forked
 *                           after MPI_Init (--processes M:N, OSU's -t M:N, default
 *                           2:2). As in OSU the children never call MPI: they wait on a pipe
 *                           and _exit when the test ends; the ranks measure with a copy-on-
 *                           write image of themselves alive (what fork does to registered or
 *                           shared memory). osu protocol: OSU's barrier before every
 *                           iteration, outside the clock. Refused in SimGrid builds (every
 *                           rank is a thread of one simulator process: fork copies all).
 *   multi_lat [osu_multi_lat]  N pairs at once (any even count of ranks): rank r < N
 *                           ping-pongs with r + N, a barrier before every iteration; the
 *                           pairs' latencies averaged on rank 0
 *   bw_fan_in, bw_fan_out [osu_bw_fan_in, osu_bw_fan_out]  congestion: the ranks form
 *                           G = ranks / --fan-ppn groups of K = --fan-ppn consecutive
 *                           ranks (the suite places one group per node, socket or core
 *                           set; OSU groups by MPI_Get_processor_name, which several
 *                           "nodes" on one host share). Group 0 is the root. fan_in:
 *                           local rank l of every other group posts W MPI_Isend to rank l,
 *                           which posts W*(G-1) MPI_Irecv, then 1-byte acks back; fan_out
 *                           the other way round. Timed on the senders (fan_in: every
 *                           leaf rank, fan_out: the root group's), their times averaged
 *                           as OSU does (MPI_Reduce sum / number of timing ranks);
 *                           bandwidth = bytes*W*(G-1)*K*iterations/time in MB/s: what
 *                           enters (leaves) the root group in all. osu_bw's counts.
 *   Their titles are OSU's (--format/--protocol osu reproduce them).
 * MB = 10^6 bytes. Counts default to OSU's (LAT/BW_LOOP/SKIP_SMALL and _LARGE, "large"
 * meaning > 8192 bytes); bw and bibw start at 1 byte like OSU (an empty message carries no
 * bandwidth). Warm-ups run first and are discarded.
 *
 * Raw samples: the timed iterations are cut into blocks, timed back to back (one clock
 * reading per block boundary, so the blocks add up to the whole loop); each sample is the
 * per-iteration metric of one block. A block is --block iterations, fewer when needed so
 * every size yields >= 10 samples. Cost: one hs_now_s() per block (20-30 ns on bare metal,
 * ~100 ns measured on a KVM guest; the meta record's timer.overhead_ns says), i.e. < 0.1%
 * of a 100-iteration block of 0.3 us ping-pongs. mbw_mr has to stop the clock around its
 * per-iteration barrier: two readings per iteration of W messages. Each summary's "timing"
 * says whether the intervals were long enough for the clock (hs_timing_json).
 * The "summary" record holds OSU's number: total timed time over all timed iterations.
 * --repeat R measures each size R times in one launch; --alternate-whole additionally times
 * every repetition as one whole-loop block, order alternating, so benchmarks/p2p_overhead
 * can compare both at millisecond distance (separate launches on a shared machine differ
 * by far more than the effect: measured +0.3..0.6 % for blocks of 100 at 0.17 us).
 *
 * Protocols (--protocol, docs/osu.md "Why hpcscope differs from OSU"):
 *   hpcscope  the blocks above; sizes in --order (up, down, random with --seed: the suite
 *             draws a new order per launch), each size up to 8 KiB warmed up for at
 *             least --warmup-ms (5 ms) on top of OSU's counts;
 *   osu       OSU 7.4's loop: rank 0 reads MPI_Wtime before and after every timed
 *             iteration and sums the intervals (samples = per-block sums, no extra reads),
 *             sizes from 1 B ascending, two barriers per mbw_mr iteration, bibw waits for
 *             sends then receives, OSU's counts and nothing more.
 * Experiment knobs (benchmarks/osu_differences): --timer iteration, --buffers fresh,
 * --alternate-timer (both timer placements per repetition, at millisecond distance).
 *
 * Output: JSONL records (meta, then per test and size one sample and one summary, last
 * the cpu_pair record; rank 0 only, flushed per record), or with --format osu the text
 * columns of the OSU programs.
 * Exit: 0 ok, 1 measurement failed (error record written), 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <pthread.h>
#include <sys/wait.h>
#include <limits.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binding_mpi.h"
#include "jsonl.h"
#include "mpi_run.h"
#include "options.h"
#include "out_file.h"
#include "precision.h"
#include "timer.h"

#define P2P_VERSION "0.1.0"
#define LARGE_MESSAGE 8192 /* OSU LARGE_MESSAGE_SIZE: above it the _LARGE counts apply */
#define MIN_SAMPLES 10     /* blocks are shrunk so each size gives at least this many */
#define VALIDATE_ITERS 2   /* untimed iterations per size checked by --validate */
#define ADAPTIVE_CAP 20    /* --precision: at most this many times the fixed count */
#define TAG_DATA 100
#define TAG_ACK 101
#define TAG_MT 200      /* latency_mt with several sender threads: TAG_MT + i mod 16384 */
#define MAX_THREADS 128 /* OSU's MAX_NUM_THREADS and MAX_NUM_PROCESSES (exclusive) */
#define MAX_FAN_PPN 1024

/* ---- options (one table drives parsing, --help and the echo in meta) ----------------- */

static const char *o_tests, *o_data, *o_format, *o_out, *o_protocol, *o_timer, *o_order,
    *o_buffers, *o_sizes;
static int64_t o_min, o_max, o_iters, o_warmup, o_block, o_window, o_repeat, o_seed;
static const char *o_threads_mn, *o_procs_mn;
static int64_t o_threads, o_sender_threads, o_procs, o_sender_procs; /* parsed from them */
static int64_t o_fan_ppn;
static double o_scale, o_warmup_ms, o_precision, o_size_budget_ms;
static int o_validate, o_alternate, o_alternate_timer;

static const hs_option options[] = {
    { "protocol", HS_OPT_STR, &o_protocol, "hpcscope",
      "hpcscope (blocks timed back to back, sizes in --order) or osu (OSU 7.4's loops: "
      "MPI_Wtime around every iteration, sizes from 1 B ascending, its barriers)" },
    { "tests", HS_OPT_STR, &o_tests, "latency,bw,bibw,mbw_mr",
      "comma-separated tests: latency, bw, bibw, mbw_mr, pingping, sendrecv, exchange "
      "(IMB-MPI1's), latency_persistent, bw_persistent, bibw_persistent, latency_mt, "
      "latency_mp, multi_lat, bw_fan_in, bw_fan_out" },
    { "threads", HS_OPT_STR, &o_threads_mn, "1:2",
      "latency_mt: threads, sender (rank 0) : receiver (rank 1), or N receivers (OSU -t)" },
    { "processes", HS_OPT_STR, &o_procs_mn, "2:2",
      "latency_mp: forked children, sender : receiver, or N receivers (OSU -t)" },
    { "fan-ppn", HS_OPT_INT, &o_fan_ppn, "1",
      "bw_fan_in/out: ranks per group (consecutive ranks; group 0 is the root), OSU's "
      "processes per node" },
    { "min-size", HS_OPT_SIZE, &o_min, "0",
      "smallest message in bytes; sizes double from it" },
    { "max-size", HS_OPT_SIZE, &o_max, "4M", "largest message in bytes" },
    { "sizes", HS_OPT_STR, &o_sizes, "",
      "comma-separated sizes to measure instead of --min-size..--max-size (e.g. 8,64,4K)" },
    HS_SIZE_PRECISION_OPTIONS(o_precision, o_size_budget_ms, "20x the fixed count"),
    { "iterations", HS_OPT_INT, &o_iters, "0",
      "timed iterations per size; 0 = OSU's (latency 10000, >8K 1000; bandwidth 100, >8K "
      "20)" },
    { "warmup", HS_OPT_INT, &o_warmup, "-1",
      "discarded warm-up iterations per size; -1 = OSU's (latency 100, >8K 10; bandwidth "
      "10, >8K 2)" },
    { "warmup-ms", HS_OPT_DOUBLE, &o_warmup_ms, "-1",
      "warm up each size up to 8 KiB for at least this long (more iterations after "
      "--warmup's); -1 = the protocol's: hpcscope 5, osu 0" },
    { "scale-iterations", HS_OPT_DOUBLE, &o_scale, "1",
      "multiply iteration and warm-up counts (0.1 for a quick run; at least 1 is kept)" },
    { "block", HS_OPT_INT, &o_block, "100",
      "iterations per timed block = per sample (lowered to give >= 10 samples); 0 = whole "
      "loop" },
    { "window", HS_OPT_INT, &o_window, "64",
      "messages in flight in bw, bibw, mbw_mr (OSU -W)" },
    { "timer", HS_OPT_STR, &o_timer, "auto",
      "block (one clock reading per block), iteration (MPI_Wtime before and after every "
      "iteration, as OSU), auto = the protocol's" },
    { "order", HS_OPT_STR, &o_order, "up",
      "size order within a test: up, down, or random (shuffled with --seed)" },
    { "seed", HS_OPT_INT, &o_seed, "0",
      "seed of --order random; 0 = drawn from the clock (the drawn seed is in meta)" },
    { "buffers", HS_OPT_STR, &o_buffers, "reuse",
      "reuse (one buffer pair for every size, like OSU) or fresh (new, touched buffers "
      "per size)" },
    { "repeat", HS_OPT_INT, &o_repeat, "1",
      "measure each test and size this many times back to back (params.repeat counts "
      "them)" },
    { "alternate-timer", HS_OPT_FLAG, &o_alternate_timer, "0",
      "harness check: time every repetition with blocks and with per-iteration MPI_Wtime, "
      "order alternating" },
    { "alternate-whole", HS_OPT_FLAG, &o_alternate, "0",
      "harness check: also time every repetition as one whole-loop block, order "
      "alternating" },
    { "data", HS_OPT_STR, &o_data, "constant",
      "buffer contents: constant (like OSU) or varying (rank/size/iteration pattern)" },
    { "validate", HS_OPT_FLAG, &o_validate, "0",
      "check every received byte in an untimed pass before timing each size" },
    { "format", HS_OPT_STR, &o_format, "jsonl",
      "output: jsonl records or osu text columns" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

/* ---- the tests ----------------------------------------------------------------------- */

enum {
    LAT,
    BW,
    BIBW,
    MBW_MR,
    PINGPING,
    SENDRECV,
    EXCHANGE,
    LAT_P,
    BW_P,
    BIBW_P,
    LAT_MT,
    LAT_MP,
    MULTI_LAT,
    BW_FAN_IN,
    BW_FAN_OUT,
    NTESTS
};
static const struct {
    const char *name, *metric, *unit, *osu_title, *osu_column;
    int windowed, min_bytes;
} tests[NTESTS] = {
    { "latency", "latency", "us", "# OSU MPI Latency Test", "Latency (us)", 0, 0 },
    { "bw", "bandwidth", "MB/s", "# OSU MPI Bandwidth Test", "Bandwidth (MB/s)", 1, 1 },
    { "bibw", "bibandwidth", "MB/s", "# OSU MPI Bi-Directional Bandwidth Test",
      "Bandwidth (MB/s)", 1, 1 },
    { "mbw_mr", "message_rate", "msg/s", "# OSU MPI Multiple Bandwidth / Message Rate Test",
      NULL, 1, 0 },
    { "pingping", "time", "us", NULL, NULL, 0, 0 },
    { "sendrecv", "time", "us", NULL, NULL, 0, 0 },
    { "exchange", "time", "us", NULL, NULL, 0, 0 },
    { "latency_persistent", "latency", "us", "# OSU MPI Latency Persistent Test",
      "Latency (us)", 0, 0 },
    { "bw_persistent", "bandwidth", "MB/s", "# OSU MPI Bandwidth Persistent Test",
      "Bandwidth (MB/s)", 1, 1 },
    { "bibw_persistent", "bibandwidth", "MB/s",
      "# OSU MPI Bi-Directional Bandwidth Persistent Test", "Bandwidth (MB/s)", 1, 1 },
    { "latency_mt", "latency", "us", "# OSU MPI Multi-threaded Latency Test",
      "Latency (us)", 0, 0 },
    { "latency_mp", "latency", "us", "# OSU MPI Multi-process Latency Test", "Latency (us)",
      0, 0 },
    { "multi_lat", "latency", "us", "# OSU MPI Multi Latency Test", "Latency (us)", 0, 0 },
    /* OSU's congestion programs print osu_bw's title */
    { "bw_fan_in", "bandwidth", "MB/s", "# OSU MPI Bandwidth Test", "Bandwidth (MB/s)", 1,
      1 },
    { "bw_fan_out", "bandwidth", "MB/s", "# OSU MPI Bandwidth Test", "Bandwidth (MB/s)", 1,
      1 },
};
/* IMB-MPI1's scale_bw: messages of `bytes` one iteration counts in its Mbytes/sec (0: not
 * an IMB test). */
static const int imb_messages[NTESTS] = { 0, 0, 0, 0, 1, 2, 4, 0, 0, 0, 0, 0, 0, 0, 0 };
#define IMB(test) (imb_messages[test] > 0)
/* The ping-pongs (metric latency, osu_latency's counts) and the windowed bandwidths. */
#define PINGPONG(test)                                                           \
    ((test) == LAT || (test) == LAT_P || (test) == LAT_MT || (test) == LAT_MP || \
     (test) == MULTI_LAT)
#define ONEWAY(test) ((test) == BW || (test) == BW_P || (test) == MBW_MR)
#define TWOWAY(test) ((test) == BIBW || (test) == BIBW_P)
#define FAN(test) ((test) == BW_FAN_IN || (test) == BW_FAN_OUT)

typedef struct {
    int rank;
    MPI_Comm comm;
    char *sbuf, *rbuf; /* page-aligned, max(max-size, 1) bytes each */
    MPI_Request *req;  /* nreq: 2 * window, or window * (groups - 1) for the fan tests */
    MPI_Status *stat;  /* nreq; OSU passes status arrays too (and MPICH's
                           MPI_STATUSES_IGNORE trips gcc's -Wstringop-overflow) */
    int window;
    FILE *out;            /* rank 0 only */
    int osu;              /* --format osu */
    int osu_loops;        /* --protocol osu */
    int per_iter;         /* --timer iteration */
    double warmup_s;      /* --warmup-ms, resolved */
    double size_budget_s; /* --size-budget-ms, in s; 0 = none */
    int64_t sizes[64];    /* --sizes, parsed; nsizes = 0: --min-size..--max-size */
    int nsizes;
    MPI_Request *preq; /* 2 * window: the persistent tests' requests of one size, [sends,
                          receives] (latency_persistent: [send, receive]) */
    int provided;      /* MPI_Init_thread's level (MPI_THREAD_SINGLE without latency_mt) */
    int pairs;         /* multi_lat: ranks / 2; rank r < pairs pairs with r + pairs */
    int size;          /* ranks in C.comm */
    int fan_groups;    /* bw_fan_*: ranks / --fan-ppn; rank r is in group r / --fan-ppn */
} ctx;

static ctx C;

/* Any MPI failure ends the run: error record from rank 0 (stderr elsewhere), exit 1. */
static void fail_mpi(const char *call, int rc, int line)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, msg, &len);
    if (C.rank == 0 && C.out && !C.osu)
        hs_json_error(C.out, "%s failed on rank 0 (p2p.c:%d): %s", call, line, msg);
    else
        fprintf(stderr, "p2p: %s failed on rank %d (p2p.c:%d): %s\n", call, C.rank, line,
                msg);
    MPI_Abort(MPI_COMM_WORLD, 1);
}
#define TRY(call)                                               \
    do {                                                        \
        int rc_ = (call);                                       \
        if (rc_ != MPI_SUCCESS) fail_mpi(#call, rc_, __LINE__); \
    } while (0)

/* The rank this one exchanges with: the other of 2, multi_lat's partner, or for the fan
 * tests the root group's rank of the same local index (a root rank: the first leaf's). */
static int peer_of(int test)
{
    if (FAN(test))
        return C.rank < o_fan_ppn ? C.rank + (int)o_fan_ppn : C.rank % (int)o_fan_ppn;
    if (test != MULTI_LAT) return 1 - C.rank;
    return C.rank < C.pairs ? C.rank + C.pairs : C.rank - C.pairs;
}

/* Does this rank start the ping-pong or send the fan's data (and time it)? */
static int starts(int test)
{
    if (test == BW_FAN_IN) return C.rank >= o_fan_ppn; /* the leaves send */
    if (test == BW_FAN_OUT) return C.rank < o_fan_ppn; /* the root group sends */
    return test == MULTI_LAT ? C.rank < C.pairs : C.rank == 0;
}

/* The ranks whose times are averaged into a fan or multi_lat value (OSU's divisor). */
static int timing_ranks(int test)
{
    if (test == BW_FAN_IN) return (C.fan_groups - 1) * (int)o_fan_ppn;
    if (test == BW_FAN_OUT) return (int)o_fan_ppn;
    return C.pairs;
}

/* The fan tests: a window of W messages from every sender to its receiver(s), then one
 * 1-byte ack back from each receiver (osu_bw_fan_in.c / osu_bw_fan_out.c). The root rank
 * of local index l talks to rank g*K + l of every other group g (request n + j*(G-1)). */
static void fan_iter(int test, int n)
{
    const int W = C.window, K = (int)o_fan_ppn, leaves = C.fan_groups - 1;
    const int root = C.rank < K, l = C.rank % K;
    if (!root) { /* one message stream to or from rank l */
        for (int j = 0; j < W; j++) {
            if (test == BW_FAN_IN)
                TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, l, TAG_DATA, C.comm, &C.req[j]));
            else
                TRY(MPI_Irecv(C.rbuf, n, MPI_CHAR, l, TAG_DATA, C.comm, &C.req[j]));
        }
        TRY(MPI_Waitall(W, C.req, C.stat));
        if (test == BW_FAN_IN)
            TRY(MPI_Recv(C.rbuf, 1, MPI_CHAR, l, TAG_ACK, C.comm, MPI_STATUS_IGNORE));
        else
            TRY(MPI_Send(C.sbuf, 1, MPI_CHAR, l, TAG_ACK, C.comm));
        return;
    }
    for (int j = 0; j < W; j++)
        for (int g = 1; g <= leaves; g++) {
            MPI_Request *r = &C.req[(g - 1) + j * leaves];
            if (test == BW_FAN_IN)
                TRY(MPI_Irecv(C.rbuf, n, MPI_CHAR, g * K + l, TAG_DATA, C.comm, r));
            else
                TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, g * K + l, TAG_DATA, C.comm, r));
        }
    TRY(MPI_Waitall(W * leaves, C.req, C.stat));
    for (int g = 1; g <= leaves; g++) {
        if (test == BW_FAN_IN)
            TRY(MPI_Send(C.sbuf, 1, MPI_CHAR, g * K + l, TAG_ACK, C.comm));
        else
            TRY(MPI_Recv(C.rbuf, 1, MPI_CHAR, g * K + l, TAG_ACK, C.comm,
                         MPI_STATUS_IGNORE));
    }
}

/* One iteration of test with messages of n bytes, untimed. osu: OSU 7.4's variant of the
 * loop body (mbw_mr: its two barriers; bibw: rank 0 waits for its sends before its
 * receives, rank 1 the other way round). */
static void one_iter(int test, int n, int osu)
{
    const int peer = 1 - C.rank, W = C.window;
    switch (test) {
    case LAT:
        if (C.rank == 0) {
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm));
            TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, MPI_STATUS_IGNORE));
        } else {
            TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, MPI_STATUS_IGNORE));
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm));
        }
        break;
    case BW:
    case MBW_MR:
        if (C.rank == 0) {
            for (int j = 0; j < W; j++)
                TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[j]));
            TRY(MPI_Waitall(W, C.req, C.stat));
            TRY(MPI_Recv(C.rbuf, 1, MPI_CHAR, peer, TAG_ACK, C.comm, MPI_STATUS_IGNORE));
        } else {
            for (int j = 0; j < W; j++)
                TRY(MPI_Irecv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[j]));
            TRY(MPI_Waitall(W, C.req, C.stat));
            TRY(MPI_Send(C.sbuf, 1, MPI_CHAR, peer, TAG_ACK, C.comm));
        }
        break;
    case BIBW:
        for (int j = 0; j < W; j++)
            TRY(MPI_Irecv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[W + j]));
        for (int j = 0; j < W; j++)
            TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[j]));
        if (osu) { /* OSU 7.4: rank 0 waits for its sends first, rank 1 for its receives */
            int first = C.rank == 0 ? 0 : W;
            TRY(MPI_Waitall(W, C.req + first, C.stat + first));
            TRY(MPI_Waitall(W, C.req + (W - first), C.stat + (W - first)));
        } else {
            TRY(MPI_Waitall(2 * W, C.req, C.stat));
        }
        break;
    case PINGPING: /* IMB_pingping: Isend, Recv, Wait */
        TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[0]));
        TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, MPI_STATUS_IGNORE));
        TRY(MPI_Wait(&C.req[0], MPI_STATUS_IGNORE));
        break;
    case SENDRECV: /* IMB_sendrecv: to (rank+1)%P, from (rank-1+P)%P; with P=2 the peer */
        TRY(MPI_Sendrecv(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.rbuf, n, MPI_CHAR, peer,
                         TAG_DATA, C.comm, MPI_STATUS_IGNORE));
        break;
    case EXCHANGE: /* IMB_exchange: Isend right, Isend left, Recv left, Recv right, Waitall.
                    * Both sends read one buffer (IMB uses two halves of its buffer): sends
                    * only read, and both messages carry the same bytes either way. */
        TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[0]));
        TRY(MPI_Isend(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.req[1]));
        TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, MPI_STATUS_IGNORE));
        TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, MPI_STATUS_IGNORE));
        TRY(MPI_Waitall(2, C.req, C.stat));
        break;
    case LAT_P: /* osu_latency_persistent: Start + Wait the send, then the receive */
        for (int k = 0; k < 2; k++) {
            MPI_Request *r = &C.preq[(C.rank + k) % 2]; /* rank 0: send first */
            TRY(MPI_Start(r));
            TRY(MPI_Wait(r, MPI_STATUS_IGNORE));
        }
        break;
    case BW_P: /* osu_bw_persistent: Startall + Waitall of the window, then the ack */
        TRY(MPI_Startall(W, C.preq + (C.rank == 0 ? 0 : W)));
        TRY(MPI_Waitall(W, C.preq + (C.rank == 0 ? 0 : W), C.stat));
        if (C.rank == 0)
            TRY(MPI_Recv(C.rbuf, 1, MPI_CHAR, peer, TAG_ACK, C.comm, MPI_STATUS_IGNORE));
        else
            TRY(MPI_Send(C.sbuf, 1, MPI_CHAR, peer, TAG_ACK, C.comm));
        break;
    case BIBW_P: /* osu_bibw_persistent: receives started, sends started; OSU waits for
                  * the sends, then the receives, on both ranks */
        TRY(MPI_Startall(W, C.preq + W));
        TRY(MPI_Startall(W, C.preq));
        if (osu) {
            TRY(MPI_Waitall(W, C.preq, C.stat));
            TRY(MPI_Waitall(W, C.preq + W, C.stat + W));
        } else {
            TRY(MPI_Waitall(2 * W, C.preq, C.stat));
        }
        break;
    case LAT_MP: /* osu_latency_mp: osu_latency's ping-pong, the children forked aside */
        one_iter(LAT, n, osu);
        break;
    case BW_FAN_IN:
    case BW_FAN_OUT: fan_iter(test, n); break;
    case MULTI_LAT: /* osu_multi_lat: every pair's ping-pong at once */
        if (starts(test)) {
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer_of(test), TAG_DATA, C.comm));
            TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer_of(test), TAG_DATA, C.comm,
                         MPI_STATUS_IGNORE));
        } else {
            TRY(MPI_Recv(C.rbuf, n, MPI_CHAR, peer_of(test), TAG_DATA, C.comm,
                         MPI_STATUS_IGNORE));
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer_of(test), TAG_DATA, C.comm));
        }
        break;
    }
}

/* The persistent tests' requests for messages of n bytes (OSU makes them per size,
 * before its barrier; MPI_Request_free after the size). */
static void persistent_init(int test, int n)
{
    const int peer = 1 - C.rank, W = C.window;
    for (int j = 0; j < 2 * W; j++) C.preq[j] = MPI_REQUEST_NULL;
    if (test == LAT_P) {
        TRY(MPI_Send_init(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.preq[0]));
        TRY(MPI_Recv_init(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.preq[1]));
        return;
    }
    for (int j = 0; j < W; j++) {
        if (test == BIBW_P || C.rank == 0)
            TRY(MPI_Send_init(C.sbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.preq[j]));
        if (test == BIBW_P || C.rank == 1)
            TRY(MPI_Recv_init(C.rbuf, n, MPI_CHAR, peer, TAG_DATA, C.comm, &C.preq[W + j]));
    }
}

static void persistent_free(void)
{
    for (int j = 0; j < 2 * C.window; j++)
        if (C.preq[j] != MPI_REQUEST_NULL) TRY(MPI_Request_free(&C.preq[j]));
}

/* ---- latency_mt: a pool of threads per rank ------------------------------------------
 * Thread 0 is the main thread; threads 1..T-1 wait at a barrier for each run of
 * iterations (a block, a warm-up, a validation pass), run their share (iteration i is
 * thread i mod T's) and meet again. Cost: two pthread barriers per run on each rank with
 * more than one thread (rank 1 by default), inside the block's time on rank 0 as its
 * first message waits for rank 1's threads. */
typedef struct {
    pthread_t th[MAX_THREADS];
    pthread_barrier_t go, done;
    int threads, senders; /* threads on this rank; sender threads (rank 0's) */
    int n, per_iter, quit;
    int64_t count;
    double busy[MAX_THREADS]; /* --protocol osu: each sender thread's summed intervals */
    char *rbuf[MAX_THREADS];  /* each thread receives into its own; thread 0 in C.rbuf */
} mt_pool;

static mt_pool MT;
static char *page_buffer(size_t bytes);

static void mt_share(int k)
{
    const int peer = 1 - C.rank, n = MT.n;
    char *rbuf = k == 0 ? C.rbuf : MT.rbuf[k];
    MT.busy[k] = 0;
    for (int64_t i = k; i < MT.count; i += MT.threads) {
        /* one sender thread: any receiver thread takes any message (OSU's tags 1 and 2);
         * several: iteration i's tag pairs its sender and receiver threads */
        int tag = MT.senders > 1 ? TAG_MT + (int)(i % 32000) : TAG_DATA;
        int back = MT.senders > 1 ? tag : TAG_ACK;
        if (C.rank == 0) {
            double t0 = MT.per_iter ? MPI_Wtime() : 0;
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer, tag, C.comm));
            TRY(MPI_Recv(rbuf, n, MPI_CHAR, peer, back, C.comm, MPI_STATUS_IGNORE));
            if (MT.per_iter) MT.busy[k] += MPI_Wtime() - t0;
        } else {
            TRY(MPI_Recv(rbuf, n, MPI_CHAR, peer, tag, C.comm, MPI_STATUS_IGNORE));
            TRY(MPI_Send(C.sbuf, n, MPI_CHAR, peer, back, C.comm));
        }
    }
}

static void *mt_helper(void *arg)
{
    int k = (int)(intptr_t)arg;
    for (;;) {
        pthread_barrier_wait(&MT.go);
        if (MT.quit) return NULL;
        mt_share(k);
        pthread_barrier_wait(&MT.done);
    }
}

/* count iterations of latency_mt over the pool; returns thread 0's summed intervals
 * (--protocol osu: OSU prints one sender thread's own sum) or 0. */
static double mt_run(int n, int64_t count, int per_iter)
{
    MT.n = n;
    MT.count = count;
    MT.per_iter = per_iter;
    if (MT.threads > 1) pthread_barrier_wait(&MT.go);
    mt_share(0);
    if (MT.threads > 1) pthread_barrier_wait(&MT.done);
    return MT.busy[0];
}

/* Starts the pool (rank 0: --sender-threads, rank 1: --threads). Returns 0 or -1. */
static int mt_start(size_t bytes)
{
    MT.senders = (int)o_sender_threads;
    MT.threads = C.rank == 0 ? (int)o_sender_threads : (int)o_threads;
    MT.quit = 0;
    if (MT.threads == 1) return 0;
    pthread_barrier_init(&MT.go, NULL, (unsigned)MT.threads);
    pthread_barrier_init(&MT.done, NULL, (unsigned)MT.threads);
    for (int k = 1; k < MT.threads; k++) {
        MT.rbuf[k] = page_buffer(bytes);
        if (!MT.rbuf[k] ||
            pthread_create(&MT.th[k], NULL, mt_helper, (void *)(intptr_t)k)) {
            fprintf(stderr, "p2p: rank %d cannot start latency_mt thread %d\n", C.rank, k);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    return 0;
}

static void mt_stop(void)
{
    if (MT.threads <= 1) return;
    MT.quit = 1;
    pthread_barrier_wait(&MT.go);
    for (int k = 1; k < MT.threads; k++) {
        pthread_join(MT.th[k], NULL);
        free(MT.rbuf[k]);
    }
    pthread_barrier_destroy(&MT.go);
    pthread_barrier_destroy(&MT.done);
}

/* ---- latency_mp: children forked aside ----------------------------------------------
 * The children wait for the end of the pipe's write side and _exit: they never touch MPI
 * (OSU's sleep for 2 s the same way), so the ranks measure with their forked copies
 * alive. Returns the write end of the pipe (closed by mp_stop); a failed pipe or fork
 * aborts the launch with a line on stderr. */
static pid_t mp_kids[MAX_THREADS];
static int mp_count;

static int mp_start(void)
{
    int fds[2];
    mp_count = C.rank == 0 ? (int)o_sender_procs : (int)o_procs;
    if (pipe(fds) != 0) {
        fprintf(stderr, "p2p: rank %d: pipe: %s\n", C.rank, strerror(errno));
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fflush(NULL); /* nothing buffered is written twice by a child */
    for (int k = 0; k < mp_count; k++) {
        pid_t pid = fork();
        if (pid < 0) {
            fprintf(stderr, "p2p: rank %d: fork: %s\n", C.rank, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (pid == 0) {
            char c;
            close(fds[1]);
            while (read(fds[0], &c, 1) < 0 && errno == EINTR) continue;
            _exit(0);
        }
        mp_kids[k] = pid;
    }
    close(fds[0]);
    return fds[1];
}

static void mp_stop(int fd)
{
    close(fd);
    for (int k = 0; k < mp_count; k++) waitpid(mp_kids[k], NULL, 0);
    mp_count = 0;
}

/* Runs count iterations. Returns the seconds spent inside the timed part when the
 * iterations time themselves, 0 otherwise (the caller then times the block from outside):
 *  - per_iter (--timer iteration, OSU): MPI_Wtime before and after every iteration on
 *    rank 0, the two readings' cost (~36 ns each here) inside what is summed, as in OSU;
 *  - mbw_mr: barrier(s) before every iteration, outside the clock; latency_mp under
 *    --protocol osu and multi_lat: OSU's one barrier before every iteration, likewise
 *    (multi_lat: all pairs start every iteration together);
 *  - latency_mt: the thread pool runs them (mt_run). */
static double run_iters(int test, int n, int64_t count, int per_iter, int osu)
{
    double busy = 0;
    if (test == LAT_MT) return mt_run(n, count, per_iter);
    int barrier = test == MBW_MR || test == MULTI_LAT || (test == LAT_MP && osu);
    int self_timed = per_iter || barrier;
    for (int64_t it = 0; it < count; it++) {
        if (barrier) {
            TRY(MPI_Barrier(C.comm));
            if (osu && test == MBW_MR) TRY(MPI_Barrier(C.comm)); /* OSU 7.4: two */
        }
        if (!self_timed) {
            one_iter(test, n, osu);
            continue;
        }
        double t0 = per_iter ? MPI_Wtime() : hs_now_s();
        one_iter(test, n, osu);
        busy += (per_iter ? MPI_Wtime() : hs_now_s()) - t0;
    }
    return busy;
}

/* Does this rank receive the test's data (and so can check it)? */
static int receives(int test, int rank)
{
    if (FAN(test)) return test == BW_FAN_IN ? rank < o_fan_ppn : rank >= o_fan_ppn;
    return PINGPONG(test) || TWOWAY(test) || IMB(test) || rank == 1;
}

/* Whose pattern a rank sends: its own rank, or in the fan tests its local index, so that
 * a root rank receiving from every leaf into one buffer (as OSU) knows what must land. */
static int sender_id(int test, int rank)
{
    return FAN(test) ? rank % (int)o_fan_ppn : rank;
}

/* ---- buffer contents ----------------------------------------------------------------- */

/* What the sender of rank `from` puts at byte i. constant: 'a' everywhere (OSU's choice);
 * varying: depends on rank, size and iteration, and does not repeat every 256 bytes. */
static inline unsigned char pattern(int varying, int from, int n, int iter, size_t i)
{
    if (!varying) return 'a';
    return (unsigned char)((i + (i >> 8) * 7) * 131 + (size_t)from * 71 +
                           (size_t)(n % 251) * 37 + (size_t)iter * 13 + 1);
}

static void fill(char *buf, int varying, int from, int n, int iter, int invert)
{
    for (size_t i = 0; i < (size_t)n; i++)
        buf[i] = (char)(pattern(varying, from, n, iter, i) ^ (invert ? 0xff : 0));
}

/* Untimed pass: VALIDATE_ITERS iterations with fresh contents each, every received byte
 * checked. The receive buffer is preset to the complement of what must arrive, so a
 * message that never lands cannot pass. Returns 0, or 1 after rank 0 wrote an error. */
static int validate(int test, int n, int varying)
{
    long long mine[4] = { 0, -1, 0, 0 }; /* mismatches, first offset, got, expected */
    /* Both ranks run every iteration whatever they find: stopping early on one side only
     * would leave the other waiting in a different call. */
    for (int it = 0; it < VALIDATE_ITERS; it++) {
        fill(C.sbuf, varying, sender_id(test, C.rank), n, it, 0);
        fill(C.rbuf, varying, sender_id(test, peer_of(test)), n, it, 1);
        TRY(MPI_Barrier(C.comm));
        run_iters(test, n, 1, 0, C.osu_loops);
        if (!receives(test, C.rank)) continue;
        for (size_t i = 0; i < (size_t)n; i++) {
            unsigned char want = pattern(varying, sender_id(test, peer_of(test)), n, it, i);
            if ((unsigned char)C.rbuf[i] != want) {
                if (mine[0]++ == 0) {
                    mine[1] = (long long)i;
                    mine[2] = (unsigned char)C.rbuf[i];
                    mine[3] = want;
                }
            }
        }
    }
    int nranks = C.size;
    long long *both = malloc(sizeof *both * 4 * (size_t)nranks);
    if (!both) MPI_Abort(MPI_COMM_WORLD, 1);
    TRY(MPI_Allgather(mine, 4, MPI_LONG_LONG, both, 4, MPI_LONG_LONG, C.comm));
    int bad = 0;
    for (int r = 0; r < nranks; r++) {
        const long long *v = both + 4 * r;
        if (v[0] == 0) continue;
        bad = 1;
        if (C.rank != 0) continue;
        char msg[512];
        snprintf(
            msg, sizeof msg,
            "validation failed: test %s, %d bytes, rank %d received %lld wrong bytes in "
            "%d iterations, first at offset %lld (got 0x%02llx, expected 0x%02llx)",
            tests[test].name, n, r, v[0], VALIDATE_ITERS, v[1], v[2], v[3]);
        if (C.osu) {
            fprintf(stderr, "p2p: %s\n", msg);
        } else {
            hs_json j;
            hs_json_begin(&j, "error");
            hs_json_str(&j, "message", msg);
            hs_json_str(&j, "test", tests[test].name);
            hs_json_int(&j, "bytes", n);
            hs_json_int(&j, "rank", r);
            hs_json_int(&j, "mismatches", v[0]);
            hs_json_int(&j, "first_offset", v[1]);
            hs_json_emit(&j, C.out);
        }
    }
    free(both);
    return bad;
}

/* ---- one (test, size) ---------------------------------------------------------------- */

typedef struct {
    int64_t iters, warmups, block, nblocks;
    int64_t repeat;    /* index of this repetition (--repeat) */
    const char *stop;  /* --precision: why the blocks stopped (met, budget, cap) */
    double half_width; /* --precision: the blocks' median CI half-width / median */
} plan;

static int64_t scaled(int64_t v, int keep_one)
{
    int64_t s = llround((double)v * o_scale);
    return (s < 1 && keep_one && v > 0) ? 1 : s;
}

static plan make_plan(int test, int n, int64_t block)
{
    plan p;
    int large = n > LARGE_MESSAGE;
    int lat = PINGPONG(test) || IMB(test); /* IMB's patterns: osu_latency's counts */
    int64_t iters = lat ? (large ? 1000 : 10000) : (large ? 20 : 100);
    int64_t warm = lat ? (large ? 10 : 100) : (large ? 2 : 10);
    if (o_iters > 0) iters = o_iters;
    if (o_warmup >= 0) warm = o_warmup;
    p.iters = scaled(iters, 1);
    p.warmups = scaled(warm, 1);
    if (block == 0) {
        p.block = p.iters;
    } else {
        int64_t cap = p.iters / MIN_SAMPLES;
        p.block = block < cap ? block : (cap > 0 ? cap : 1);
    }
    p.nblocks = (p.iters + p.block - 1) / p.block;
    p.stop = NULL;
    p.half_width = 0;
    return p;
}

/* Per-iteration metric of `count` iterations that took `seconds`. */
static double metric(int test, int n, int64_t count, double seconds)
{
    double msgs = (double)C.window * (double)count;
    switch (test) {
    case LAT:
    case LAT_P:
    case LAT_MP:
    case MULTI_LAT: return seconds * 1e6 / (2.0 * (double)count);
    /* each of M sender threads ran count / M round trips in the block */
    case LAT_MT: return seconds * 1e6 * (double)o_sender_threads / (2.0 * (double)count);
    case BW:
    case BW_P: return (double)n * msgs / 1e6 / seconds;
    case BIBW:
    case BIBW_P: return 2.0 * (double)n * msgs / 1e6 / seconds;
    case MBW_MR: return msgs / seconds;
    /* seconds: the timing ranks' mean; every one of the (G-1)*K streams moved n*msgs */
    case BW_FAN_IN:
    case BW_FAN_OUT:
        return (double)n * msgs * (C.fan_groups - 1) * (double)o_fan_ppn / 1e6 / seconds;
    default: return seconds * 1e6 / (double)count; /* IMB's t: per iteration, no halving */
    }
}

static void params_json(hs_json *j, int test, int n, const plan *p)
{
    hs_json_open_object(j, "params");
    hs_json_int(j, "bytes", n);
    hs_json_str(j, "test", tests[test].name);
    hs_json_int(j, "iterations", p->iters);
    hs_json_int(j, "block", p->block);
    /* Only what differs from the default, so older stores keep matching cells. */
    if (C.osu_loops)
        hs_json_str(j, "protocol", "osu");
    else if (C.per_iter)
        hs_json_str(j, "timer", "iteration");
    if (tests[test].windowed) hs_json_int(j, "window", C.window);
    if (test == LAT_MT) { /* what is measured: part of the cell */
        hs_json_int(j, "threads", o_threads);
        hs_json_int(j, "sender_threads", o_sender_threads);
    } else if (test == LAT_MP) {
        hs_json_int(j, "processes", o_procs);
        hs_json_int(j, "sender_processes", o_sender_procs);
    } else if (test == MULTI_LAT) {
        hs_json_int(j, "pairs", C.pairs);
    } else if (FAN(test)) {
        hs_json_int(j, "fan_groups", C.fan_groups);
        hs_json_int(j, "ppn", o_fan_ppn);
    }
    if (o_repeat > 1 || o_alternate || o_alternate_timer)
        hs_json_int(j, "repeat", p->repeat);
    hs_json_close(j);
}

/* The timing check of one sample (hs_timing_json): the timed intervals are the blocks,
 * one clock reading each; with per-iteration timing (--timer iteration, mbw_mr) they are
 * the block's mean iteration, each holding about one reading's cost. */
static void timing_json(hs_json *j, int test, const plan *p, const double *block_s)
{
    double *intervals = malloc(sizeof *intervals * (size_t)p->nblocks);
    double *reads = malloc(sizeof *reads * (size_t)p->nblocks);
    for (int64_t k = 0; k < p->nblocks; k++) {
        int64_t count = k < p->nblocks - 1 ? p->block : p->iters - k * p->block;
        intervals[k] = (test == MBW_MR || test == MULTI_LAT || C.per_iter)
                           ? block_s[k] / (double)count
                           : block_s[k];
        reads[k] = 1;
    }
    hs_timing_json(j, intervals, reads, (size_t)p->nblocks);
    free(intervals);
    free(reads);
}

static int emit(int test, int n, const plan *p, const double *block_s)
{
    double total = 0;
    double *values = malloc(sizeof *values * (size_t)p->nblocks);
    for (int64_t k = 0; k < p->nblocks; k++) {
        int64_t count = k < p->nblocks - 1 ? p->block : p->iters - k * p->block;
        values[k] = metric(test, n, count, block_s[k]);
        total += block_s[k];
    }
    double osu = metric(test, n, p->iters, total);
    int rc = 0;
    if (C.osu) {
        if (test == MBW_MR)
            fprintf(C.out, "%-*d%*.*f%*.*f\n", 10, n, 20, 2, (double)n * osu / 1e6, 20, 2,
                    osu);
        else /* osu_latency_mp prints its latency 10 wide, the others FIELD_WIDTH (20) */
            fprintf(C.out, "%-*d%*.*f\n", 10, n, test == LAT_MP ? 10 : 20, 2, osu);
        rc = fflush(C.out) == 0 ? 0 : -1;
    } else {
        hs_json j;
        hs_json_begin(&j, "sample");
        hs_json_str(&j, "metric", tests[test].metric);
        hs_json_str(&j, "unit", tests[test].unit);
        params_json(&j, test, n, p);
        hs_json_double_array(&j, "values", values, (size_t)p->nblocks);
        hs_json_int(&j, "warmups", p->warmups);
        rc |= hs_json_emit(&j, C.out);

        hs_json_begin(&j, "summary");
        hs_json_str(&j, "metric", tests[test].metric);
        hs_json_str(&j, "unit", tests[test].unit);
        params_json(&j, test, n, p);
        hs_json_double(&j, "value", osu);
        hs_json_double(&j, "time_s", total);
        hs_json_str(&j, "method",
                    IMB(test)    ? "imb-mpi1: time per iteration over the timed iterations"
                    : C.per_iter ? "osu 7.4: per-iteration MPI_Wtime intervals, summed"
                                 : "osu: timed iterations over their total time");
        if (test == MBW_MR) hs_json_double(&j, "bandwidth_mb_per_s", (double)n * osu / 1e6);
        if (test == LAT_MT) hs_json_str(&j, "thread_level", "MPI_THREAD_MULTIPLE");
        if (IMB(test)) { /* IMB's Mbytes/sec: scale_bw * bytes / t(us) */
            hs_json_double(&j, "bandwidth_mb_per_s",
                           osu > 0 ? imb_messages[test] * (double)n / osu : 0);
            hs_json_int(&j, "bytes_per_iteration", (int64_t)imb_messages[test] * n);
        }
        if (p->stop)
            hs_precision_json(&j, o_precision, p->half_width, p->stop, "blocks",
                              p->nblocks);
        timing_json(&j, test, p, block_s);
        rc |= hs_json_emit(&j, C.out);
    }
    free(values);
    return rc;
}

/* --warmup-ms: after `done` warm-up iterations that took `took` s, rank 0 decides how many
 * more reach the time floor (from their mean duration, capped at 100x), both ranks run
 * them. The first size of a test measured after another test's large messages was seen
 * stalling here (bw 1 B after the latency sweep, Open MPI, 7 of 10 blocks near 0 MB/s
 * with one warm-up iteration): a count alone cannot know how long "warm" takes.
 * Only sizes up to 8 KiB (OSU's small counts), where the stall was seen: above, OSU's
 * counts already run for milliseconds, and extra warm-up there changed what later sizes
 * measured (Open MPI bibw at 2-4 MiB: 0.68x OSU with the floor on 16 KiB-512 KiB, 1.00x
 * without; docs/osu.md). Cost: the floor per small size and repetition (5 ms: ~0.07 s
 * per test of 14 sizes), one untimed MPI_Bcast. Returns the extra iterations run. */
static int64_t warmup_floor(int test, int n, int64_t done, double took)
{
    /* No floor (--protocol osu, --warmup-ms 0, large sizes): every rank knows it, so no
     * broadcast either; OSU goes from its warm-up straight into the timed iterations. */
    if (C.warmup_s <= 0 || n > LARGE_MESSAGE) return 0;
    int64_t extra = 0;
    if (C.rank == 0 && took < C.warmup_s) {
        double each = done > 0 ? took / (double)done : 0;
        int64_t cap = 100 * (done > 0 ? done : 1);
        extra = each > 0 ? (int64_t)ceil((C.warmup_s - took) / each) : cap;
        if (extra > cap) extra = cap;
    }
    TRY(MPI_Bcast(&extra, 1, MPI_INT64_T, 0, C.comm));
    if (extra > 0) run_iters(test, n, extra, 0, C.osu_loops);
    return extra;
}

/* Rank 0's decision after `done` blocks of a --precision run (started at t0): 0 = stop
 * (p->stop says why), else the block count to reach before the next look. The next
 * round is trimmed to what the size's budget still holds at the blocks' mean duration. */
static int64_t next_goal(int test, int n, plan *p, const double *block_s, int64_t done,
                         int64_t cap, double t0)
{
    double *values = malloc(sizeof *values * (size_t)done), spent = 0;
    for (int64_t k = 0; k < done; k++) {
        values[k] = metric(test, n, p->block, block_s[k]);
        spent += block_s[k];
    }
    size_t goal =
        hs_precision_look(values, (size_t)done, spent, hs_now_s() - t0, C.size_budget_s,
                          o_precision, (size_t)cap, &p->half_width, &p->stop);
    free(values);
    return (int64_t)goal;
}

/* --protocol osu: rank 0's failed write of a size, agreed on after the whole test. OSU
 * 7.4 goes from one size's timed loop straight to the next size's barrier; a 1-int
 * MPI_Bcast of this flag after every size made MPICH's bibw at 16-256 B 4-8 % slower
 * (40 interleaved rounds; docs/osu.md). */
static int osu_write_failed;

/* Warms up and times the blocks of one repetition; rank 0 writes the records.
 * --precision: 6 blocks first, then rank 0 looks at their median's CI and, until it is
 * narrow enough (from 10 blocks on), the size's time is spent or 20x the fixed count is
 * reached, asks for half again as many, at least 10 (one MPI_Bcast per look, outside
 * the blocks' timing; precision.h). The blocks
 * keep their fixed length, so a sample means the same as in a fixed-count run.
 * Returns 0, or 1 when the output could not be written. */
static int measure(int test, int n, int64_t block, int64_t repeat)
{
    plan p = make_plan(test, n, block);
    p.repeat = repeat;
    int adaptive = o_precision > 0;
    /* Above 8 KiB one iteration is long enough for the clock, and a block of the fixed
     * length is long (latency 4 MiB: 100 round trips, 80 ms): a tenth of it, so the
     * first 10 blocks cost a tenth of the fixed count, not all of it. */
    if (adaptive && n > LARGE_MESSAGE && block != 0)
        p.block = p.block / 10 > 0 ? p.block / 10 : 1;
    int64_t cap = adaptive ? ADAPTIVE_CAP * ((p.iters + p.block - 1) / p.block) : p.nblocks;
    int64_t goal = adaptive ? HS_PRECISION_FIRST_LOOK : p.nblocks;
    if (goal > cap) goal = cap;
    double *block_s = malloc(sizeof *block_s * (size_t)cap);
    TRY(MPI_Barrier(C.comm));
    double w0 = hs_now_s();
    run_iters(test, n, p.warmups, 0, C.osu_loops);
    p.warmups += warmup_floor(test, n, p.warmups, hs_now_s() - w0);
    /* OSU reads the clock on rank 0 only (multi_lat: on each pair's first rank, the fan
     * tests: on every sender); the other ranks just loop. */
    int per_iter = C.per_iter && starts(test);
    int64_t done = 0;
    while (goal > done) {
        double prev = hs_now_s();
        for (; done < goal; done++) {
            int64_t count =
                adaptive || done < p.nblocks - 1 ? p.block : p.iters - done * p.block;
            double busy = run_iters(test, n, count, per_iter, C.osu_loops);
            double now = hs_now_s();
            block_s[done] =
                (test == MBW_MR || test == MULTI_LAT || C.per_iter) ? busy : now - prev;
            prev = now;
        }
        if (!adaptive) break;
        if (C.rank == 0) goal = next_goal(test, n, &p, block_s, done, cap, w0);
        TRY(MPI_Bcast(&goal, 1, MPI_INT64_T, 0, C.comm));
    }
    if (adaptive) {
        p.nblocks = done;
        p.iters = done * p.block;
    }
    if (test == MULTI_LAT || FAN(test)) { /* OSU: the timing ranks' times summed on
                                             * rank 0, / their number */
        for (int64_t k = 0; k < done; k++)
            if (!starts(test)) block_s[k] = 0;
        TRY(MPI_Reduce(C.rank == 0 ? MPI_IN_PLACE : block_s, block_s, (int)done, MPI_DOUBLE,
                       MPI_SUM, 0, C.comm));
        for (int64_t k = 0; k < done && C.rank == 0; k++) block_s[k] /= timing_ranks(test);
    }
    int rc = 0;
    if (C.rank == 0) rc = emit(test, n, &p, block_s) != 0;
    free(block_s);
    if (C.osu_loops) { /* no exchange after a size, as in OSU: agreed after the test */
        osu_write_failed |= rc;
        return 0;
    }
    TRY(MPI_Bcast(&rc, 1, MPI_INT, 0, C.comm));
    return rc;
}

/* A page-aligned buffer. The default protocol touches every page at once, so nothing is
 * first touched later; --protocol osu leaves that to the per-size fill of the bytes a
 * size uses, as OSU 7.4's latency, bw and bibw do (its mbw_mr touches all, main()): with 4 MiB buffers all resident, MPICH's bw at 4 KiB was
 * 1.21x OSU's, and an OSU patched to touch its buffers at allocation was 1.21x too
 * (docs/osu.md). */
static char *page_buffer(size_t bytes)
{
    void *p = NULL;
    long page = sysconf(_SC_PAGESIZE);
    size_t rounded = (bytes + (size_t)page - 1) / (size_t)page * (size_t)page;
    if (posix_memalign(&p, (size_t)page, rounded) != 0) return NULL;
    if (!C.osu_loops) memset(p, 0, rounded);
    return p;
}

/* --buffers fresh: a new, touched buffer pair for this size (the experiment that tells a
 * buffer's history - registration caches, first touch, cache state - from the size's own
 * cost). Collective: every rank learns whether both allocations succeeded. */
static int fresh_buffers(size_t bytes)
{
    free(C.sbuf);
    free(C.rbuf);
    C.sbuf = page_buffer(bytes);
    C.rbuf = page_buffer(bytes);
    int ok = C.sbuf && C.rbuf, all_ok = 0;
    TRY(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, C.comm));
    return all_ok ? 0 : -1;
}

/* Every repetition of one (test, size): validation first (if asked), then the timed runs.
 * With --alternate-whole each repetition is timed twice, block-wise and as one block,
 * the order swapping every repetition so that neither variant always goes first. */
static int measure_reps(int test, int n);

static int measure_size(int test, int n)
{
    if (!strcmp(o_buffers, "fresh") && fresh_buffers((size_t)(n > 0 ? n : 1)) != 0) {
        if (C.rank == 0 && !C.osu)
            hs_json_error(C.out, "cannot allocate 2 buffers of %d bytes", n);
        return 1;
    }
    int persistent = test == LAT_P || test == BW_P || test == BIBW_P;
    if (persistent) persistent_init(test, n); /* on the size's buffers, as OSU */
    int rc = measure_reps(test, n);
    if (persistent) persistent_free();
    return rc;
}

static int measure_reps(int test, int n)
{
    int varying = !strcmp(o_data, "varying");
    if (o_validate && validate(test, n, varying)) return 1;
    fill(C.sbuf, varying, C.rank, n, 0, 0);
    fill(C.rbuf, varying, C.rank, n, 0, 1); /* touched, and different from what arrives */
    int rc = 0;
    for (int64_t r = 0; r < o_repeat && rc == 0; r++) {
        if (o_alternate_timer) { /* the timer placement at millisecond distance */
            int keep = C.per_iter;
            for (int k = 0; k < 2 && rc == 0; k++) {
                C.per_iter = (int)((r + k) % 2);
                rc = measure(test, n, o_block, r);
            }
            C.per_iter = keep;
        } else if (!o_alternate) {
            rc = measure(test, n, o_block, r);
        } else {
            int64_t first = r % 2 ? 0 : o_block, second = r % 2 ? o_block : 0;
            rc = measure(test, n, first, r);
            if (rc == 0) rc = measure(test, n, second, r);
        }
    }
    return rc;
}

static void osu_header(int test)
{
    if (test == LAT_MT) /* OSU prints these two lines before its title */
        fprintf(C.out,
                "# Number of Sender threads: %d \n# Number of Receiver threads: %d\n",
                (int)o_sender_threads, (int)o_threads);
    if (test == LAT_MP)
        fprintf(C.out,
                "# Number of forked processes in sender: %d\n"
                "# Number of forked processes in receiver: %d\n",
                (int)o_sender_procs, (int)o_procs);
    fprintf(C.out, "%s\n", tests[test].osu_title);
    if (test == MBW_MR) {
        fprintf(C.out, "# [ pairs: 1 ] [ window size: %d ]\n", C.window);
        fprintf(C.out, "%-*s%*s%*s\n", 10, "# Size", 20, "MB/s", 20, "Messages/s");
    } else {
        fprintf(C.out, "%-*s%*s\n", 10, "# Size", 20, tests[test].osu_column);
    }
}

/* ---- size order ---------------------------------------------------------------------- */

/* The sizes of one test in measuring order: 0 (when asked and the test has it), then
 * powers of two up to --max-size; --order down reverses them, random shuffles them with
 * --seed (ReproMPI's cure for a sweep's history: each size sees another history in every
 * launch, so an order effect shows up as launch-to-launch spread, not as a bias). */
static int size_list(int test, int sizes[64])
{
    int count = 0;
    int64_t min_bytes = C.osu_loops ? 1 : tests[test].min_bytes;
    int64_t first = o_min > min_bytes ? o_min : min_bytes;
    if (C.nsizes) { /* --sizes: the listed ones this test has (bw has no 0 B) */
        for (int i = 0; i < C.nsizes; i++)
            if (C.sizes[i] >= min_bytes) sizes[count++] = (int)C.sizes[i];
    } else {
        for (int64_t n = first; n <= o_max && count < 64; n = n ? n * 2 : 1)
            sizes[count++] = (int)n;
    }
    /* xorshift64 seeded per test, the same on every rank (o_seed was broadcast) */
    hs_order_sizes(sizes, count, o_order, o_seed, test);
    return count;
}

/* ---- setup --------------------------------------------------------------------------- */

/* Parses --tests into selected[]; returns 0 or -1 naming the bad entry on stderr. */
static int parse_tests(int selected[NTESTS], int quiet)
{
    memset(selected, 0, sizeof(int) * NTESTS);
    const char *p = o_tests;
    int any = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int t = 0; t < NTESTS; t++)
            if (strlen(tests[t].name) == len && !strncmp(tests[t].name, p, len))
                selected[t] = found = any = 1;
        if (!found) {
            if (!quiet)
                fprintf(stderr,
                        "p2p: --tests: unknown test '%.*s' (latency, bw, bibw, mbw_mr, "
                        "pingping, sendrecv, exchange, latency_persistent, bw_persistent, "
                        "bibw_persistent, latency_mt, latency_mp, multi_lat, bw_fan_in, "
                        "bw_fan_out)\n",
                        (int)len, p);
            return -1;
        }
        p += len + (p[len] == ',');
    }
    if (!any && !quiet) fprintf(stderr, "p2p: --tests: no test selected\n");
    if (any && (!strcmp(o_format, "osu") || !strcmp(o_protocol, "osu")))
        for (int t = 0; t < NTESTS; t++)
            if (selected[t] && IMB(t)) {
                if (!quiet)
                    fprintf(stderr,
                            "p2p: --tests %s is IMB-MPI1's and has no OSU counterpart: "
                            "drop --format osu and --protocol osu for it\n",
                            tests[t].name);
                return -1;
            }
    return any ? 0 : -1;
}

/* Parses --sizes into C.sizes (in the order given; --order applies to them too) and
 * sets --max-size to the largest, which sizes the buffers. Returns NULL or why not. */
static const char *parse_sizes(void)
{
    C.nsizes = 0;
    const char *p = o_sizes;
    if (*p) o_max = 0;
    while (*p) {
        size_t len = strcspn(p, ",");
        char item[32];
        int64_t v;
        if (len == 0 || len >= sizeof item) return "--sizes: give sizes like 8,64,4K";
        memcpy(item, p, len);
        item[len] = '\0';
        if (hs_parse_size(item, &v) != 0 || v < 0 || v > INT_MAX)
            return "--sizes: each size must be bytes (K/M suffixes) below 2 GiB";
        if (C.nsizes == 64) return "--sizes: at most 64 sizes";
        C.sizes[C.nsizes++] = v;
        if (v > o_max) o_max = v;
        p += len + (p[len] == ',');
    }
    return NULL;
}

/* OSU's -t: "N" (receivers; the sender keeps `sender_default`) or "M:N". 0 or -1. */
static int parse_counts(const char *text, int64_t sender_default, int64_t *sender,
                        int64_t *receiver)
{
    long m = sender_default, n = 0;
    char tail = 0;
    int got = sscanf(text, "%ld:%ld%c", &m, &n, &tail);
    if (got == 1 && !strchr(text, ':')) {
        n = m;
        m = sender_default;
    } else if (got != 2) {
        return -1;
    }
    if (m < 1 || m >= MAX_THREADS || n < 1 || n >= MAX_THREADS) return -1;
    *sender = m;
    *receiver = n;
    return 0;
}

/* Checks option values beyond their types. Returns -1 to go on, or 2 (bad usage). */
static int check_options(int selected[NTESTS], int quiet)
{
    const char *why = parse_sizes();
    if (parse_tests(selected, quiet) != 0) return 2;
    if (why) {
        if (!quiet) fprintf(stderr, "p2p: %s (see --help)\n", why);
        return 2;
    }
    if (o_min < 0 || o_max < o_min)
        why = "--min-size must be <= --max-size";
    else if (o_max > INT_MAX)
        why = "--max-size must fit an MPI count (< 2 GiB)";
    else if (o_iters < 0)
        why = "--iterations must be >= 0";
    else if (o_warmup < -1)
        why = "--warmup must be >= 0 (or -1 for OSU's)";
    else if (!(o_scale > 0))
        why = "--scale-iterations must be > 0";
    else if (o_block < 0)
        why = "--block must be >= 0";
    else if (o_repeat < 1)
        why = "--repeat must be >= 1";
    else if (o_window < 1 || o_window > 1 << 20)
        why = "--window must be in 1..1048576";
    else if (parse_counts(o_threads_mn, 1, &o_sender_threads, &o_threads))
        why = "--threads must be N or M:N, counts in 1..127 (OSU's -t)";
    else if (parse_counts(o_procs_mn, 2, &o_sender_procs, &o_procs))
        why = "--processes must be N or M:N, counts in 1..127 (OSU's -t)";
    else if (o_fan_ppn < 1 || o_fan_ppn > MAX_FAN_PPN)
        why = "--fan-ppn must be in 1..1024";
    else if (strcmp(o_data, "constant") && strcmp(o_data, "varying"))
        why = "--data must be constant or varying";
    else if (strcmp(o_format, "jsonl") && strcmp(o_format, "osu"))
        why = "--format must be jsonl or osu";
    else if (strcmp(o_protocol, "hpcscope") && strcmp(o_protocol, "osu"))
        why = "--protocol must be hpcscope or osu";
    else if (strcmp(o_timer, "auto") && strcmp(o_timer, "block") &&
             strcmp(o_timer, "iteration"))
        why = "--timer must be auto, block or iteration";
    else if (strcmp(o_order, "up") && strcmp(o_order, "down") && strcmp(o_order, "random"))
        why = "--order must be up, down or random";
    else if (strcmp(o_buffers, "reuse") && strcmp(o_buffers, "fresh"))
        why = "--buffers must be reuse or fresh";
    else if (o_seed < 0)
        why = "--seed must be >= 0";
    else if (o_warmup_ms < -1 || o_warmup_ms > 60000)
        why = "--warmup-ms must be in 0..60000 (or -1 for the protocol's)";
    else if (!(o_precision >= 0 && o_precision < 1))
        why = "--precision must be a fraction in 0..1 (0.01 = 1 %; 0 = fixed counts)";
    else if (!(o_size_budget_ms >= 0))
        why = "--size-budget-ms must be >= 0";
    else if (o_precision > 0 &&
             (!strcmp(o_protocol, "osu") || o_alternate || o_alternate_timer))
        why =
            "--precision goes with the hpcscope protocol (--protocol osu keeps OSU's fixed "
            "counts) and without the --alternate-* checks";
    else if (o_alternate_timer && (o_alternate || !strcmp(o_protocol, "osu")))
        why = "--alternate-timer goes with the hpcscope protocol and without "
              "--alternate-whole";
    else if (!strcmp(o_protocol, "osu") &&
             (!strcmp(o_timer, "block") || strcmp(o_order, "up") ||
              strcmp(o_buffers, "reuse")))
        why = "--protocol osu fixes OSU's loop (timer per iteration, sizes up, one buffer "
              "pair); drop --timer/--order/--buffers or use --protocol hpcscope";
    if (!why) return -1;
    if (!quiet) fprintf(stderr, "p2p: %s (see --help)\n", why);
    return 2;
}

/* Option parsing on every rank (same argv everywhere), messages from rank 0 only. */
static int parse_quietly_unless_rank0(int rank, int argc, char **argv, int selected[NTESTS])
{
    int rc = hs_options_parse_quiet(
        options, argc, argv, "p2p",
        "MPI point-to-point latency, bandwidth, bidirectional bandwidth and "
        "message rate between exactly 2 ranks (OSU definitions), and IMB-MPI1's "
        "PingPing, Sendrecv and Exchange, as JSONL records.\nexample: mpirun -np 2 "
        "--bind-to core p2p --tests latency "
        "--max-size 64K --scale-iterations 0.1",
        rank != 0);
    if (rc < 0) rc = check_options(selected, rank != 0);
    return rc;
}

/* Does argv ask for latency_mt? Read before MPI_Init (the option table is parsed after
 * it): only then is MPI_THREAD_MULTIPLE requested, so no other test runs under a thread
 * level it did not ask for (Open MPI and MPICH take locks on every call under it). */
static int wants_threads(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        if (!strcmp(argv[i], "--tests") && i + 1 < argc)
            v = argv[i + 1];
        else if (!strncmp(argv[i], "--tests=", 8))
            v = argv[i] + 8;
        if (v && strstr(v, "latency_mt")) return 1;
    }
    return 0;
}

static const char *thread_level_name(int level)
{
    return level == MPI_THREAD_MULTIPLE     ? "MPI_THREAD_MULTIPLE"
           : level == MPI_THREAD_SERIALIZED ? "MPI_THREAD_SERIALIZED"
           : level == MPI_THREAD_FUNNELED   ? "MPI_THREAD_FUNNELED"
                                            : "MPI_THREAD_SINGLE";
}

/* latency_mt and latency_mp need what a library or build may not give: refused before
 * anything is measured, with one error record (rank 0) naming what was provided. */
static int refuse_unsupported(const int selected[NTESTS])
{
    const char *why = NULL;
    char msg[256];
    if (selected[LAT_MT] && C.provided != MPI_THREAD_MULTIPLE) {
        snprintf(msg, sizeof msg,
                 "latency_mt needs MPI_THREAD_MULTIPLE; this MPI library provided %s",
                 thread_level_name(C.provided));
        why = msg;
    }
#ifdef SMPI_SHARED_MALLOC
    if (selected[LAT_MP])
        why = "latency_mp forks processes per rank; under SimGrid SMPI every rank is a "
              "thread of the one simulator process, which fork would copy whole";
#endif
    if (!why) return 0;
    if (C.rank == 0) {
        if (C.osu) {
            fprintf(stderr, "p2p: %s\n", why);
        } else {
            hs_json j;
            hs_json_begin(&j, "error");
            hs_json_str(&j, "message", why);
            hs_json_str(&j, "test",
                        selected[LAT_MT] && C.provided != MPI_THREAD_MULTIPLE
                            ? "latency_mt"
                            : "latency_mp");
            hs_json_str(&j, "thread_provided", thread_level_name(C.provided));
            hs_json_emit(&j, C.out);
        }
    }
    return 1;
}

static int finish(int rc)
{
    if (C.out && C.out != stdout) fclose(C.out);
    MPI_Finalize();
    return rc;
}

int main(int argc, char **argv)
{
    int size, selected[NTESTS];
    C.provided = MPI_THREAD_SINGLE;
    if (wants_threads(argc, argv))
        MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &C.provided);
    else
        MPI_Init(&argc, &argv);
    C.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(C.comm, &C.rank);
    MPI_Comm_size(C.comm, &size);
    MPI_Comm_set_errhandler(C.comm, MPI_ERRORS_RETURN);

    int rc = parse_quietly_unless_rank0(C.rank, argc, argv, selected);
    if (rc >= 0) return finish(rc);
    C.osu = !strcmp(o_format, "osu");
    C.osu_loops = !strcmp(o_protocol, "osu");
    C.per_iter = C.osu_loops || !strcmp(o_timer, "iteration");
    if (o_warmup_ms < 0) o_warmup_ms = C.osu_loops ? 0 : 5; /* echoed in meta as used */
    C.warmup_s = o_warmup_ms / 1e3;
    C.size_budget_s = o_size_budget_ms / 1e3;
    C.window = (int)o_window;
    if (o_seed ==
        0) { /* drawn once on rank 0, shared, and echoed in meta as the value used */
        int64_t drawn = (hs_now_ns() ^ (int64_t)getpid() << 20) & 0x7fffffff;
        o_seed = drawn ? drawn : 1;
        MPI_Bcast(&o_seed, 1, MPI_INT64_T, 0, C.comm);
    }

    /* Output file: opened by rank 0, the outcome shared so every rank stops together. */
    int opened = 1;
    if (C.rank == 0) {
        C.out = hs_create_out(o_out); /* never through a link planted under the name */
        if (!C.out) {
            fprintf(stderr, "p2p: cannot write --out %s: %s\n", o_out, strerror(errno));
            opened = 0;
        }
    }
    MPI_Bcast(&opened, 1, MPI_INT, 0, C.comm);
    if (!opened) return finish(1);

    /* Meta first, always: even a wrong launch says where its ranks ran. */
    if (!C.osu && hs_write_meta_mpi(C.out, "p2p", P2P_VERSION, options, C.comm) != 0)
        return finish(1);
    /* multi_lat takes any even count (pairs r, r + size/2), the fan tests any multiple of
     * --fan-ppn with two groups or more; the rest exactly 2 */
    int others = 0;
    for (int t = 0; t < NTESTS; t++) others += selected[t] && t != MULTI_LAT && !FAN(t);
    C.size = size;
    C.pairs = size / 2;
    C.fan_groups = size / (int)o_fan_ppn;
    char why[160] = "";
    if (size != 2 && others)
        snprintf(why, sizeof why,
                 "p2p needs exactly 2 ranks (multi_lat takes any even count, bw_fan_in/out "
                 "any multiple of --fan-ppn), got %d",
                 size);
    else if (selected[MULTI_LAT] && size % 2)
        snprintf(why, sizeof why, "multi_lat needs an even number of ranks, got %d", size);
    else if ((selected[BW_FAN_IN] || selected[BW_FAN_OUT]) &&
             (size % o_fan_ppn || C.fan_groups < 2))
        snprintf(
            why, sizeof why,
            "bw_fan_in/out need at least two groups of --fan-ppn %d ranks, got %d ranks",
            (int)o_fan_ppn, size);
    if (why[0]) {
        if (C.rank == 0) {
            if (C.osu)
                fprintf(stderr, "p2p: %s\n", why);
            else
                hs_json_error(C.out, "%s", why);
        }
        return finish(1);
    }

    if (refuse_unsupported(selected)) return finish(1);

    size_t bytes = (size_t)(o_max > 0 ? o_max : 1);
    C.sbuf = page_buffer(bytes);
    C.rbuf = page_buffer(bytes);
    size_t nreq = 2 * (size_t)C.window;
    if ((selected[BW_FAN_IN] || selected[BW_FAN_OUT]) && C.fan_groups > 3)
        nreq = (size_t)C.window * (size_t)(C.fan_groups - 1);
    C.req = malloc(sizeof *C.req * nreq);
    C.stat = malloc(sizeof *C.stat * nreq);
    C.preq = malloc(sizeof *C.preq * 2 * (size_t)C.window);
    int ok = C.sbuf && C.rbuf && C.req && C.stat && C.preq, all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, C.comm);
    if (!all_ok) {
        if (C.rank == 0 && !C.osu)
            hs_json_error(C.out, "cannot allocate 2 buffers of %zu bytes", bytes);
        return finish(1);
    }

    rc = 0;
    for (int t = 0; t < NTESTS && rc == 0; t++) {
        if (!selected[t]) continue;
        if (C.osu && C.rank == 0) osu_header(t);
        /* osu_mbw_mr, unlike OSU's other programs, touches its whole buffers when it
         * allocates them (--buffers fresh: each size's own buffers, nothing to touch) */
        if (C.osu_loops && t == MBW_MR && strcmp(o_buffers, "fresh")) {
            memset(C.sbuf, 0, bytes);
            memset(C.rbuf, 0, bytes);
        }
        int sizes[64], count = size_list(t, sizes), kids = -1;
        if (t == LAT_MT) mt_start(bytes);
        if (t == LAT_MP) kids = mp_start();
        for (int i = 0; i < count && rc == 0; i++) rc = measure_size(t, sizes[i]);
        if (t == LAT_MT) mt_stop();
        if (t == LAT_MP) mp_stop(kids);
        if (C.osu_loops && rc == 0) {
            TRY(MPI_Bcast(&osu_write_failed, 1, MPI_INT, 0, C.comm));
            rc = osu_write_failed;
        }
        if (C.osu && C.rank == 0 && rc == 0) fprintf(C.out, "\n");
    }
    /* The CPU pair's cache-line time, after the measurements it would otherwise change
     * (binding_mpi.h). */
    if (rc == 0 && !C.osu) rc = hs_write_cpu_pair(C.out, C.comm);
    free(C.sbuf);
    free(C.rbuf);
    free(C.req);
    free(C.stat);
    free(C.preq);
    return finish(rc);
}
