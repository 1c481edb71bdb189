/* timer.h - the wall clock every benchmark uses, and its measured quality.
 *
 * hs_now_s reads CLOCK_MONOTONIC via clock_gettime (vDSO, no system call), usable without
 * MPI (node benchmarks). It is NOT always the clock behind MPI_Wtime, checked with gdb on
 * the Debian 12 builds (breakpoint on clock_gettime below PMPI_Wtime):
 *   Open MPI 4.1.4: clock_gettime(CLOCK_MONOTONIC) minus the time of MPI_Init;
 *   MPICH 4.0.2:    clock_gettime(CLOCK_REALTIME) minus a whole number of seconds, so it
 *                   follows NTP steps and slews, which CLOCK_MONOTONIC hides from us.
 * Both report MPI_Wtick() = 1e-9 (the nanosecond unit of struct timespec, not a measured
 * resolution). The benchmarks time with hs_now_s in both libraries, so one definition holds.
 *
 * hs_timer_probe measures the smallest observable tick (resolution) and the mean cost of
 * one reading (overhead); every meta record states them, MPI programs add MPI_Wtick and
 * the cost of one MPI_Wtime call (binding_mpi.c). hs_timing_json then says, per sample,
 * whether the timed intervals were long enough for this clock (docs/records.md, "timer").
 */
#ifndef HS_TIMER_H
#define HS_TIMER_H
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "jsonl.h"

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

/* Thresholds of the timing check (docs/records.md, "timer"): a timed interval should span
 * at least HS_TIMER_MIN_TICKS ticks, and the clock readings inside it should cost at most
 * HS_TIMER_MAX_READ_SHARE of it. */
#define HS_TIMER_MIN_TICKS 1000.0
#define HS_TIMER_MAX_READ_SHARE 0.01

/* What the check compares against: the coarser tick and the dearer reading of the clocks
 * this process measured (CLOCK_MONOTONIC, and MPI_Wtime in MPI programs). The meta writer
 * sets them (hs_meta_end); before that both are 0 and nothing is flagged. */
typedef struct {
    double tick_ns;
    double read_ns;
} hs_timer_facts;
void hs_timer_set_facts(double tick_ns, double read_ns);
hs_timer_facts hs_timer_get_facts(void);

/* Writes "timing": {"min_interval_s", "min_ticks", "max_read_share", "short",
 * "read_heavy"} for n timed intervals of interval_s[i] seconds, each holding reads[i]
 * clock readings (1 for back-to-back blocks). short / read_heavy are true when an
 * interval is below HS_TIMER_MIN_TICKS ticks / above HS_TIMER_MAX_READ_SHARE. */
void hs_timing_json(hs_json *j, const double *interval_s, const double *reads, size_t n);

#endif
