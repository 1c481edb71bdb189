/* timer.h - the wall clock every benchmark uses, and its measured quality.
 *
 * CLOCK_MONOTONIC via clock_gettime: the same source MPI_Wtime uses in Open MPI and MPICH
 * on Linux, usable without MPI (node benchmarks). hs_timer_probe measures the smallest
 * observable tick (resolution) and the mean cost of one reading (overhead) so that every
 * meta record can state them (docs/architecture.md: time blocks so overhead stays out of samples).
 */
#ifndef HS_TIMER_H
#define HS_TIMER_H
#include <stdint.h>
#include <time.h>

static inline double hs_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline int64_t hs_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

typedef struct {
    double resolution_ns; /* smallest non-zero difference of two successive readings */
    double overhead_ns;   /* mean cost of one reading */
} hs_timer_quality;

/* Takes about a millisecond. */
hs_timer_quality hs_timer_probe(void);

#endif
