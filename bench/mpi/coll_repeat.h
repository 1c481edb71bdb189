/* coll_repeat.h - the timed repetitions of coll, lane_pattern and multi_coll: a fixed
 * count, or as many as a precision target asks for (issue 29; the stopping rule is
 * bench/common/precision.h, the same as p2p's blocks).
 *
 * Fixed (--precision 0): --repetitions calls, then one MPI_Reduce(MAX) to rank 0 (the
 * slowest process per repetition), as before.
 * --precision F: 10 repetitions first; after each round, one MPI_Reduce(MAX) per series of
 * the repetitions so far gives rank 0 the values that will be written, it computes the
 * relative half-width of their median's 95 % CI (the widest over the series measured
 * together: every algorithm of an --interleave measurement) and asks for half again as
 * many, until the target is met, the measurement's share of --time-budget is spent, or
 * --repetitions (then the cap) is reached; one MPI_Bcast carries the decision. The looks
 * sit between repetitions, outside any timed call, and grow geometrically: about
 * log1.5(cap / 10) looks, each a Reduce of at most `cap` doubles.
 * --time-budget S: the seconds the launch's timed repetitions may take in all. Each
 * measurement may spend what is left divided by the measurements left (counted at the
 * start, hs_repeat_init), so time a measurement does not need goes to the later ones.
 * Used by coll.c, lane_pattern.c, multi_coll.c and nbc.c (its two loops per size).
 * Warm-ups, validation and the probe calls come on top.
 */
#ifndef HS_COLL_REPEAT_H
#define HS_COLL_REPEAT_H
#include <math.h>

#include "precision.h"
#include "timer.h"

static double hs_rep_precision, hs_rep_budget_s;
static struct {
    int64_t left;  /* measurements not started yet (in series) */
    double left_s; /* of --time-budget; rank 0's clock decides */
} hs_rep;

#define HS_REPEAT_OPTIONS                                                  \
    HS_PRECISION_OPTIONS(hs_rep_precision, hs_rep_budget_s, "measurement", \
                         "--repetitions", "all timed repetitions of the launch")

/* check() of the programs: NULL or what is wrong with the two options. */
static const char *hs_repeat_problem(void)
{
    return hs_precision_problem(hs_rep_precision, hs_rep_budget_s, "--repetitions");
}

/* How many series of repetitions the launch will measure (an --interleave measurement of
 * k algorithms counts k), for sharing out the budget. */
static void hs_repeat_init(int64_t series)
{
    hs_rep.left = series > 0 ? series : 1;
    hs_rep.left_s = hs_rep_budget_s > 0 ? hs_rep_budget_s : INFINITY;
}

typedef struct {
    int64_t done;     /* repetitions timed and reduced into t_max */
    const char *stop; /* rank 0: met, budget, cap; NULL for a fixed count */
} hs_repeat_result;

/* Times repetitions [from, to) of every series into t_local[series * stride + i]. */
typedef void (*hs_repeat_fn)(int64_t from, int64_t to, void *arg);

/* Runs the repetitions of one measurement of `series` series (stride = --repetitions,
 * the room per series in t_local and t_max) of which the first `judged` decide when to
 * stop and count for the budget's shares (nbc's overlap loop times 3 series and stops
 * on its overall time alone; the others judge all); rank 0 ends with the slowest-process
 * times in t_max[s * stride + i], i < result.done. */
static hs_repeat_result hs_repeat_judged(hs_repeat_fn run, void *arg, int series,
                                         int judged, int64_t stride, const double *t_local,
                                         double *t_max)
{
    hs_repeat_result r = { 0, NULL };
    int adaptive = hs_rep_precision > 0;
    int64_t goal =
        adaptive && stride > HS_PRECISION_MIN_SAMPLES ? HS_PRECISION_MIN_SAMPLES : stride;
    double share =
        hs_rep.left_s * judged / (double)(hs_rep.left > judged ? hs_rep.left : judged);
    double t0 = hs_now_s();
    while (goal > r.done) {
        run(r.done, goal, arg);
        r.done = goal;
        for (int s = 0; s < judged && (adaptive || s == 0); s++)
            TRY(MPI_Reduce(t_local + (size_t)s * (size_t)stride,
                           t_max + (size_t)s * (size_t)stride,
                           (int)(adaptive ? r.done : stride * series), MPI_DOUBLE, MPI_MAX,
                           0, HB.comm));
        if (!adaptive) break;
        if (HB.rank == 0) {
            double widest = 0; /* the series measured together stop together */
            for (int s = 0; s < judged; s++)
                widest =
                    fmax(widest, hs_median_half_width(t_max + (size_t)s * (size_t)stride,
                                                      (size_t)r.done));
            double spent = hs_now_s() - t0;
            goal = (int64_t)hs_precision_goal(widest, hs_rep_precision, (size_t)r.done,
                                              (size_t)stride, share - spent,
                                              spent / (double)r.done, &r.stop);
        }
        TRY(MPI_Bcast(&goal, 1, MPI_INT64_T, 0, HB.comm));
    }
    for (int s = judged; s < series && adaptive; s++) /* the series that did not judge */
        TRY(MPI_Reduce(t_local + (size_t)s * (size_t)stride,
                       t_max + (size_t)s * (size_t)stride, (int)r.done, MPI_DOUBLE, MPI_MAX,
                       0, HB.comm));
    hs_rep.left -= judged;
    hs_rep.left_s -= hs_now_s() - t0;
    return r;
}

/* hs_repeat_judged with every series judging. */
static hs_repeat_result hs_repeat(hs_repeat_fn run, void *arg, int series, int64_t stride,
                                  const double *t_local, double *t_max)
{
    return hs_repeat_judged(run, arg, series, series, stride, t_local, t_max);
}

/* Rank 0: the sample record of one series (values[0..r->done), unit us) and, with
 * --precision, the summary naming how precise it is (its own half-width) and why its
 * repetitions stopped (results/precision.py reads it beside the sample); `params` writes
 * the params object both share. Returns 0, or 1 when a record could not be written. */
static int hs_repeat_emit(const char *metric, const hs_repeat_result *r,
                          const double *values, int64_t warmups,
                          void (*params)(hs_json *j, const void *arg), const void *arg)
{
    if (HB.rank != 0) return 0;
    hs_json j;
    hs_json_begin(&j, "sample");
    hs_json_str(&j, "metric", metric);
    hs_json_str(&j, "unit", "us");
    params(&j, arg);
    hs_json_double_array(&j, "values", values, (size_t)r->done);
    hs_json_int(&j, "warmups", warmups);
    int bad = hs_json_emit(&j, HB.out) != 0;
    if (!r->stop) return bad;
    hs_json_begin(&j, "summary");
    hs_json_str(&j, "metric", metric);
    hs_json_str(&j, "unit", "us");
    params(&j, arg);
    hs_precision_json(&j, hs_rep_precision, hs_median_half_width(values, (size_t)r->done),
                      r->stop, "repetitions", r->done);
    return bad | (hs_json_emit(&j, HB.out) != 0);
}

#endif
