/* mem_kernels.c - see mem_kernels.h. */
#include "mem_kernels.h"
#include <string.h>

#define CLONES __attribute__((target_clones("avx512f", "avx2", "default")))

CLONES void mk_copy(double *restrict c, const double *restrict a, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) c[i] = a[i];
}

CLONES void mk_scale(double *restrict b, const double *restrict c, double s, size_t lo,
                     size_t hi)
{
    for (size_t i = lo; i < hi; i++) b[i] = s * c[i];
}

CLONES void mk_add(double *restrict c, const double *restrict a, const double *restrict b,
                   size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) c[i] = a[i] + b[i];
}

CLONES void mk_triad(double *restrict a, const double *restrict b, const double *restrict c,
                     double s, size_t lo, size_t hi)
{
    for (size_t i = lo; i < hi; i++) a[i] = b[i] + s * c[i];
}

void mk_blocks(char *dst, const char *src, const uint32_t *order, size_t n, size_t block)
{
    for (size_t i = 0; i < n; i++)
        memcpy(dst + order[i] * block, src + order[i] * block, block);
}

void **mk_chase(void **p, int64_t loads)
{
    for (int64_t i = 0; i < loads; i += 8) {
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
        p = (void **)*p;
    }
    return p;
}
