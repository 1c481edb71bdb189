/* mem_kernels.h - the loops mem.c times, on [lo, hi) of the arrays so each pinned thread
 * owns the part it first touched. Compiled for AVX-512, AVX2 and plain x86-64
 * (target_clones: the loader picks the widest the CPU has), no non-temporal stores, as
 * STREAM itself: counted bytes exclude the write-allocate traffic.
 *
 *   copy  c = a        16 B/element     scale b = s c     16 B/element
 *   add   c = a + b    24 B/element     triad a = b + s c 24 B/element
 */
#ifndef HS_MEM_KERNELS_H
#define HS_MEM_KERNELS_H
#include <stddef.h>
#include <stdint.h>

void mk_copy(double *c, const double *a, size_t lo, size_t hi);
void mk_scale(double *b, const double *c, double s, size_t lo, size_t hi);
void mk_add(double *c, const double *a, const double *b, size_t lo, size_t hi);
void mk_triad(double *a, const double *b, const double *c, double s, size_t lo, size_t hi);

/* Block copy dst[blk] = src[blk] over the blocks listed in order[0..n) (sequential or a
 * random permutation), block bytes each. */
void mk_blocks(char *dst, const char *src, const uint32_t *order, size_t n, size_t block);

/* Follows the pointer chain `loads` times from p; returns the final pointer so the loads
 * cannot be removed. Each load depends on the previous one: time / loads = latency. */
void **mk_chase(void **p, int64_t loads);

#endif
