/* cpu_kernels.c - see cpu_kernels.h. The kernels are compiled for several ISAs with GCC
 * target attributes, so one binary runs on SSE2-only, AVX2 and AVX-512 machines;
 * __builtin_cpu_supports picks at run time. */
#include "cpu_kernels.h"
#include <immintrin.h>
#include <string.h>

/* Floating-point kernel: FMA(acc, m, a) then FMA(acc, m, -a) on NACC accumulators. */
#define FP_KERNEL(NAME, TARGET, VT, ET, SET1, FMA, STOREU, LANES)             \
    __attribute__((target(TARGET))) static int NAME(int64_t iters, double x0) \
    {                                                                         \
        volatile ET one = (ET)1.0, step = (ET)1.0, nstep = (ET)-1.0;          \
        VT m = SET1(one), a = SET1(step), na = SET1(nstep);                   \
        VT acc[NACC];                                                         \
        for (int k = 0; k < NACC; k++) acc[k] = SET1((ET)(x0 + k));           \
        for (int64_t i = 0; i < iters; i++) {                                 \
            _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++) acc[k] =  \
                FMA(acc[k], m, a);                                            \
            _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++) acc[k] =  \
                FMA(acc[k], m, na);                                           \
        }                                                                     \
        ET buf[LANES];                                                        \
        for (int k = 0; k < NACC; k++) {                                      \
            STOREU(buf, acc[k]);                                              \
            for (int l = 0; l < LANES; l++)                                   \
                if ((double)buf[l] != x0 + k) return -1;                      \
        }                                                                     \
        return 0;                                                             \
    }

/* Integer kernel: acc + a then acc + (-a), wrapping arithmetic, exact. Integer addition
 * is associative, so the compiler could fold a + (-a) out of the loop; an empty asm on
 * each accumulator (no instruction emitted) keeps every add. */
#define INT_KERNEL(NAME, TARGET, VT, ET, SET1, ADD, STOREU, LANES)                         \
    __attribute__((target(TARGET))) static int NAME(int64_t iters, double x0)              \
    {                                                                                      \
        volatile ET step = 1, nstep = (ET)-1;                                              \
        VT a = SET1(step), na = SET1(nstep);                                               \
        VT acc[NACC];                                                                      \
        for (int k = 0; k < NACC; k++) acc[k] = SET1((ET)(x0 + k));                        \
        for (int64_t i = 0; i < iters; i++) {                                              \
            _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++)                        \
            {                                                                              \
                acc[k] = ADD(acc[k], a);                                                   \
                __asm__("" : "+v"(acc[k])); /* integer adds may be reassociated: forbid */ \
            }                                                                              \
            _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++) acc[k] =               \
                ADD(acc[k], na);                                                           \
        }                                                                                  \
        ET buf[LANES];                                                                     \
        for (int k = 0; k < NACC; k++) {                                                   \
            STOREU((void *)buf, acc[k]);                                                   \
            for (int l = 0; l < LANES; l++)                                                \
                if (buf[l] != (ET)(x0 + k)) return -1;                                     \
        }                                                                                  \
        return 0;                                                                          \
    }

#define T512 "avx512f,avx512bw,avx512vl,avx512dq,fma"
#define T256 "avx2,fma"
#define T128 "sse2"

/* AVX-512 */
FP_KERNEL(fp64_avx512, T512, __m512d, double, _mm512_set1_pd, _mm512_fmadd_pd,
          _mm512_storeu_pd, 8)
FP_KERNEL(fp32_avx512, T512, __m512, float, _mm512_set1_ps, _mm512_fmadd_ps,
          _mm512_storeu_ps, 16)
INT_KERNEL(int8_avx512, T512, __m512i, int8_t, _mm512_set1_epi8, _mm512_add_epi8,
           _mm512_storeu_si512, 64)
INT_KERNEL(int16_avx512, T512, __m512i, int16_t, _mm512_set1_epi16, _mm512_add_epi16,
           _mm512_storeu_si512, 32)
INT_KERNEL(int32_avx512, T512, __m512i, int32_t, _mm512_set1_epi32, _mm512_add_epi32,
           _mm512_storeu_si512, 16)
INT_KERNEL(int64_avx512, T512, __m512i, int64_t, _mm512_set1_epi64, _mm512_add_epi64,
           _mm512_storeu_si512, 8)
FP_KERNEL(fp16_avx512, T512 ",avx512fp16", __m512h, _Float16, _mm512_set1_ph,
          _mm512_fmadd_ph, _mm512_storeu_ph, 32)

/* AVX512-BF16: VDPBF16PS adds two BF16 products into each FP32 lane (4 FLOP per lane). */
#define BF16_PAIR(x) _mm512_cvtne2ps_pbh(_mm512_set1_ps(x), _mm512_set1_ps(x))
#define DPBF16(acc, a, b) _mm512_dpbf16_ps(acc, a, b)
__attribute__((target(T512 ",avx512bf16"))) static int bf16_avx512(int64_t iters, double x0)
{
    volatile float one = 1.0f, step = 1.0f, nstep = -1.0f;
    __m512bh m = BF16_PAIR(one), a = BF16_PAIR(step), na = BF16_PAIR(nstep);
    __m512 acc[NACC];
    for (int k = 0; k < NACC; k++) acc[k] = _mm512_set1_ps((float)(x0 + k));
    for (int64_t i = 0; i < iters; i++) {
        _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++) acc[k] =
            DPBF16(acc[k], m, a);
        _Pragma("GCC unroll 12") for (int k = 0; k < NACC; k++) acc[k] =
            DPBF16(acc[k], m, na);
    }
    float buf[16];
    for (int k = 0; k < NACC; k++) {
        _mm512_storeu_ps(buf, acc[k]);
        for (int l = 0; l < 16; l++)
            if (buf[l] != (float)(x0 + k)) return -1;
    }
    return 0;
}

/* AVX2 + FMA */
FP_KERNEL(fp64_avx2, T256, __m256d, double, _mm256_set1_pd, _mm256_fmadd_pd,
          _mm256_storeu_pd, 4)
FP_KERNEL(fp32_avx2, T256, __m256, float, _mm256_set1_ps, _mm256_fmadd_ps, _mm256_storeu_ps,
          8)
#define ST256(p, v) _mm256_storeu_si256((__m256i *)(p), v)
INT_KERNEL(int8_avx2, T256, __m256i, int8_t, _mm256_set1_epi8, _mm256_add_epi8, ST256, 32)
INT_KERNEL(int16_avx2, T256, __m256i, int16_t, _mm256_set1_epi16, _mm256_add_epi16, ST256,
           16)
INT_KERNEL(int32_avx2, T256, __m256i, int32_t, _mm256_set1_epi32, _mm256_add_epi32, ST256,
           8)
INT_KERNEL(int64_avx2, T256, __m256i, int64_t, _mm256_set1_epi64x, _mm256_add_epi64, ST256,
           4)

/* SSE2: no FMA, a multiply and an add (2 FLOP per lane, as the ISA allows). */
#define MADD_PD(x, m, a) _mm_add_pd(_mm_mul_pd(x, m), a)
#define MADD_PS(x, m, a) _mm_add_ps(_mm_mul_ps(x, m), a)
#define ST128(p, v) _mm_storeu_si128((__m128i *)(p), v)
FP_KERNEL(fp64_sse2, T128, __m128d, double, _mm_set1_pd, MADD_PD, _mm_storeu_pd, 2)
FP_KERNEL(fp32_sse2, T128, __m128, float, _mm_set1_ps, MADD_PS, _mm_storeu_ps, 4)
INT_KERNEL(int8_sse2, T128, __m128i, int8_t, _mm_set1_epi8, _mm_add_epi8, ST128, 16)
INT_KERNEL(int16_sse2, T128, __m128i, int16_t, _mm_set1_epi16, _mm_add_epi16, ST128, 8)
INT_KERNEL(int32_sse2, T128, __m128i, int32_t, _mm_set1_epi32, _mm_add_epi32, ST128, 4)
INT_KERNEL(int64_sse2, T128, __m128i, int64_t, _mm_set1_epi64x, _mm_add_epi64, ST128, 2)

#define FLOPS(lanes, per_lane) (2.0 * NACC * (lanes) * (per_lane))
static const cpu_kernel kernels[] = {
    { "fp64", "avx512", "fma", FLOPS(8, 2), fp64_avx512 },
    { "fp32", "avx512", "fma", FLOPS(16, 2), fp32_avx512 },
    { "fp16", "avx512fp16", "fma", FLOPS(32, 2), fp16_avx512 },
    { "bf16", "avx512bf16", "dpbf16", FLOPS(16, 4), bf16_avx512 },
    { "int8", "avx512", "add", FLOPS(64, 1), int8_avx512 },
    { "int16", "avx512", "add", FLOPS(32, 1), int16_avx512 },
    { "int32", "avx512", "add", FLOPS(16, 1), int32_avx512 },
    { "int64", "avx512", "add", FLOPS(8, 1), int64_avx512 },
    { "fp64", "avx2", "fma", FLOPS(4, 2), fp64_avx2 },
    { "fp32", "avx2", "fma", FLOPS(8, 2), fp32_avx2 },
    { "int8", "avx2", "add", FLOPS(32, 1), int8_avx2 },
    { "int16", "avx2", "add", FLOPS(16, 1), int16_avx2 },
    { "int32", "avx2", "add", FLOPS(8, 1), int32_avx2 },
    { "int64", "avx2", "add", FLOPS(4, 1), int64_avx2 },
    { "fp64", "sse2", "madd", FLOPS(2, 2), fp64_sse2 },
    { "fp32", "sse2", "madd", FLOPS(4, 2), fp32_sse2 },
    { "int8", "sse2", "add", FLOPS(16, 1), int8_sse2 },
    { "int16", "sse2", "add", FLOPS(8, 1), int16_sse2 },
    { "int32", "sse2", "add", FLOPS(4, 1), int32_sse2 },
    { "int64", "sse2", "add", FLOPS(2, 1), int64_sse2 },
};

static int isa_ok(const char *isa)
{
    __builtin_cpu_init();
    if (!strcmp(isa, "avx512"))
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
    if (!strcmp(isa, "avx512fp16"))
        return isa_ok("avx512") && __builtin_cpu_supports("avx512fp16");
    if (!strcmp(isa, "avx512bf16"))
        return isa_ok("avx512") && __builtin_cpu_supports("avx512bf16");
    if (!strcmp(isa, "avx2"))
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return __builtin_cpu_supports("sse2");
}

/* Rank of an ISA for --isa limits: a forced "avx2" excludes the AVX-512 kernels. */
static int isa_rank(const char *isa)
{
    if (!strncmp(isa, "avx512", 6)) return 3;
    if (!strcmp(isa, "avx2")) return 2;
    return 1;
}

const cpu_kernel *cpu_kernel_find(const char *precision, const char *force_isa)
{
    for (size_t i = 0; i < sizeof kernels / sizeof kernels[0]; i++) {
        const cpu_kernel *k = &kernels[i];
        if (strcmp(k->precision, precision)) continue;
        if (force_isa && isa_rank(k->isa) > isa_rank(force_isa)) continue;
        if (isa_ok(k->isa)) return k; /* the table lists the widest ISA first */
    }
    return 0;
}

int64_t cpu_clock_chain(int64_t iters)
{
    /* Register-register adds: a chain of `add $1` can run faster than one per cycle on
     * cores whose renamer folds immediates (18.9 "GHz" measured on this project's Intel
     * Xeon guest with AVX512-FP16 and AMX, 2.6 GHz); adding a register whose value the
     * renamer does not know keeps every add on the critical path. */
    uint64_t x = 0, one = 1;
    __asm__ volatile("" : "+r"(one)); /* hide the constant from the compiler */
    for (int64_t i = 0; i < iters; i++)
        __asm__ volatile("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                         "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0"
                         : "+r"(x)
                         : "r"(one));
    return (int64_t)x; /* 16 dependent adds per iteration, one cycle each */
}
