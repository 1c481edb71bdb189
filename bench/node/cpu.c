/* cpu.c - arithmetic throughput of the node: FLOP/s per precision (FP64, FP32, FP16, BF16
 * where the CPU has them), integer operations per second (8/16/32/64-bit vector adds), the
 * running core clock, and OpenBLAS DGEMM as the HPL-like reference (nodeperf style).
 *
 * Rules: threads are pinned one per allowed CPU; each repetition times all threads between
 * two barriers (slowest thread decides); the kernel length is calibrated to --seconds;
 * every kernel checks its own result (cpu_kernels.h); DGEMM checks sampled entries of C
 * against exact integer dot products. Warm-ups (--warmups) are timed but reported apart.
 *
 * Repetitions: --reps exactly, or with --precision as many as the target asks, --reps
 * the most (node_repeat.h).
 *
 * Cost: (kernels x thread counts) x (warmups + repetitions) x --seconds (the clock points
 * too), plus DGEMM 2 N^3 FLOP per repetition and 24 N^2 bytes of matrices.
 */
#define _GNU_SOURCE
#include "binding.h"
#include "cpu_kernels.h"
#include "node_repeat.h"
#include "node_util.h"
#include "timer.h"
#ifndef HS_NO_BLAS
#include <cblas.h>
#endif
#include <dlfcn.h>
#include <errno.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static const char *out_path, *kernels_opt, *threads_opt, *isa_opt;
static int64_t reps, warmups, dgemm_n;
static double seconds;

static const hs_option opts[] = {
    { "kernels", HS_OPT_STR, &kernels_opt, "all",
      "comma list of fp64,fp32,fp16,bf16,int8,int16,int32,int64,dgemm,clock or all" },
    { "threads", HS_OPT_STR, &threads_opt, "all",
      "thread counts, e.g. 1,2 or 1-4; all = 1..CPUs" },
    { "seconds", HS_OPT_DOUBLE, &seconds, "0.2", "target duration of one repetition" },
    { "reps", HS_OPT_INT, &reps, "5",
      "timed repetitions per point (with --precision the most)" },
    { "warmups", HS_OPT_INT, &warmups, "1", "untimed-for-results repetitions first" },
    { "dgemm-n", HS_OPT_INT, &dgemm_n, "2000", "matrix order of the DGEMM reference" },
    { "isa", HS_OPT_STR, &isa_opt, "best", "best, avx2 or sse2 (limit the vector ISA)" },
    { "out", HS_OPT_STR, &out_path, "-", "JSONL output file, - for stdout" },
    NODE_REPEAT_OPTIONS,
    { 0 }
};

static FILE *out;

/* Runs fn on `threads` pinned threads; returns the seconds between the start barrier and
 * the end barrier, or -1 when a thread's result failed validation. */
static double run_threads(const cpu_kernel *k, int threads, int64_t iters)
{
    double t0 = 0, t1 = 0;
    int bad = 0;
#pragma omp parallel num_threads(threads) reduction(+ : bad)
    {
        int id = omp_get_thread_num();
        node_pin(id);
#pragma omp barrier
#pragma omp master
        t0 = hs_now_s();
        bad += k->fn(iters, 1.0 + id) != 0;
#pragma omp barrier
#pragma omp master
        t1 = hs_now_s();
    }
    return bad ? -1 : t1 - t0;
}

static int bench_kernel(const cpu_kernel *k, int threads)
{
    /* Calibrate on one thread: iterations that take about --seconds. */
    int64_t iters = 1000;
    double t;
    while ((t = run_threads(k, 1, iters)) >= 0 && t < 0.02) iters *= 4;
    if (t < 0) goto invalid;
    iters = (int64_t)(iters * seconds / t) + 1;

    node_rep r;
    if (node_rep_begin(&r, 1, (int)warmups, (int)reps) != 0) return -1;
    while (node_rep_more(&r)) {
        t = run_threads(k, threads, iters);
        if (t < 0) {
            node_rep_end(&r);
            goto invalid;
        }
        r.v[0][r.n++] = (double)threads * (double)iters * k->ops_per_iter / t / 1e9;
    }
    hs_json j;
    int is_fp = k->precision[0] != 'i';
    node_sample_begin(&j, is_fp ? "flops" : "throughput", is_fp ? "GFLOP/s" : "GOP/s");
    hs_json_str(&j, "workload", "cpu_peak");
    hs_json_str(&j, "op", k->op);
    hs_json_str(&j, "kernel", "registers");
    hs_json_str(&j, "precision", k->precision);
    hs_json_str(&j, "isa", k->isa);
    hs_json_int(&j, "threads", threads);
    hs_json_int(&j, "accumulators", NACC);
    hs_json_int(&j, "iterations", iters);
    hs_json_bool(&j, "validated", 1);
    node_rep_emit(&j, out, &r, 0);
    node_rep_end(&r);
    return 0;
invalid:
    hs_json_error(out,
                  "%s/%s kernel on %d threads computed a wrong result (validation failed)",
                  k->precision, k->isa, threads);
    return -1;
}

/* Length of a clock repetition, from --seconds: iterations of the plain chain (16 adds
 * each: 20 M at the default 0.2 s, 0.13 s at 2.5 GHz) and kernel/chain pairs under load
 * (40 at 0.2 s, about 85 ms). */
static int64_t clock_iters(void) { return (int64_t)(1e8 * seconds) + 1; }
static int clock_pairs(void) { return seconds >= 0.02 ? (int)(200 * seconds + 0.5) : 4; }

/* Core clock actually running with `threads` cores busy: each pinned thread runs 16
 * dependent 1-cycle adds per iteration at once; a repetition's value is the mean of the
 * threads' own clocks (cycles / their own elapsed time), so it is the clock a peak of
 * `threads` cores x clock x FLOPs/cycle must use. */
static void bench_clock(int threads)
{
    node_rep r;
    if (node_rep_begin(&r, 1, (int)warmups, (int)reps) != 0) return;
    const int64_t iters = clock_iters();
    while (node_rep_more(&r)) {
        double ghz_sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : ghz_sum)
        {
            node_pin(omp_get_thread_num());
#pragma omp barrier
            double t0 = hs_now_s();
            int64_t cycles = cpu_clock_chain(iters);
            ghz_sum += (double)cycles / (hs_now_s() - t0) / 1e9;
        }
        r.v[0][r.n++] = ghz_sum / threads;
    }
    hs_json j;
    node_sample_begin(&j, "frequency", "GHz");
    hs_json_str(&j, "workload", "cpu_clock");
    hs_json_str(&j, "kernel", "dependent_add_chain");
    hs_json_int(&j, "threads", threads);
    node_rep_emit(&j, out, &r, 0);
    node_rep_end(&r);
}

/* Core clock while `threads` threads run kernel k (the FP64 FMA kernel of the widest ISA,
 * the peaks' instruction mix): each pinned thread alternates about 2 ms of k with a short
 * dependent add chain (400k adds, about 0.1 ms) and times the chain only. A core's AVX
 * frequency licence changes within about 0.5 ms and relaxes only after about 2 ms
 * without such instructions, so the chain runs at the clock the kernel holds the core at
 * (the plain add chain alone would run at the scalar clock). A repetition is
 * clock_pairs() such pairs on every thread; its value is the mean of the threads' clocks.
 * -1 when k's result failed validation. */
static int bench_clock_under(const cpu_kernel *k, int threads)
{
    int64_t slice = 1000;
    double t;
    while ((t = run_threads(k, 1, slice)) >= 0 && t < 0.02) slice *= 4;
    if (t < 0) return -1;
    slice = (int64_t)(slice * 0.002 / t) + 1;
    const int64_t chain = 25000; /* x 16 adds */
    const int pairs = clock_pairs();
    int bad = 0;
    node_rep r;
    if (node_rep_begin(&r, 1, (int)warmups, (int)reps) != 0) return -1;
    while (node_rep_more(&r) && !bad) {
        double ghz_sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : ghz_sum, bad)
        {
            int id = omp_get_thread_num();
            node_pin(id);
            double busy = 0;
            int64_t cycles = 0;
#pragma omp barrier
            for (int pair = 0; pair < pairs; pair++) {
                bad += k->fn(slice, 1.0 + id) != 0;
                double t0 = hs_now_s();
                cycles += cpu_clock_chain(chain);
                busy += hs_now_s() - t0;
            }
            ghz_sum += (double)cycles / busy / 1e9;
        }
        r.v[0][r.n++] = ghz_sum / threads;
    }
    if (bad) {
        node_rep_end(&r);
        hs_json_error(
            out, "%s/%s kernel on %d threads computed a wrong result (clock under load)",
            k->precision, k->isa, threads);
        return -1;
    }
    hs_json j;
    node_sample_begin(&j, "frequency", "GHz");
    hs_json_str(&j, "workload", "cpu_clock");
    hs_json_str(&j, "kernel", "dependent_add_chain");
    char load[64];
    snprintf(load, sizeof load, "%s %s %s", k->precision, k->op, k->isa);
    hs_json_str(&j, "load", load);
    hs_json_int(&j, "threads", threads);
    node_rep_emit(&j, out, &r, 0);
    node_rep_end(&r);
    return 0;
}

#ifndef HS_NO_BLAS
/* OpenBLAS's own words on itself (declared here: Debian's cblas.h has them, others may
 * not). The kernel is chosen when the library loads (DYNAMIC_ARCH: from CPUID, or
 * OPENBLAS_CORETYPE where set), so it is known before the first DGEMM. */
char *openblas_get_corename(void);
char *openblas_get_config(void);
int openblas_get_num_threads(void);

/* The BLAS this program runs with (docs/records.md, meta `blas`): the file the dynamic
 * linker resolved for openblas_get_config (dladdr), its version and configuration, the
 * kernel it dispatched to, its thread count and every variable of this process's
 * environment that a BLAS or OpenMP reads. */
static void blas_json(hs_json *j)
{
    hs_json_open_object(j, "blas");
    Dl_info info;
    if (dladdr((void *)openblas_get_config, &info) && info.dli_fname) {
        char *real = realpath(info.dli_fname, NULL);
        hs_json_str(j, "library", real ? real : info.dli_fname);
        free(real);
    } else {
        hs_json_null(j, "library");
    }
    const char *config = openblas_get_config();
    hs_json_str(j, "config", config ? config : "");
    char version[32] = "";
    if (config && sscanf(config, "OpenBLAS %31s", version) != 1) version[0] = '\0';
    hs_json_str(j, "version", version);
    const char *core = openblas_get_corename();
    hs_json_str(j, "core", core ? core : "");
    hs_json_int(j, "threads", openblas_get_num_threads());
    hs_json_open_object(j, "env");
    static const char *prefixes[] = { "OPENBLAS_", "GOTO_", "MKL_", "BLIS_", "OMP_" };
    for (char **e = environ; *e; e++)
        for (size_t p = 0; p < sizeof prefixes / sizeof *prefixes; p++) {
            const char *eq = strchr(*e, '=');
            size_t len = strlen(prefixes[p]);
            if (eq && !strncmp(*e, prefixes[p], len) && eq - *e < 128) {
                char key[128];
                memcpy(key, *e, (size_t)(eq - *e));
                key[eq - *e] = '\0';
                hs_json_str(j, key, eq + 1);
                break;
            }
        }
    hs_json_close(j);
    hs_json_close(j);
}
#endif

/* The meta record of node_meta (hs_write_meta_self) plus, with OpenBLAS, `blas`. */
static int cpu_meta(const hs_option *options)
{
#ifndef HS_NO_BLAS
    return hs_write_meta_self_with(out, "cpu", NODE_VERSION, options, blas_json);
#else
    return hs_write_meta_self(out, "cpu", NODE_VERSION, options);
#endif
}

/* Exact small integers so sampled entries of C can be checked exactly. */
static double a_val(int64_t i, int64_t k) { return (double)((i + 2 * k) % 7 - 3); }
static double b_val(int64_t k, int64_t j) { return (double)((3 * k + j) % 5 - 2); }

static int bench_dgemm(int threads)
{
#ifdef HS_NO_BLAS
    (void)threads;
    fprintf(stderr, "cpu: dgemm skipped: built without OpenBLAS\n");
    return 0;
#else
    int64_t n = dgemm_n;
    double *a = malloc(sizeof(double) * n * n), *b = malloc(sizeof(double) * n * n),
           *c = malloc(sizeof(double) * n * n);
    if (!a || !b || !c) {
        hs_json_error(out, "DGEMM: cannot allocate 3 x %lld^2 doubles; lower --dgemm-n",
                      (long long)n);
        return -1;
    }
    for (int64_t i = 0; i < n; i++)
        for (int64_t k = 0; k < n; k++) {
            a[i * n + k] = a_val(i, k);
            b[i * n + k] = b_val(i, k);
        }
    openblas_set_num_threads(threads);
    node_rep r;
    if (node_rep_begin(&r, 1, (int)warmups, (int)reps) != 0) return -1;
    while (node_rep_more(&r)) {
        double t0 = hs_now_s();
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)n, (int)n, (int)n, 1.0,
                    a, (int)n, b, (int)n, 0.0, c, (int)n);
        r.v[0][r.n++] = 2.0 * n * n * n / (hs_now_s() - t0) / 1e9;
    }
    /* Validation (untimed): 64 sampled entries against exact dot products. */
    for (int s = 0; s < 64; s++) {
        int64_t i = (s * 7919) % n, jj = (s * 104729) % n;
        double want = 0;
        for (int64_t k = 0; k < n; k++) want += a_val(i, k) * b_val(k, jj);
        if (c[i * n + jj] != want) {
            hs_json_error(out, "DGEMM C[%lld][%lld] = %g, expected %g", (long long)i,
                          (long long)jj, c[i * n + jj], want);
            node_rep_end(&r);
            return -1;
        }
    }
    hs_json j;
    node_sample_begin(&j, "flops", "GFLOP/s");
    hs_json_str(&j, "workload", "dgemm");
    hs_json_str(&j, "op", "dgemm");
    hs_json_str(&j, "kernel", "openblas_cblas_dgemm");
    /* the kernel OpenBLAS dispatched to is what this rate measured, like `isa` above */
    const char *core = openblas_get_corename();
    hs_json_str(&j, "blas_core", core ? core : "");
    hs_json_str(&j, "precision", "fp64");
    hs_json_int(&j, "threads", threads);
    hs_json_int(&j, "n", n);
    hs_json_bool(&j, "validated", 1);
    node_rep_emit(&j, out, &r, 0);
    node_rep_end(&r);
    free(a);
    free(b);
    free(c);
    return 0;
#endif
}

int main(int argc, char **argv)
{
    int rc =
        hs_options_parse(opts, argc, argv, "cpu",
                         "Vector FLOP/s and integer op/s per precision, core clock and "
                         "OpenBLAS DGEMM, for each thread count; results validated.");
    if (rc >= 0) return rc;
    if (!(out = node_open_out(out_path))) return 2;
    int cpus[1024];
    int ncpu = node_cpus(cpus, 1024);
    int64_t threads[NODE_MAX_LIST];
    int nt = node_parse_int_list(threads_opt, threads, NODE_MAX_LIST, ncpu);
    if (nt <= 0 || reps < 1 || warmups < 0 || seconds <= 0 || dgemm_n < 16) {
        fprintf(stderr, "cpu: bad --threads/--reps/--warmups/--seconds/--dgemm-n\n");
        return 2;
    }
    if (node_repeat_problem()) {
        fprintf(stderr, "cpu: %s\n", node_repeat_problem());
        return 2;
    }
    for (int i = 0; i < nt; i++) node_warn_threads("cpu", threads[i]);
    const char *force = strcmp(isa_opt, "best") ? isa_opt : NULL;
    if (cpu_meta(opts) != 0) return 1;
    static const char *precisions[] = { "fp64", "fp32",  "fp16",  "bf16",
                                        "int8", "int16", "int32", "int64" };
    const size_t nprec = sizeof precisions / sizeof *precisions;
    int points = 0; /* per thread count, as the loops below measure them */
    if (node_list_has(kernels_opt, "clock"))
        points += cpu_kernel_find("fp64", force) ? 2 : 1;
    for (size_t p = 0; p < nprec; p++)
        points += node_list_has(kernels_opt, precisions[p]) &&
                  cpu_kernel_find(precisions[p], force);
    points += node_list_has(kernels_opt, "dgemm");
    node_repeat_init(points * nt);

    if (node_list_has(kernels_opt, "clock")) {
        const cpu_kernel *fma = cpu_kernel_find("fp64", force);
        for (int i = 0; i < nt; i++) {
            bench_clock((int)threads[i]);
            if (fma && bench_clock_under(fma, (int)threads[i]) != 0) return 1;
        }
    }
    for (size_t p = 0; p < nprec; p++) {
        if (!node_list_has(kernels_opt, precisions[p])) continue;
        const cpu_kernel *k = cpu_kernel_find(precisions[p], force);
        if (!k) {
            fprintf(stderr,
                    "cpu: %s skipped: this CPU has no instructions for it "
                    "(fp16 needs AVX512-FP16, bf16 needs AVX512-BF16)\n",
                    precisions[p]);
            continue;
        }
        for (int i = 0; i < nt; i++)
            if (bench_kernel(k, (int)threads[i]) != 0) return 1;
    }
    if (node_list_has(kernels_opt, "dgemm"))
        for (int i = 0; i < nt; i++)
            if (bench_dgemm((int)threads[i]) != 0) return 1;
    return 0;
}
