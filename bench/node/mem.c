/* mem.c - memory bandwidth and latency of the node.
 *
 *   stream  STREAM Copy/Scale/Add/Triad with STREAM's rules: each array at least 4x the
 *           last-level cache (all instances, from hwloc), every repetition recorded and
 *           the first one marked as warm-up (STREAM reports the best of the rest), and the
 *           final arrays checked against the values replayed on scalars (STREAM's
 *           checkSTREAMresults: average relative error below 1e-13).
 *   blocks  block copy (read + write) at block sizes 1 KiB..10 MiB, blocks visited in
 *           order (seq) or in a random permutation (rand): the pmbw-style sweep.
 *   chase   load-to-load latency (mem_chase.h), working sets 4 KiB..--chase-max with
 *           --chase-steps points per doubling, so L1/L2/L3/DRAM show as plateaus; for each
 *           --chase-threads count T, T pinned threads chase their own chains at the same
 *           time (loaded latency; the value is the mean ns per load over the T threads).
 *   wss     working-set sweep (pmbw/likwid-bench style): T threads copy (STREAM copy,
 *           c = a) within a working set of W bytes (both arrays, all threads) again and
 *           again, so the caches show; W is rounded down to a multiple of 1 KiB x T (64
 *           doubles per thread and array: no likwid-bench kernel rounds it further).
 *   numa    with several NUMA nodes: for each --numa-threads count T, T threads pinned on
 *           the CPUs of node i, memory bound on node j (hwloc membind, strict): triad
 *           bandwidth for every (i, j), and 1-thread chase latency.
 *
 * Threads are OpenMP threads pinned one per allowed CPU; each owns a static slice that it
 * initialised itself (first touch). Repetitions: --reps exactly (the first a warm-up), or
 * with --precision as many as the target asks, --reps the most (node_repeat.h; STREAM's
 * four kernels stop together, as they run in one pass). Cost: 3 arrays x --array-bytes
 * of memory; time about (4 kernels x threads x reps) STREAM passes + blocks + chase
 * (~1 s per 10 points).
 */
#define _GNU_SOURCE
#include "mem_chase.h"
#include "mem_kernels.h"
#include "mem_topo.h"
#include "node_repeat.h"
#include "node_util.h"
#include "timer.h"
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static const char *out_path, *tests_opt, *threads_opt, *blocks_opt, *chase_threads_opt,
    *numa_threads_opt, *wss_opt, *beside_opt;
static int64_t reps, array_bytes, chase_max, chase_steps, block_total;
static double chase_seconds;
static int hugepages;

static const hs_option opts[] = {
    { "tests", HS_OPT_STR, &tests_opt, "all",
      "comma list of stream,blocks,wss,chase,numa or all" },
    { "threads", HS_OPT_STR, &threads_opt, "all",
      "thread counts, e.g. 1,2; all = 1..CPUs" },
    { "reps", HS_OPT_INT, &reps, "10",
      "repetitions per point, the first a warm-up (with --precision the most)" },
    { "array-bytes", HS_OPT_SIZE, &array_bytes, "0",
      "bytes of each STREAM array; 0 = max(4 x last-level cache, 64M)" },
    { "block-sizes", HS_OPT_STR, &blocks_opt, "1K,4K,16K,64K,256K,1M,4M,10M",
      "block sizes of the seq/rand block test" },
    { "block-total", HS_OPT_SIZE, &block_total, "0",
      "bytes swept per thread by the block test; 0 = the STREAM array size" },
    { "chase-max", HS_OPT_SIZE, &chase_max, "0",
      "largest pointer-chase working set; 0 = 8 x last-level cache" },
    { "chase-steps", HS_OPT_INT, &chase_steps, "2", "pointer-chase points per doubling" },
    { "hugepages", HS_OPT_FLAG, &hugepages, "1",
      "advise transparent huge pages for the chase buffer (TLB misses then do not hide the "
      "cache plateaus; 0 = 4 KiB pages, what lmbench measures)" },
    { "chase-seconds", HS_OPT_DOUBLE, &chase_seconds, "0.05", "time per chase repetition" },
    { "chase-threads", HS_OPT_STR, &chase_threads_opt, "1",
      "thread counts of the pointer chase (each thread its own chain, all at once)" },
    { "numa-threads", HS_OPT_STR, &numa_threads_opt, "1",
      "thread counts on node i of the NUMA bandwidth matrix" },
    { "wss-sizes", HS_OPT_STR, &wss_opt, "",
      "working sets of the wss copy sweep; empty = --block-sizes" },
    { "out", HS_OPT_STR, &out_path, "-", "JSONL output file, - for stdout" },
    { "beside", HS_OPT_STR, &beside_opt, "",
      "name of the reference tool this run brackets (param \"beside\" of the STREAM "
      "samples): ours measured seconds from the tool, apart from the sweep" },
    NODE_REPEAT_OPTIONS,
    { 0 }
};

static FILE *out;
static mem_topo topo;

#define SLICE(n, t, id, lo, hi)                   \
    size_t lo = (n) * (size_t)(id) / (size_t)(t), \
           hi = (n) * (size_t)((id) + 1) / (size_t)(t)

/* ------------------------------------------------------------------------ STREAM */

enum { COPY, SCALE, ADD, TRIAD };
static const char *stream_names[] = { "copy", "scale", "add", "triad" };
static const double stream_bytes[] = { 16, 16, 24, 24 };

static void stream_pass(int k, double *a, double *b, double *c, size_t n, int threads,
                        double *seconds)
{
    const double s = 3.0;
    double t0 = 0;
#pragma omp parallel num_threads(threads)
    {
        int id = omp_get_thread_num();
        node_pin(id);
        SLICE(n, threads, id, lo, hi);
#pragma omp barrier
#pragma omp master
        t0 = hs_now_s();
        switch (k) {
        case COPY: mk_copy(c, a, lo, hi); break;
        case SCALE: mk_scale(b, c, s, lo, hi); break;
        case ADD: mk_add(c, a, b, lo, hi); break;
        default: mk_triad(a, b, c, s, lo, hi); break;
        }
#pragma omp barrier
#pragma omp master
        *seconds = hs_now_s() - t0;
    }
}

/* STREAM's check: replay the same operations on scalars, compare the average error. */
static int stream_check(const double *a, const double *b, const double *c, size_t n,
                        int passes)
{
    double aj = 1.0, bj = 2.0, cj = 0.0, s = 3.0;
    for (int p = 0; p < passes; p++) {
        cj = aj;
        bj = s * cj;
        cj = aj + bj;
        aj = bj + s * cj;
    }
    double ea = 0, eb = 0, ec = 0;
    for (size_t i = 0; i < n; i++) {
        ea += fabs(a[i] - aj);
        eb += fabs(b[i] - bj);
        ec += fabs(c[i] - cj);
    }
    const double eps = 1e-13;
    ea /= n;
    eb /= n;
    ec /= n;
    if (ea / fabs(aj) > eps || eb / fabs(bj) > eps || ec / fabs(cj) > eps) {
        hs_json_error(out,
                      "STREAM validation failed: average relative errors a %g b %g c %g "
                      "(limit %g)",
                      ea / fabs(aj), eb / fabs(bj), ec / fabs(cj), eps);
        return -1;
    }
    return 0;
}

static void init_arrays(double *a, double *b, double *c, size_t n, int threads)
{
#pragma omp parallel num_threads(threads)
    {
        int id = omp_get_thread_num();
        node_pin(id);
        SLICE(n, threads, id, lo, hi);
        for (size_t i = lo; i < hi; i++) {
            a[i] = 1.0;
            b[i] = 2.0;
            c[i] = 0.0;
        }
    }
}

static int run_stream(double *a, double *b, double *c, size_t n, int threads)
{
    init_arrays(a, b, c, n, threads);
    node_rep r;
    if (node_rep_begin(&r, 4, 1, (int)reps - 1) != 0) return -1;
    /* STREAM order: all four kernels per pass, so the arrays evolve as the check replays. */
    while (node_rep_more(&r)) {
        for (int k = 0; k < 4; k++) {
            double t;
            stream_pass(k, a, b, c, n, threads, &t);
            r.v[k][r.n] = stream_bytes[k] * (double)n / t / 1e6;
        }
        r.n++;
    }
    if (stream_check(a, b, c, n, r.n) != 0) {
        node_rep_end(&r);
        return -1;
    }
    for (int k = 0; k < 4; k++) {
        hs_json j;
        node_sample_begin(&j, "bandwidth", "MB/s");
        hs_json_str(&j, "workload", "stream");
        hs_json_str(&j, "op", stream_names[k]);
        hs_json_int(&j, "threads", threads);
        hs_json_int(&j, "array_bytes", (int64_t)(n * sizeof(double)));
        hs_json_int(&j, "bytes_per_element", (int64_t)stream_bytes[k]);
        hs_json_bool(&j, "validated", 1);
        if (beside_opt[0]) hs_json_str(&j, "beside", beside_opt);
        node_rep_emit(&j, out, &r, k);
    }
    node_rep_end(&r);
    return 0;
}

/* ------------------------------------------------------------------------ blocks */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

static void shuffle(uint32_t *v, size_t n)
{
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = rng() % (i + 1);
        uint32_t t = v[i];
        v[i] = v[j];
        v[j] = t;
    }
}

static int run_blocks(char *src, char *dst, size_t per_thread, int threads)
{
    int64_t sizes[NODE_MAX_LIST];
    int ns = node_parse_size_list(blocks_opt, sizes, NODE_MAX_LIST);
    for (int s = 0; s < ns; s++) {
        size_t block = (size_t)sizes[s], nblk = per_thread / block;
        if (nblk < 2) {
            fprintf(stderr, "mem: block %zu skipped: fewer than 2 blocks in %zu bytes\n",
                    block, per_thread);
            continue;
        }
        uint32_t *seq = malloc(nblk * sizeof *seq), *rnd = malloc(nblk * sizeof *rnd);
        for (size_t i = 0; i < nblk; i++) seq[i] = rnd[i] = (uint32_t)i;
        shuffle(rnd, nblk);
        for (int pat = 0; pat < 2; pat++) {
            const uint32_t *order = pat ? rnd : seq;
            node_rep rp;
            if (node_rep_begin(&rp, 1, 1, (int)reps - 1) != 0) return -1;
            while (node_rep_more(&rp)) {
                double t0 = 0, t = 0;
#pragma omp parallel num_threads(threads)
                {
                    int id = omp_get_thread_num();
                    node_pin(id);
                    char *d = dst + (size_t)id * per_thread;
                    const char *sp = src + (size_t)id * per_thread;
#pragma omp barrier
#pragma omp master
                    t0 = hs_now_s();
                    mk_blocks(d, sp, order, nblk, block);
#pragma omp barrier
#pragma omp master
                    t = hs_now_s() - t0;
                }
                /* read + write */
                rp.v[0][rp.n++] = 2.0 * (double)(nblk * block) * threads / t / 1e6;
            }
            hs_json j;
            node_sample_begin(&j, "bandwidth", "MB/s");
            hs_json_str(&j, "workload", "mem_block");
            hs_json_str(&j, "op", "read_write");
            hs_json_str(&j, "pattern", pat ? "rand" : "seq");
            hs_json_int(&j, "block", (int64_t)block);
            hs_json_int(&j, "threads", threads);
            hs_json_int(&j, "bytes", (int64_t)(nblk * block));
            node_rep_emit(&j, out, &rp, 0);
            node_rep_end(&rp);
        }
        if (memcmp(src, dst, nblk * block) != 0) { /* untimed check of the last copy */
            hs_json_error(out, "block copy of %zu-byte blocks left wrong data", block);
            return -1;
        }
        free(seq);
        free(rnd);
    }
    return 0;
}

/* ------------------------------------------------------------------------ chase */

static int emit_chase(const char *workload, size_t bytes, int threads, int cpu_node,
                      int mem_node, const node_rep *r)
{
    hs_json j;
    node_sample_begin(&j, "latency", "ns");
    hs_json_str(&j, "workload", workload);
    hs_json_str(&j, "op", "pointer_chase");
    hs_json_int(&j, "bytes", (int64_t)bytes);
    hs_json_int(&j, "threads", threads);
    hs_json_bool(&j, "huge_pages", hugepages);
    if (cpu_node >= 0) {
        hs_json_int(&j, "cpu_node", cpu_node);
        hs_json_int(&j, "mem_node", mem_node);
    }
    return node_rep_emit(&j, out, r, 0);
}

/* Working-set sizes of the chase: 4 KiB up to --chase-max, --chase-steps per doubling,
 * rounded to lines; calls fn(bytes, arg) for each, stopping at its first non-zero. */
static int chase_sizes(int (*fn)(size_t bytes, void *arg), void *arg)
{
    double step = pow(2.0, 1.0 / (double)chase_steps);
    size_t last = 0;
    int rc = 0;
    for (double size = 4096; size <= (double)chase_max * 1.0001 && !rc; size *= step) {
        size_t bytes = ((size_t)size + 63) / 64 * 64;
        if (bytes != last) rc = fn(bytes, arg);
        last = bytes;
    }
    return rc;
}

static int count_size(size_t bytes, void *arg)
{
    (void)bytes;
    ++*(int *)arg;
    return 0;
}

/* Timed repetitions of a chase point: with --precision --reps - 1 at most; else 3 (--reps
 * permitting): latency is stable, and building each chain costs more than timing it. */
static int chase_reps(void)
{
    return node_precision > 0 ? (int)reps - 1 : (reps < 4 ? (int)reps : 4) - 1;
}

typedef struct {
    char *base;
    size_t each;
    int threads;
} chase_job;

/* One size: every thread builds its chain, then the repetitions run on all at once (a
 * barrier before each; one thread takes the stopping decision); value = mean over the
 * threads of their ns per load. */
static int chase_size(size_t bytes, void *arg)
{
    const chase_job *cj = arg;
    int threads = cj->threads, bad = 0, more = 1;
    double v[64] = { 0 };
    char err[256] = "";
    node_rep r;
    if (node_rep_begin(&r, 1, 1, chase_reps()) != 0) return -1;
#pragma omp parallel num_threads(threads)
    {
        int id = omp_get_thread_num();
        node_pin(id);
        uint64_t state = 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull * (uint64_t)id;
        int64_t loads = 0;
        char own[256];
        void **p = mem_chase_build(cj->base + (size_t)id * cj->each, bytes, chase_seconds,
                                   &state, &loads, own, sizeof own);
        if (!p) {
#pragma omp critical
            {
                bad = 1;
                snprintf(err, sizeof err, "%s", own);
            }
        }
#pragma omp barrier
        for (;;) {
#pragma omp single
            more = !bad && node_rep_more(&r);
            if (!more) break; /* the single's barrier: every thread sees the same */
            v[id % 64] = mem_chase_time(&p, loads);
#pragma omp barrier
#pragma omp single
            {
                double mean = 0;
                for (int t = 0; t < threads; t++) mean += v[t % 64];
                r.v[0][r.n++] = mean / threads;
            }
        }
    }
    int rc = bad ? -1 : emit_chase("mem_latency", bytes, threads, -1, -1, &r);
    if (bad) hs_json_error(out, "%s", err);
    node_rep_end(&r);
    return rc ? -1 : 0;
}

/* Latency at every working-set size with `threads` threads chasing at once, each in its
 * own buffer of chase_max bytes (first touched by itself); value = mean over threads. */
static int run_chase(int threads)
{
    /* Map 2 MiB more and align, so huge pages (when advised) cover each buffer. */
    const size_t huge = 2u << 20;
    size_t max = (size_t)chase_max, each = (max + huge - 1) / huge * huge,
           mapped = each * (size_t)threads + huge;
    char *raw =
        mmap(NULL, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
        hs_json_error(out, "cannot map %zu bytes for the pointer chase", mapped);
        return -1;
    }
    char *base = (char *)(((uintptr_t)raw + huge - 1) & ~(uintptr_t)(huge - 1));
    if (hugepages && madvise(base, each * (size_t)threads, MADV_HUGEPAGE) != 0)
        fprintf(stderr, "mem: madvise(MADV_HUGEPAGE) refused; chasing on 4 KiB pages\n");
    chase_job cj = { base, each, threads };
    int rc = chase_sizes(chase_size, &cj);
    munmap(raw, mapped);
    return rc ? -1 : 0;
}

/* ------------------------------------------------------------------------- wss */

/* Bytes actually used for working set w with t threads: a multiple of 1 KiB x t. */
static size_t wss_round(int64_t w, int t)
{
    size_t unit = 1024u * (size_t)t, n = (size_t)w / unit;
    return (n ? n : 1) * unit;
}

static int run_wss(double *mem, int threads)
{
    int64_t sizes[NODE_MAX_LIST];
    int ns = node_parse_size_list(*wss_opt ? wss_opt : blocks_opt, sizes, NODE_MAX_LIST);
    for (int s = 0; s < ns; s++) {
        size_t w = wss_round(sizes[s], threads), n = w / 2 / sizeof(double);
        double *a = mem, *c = mem + n;
        for (size_t i = 0; i < n; i++) a[i] = c[i] = 1.0;
        /* Calibrate passes so one repetition takes about --chase-seconds. */
        int64_t passes = 1;
        for (;;) {
            double t0 = hs_now_s();
            for (int64_t k = 0; k < passes; k++) mk_copy(c, a, 0, n);
            if (hs_now_s() - t0 > chase_seconds / 4) break;
            passes *= 4;
        }
        passes *= 4;
        node_rep rp;
        if (node_rep_begin(&rp, 1, 1, (int)reps - 1) != 0) return -1;
        while (node_rep_more(&rp)) {
            double t0 = 0, t = 0;
#pragma omp parallel num_threads(threads)
            {
                int id = omp_get_thread_num();
                node_pin(id);
                SLICE(n, threads, id, lo, hi);
#pragma omp barrier
#pragma omp master
                t0 = hs_now_s();
                for (int64_t k = 0; k < passes; k++) mk_copy(c, a, lo, hi);
#pragma omp barrier
#pragma omp master
                t = hs_now_s() - t0;
            }
            rp.v[0][rp.n++] = 2.0 * (double)(n * sizeof(double)) * (double)passes / t / 1e6;
        }
        hs_json j;
        node_sample_begin(&j, "bandwidth", "MB/s");
        hs_json_str(&j, "workload", "mem_wss");
        hs_json_str(&j, "op", "copy");
        hs_json_int(&j, "bytes", (int64_t)w);
        hs_json_int(&j, "threads", threads);
        hs_json_int(&j, "passes", passes);
        node_rep_emit(&j, out, &rp, 0);
        node_rep_end(&rp);
    }
    return 0;
}

/* ------------------------------------------------------------------------- NUMA */

static int run_numa(size_t n, int threads)
{
    if (topo.numa_nodes < 2) {
        fprintf(stderr, "mem: numa matrix skipped: %d NUMA node (nothing is remote)\n",
                topo.numa_nodes);
        return 0;
    }
    size_t chase_bytes = (size_t)(4 * topo.llc_total);
    for (int i = 0; i < topo.numa_nodes; i++) {
        if (topo.numa_first_cpu[i] < 0) continue; /* memory-only node: no CPU to run on */
        if (threads > topo.numa_ncpus[i]) {
            fprintf(stderr, "mem: numa %d threads on node %d skipped: it has %d CPUs\n",
                    threads, topo.numa_os[i], topo.numa_ncpus[i]);
            continue;
        }
        for (int m = 0; m < topo.numa_nodes; m++) {
            size_t bytes = 3 * n * sizeof(double);
            double *a = mem_alloc_bound(bytes, topo.numa_os[m]);
            if (!a) {
                hs_json_error(out, "cannot bind %zu bytes to NUMA node %d", bytes,
                              topo.numa_os[m]);
                return -1;
            }
            double *b = a + n, *c = b + n, t0 = 0, t = 0;
            node_rep rp;
            if (node_rep_begin(&rp, 1, 1, (int)reps - 1) != 0) return -1;
            for (int r = -1; r < 0 || node_rep_more(&rp); r++) { /* -1: first touch */
#pragma omp parallel num_threads(threads)
                {
                    int id = omp_get_thread_num();
                    mem_pin_os_cpu(topo.numa_cpus[i][id]);
                    SLICE(n, threads, id, lo, hi);
                    if (r < 0)
                        for (size_t k = lo; k < hi; k++) {
                            a[k] = 1.0;
                            b[k] = 2.0;
                            c[k] = 0.0;
                        }
#pragma omp barrier
#pragma omp master
                    t0 = hs_now_s();
                    mk_triad(a, b, c, 3.0, lo, hi);
#pragma omp barrier
#pragma omp master
                    t = hs_now_s() - t0;
                }
                if (r >= 0) rp.v[0][rp.n++] = 24.0 * (double)n / t / 1e6;
            }
            hs_json j;
            node_sample_begin(&j, "bandwidth", "MB/s");
            hs_json_str(&j, "workload", "numa_bandwidth");
            hs_json_str(&j, "op", "triad");
            hs_json_int(&j, "threads", threads);
            hs_json_int(&j, "cpu_node", topo.numa_os[i]);
            hs_json_int(&j, "mem_node", topo.numa_os[m]);
            hs_json_int(&j, "array_bytes", (int64_t)(n * sizeof(double)));
            node_rep_emit(&j, out, &rp, 0);
            node_rep_end(&rp);
            if (threads == 1 && chase_bytes <= bytes) {
                char err[256];
                uint64_t state = 0x9E3779B97F4A7C15ull;
                int64_t loads;
                mem_pin_os_cpu(topo.numa_first_cpu[i]);
                void **p = mem_chase_build((char *)a, chase_bytes, chase_seconds, &state,
                                           &loads, err, sizeof err);
                if (!p || node_rep_begin(&rp, 1, 1, chase_reps()) != 0) {
                    hs_json_error(out, "%s", p ? "out of memory" : err);
                    return -1;
                }
                while (node_rep_more(&rp)) rp.v[0][rp.n++] = mem_chase_time(&p, loads);
                emit_chase("numa_latency", chase_bytes, 1, topo.numa_os[i], topo.numa_os[m],
                           &rp);
                node_rep_end(&rp);
            }
            mem_free_bound(a, bytes);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    int rc =
        hs_options_parse(opts, argc, argv, "mem",
                         "STREAM, block-size sweeps, pointer-chase latency and the NUMA "
                         "matrix; STREAM results validated as STREAM does.");
    if (rc >= 0) return rc;
    if (!(out = node_open_out(out_path))) return 2;
    if (mem_topo_read(&topo) != 0) {
        hs_json_error(out, "hwloc could not report the last-level cache size");
        return 1;
    }
    int cpus[1024];
    int ncpu = node_cpus(cpus, 1024);
    int64_t threads[NODE_MAX_LIST];
    int nt = node_parse_int_list(threads_opt, threads, NODE_MAX_LIST, ncpu);
    int64_t bsz[NODE_MAX_LIST], wss[NODE_MAX_LIST], chase_t[NODE_MAX_LIST],
        numa_t[NODE_MAX_LIST];
    int nw = node_parse_size_list(*wss_opt ? wss_opt : blocks_opt, wss, NODE_MAX_LIST);
    int nct = node_parse_int_list(chase_threads_opt, chase_t, NODE_MAX_LIST, ncpu);
    int nnt = node_parse_int_list(numa_threads_opt, numa_t, NODE_MAX_LIST, ncpu);
    int bad_chase = 0;
    for (int i = 0; i < nct; i++) bad_chase |= chase_t[i] > 64;
    if (nt <= 0 || reps < 2 || reps > 1000 || chase_steps < 1 || chase_seconds <= 0 ||
        node_parse_size_list(blocks_opt, bsz, NODE_MAX_LIST) <= 0 || nw <= 0 || nct <= 0 ||
        nnt <= 0 || bad_chase) {
        fprintf(stderr, "mem: bad --threads/--reps (2..1000)/--chase-steps/--block-sizes/"
                        "--wss-sizes/--chase-threads (1..64)/--numa-threads\n");
        return 2;
    }
    if (node_repeat_problem()) {
        fprintf(stderr, "mem: %s\n", node_repeat_problem());
        return 2;
    }
    int64_t max_chase_t = 1, max_wss = 0;
    for (int i = 0; i < nct; i++) {
        node_warn_threads("mem", chase_t[i]);
        if (chase_t[i] > max_chase_t) max_chase_t = chase_t[i];
    }
    for (int i = 0; i < nw; i++) max_wss = wss[i] > max_wss ? wss[i] : max_wss;
    int64_t max_threads = 1;
    for (int i = 0; i < nt; i++) {
        node_warn_threads("mem", threads[i]);
        if (threads[i] > max_threads) max_threads = threads[i];
    }
    int64_t min_array = 4 * topo.llc_total;
    if (!array_bytes) array_bytes = min_array > (64 << 20) ? min_array : (64 << 20);
    if (array_bytes < min_array)
        fprintf(stderr,
                "mem: warning: --array-bytes %lld is below STREAM's rule of 4 x the "
                "last-level cache (%lld bytes): results include cache hits\n",
                (long long)array_bytes, (long long)min_array);
    if (!chase_max) chase_max = 8 * topo.llc_total;
    if (!block_total) block_total = array_bytes;
    /* Refuse what does not fit, naming the limit, rather than swap or be OOM-killed. */
    int64_t need = 3 * array_bytes;
    if (2 * block_total * max_threads > need) need = 2 * block_total * max_threads;
    if (chase_max * max_chase_t > need) need = chase_max * max_chase_t;
    if (max_wss > need) need = max_wss;
    if (topo.mem_available && need > topo.mem_available * 8 / 10) {
        hs_json_error(out,
                      "sizes need %lld bytes but only %lld are available (limit: 80%% of "
                      "MemAvailable = %lld); lower "
                      "--array-bytes/--block-total/--chase-max/--chase-threads",
                      (long long)need, (long long)topo.mem_available,
                      (long long)(topo.mem_available * 8 / 10));
        return 2;
    }
    if (node_meta(out, "mem", opts) != 0) return 1;
    int chase_points = 0, nbs = node_parse_size_list(blocks_opt, bsz, NODE_MAX_LIST);
    chase_sizes(count_size, &chase_points);
    int numa_points = topo.numa_nodes > 1 ? 2 * topo.numa_nodes * topo.numa_nodes : 0;
    node_repeat_init(nt * (4 * node_list_has(tests_opt, "stream") +
                           2 * nbs * node_list_has(tests_opt, "blocks") +
                           nw * node_list_has(tests_opt, "wss")) +
                     nct * chase_points * node_list_has(tests_opt, "chase") +
                     nnt * numa_points * node_list_has(tests_opt, "numa"));

    size_t n = (size_t)array_bytes / sizeof(double);
    if (node_list_has(tests_opt, "stream") || node_list_has(tests_opt, "blocks") ||
        node_list_has(tests_opt, "wss")) {
        size_t total = 3 * n > (size_t)(2 * block_total * max_threads) / sizeof(double)
                           ? 3 * n
                           : (size_t)(2 * block_total * max_threads) / sizeof(double);
        if ((size_t)max_wss / sizeof(double) + 1024 > total)
            total = (size_t)max_wss / sizeof(double) + 1024;
        double *mem = aligned_alloc(4096, (total * sizeof(double) + 4095) / 4096 * 4096);
        if (!mem) {
            hs_json_error(out, "cannot allocate %zu bytes", total * sizeof(double));
            return 1;
        }
        for (int i = 0; i < nt && node_list_has(tests_opt, "stream"); i++)
            if (run_stream(mem, mem + n, mem + 2 * n, n, (int)threads[i]) != 0) return 1;
        char *src = (char *)mem, *dst = src + block_total * max_threads;
        memset(src, 1, (size_t)(block_total * max_threads));
        for (int i = 0; i < nt && node_list_has(tests_opt, "blocks"); i++)
            if (run_blocks(src, dst, (size_t)block_total, (int)threads[i]) != 0) return 1;
        for (int i = 0; i < nt && node_list_has(tests_opt, "wss"); i++)
            if (run_wss(mem, (int)threads[i]) != 0) return 1;
        free(mem);
    }
    for (int i = 0; i < nct && node_list_has(tests_opt, "chase"); i++)
        if (run_chase((int)chase_t[i]) != 0) return 1;
    for (int i = 0; i < nnt && node_list_has(tests_opt, "numa"); i++)
        if (run_numa(n, (int)numa_t[i]) != 0) return 1;
    return 0;
}
