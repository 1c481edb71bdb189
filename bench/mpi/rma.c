/* rma.c - MPI one-sided (RMA) benchmark, OSU 7.4's definitions (docs/rma.md).
 *
 * Tests (the OSU 7.4 program each one reproduces in brackets):
 *   put_latency     [osu_put_latency]     rank 0 MPI_Put of n bytes + the sync; us per op
 *   get_latency     [osu_get_latency]     the same with MPI_Get
 *   put_bw          [osu_put_bw]          rank 0 W MPI_Put (offsets j*n) + the sync;
 *                                         n*W*iterations/time in MB/s
 *   get_bw          [osu_get_bw]          the same with MPI_Get
 *   put_bibw        [osu_put_bibw]        both ranks W MPI_Put to each other + the sync;
 *                                         2*n*W*iterations/time in MB/s (fence, pscw)
 *   acc_latency     [osu_acc_latency]     MPI_Accumulate (MPI_CHAR, MPI_SUM) of n bytes
 *   get_acc_latency [osu_get_acc_latency] MPI_Get_accumulate (MPI_CHAR, MPI_SUM)
 *   fop_latency     [osu_fop_latency]     MPI_Fetch_and_op of one MPI_CHAR (1 byte, as OSU
 *                                         7.4's default datatype), MPI_SUM
 *   cas_latency     [osu_cas_latency]     MPI_Compare_and_swap of one MPI_CHAR
 *   get_mbw         [osu_get_mbw]         P = ranks/2 pairs: rank i < P gets from i+P; per
 *                                         iteration a barrier of all ranks, then W MPI_Get
 *                                         (flush: lock, gets, flush, unlock; pscw: start,
 *                                         gets, complete); bandwidth n*W*iterations*P / t,
 *                                         t = the mean of the origins' times
 *   get_multi_lat   [osu_get_multi_lat]   P pairs, PSCW ping-pong of MPI_Get with a barrier
 *                                         per iteration; t (mean over origins)/iterations/2
 * Sync (--sync, OSU's -s): lock (lock/op/unlock per iteration), flush (one lock epoch,
 * op + MPI_Win_flush per iteration), flush_local, lock_all (lock_all/op/unlock_all per
 * iteration), fence and pscw; fence and pscw latencies are ping-pongs (both ranks issue
 * the op in turn) and are halved, as OSU does. auto = each program's OSU default (flush;
 * put_bibw and get_multi_lat pscw; get_acc_latency lock). Window (--window, OSU's -w):
 * create, allocate, dynamic; auto = OSU's default (allocate; get_acc_latency create: its
 * main sets neither, so OSU's first enum values apply). As in OSU, a window of n bytes (n*W for bandwidth tests, --max-size for fop/cas)
 * is created for each size, outside the timing. Sizes start at 1 B, as OSU's.
 *
 * Protocols (--protocol):
 *   hpcscope  the timed iterations cut into blocks of --block iterations timed back to back
 *             (one clock reading per block boundary), sizes in --order; each block is one
 *             raw sample;
 *   osu       OSU 7.4's loop: MPI_Wtime at iteration `skip` (after pscw's MPI_Win_start
 *             and the multi-pair barrier), two more per timed iteration (OSU's graph and
 *             tail-latency readings, inside its timer), and t_end after the loop; sizes
 *             ascending. The samples are blocks cut at the per-iteration readings; the
 *             summary is OSU's t_end - t_start.
 * Counts: OSU's (latency tests 10000, >8K 1000, warm-up 100/10; bandwidth 100, >8K 20,
 * warm-up 10/2). MB = 10^6 bytes. No validation pass (OSU 7.4 has none for most of them).
 * --precision F (hpcscope protocol only; as p2p.c's): after the warm-up, blocks of --block
 * iterations (a tenth of it above 8 KiB) in rounds: 6 first, then rank 0 looks at the 95 %
 * CI of the blocks' median and asks for half again as many until the CI is within F of
 * the median (from 10 blocks), --size-budget-ms is spent or 20x the fixed count's blocks
 * are reached (bench/common/precision.h); one MPI_Bcast per look, between blocks, carries
 * the decision to every rank (a passive target too: it waits in it). The pairs' tests
 * decide on rank 0's own blocks (the mean over origins is formed after the last block).
 * The summary then has `precision`: target, half_width, stop, blocks.
 *
 * Output: JSONL records (meta, per test and size one sample and one summary, then the
 * cpu_pair record for 2-rank launches; rank 0 only), or with --format osu OSU's text.
 * Exit: 0 ok, 1 measurement failed (error record written), 2 bad usage.
 */
#define _POSIX_C_SOURCE 200809L
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

#define RMA_VERSION "0.1.0"
#define LARGE_MESSAGE 8192 /* OSU LARGE_MESSAGE_SIZE */
#define MIN_SAMPLES 10
#define ADAPTIVE_CAP 20 /* --precision: at most this many times the fixed count's blocks */

/* ---- options ------------------------------------------------------------------------- */

static const char *o_tests, *o_sync, *o_window, *o_format, *o_out, *o_protocol, *o_order;
static int64_t o_min, o_max, o_iters, o_warmup, o_block, o_wsize, o_repeat, o_seed;
static double o_scale, o_precision, o_size_budget_ms;

static const hs_option options[] = {
    { "protocol", HS_OPT_STR, &o_protocol, "hpcscope",
      "hpcscope (blocks timed back to back, sizes in --order) or osu (OSU 7.4's loop)" },
    { "tests", HS_OPT_STR, &o_tests,
      "put_latency,get_latency,put_bw,get_bw,put_bibw,acc_latency,get_acc_latency,"
      "fop_latency,cas_latency",
      "comma-separated: put_latency, get_latency, put_bw, get_bw, put_bibw, acc_latency, "
      "get_acc_latency, fop_latency, cas_latency (2 ranks), get_mbw, get_multi_lat "
      "(an even number of ranks: pairs)" },
    { "sync", HS_OPT_STR, &o_sync, "auto",
      "lock, flush, flush_local, lock_all, fence, pscw, or auto (each OSU program's "
      "default: flush; put_bibw and get_multi_lat pscw)" },
    { "window", HS_OPT_STR, &o_window, "auto",
      "window creation: create, allocate, dynamic, or auto (each OSU program's default: "
      "allocate; get_acc_latency create)" },
    { "min-size", HS_OPT_SIZE, &o_min, "1", "smallest message in bytes (>= 1)" },
    { "max-size", HS_OPT_SIZE, &o_max, "4M", "largest message in bytes" },
    { "iterations", HS_OPT_INT, &o_iters, "0",
      "timed iterations per size; 0 = OSU's (latency 10000, >8K 1000; bandwidth 100, >8K "
      "20)" },
    { "warmup", HS_OPT_INT, &o_warmup, "-1",
      "discarded warm-up iterations; -1 = OSU's (latency 100, >8K 10; bandwidth 10, >8K "
      "2)" },
    { "scale-iterations", HS_OPT_DOUBLE, &o_scale, "1",
      "multiply iteration and warm-up counts (at least 1 is kept)" },
    { "block", HS_OPT_INT, &o_block, "100",
      "iterations per timed block = per sample (lowered to give >= 10 samples)" },
    { "window-size", HS_OPT_INT, &o_wsize, "64",
      "operations per iteration of the bandwidth tests (OSU -W)" },
    { "order", HS_OPT_STR, &o_order, "up", "size order: up, down, or random (--seed)" },
    { "seed", HS_OPT_INT, &o_seed, "0",
      "seed of --order random; 0 = drawn (echoed in meta)" },
    { "repeat", HS_OPT_INT, &o_repeat, "1", "measure each test and size this many times" },
    HS_SIZE_PRECISION_OPTIONS(o_precision, o_size_budget_ms,
                              "20x the fixed count's blocks"),
    { "format", HS_OPT_STR, &o_format, "jsonl", "output: jsonl records or osu text" },
    { "out", HS_OPT_STR, &o_out, "-", "output file, - for stdout" },
    { 0 }
};

/* ---- tests, syncs, windows ----------------------------------------------------------- */

enum { S_LOCK, S_PSCW, S_FENCE, S_FLUSH, S_FLUSH_LOCAL, S_LOCK_ALL, NSYNC }; /* OSU order */
static const char *sync_names[NSYNC] = { "lock",  "pscw",        "fence",
                                         "flush", "flush_local", "lock_all" };
static const char *sync_osu[NSYNC] = {
    "MPI_Win_lock/unlock", "MPI_Win_post/start/complete/wait",
    "MPI_Win_fence",       "MPI_Win_flush",
    "MPI_Win_flush_local", "MPI_Win_lock_all/unlock_all"
};
enum { W_CREATE, W_ALLOCATE, W_DYNAMIC, NWIN };
static const char *win_names[NWIN] = { "create", "allocate", "dynamic" };
static const char *win_osu[NWIN] = { "MPI_Win_create", "MPI_Win_allocate",
                                     "MPI_Win_create_dynamic" };

enum { OP_PUT, OP_GET, OP_ACC, OP_GET_ACC, OP_FOP, OP_CAS };
enum { K_LAT, K_BW, K_BIBW };
#define ALL_SYNCS 0x3f
#define BIT(s) (1 << (s))

enum {
    PUT_LAT,
    GET_LAT,
    PUT_BW,
    GET_BW,
    PUT_BIBW,
    ACC_LAT,
    GET_ACC_LAT,
    FOP_LAT,
    CAS_LAT,
    GET_MBW,
    GET_MULTI_LAT,
    NTESTS
};
static const struct {
    const char *name, *osu_title;
    int op, kind, multi, default_sync, syncs, lock_type;
} tests[NTESTS] = {
    { "put_latency", "# OSU MPI_Put Latency Test", OP_PUT, K_LAT, 0, S_FLUSH, ALL_SYNCS,
      MPI_LOCK_SHARED },
    { "get_latency", "# OSU MPI_Get latency Test", OP_GET, K_LAT, 0, S_FLUSH, ALL_SYNCS,
      MPI_LOCK_SHARED },
    { "put_bw", "# OSU MPI_Put Bandwidth Test", OP_PUT, K_BW, 0, S_FLUSH, ALL_SYNCS,
      MPI_LOCK_SHARED },
    { "get_bw", "# OSU MPI_Get Bandwidth Test", OP_GET, K_BW, 0, S_FLUSH, ALL_SYNCS,
      MPI_LOCK_SHARED },
    { "put_bibw", "# OSU MPI_Put Bi-directional Bandwidth Test", OP_PUT, K_BIBW, 0, S_PSCW,
      BIT(S_FENCE) | BIT(S_PSCW), MPI_LOCK_SHARED },
    { "acc_latency", "# OSU MPI_Accumulate latency Test", OP_ACC, K_LAT, 0, S_FLUSH,
      ALL_SYNCS, MPI_LOCK_SHARED },
    { "get_acc_latency", "# OSU MPI_Get_accumulate latency Test", OP_GET_ACC, K_LAT, 0,
      S_LOCK, ALL_SYNCS, MPI_LOCK_EXCLUSIVE },
    { "fop_latency", "# OSU MPI_Fetch_and_op latency Test", OP_FOP, K_LAT, 0, S_FLUSH,
      ALL_SYNCS, MPI_LOCK_SHARED },
    { "cas_latency", "# OSU MPI_Compare_and_swap latency Test", OP_CAS, K_LAT, 0, S_FLUSH,
      ALL_SYNCS, MPI_LOCK_SHARED },
    /* OSU 7.4's osu_get_mbw spreads over pairs only with flush and pscw (its other syncs
     * run rank 0 -> 1 alone yet multiply by the pairs): those two only here. */
    { "get_mbw", "# OSU MPI_Get Multiple Bandwidth Bandwidth Test", OP_GET, K_BW, 1,
      S_FLUSH, BIT(S_FLUSH) | BIT(S_PSCW), MPI_LOCK_SHARED },
    { "get_multi_lat", "# OSU MPI_Get Multi Latency Test", OP_GET, K_LAT, 1, S_PSCW,
      BIT(S_PSCW), MPI_LOCK_SHARED },
};
/* Lock type of the lock-per-iteration variant: OSU's fop and cas take an exclusive lock
 * there (their flush variants a shared one); get_acc takes exclusive in both. */
static int lock_type(int test, int sync)
{
    if (sync == S_LOCK && (tests[test].op == OP_FOP || tests[test].op == OP_CAS))
        return MPI_LOCK_EXCLUSIVE;
    return tests[test].lock_type;
}

typedef struct {
    int rank, size, pairs;
    int origin, peer; /* this rank's role in its pair and the other rank */
    MPI_Comm comm;
    MPI_Group world_group, peer_group;
    FILE *out;
    int osu, osu_loops;
    int win_kind, win_arg, sync_arg; /* win_arg, sync_arg: -1 = auto */
    char *sbuf, *rbuf, *cbuf, *win_base;
    MPI_Win win;
    MPI_Aint disp;
} ctx;

static ctx C;

#define TRY HS_TRY /* bench/common/mpi_run.h: error record and MPI_Abort on failure */

/* ---- windows ------------------------------------------------------------------------- */

static char *page_buffer(size_t bytes, int fill)
{
    void *p = NULL;
    if (posix_memalign(&p, (size_t)sysconf(_SC_PAGESIZE), bytes ? bytes : 1) != 0)
        return NULL;
    memset(p, fill, bytes ? bytes : 1); /* OSU's memset(buf, 'a', size) */
    return p;
}

/* OSU's allocate_memory_one_sided: origin buffers of `bytes` ('a'), the window of `bytes`
 * by the chosen creation; dynamic: attach and swap addresses with the peer. Collective. */
static int open_window(size_t bytes)
{
    C.sbuf = page_buffer(bytes, 'a');
    C.rbuf = page_buffer(bytes, 'a');
    C.cbuf = page_buffer(bytes, 'a');
    C.win_base = NULL;
    int ok = C.sbuf && C.rbuf && C.cbuf, all_ok = 0;
    if (ok && C.win_kind != W_ALLOCATE) ok = (C.win_base = page_buffer(bytes, 'a')) != NULL;
    TRY(MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, C.comm));
    if (!all_ok) return -1;
    C.disp = 0;
    if (C.win_kind == W_CREATE) {
        TRY(MPI_Win_create(C.win_base, (MPI_Aint)bytes, 1, MPI_INFO_NULL, C.comm, &C.win));
    } else if (C.win_kind == W_ALLOCATE) {
        TRY(MPI_Win_allocate((MPI_Aint)bytes, 1, MPI_INFO_NULL, C.comm, &C.win_base,
                             &C.win));
    } else {
        MPI_Aint mine;
        TRY(MPI_Win_create_dynamic(MPI_INFO_NULL, C.comm, &C.win));
        TRY(MPI_Win_attach(C.win, C.win_base, (MPI_Aint)bytes));
        TRY(MPI_Get_address(C.win_base, &mine));
        TRY(MPI_Sendrecv(&mine, 1, MPI_AINT, C.peer, 1, &C.disp, 1, MPI_AINT, C.peer, 1,
                         C.comm, MPI_STATUS_IGNORE));
    }
    TRY(MPI_Win_set_errhandler(C.win, MPI_ERRORS_RETURN)); /* TRY names a failed call */
    return 0;
}

static void close_window(void)
{
    if (C.win_kind == W_DYNAMIC) TRY(MPI_Win_detach(C.win, C.win_base));
    TRY(MPI_Win_free(&C.win));
    if (C.win_kind != W_ALLOCATE) free(C.win_base);
    free(C.sbuf);
    free(C.rbuf);
    free(C.cbuf);
}

/* ---- one operation, one iteration ---------------------------------------------------- */

/* `count` of the test's operations on the peer's window, the j-th at offset j*n (a
 * bandwidth window), n bytes (atomics: one MPI_CHAR). Put and get, the bandwidth tests'
 * operations, each get a loop of their own with nothing but the call in it, as OSU's:
 * with one function call and a switch per operation, Open MPI's put_bw at 1 B-2 KiB
 * (~19 ns per MPI_Put here) read 0.91-0.96 of osu_put_bw's, with the plain loop
 * 0.95-1.02 (6 interleaved rounds each; docs/rma.md). */
static void ops(int test, int n, int count)
{
    const int to = C.peer;
    const size_t step = (size_t)n;
    switch (tests[test].op) {
    case OP_PUT:
        for (int j = 0; j < count; j++)
            TRY(MPI_Put(C.sbuf + (size_t)j * step, n, MPI_CHAR, to,
                        C.disp + (MPI_Aint)j * n, n, MPI_CHAR, C.win));
        break;
    case OP_GET:
        for (int j = 0; j < count; j++)
            TRY(MPI_Get(C.rbuf + (size_t)j * step, n, MPI_CHAR, to,
                        C.disp + (MPI_Aint)j * n, n, MPI_CHAR, C.win));
        break;
    case OP_ACC:
        for (int j = 0; j < count; j++)
            TRY(MPI_Accumulate(C.sbuf + (size_t)j * step, n, MPI_CHAR, to,
                               C.disp + (MPI_Aint)j * n, n, MPI_CHAR, MPI_SUM, C.win));
        break;
    case OP_GET_ACC:
        for (int j = 0; j < count; j++)
            TRY(MPI_Get_accumulate(C.sbuf + (size_t)j * step, n, MPI_CHAR,
                                   C.rbuf + (size_t)j * step, n, MPI_CHAR, to,
                                   C.disp + (MPI_Aint)j * n, n, MPI_CHAR, MPI_SUM, C.win));
        break;
    case OP_FOP:
        for (int j = 0; j < count; j++)
            TRY(MPI_Fetch_and_op(C.sbuf, C.rbuf, MPI_CHAR, to, C.disp, MPI_SUM, C.win));
        break;
    case OP_CAS:
        for (int j = 0; j < count; j++)
            TRY(MPI_Compare_and_swap(C.sbuf, C.cbuf, C.rbuf, MPI_CHAR, to, C.disp, C.win));
        break;
    }
}

/* The part of an iteration before OSU reads its clock (t_start at iteration `skip`): the
 * multi-pair barrier and, for pscw latencies, the origin's MPI_Win_start. */
static void iter_pre(int test, int sync)
{
    if (tests[test].multi) TRY(MPI_Barrier(C.comm));
    if (sync == S_PSCW && tests[test].kind == K_LAT && C.origin)
        TRY(MPI_Win_start(C.peer_group, 0, C.win));
}

/* The rest of one iteration, as OSU 7.4's loops (bench/mpi/rma.c header). */
static void iter_body(int test, int sync, int n, int W)
{
    int kind = tests[test].kind, origin = C.origin;
    if (kind == K_BIBW) { /* both ranks put to each other */
        if (sync == S_FENCE) {
            TRY(MPI_Win_fence(0, C.win));
            ops(test, n, W);
            TRY(MPI_Win_fence(0, C.win));
        } else {
            TRY(MPI_Win_post(C.peer_group, 0, C.win));
            TRY(MPI_Win_start(C.peer_group, 0, C.win));
            ops(test, n, W);
            TRY(MPI_Win_complete(C.win));
            TRY(MPI_Win_wait(C.win));
        }
        return;
    }
    int count = kind == K_BW ? W : 1;
    if (sync == S_FENCE) {
        if (kind == K_LAT) { /* ping-pong: origin fence op fence fence, target fence fence
                                op fence */
            TRY(MPI_Win_fence(0, C.win));
            if (origin) ops(test, n, 1);
            TRY(MPI_Win_fence(0, C.win));
            if (!origin) ops(test, n, 1);
            TRY(MPI_Win_fence(0, C.win));
        } else {
            TRY(MPI_Win_fence(0, C.win));
            if (origin) ops(test, n, count);
            TRY(MPI_Win_fence(0, C.win));
        }
        return;
    }
    if (sync == S_PSCW) {
        if (kind == K_LAT) { /* origin: (start) op complete post wait; target: post wait
                                start op complete */
            if (origin) {
                ops(test, n, 1);
                TRY(MPI_Win_complete(C.win));
                TRY(MPI_Win_post(C.peer_group, 0, C.win));
                TRY(MPI_Win_wait(C.win));
            } else {
                TRY(MPI_Win_post(C.peer_group, 0, C.win));
                TRY(MPI_Win_wait(C.win));
                TRY(MPI_Win_start(C.peer_group, 0, C.win));
                ops(test, n, 1);
                TRY(MPI_Win_complete(C.win));
            }
        } else if (origin) {
            TRY(MPI_Win_start(C.peer_group, 0, C.win));
            ops(test, n, count);
            TRY(MPI_Win_complete(C.win));
        } else {
            TRY(MPI_Win_post(C.peer_group, 0, C.win));
            TRY(MPI_Win_wait(C.win));
        }
        return;
    }
    if (!origin) return; /* passive target: the target takes no part */
    switch (sync) {
    case S_LOCK:
        TRY(MPI_Win_lock(lock_type(test, sync), C.peer, 0, C.win));
        ops(test, n, count);
        TRY(MPI_Win_unlock(C.peer, C.win));
        break;
    case S_LOCK_ALL:
        TRY(MPI_Win_lock_all(0, C.win));
        ops(test, n, count);
        TRY(MPI_Win_unlock_all(C.win));
        break;
    case S_FLUSH:
        if (tests[test].multi) { /* osu_get_mbw: a lock epoch per iteration */
            TRY(MPI_Win_lock(MPI_LOCK_SHARED, C.peer, 0, C.win));
            ops(test, n, count);
            TRY(MPI_Win_flush(C.peer, C.win));
            TRY(MPI_Win_unlock(C.peer, C.win));
        } else {
            ops(test, n, count);
            TRY(MPI_Win_flush(C.peer, C.win));
        }
        break;
    case S_FLUSH_LOCAL:
        ops(test, n, count);
        TRY(MPI_Win_flush_local(C.peer, C.win));
        break;
    }
}

/* flush and flush_local: one lock epoch around all iterations, untimed, as OSU. */
static int long_epoch(int test, int sync)
{
    return (sync == S_FLUSH || sync == S_FLUSH_LOCAL) && !tests[test].multi;
}

/* ---- one (test, size) ---------------------------------------------------------------- */

typedef struct {
    int64_t iters, warmups, block, nblocks, repeat;
    const char *stop;  /* --precision: why the blocks stopped (met, budget, cap) */
    double half_width; /* --precision: the blocks' median CI half-width / median */
} plan;

static int64_t scaled(int64_t v)
{
    int64_t s = llround((double)v * o_scale);
    return s < 1 && v > 0 ? 1 : s;
}

static plan make_plan(int test, int n)
{
    plan p;
    int large = n > LARGE_MESSAGE, lat = tests[test].kind == K_LAT;
    p.iters = scaled(o_iters > 0 ? o_iters
                     : lat       ? (large ? 1000 : 10000)
                                 : (large ? 20 : 100));
    p.warmups = o_warmup >= 0 ? scaled(o_warmup)
                              : scaled(lat ? (large ? 10 : 100) : (large ? 2 : 10));
    int64_t cap = p.iters / MIN_SAMPLES;
    p.block = o_block < cap ? o_block : (cap > 0 ? cap : 1);
    if (p.block < 1) p.block = 1;
    p.nblocks = (p.iters + p.block - 1) / p.block;
    p.repeat = 0;
    p.stop = NULL;
    p.half_width = 0;
    return p;
}

/* The per-operation metric of `count` iterations that took `seconds` (pairs: the mean
 * over the origins' times, as OSU sums them and divides by the pairs). */
static double metric(int test, int sync, int n, int64_t count, double seconds)
{
    double W = (double)o_wsize, P = tests[test].multi ? (double)C.pairs : 1;
    switch (tests[test].kind) {
    case K_BW: return (double)n * W * (double)count * P / 1e6 / seconds;
    case K_BIBW: return 2.0 * (double)n * W * (double)count / 1e6 / seconds;
    default: {
        int pingpong = sync == S_FENCE || sync == S_PSCW;
        return seconds * 1e6 / (double)count / (pingpong ? 2.0 : 1.0);
    }
    }
}

static int shown_size(int test, int n)
{
    return (tests[test].op == OP_FOP || tests[test].op == OP_CAS) ? 1 : n;
}

static void params_json(hs_json *j, int test, int sync, int n, const plan *p)
{
    hs_json_open_object(j, "params");
    hs_json_int(j, "bytes", shown_size(test, n));
    hs_json_str(j, "test", tests[test].name);
    hs_json_str(j, "sync", sync_names[sync]);
    hs_json_str(j, "window_kind", win_names[C.win_kind]);
    hs_json_int(j, "iterations", p->iters);
    hs_json_int(j, "block", p->block);
    if (tests[test].kind != K_LAT) hs_json_int(j, "window", (int64_t)o_wsize);
    if (tests[test].multi) hs_json_int(j, "pairs", C.pairs);
    if (C.osu_loops) hs_json_str(j, "protocol", "osu");
    if (o_repeat > 1) hs_json_int(j, "repeat", p->repeat);
    hs_json_close(j);
}

static int emit(int test, int sync, int n, const plan *p, const double *block_s,
                double total)
{
    double *values = malloc(sizeof *values * (size_t)p->nblocks),
           *reads = malloc(sizeof *reads * (size_t)p->nblocks);
    for (int64_t k = 0; k < p->nblocks; k++) {
        int64_t count = k < p->nblocks - 1 ? p->block : p->iters - k * p->block;
        values[k] = metric(test, sync, n, count, block_s[k]);
        reads[k] = C.osu_loops ? 2.0 * (double)count + 1 : 1; /* clock readings inside */
    }
    double value = metric(test, sync, n, p->iters, total);
    int rc = 0;
    if (C.osu) {
        fprintf(C.out, "%-*d%*.*f\n", 10, shown_size(test, n), 18, 2, value);
        rc = fflush(C.out) == 0 ? 0 : -1;
    } else {
        const char *m = tests[test].kind == K_LAT  ? "latency"
                        : tests[test].kind == K_BW ? "bandwidth"
                                                   : "bibandwidth";
        const char *unit = tests[test].kind == K_LAT ? "us" : "MB/s";
        hs_json j;
        hs_json_begin(&j, "sample");
        hs_json_str(&j, "metric", m);
        hs_json_str(&j, "unit", unit);
        params_json(&j, test, sync, n, p);
        hs_json_double_array(&j, "values", values, (size_t)p->nblocks);
        hs_json_int(&j, "warmups", p->warmups);
        rc |= hs_json_emit(&j, C.out);

        hs_json_begin(&j, "summary");
        hs_json_str(&j, "metric", m);
        hs_json_str(&j, "unit", unit);
        params_json(&j, test, sync, n, p);
        hs_json_double(&j, "value", value);
        hs_json_double(&j, "time_s", total);
        hs_json_str(&j, "method",
                    C.osu_loops ? "osu 7.4: t_end - t_start over the timed iterations"
                                : "osu: timed iterations over their total time");
        hs_timing_json(&j, block_s, reads, (size_t)p->nblocks);
        if (p->stop)
            hs_precision_json(&j, o_precision, p->half_width, p->stop, "blocks",
                              p->nblocks);
        rc |= hs_json_emit(&j, C.out);
    }
    free(values);
    free(reads);
    return rc;
}

/* OSU's after-iteration reading lands here, so the compiler keeps it. */
static volatile double osu_sink;

/* The fixed count's timed iterations (both protocols); returns the origin's elapsed time
 * (0 elsewhere). */
static double timed_loop(int test, int sync, int n, int W, const plan *p, double *block_s,
                         int loops)
{
    double t_start = 0, t_end = 0, prev = 0;
    for (int64_t t = 0; loops && t < p->iters; t++) {
        iter_pre(test, sync);
        if (C.osu_loops && C.origin) {
            /* OSU: t_start at the first timed iteration, then MPI_Wtime before and after
             * every timed iteration (its graph/tail readings); blocks cut at the first */
            if (t == 0) t_start = MPI_Wtime();
            double before = MPI_Wtime();
            if (t % p->block == 0) {
                if (t > 0) block_s[t / p->block - 1] = before - prev;
                prev = before;
            }
            iter_body(test, sync, n, W);
            osu_sink += MPI_Wtime() - before;
        } else {
            if (t % p->block == 0) { /* a block boundary: one clock reading */
                double now = hs_now_s();
                if (t == 0)
                    t_start = now;
                else
                    block_s[t / p->block - 1] = now - prev;
                prev = now;
            }
            iter_body(test, sync, n, W);
        }
    }
    t_end = C.osu_loops ? MPI_Wtime() : hs_now_s();
    if (loops && p->iters > 0) block_s[p->nblocks - 1] = t_end - prev;
    return C.origin ? t_end - t_start : 0;
}

/* --precision: rounds of blocks (header) until rank 0's look says stop; the size's budget
 * counts from w0 (before the warm-up). Sets p's blocks, iterations, stop and half-width;
 * returns the origin's summed block time (the looks left out; 0 elsewhere). */
static double timed_rounds(int test, int sync, int n, int W, plan *p, double *block_s,
                           int64_t cap, int loops, double w0)
{
    double *values = C.rank == 0 ? malloc(sizeof *values * (size_t)cap) : NULL, spent = 0;
    int64_t goal = HS_PRECISION_FIRST_LOOK < cap ? HS_PRECISION_FIRST_LOOK : cap, done = 0;
    while (goal > done) {
        int64_t from = done;
        double prev = hs_now_s();
        for (; done < goal; done++) {
            for (int64_t i = 0; loops && i < p->block; i++) {
                iter_pre(test, sync);
                iter_body(test, sync, n, W);
            }
            double now = hs_now_s();
            block_s[done] = now - prev;
            spent += block_s[done];
            prev = now;
        }
        if (values) { /* rank 0, an origin in every test */
            for (int64_t k = from; k < done; k++)
                values[k] = metric(test, sync, n, p->block, block_s[k]);
            goal = (int64_t)hs_precision_look(values, (size_t)done, spent, hs_now_s() - w0,
                                              o_size_budget_ms / 1e3, o_precision,
                                              (size_t)cap, &p->half_width, &p->stop);
        }
        TRY(MPI_Bcast(&goal, 1, MPI_INT64_T, 0, C.comm));
    }
    free(values);
    p->nblocks = done;
    p->iters = done * p->block;
    return C.origin ? spent : 0;
}

/* Runs one repetition of (test, size): window, warm-up, the timed blocks; rank 0 writes.
 * Returns 0, or 1 when the window could not be made or the output not written. */
static int measure(int test, int sync, int n, int64_t repeat)
{
    plan p = make_plan(test, n);
    p.repeat = repeat;
    int adaptive = o_precision > 0;
    /* as p2p.c: above 8 KiB a tenth of the block, so the first looks cost little */
    if (adaptive && n > LARGE_MESSAGE) p.block = p.block / 10 > 0 ? p.block / 10 : 1;
    int64_t cap = adaptive ? ADAPTIVE_CAP * ((p.iters + p.block - 1) / p.block) : p.nblocks;
    int W = tests[test].kind == K_LAT ? 1 : (int)o_wsize;
    size_t bytes = (size_t)n * (size_t)W;
    if (tests[test].op == OP_FOP || tests[test].op == OP_CAS) bytes = (size_t)o_max;
    if (open_window(bytes) != 0) {
        if (C.rank == 0 && !C.osu) hs_json_error(C.out, "cannot allocate %zu bytes", bytes);
        return 1;
    }
    int active = sync == S_FENCE || sync == S_PSCW || tests[test].multi;
    /* OSU: a barrier before the loop for fence, pscw and the pairs, none for passive
     * target; hpcscope: always, so every launch starts a size the same way */
    if (!C.osu_loops || active) TRY(MPI_Barrier(C.comm));
    double w0 = hs_now_s();
    int epoch = long_epoch(test, sync) && C.origin;
    if (epoch) TRY(MPI_Win_lock(tests[test].lock_type, C.peer, 0, C.win));
    /* ranks that take part in every iteration: the origins, and the targets of active
     * syncs; a passive target skips the loop and waits at the barrier after it */
    int loops = C.origin || active;
    double *block_s = calloc((size_t)cap, sizeof *block_s);
    for (int64_t i = 0; loops && i < p.warmups; i++) {
        iter_pre(test, sync);
        iter_body(test, sync, n, W);
    }
    double elapsed = adaptive ? timed_rounds(test, sync, n, W, &p, block_s, cap, loops, w0)
                              : timed_loop(test, sync, n, W, &p, block_s, loops);
    if (epoch) TRY(MPI_Win_unlock(C.peer, C.win));
    TRY(MPI_Barrier(C.comm));
    if (tests[test].multi) { /* OSU: the origins' times summed, over the pairs */
        double *sum = calloc((size_t)p.nblocks + 1, sizeof *sum),
               *mine = calloc((size_t)p.nblocks + 1, sizeof *mine);
        for (int64_t k = 0; k < p.nblocks && C.origin; k++) mine[k] = block_s[k];
        mine[p.nblocks] = elapsed;
        TRY(MPI_Reduce(mine, sum, (int)p.nblocks + 1, MPI_DOUBLE, MPI_SUM, 0, C.comm));
        for (int64_t k = 0; k < p.nblocks; k++) block_s[k] = sum[k] / C.pairs;
        elapsed = sum[p.nblocks] / C.pairs;
        free(sum);
        free(mine);
    }
    int rc = 0;
    if (C.rank == 0) rc = emit(test, sync, n, &p, block_s, elapsed) != 0;
    free(block_s);
    close_window();
    TRY(MPI_Bcast(&rc, 1, MPI_INT, 0, C.comm));
    return rc;
}

/* ---- setup --------------------------------------------------------------------------- */

static int size_list(int test, int sizes[64])
{
    int count = 0;
    if (tests[test].op == OP_FOP || tests[test].op == OP_CAS) {
        sizes[0] = 1; /* one element */
        return 1;
    }
    for (int64_t n = o_min; n <= o_max && count < 64; n *= 2) sizes[count++] = (int)n;
    hs_order_sizes(sizes, count, o_order, o_seed, test); /* the same on every rank */
    return count;
}

static int find(const char *const *names, int count, const char *value)
{
    for (int i = 0; i < count; i++)
        if (!strcmp(names[i], value)) return i;
    return -1;
}

/* Parses --tests; returns 0 or -1 with the message in why. */
static int parse_tests(int selected[NTESTS], char *why, size_t len)
{
    memset(selected, 0, sizeof(int) * NTESTS);
    const char *p = o_tests;
    int any = 0;
    while (*p) {
        size_t n = strcspn(p, ",");
        int found = 0;
        for (int t = 0; t < NTESTS; t++)
            if (strlen(tests[t].name) == n && !strncmp(tests[t].name, p, n))
                selected[t] = found = any = 1;
        if (!found) {
            snprintf(why, len,
                     "--tests: unknown test '%.*s' (put_latency, get_latency, put_bw, "
                     "get_bw, put_bibw, acc_latency, get_acc_latency, fop_latency, "
                     "cas_latency, get_mbw, get_multi_lat)",
                     (int)n, p);
            return -1;
        }
        p += n + (p[n] == ',');
    }
    if (!any) snprintf(why, len, "--tests: no test selected");
    return any ? 0 : -1;
}

static int check_options(int selected[NTESTS], int quiet)
{
    char why[400] = "";
    if (parse_tests(selected, why, sizeof why) == 0) {
        if (o_min < 1 || o_max < o_min)
            snprintf(why, sizeof why, "--min-size must be >= 1 and <= --max-size");
        else if (o_max > INT_MAX / 64)
            snprintf(why, sizeof why,
                     "--max-size must be below 32 MiB (a window of 64 of them)");
        else if (o_iters < 0 || o_warmup < -1 || !(o_scale > 0) || o_block < 1)
            snprintf(
                why, sizeof why,
                "--iterations >= 0, --warmup >= -1, --scale-iterations > 0, --block >= 1");
        else if (o_repeat < 1 || o_seed < 0)
            snprintf(why, sizeof why, "--repeat must be >= 1 and --seed >= 0");
        else if (o_wsize < 1 || o_wsize > 1024)
            snprintf(why, sizeof why, "--window-size must be in 1..1024");
        else if (strcmp(o_window, "auto") && find(win_names, NWIN, o_window) < 0)
            snprintf(why, sizeof why, "--window must be create, allocate, dynamic or auto");
        else if (strcmp(o_sync, "auto") && find(sync_names, NSYNC, o_sync) < 0)
            snprintf(
                why, sizeof why,
                "--sync must be lock, flush, flush_local, lock_all, fence, pscw or auto");
        else if (strcmp(o_format, "jsonl") && strcmp(o_format, "osu"))
            snprintf(why, sizeof why, "--format must be jsonl or osu");
        else if (strcmp(o_protocol, "hpcscope") && strcmp(o_protocol, "osu"))
            snprintf(why, sizeof why, "--protocol must be hpcscope or osu");
        else if (strcmp(o_order, "up") && strcmp(o_order, "down") &&
                 strcmp(o_order, "random"))
            snprintf(why, sizeof why, "--order must be up, down or random");
        else if (!strcmp(o_protocol, "osu") && strcmp(o_order, "up"))
            snprintf(why, sizeof why,
                     "--protocol osu measures sizes up, as OSU: drop --order");
        else if (!(o_precision >= 0 && o_precision < 1) || !(o_size_budget_ms >= 0))
            snprintf(
                why, sizeof why,
                "--precision must be a fraction in 0..1 (0.01 = 1 %%; 0 = fixed counts) "
                "and --size-budget-ms >= 0");
        else if (o_precision > 0 && !strcmp(o_protocol, "osu"))
            snprintf(
                why, sizeof why,
                "--precision goes with the hpcscope protocol (--protocol osu keeps OSU's "
                "fixed counts)");
        else if (strcmp(o_sync, "auto")) {
            int s = find(sync_names, NSYNC, o_sync);
            for (int t = 0; t < NTESTS; t++)
                if (selected[t] && !(tests[t].syncs & BIT(s))) {
                    snprintf(
                        why, sizeof why,
                        "--sync %s: OSU's %s has no such variant here; leave %s out or "
                        "use --sync auto",
                        o_sync, tests[t].name, tests[t].name);
                    break;
                }
        }
    }
    if (!why[0]) return -1;
    if (!quiet) fprintf(stderr, "rma: %s (see --help)\n", why);
    return 2;
}

static int finish(int rc)
{
    if (C.out && C.out != stdout) fclose(C.out);
    MPI_Finalize();
    return rc;
}

static void osu_header(int test, int sync)
{
    fprintf(C.out, "%s\n", tests[test].osu_title);
    if (test == GET_MULTI_LAT) {
        fprintf(C.out, "# Pairs: %d\n# Window: %s\n# Synchronization: PSCW\n", C.pairs,
                win_osu[C.win_kind]);
    } else {
        fprintf(C.out, "# Window creation: %s\n# Synchronization: %s\n",
                win_osu[C.win_kind], sync_osu[sync]);
        if (test != GET_ACC_LAT) fprintf(C.out, "# Datatype: MPI_CHAR.\n");
    }
    fprintf(C.out, "%-*s%*s\n", 10, "# Size", 18,
            tests[test].kind == K_LAT ? "Latency (us)" : "Bandwidth (MB/s)");
}

/* Roles for a test: pairs (rank i < P with i + P) for the multi-pair tests, else 0 -> 1. */
static void set_roles(int test)
{
    C.pairs = tests[test].multi ? C.size / 2 : 1;
    C.origin = C.rank < C.pairs;
    C.peer = C.origin ? C.rank + C.pairs : C.rank - C.pairs;
    if (C.peer_group != MPI_GROUP_NULL) MPI_Group_free(&C.peer_group);
    TRY(MPI_Group_incl(C.world_group, 1, &C.peer, &C.peer_group));
}

int main(int argc, char **argv)
{
    int selected[NTESTS];
    MPI_Init(&argc, &argv);
    C.comm = MPI_COMM_WORLD;
    C.peer_group = MPI_GROUP_NULL;
    MPI_Comm_rank(C.comm, &C.rank);
    MPI_Comm_size(C.comm, &C.size);
    MPI_Comm_set_errhandler(C.comm, MPI_ERRORS_RETURN);
    int rc = hs_options_parse_quiet(
        options, argc, argv, "rma",
        "MPI one-sided latency and bandwidth (OSU 7.4's one-sided programs) as JSONL "
        "records.\nexample: mpirun -np 2 rma --tests put_latency --sync lock --max-size "
        "64K",
        C.rank != 0);
    if (rc < 0) rc = check_options(selected, C.rank != 0);
    if (rc >= 0) return finish(rc);
    C.osu = !strcmp(o_format, "osu");
    C.osu_loops = !strcmp(o_protocol, "osu");
    C.win_arg = strcmp(o_window, "auto") ? find(win_names, NWIN, o_window) : -1;
    C.sync_arg = strcmp(o_sync, "auto") ? find(sync_names, NSYNC, o_sync) : -1;
    hs_mpi_draw_seed(&o_seed, C.comm); /* echoed in meta as the value used */
    int opened = 0, json = !C.osu;
    C.out = hs_mpi_open_out("rma", o_out, C.comm, &opened);
    hs_mpi_run_init("rma", &C.out, &json);
    if (!opened) return finish(1);
    if (!C.osu && hs_write_meta_mpi(C.out, "rma", RMA_VERSION, options, C.comm) != 0)
        return finish(1);
    /* rank counts: exactly 2 for the pair tests, an even number for the multi-pair ones */
    const char *bad = NULL;
    for (int t = 0; t < NTESTS && !bad; t++)
        if (selected[t] && (tests[t].multi ? C.size < 2 || C.size % 2 : C.size != 2))
            bad = tests[t].name;
    if (bad) {
        if (C.rank == 0) {
            if (C.osu)
                fprintf(stderr, "rma: %s needs %s ranks, got %d\n", bad,
                        strstr(bad, "get_m") ? "an even number of" : "exactly 2", C.size);
            else
                hs_json_error(C.out, "rma %s needs %s ranks, got %d", bad,
                              strstr(bad, "get_m") ? "an even number of" : "exactly 2",
                              C.size);
        }
        return finish(1);
    }
    MPI_Comm_group(C.comm, &C.world_group);
    rc = 0;
    for (int t = 0; t < NTESTS && rc == 0; t++) {
        if (!selected[t]) continue;
        int sync = C.sync_arg >= 0 ? C.sync_arg : tests[t].default_sync;
        C.win_kind = C.win_arg >= 0 ? C.win_arg : t == GET_ACC_LAT ? W_CREATE : W_ALLOCATE;
        set_roles(t);
        if (C.osu && C.rank == 0) osu_header(t, sync);
        int sizes[64], count = size_list(t, sizes);
        for (int i = 0; i < count && rc == 0; i++)
            for (int64_t r = 0; r < o_repeat && rc == 0; r++)
                rc = measure(t, sync, sizes[i], r);
        if (C.osu && C.rank == 0 && rc == 0) fprintf(C.out, "\n");
    }
    if (C.peer_group != MPI_GROUP_NULL) MPI_Group_free(&C.peer_group);
    MPI_Group_free(&C.world_group);
    if (rc == 0 && !C.osu) rc = hs_write_cpu_pair(C.out, C.comm);
    return finish(rc);
}
