/* node_repeat.h - the timed repetitions of one point of a node program (cpu, mem, disk,
 * net): a fixed count, or as many as a precision target asks for (issue 29; the stopping
 * rule is bench/common/precision.h, the same as p2p's blocks and coll's repetitions).
 *
 * Fixed (--precision 0): the warm-ups, then exactly --reps timed repetitions, as before.
 * --precision F: the warm-ups, 6 timed repetitions (the fewest with a 95 % interval), then
 * 10, then half again as many per look, until the 95 % CI of the median is within F of it
 * (from 10 on; the widest of the point's series: STREAM's four kernels run in one pass
 * and stop together), the point's share of --time-budget is spent ("budget"), or --reps
 * timed repetitions are done ("cap").
 * --time-budget S: seconds for all points of the program, warm-ups included; a point of
 * k series may take k times what is left over the series left (node_repeat_init counts
 * them), so time a quiet point does not need goes to the later ones. Looks cost a copy
 * and a sort of the values (O(n log n)), between repetitions, outside the timed part.
 *
 *   node_rep r;
 *   if (node_rep_begin(&r, 1, warmups, reps) != 0) ...;
 *   while (node_rep_more(&r)) r.v[0][r.n++] = one_timed_repetition();
 *   node_sample_begin(&j, ...); params...; node_rep_emit(&j, out, &r, 0);
 *   node_rep_end(&r);
 */
#ifndef HS_NODE_REPEAT_H
#define HS_NODE_REPEAT_H
#include <stdio.h>

#include "jsonl.h"
#include "options.h"
#include "precision.h"

#define NODE_REP_SERIES 4

extern double node_precision, node_budget_s;

#define NODE_REPEAT_OPTIONS                                                \
    HS_PRECISION_OPTIONS(node_precision, node_budget_s, "point", "--reps", \
                         "all points' repetitions")

typedef struct {
    double *v[NODE_REP_SERIES]; /* values of each series, warm-ups first */
    int series, warmups, cap;   /* cap: --reps, timed repetitions at most */
    int n;                      /* values so far in each series, warm-ups included */
    int goal;                   /* timed values wanted before the next look */
    double t0, share;           /* when the point began; the seconds it may take */
    const char *stop;           /* met, budget, cap; NULL for a fixed count */
} node_rep;

/* NULL, or what is wrong with --precision / --time-budget. */
const char *node_repeat_problem(void);

/* How many series the program will measure in all (a point of k series counts k), for
 * sharing out --time-budget. */
void node_repeat_init(int series);

/* Starts a point of `series` series; room for warmups + reps values each. 0, or -1 when
 * memory is short. */
int node_rep_begin(node_rep *r, int series, int warmups, int reps);

/* 1 while one more repetition is wanted (warm-ups first); the caller then stores each
 * series' value at v[s][n] and increments n. */
int node_rep_more(node_rep *r);

/* The timed values of series s and their count. */
const double *node_rep_values(const node_rep *r, int s);
int node_rep_count(const node_rep *r);

/* Closes sample j (begun with node_sample_begin, params open) with series s's timed
 * values and writes it; with --precision, then a summary of the same metric, unit and
 * params with `precision`: target, half_width (of these values; null under 6), stop,
 * repetitions (results/precision.py reads it). 0, or -1 when a write failed. */
int node_rep_emit(hs_json *j, FILE *out, const node_rep *r, int s);

/* Frees the values and books the point's time against the budget. */
void node_rep_end(node_rep *r);

#endif
