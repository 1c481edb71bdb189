/* cpu_kernels.h - arithmetic throughput kernels, one per (precision, ISA), chosen at run time.
 *
 * Each kernel keeps NACC independent vector accumulators so that the FMA latency (4-5
 * cycles) times the number of FMA units (2) is covered: 12 chains > 2 x 5. Per iteration
 * every accumulator gets acc = acc*m + a and then acc = acc*m - a with m = 1 and a read
 * through volatile, so the compiler cannot fold anything and the expected result is exact
 * in every precision: each lane must end at its start value; a lost or extra operation
 * leaves it off by a, which the check reports.
 *
 * Cost: registers only (no memory traffic); time = iters x 2 x NACC x latency-bound work.
 */
#ifndef HS_CPU_KERNELS_H
#define HS_CPU_KERNELS_H
#include <stdint.h>

#define NACC 12

typedef int (*cpu_kernel_fn)(int64_t iters, double x0); /* 0: validated, -1: wrong answer */

typedef struct {
    const char *precision; /* fp64, fp32, fp16, bf16, int8, int16, int32, int64 */
    const char *isa;       /* avx512, avx2, sse2 (and the extension for fp16/bf16) */
    const char *op;        /* fma, madd (mul+add without FMA), dpbf16, add */
    double ops_per_iter;   /* FLOPs or integer operations of one iteration */
    cpu_kernel_fn fn;
} cpu_kernel;

/* The best kernel this CPU supports for the precision, or NULL (e.g. fp16 without
 * AVX512-FP16). `force_isa` ("avx2", "sse2", or NULL for the best) limits the choice. */
const cpu_kernel *cpu_kernel_find(const char *precision, const char *force_isa);

/* Dependent chain of 1-cycle integer adds: returns the cycles executed (the caller times
 * them to obtain the core clock actually running, turbo included). */
int64_t cpu_clock_chain(int64_t iters);

#endif
