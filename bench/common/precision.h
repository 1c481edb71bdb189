/* precision.h - how precise a median is: the stopping rule of measuring to a precision.
 *
 * The precision of n samples is the relative half-width of the nonparametric 95 %
 * confidence interval of their median (order statistics; Le Boudec 2010, Thm. 2.1;
 * Hoefler & Belli SC15 Sec. 4.2.2): max(median - x_(j), x_(k) - median) / |median|, the
 * ranks j, k from Binomial(n, 1/2). The same definition as the Python side's
 * results/stats.py `summarize` (its "CI of the median reaches X % from it"), so a number
 * the program stopped on is the number `show` prints for one launch.
 *
 * A stopping rule that looks at the data after every sample stops early on a lucky streak
 * (optional stopping); HS_PRECISION_MIN_SAMPLES bounds that bias, and the callers look
 * only at geometrically growing counts (x1.5), so few looks are taken
 * (tests/test_precision_rule.py measures the coverage on known distributions).
 */
#ifndef HS_PRECISION_H
#define HS_PRECISION_H
#include <stddef.h>
#include <stdint.h>

#include "jsonl.h"

/* "met" needs 10 samples (95 % CI ranks (2, 9): both ends inside the data, and the
 * optional-stopping bias bounded); a budget may end a size at 6, the fewest with any 95 %
 * interval (ranks (1, 6): min and max, so wide, and said so by the half-width). */
#define HS_PRECISION_MIN_SAMPLES 10
#define HS_PRECISION_FIRST_LOOK 6

/* Relative half-width of the 95 % CI of the median of v[0..n) (v is not changed);
 * INFINITY when n is too small for a 95 % interval (n < 6) or the median is 0.
 * Cost: a copy and a sort, O(n log n), and O(n) for the binomial ranks. */
double hs_median_half_width(const double *v, size_t n);

/* 1-based ranks (j, k) of the 95 % CI of the median of n samples; 0 when n < 6. */
int hs_median_ci_ranks(size_t n, size_t *j, size_t *k);

/* How many samples to take before the next look at the precision: half again as many
 * as there are (at least HS_PRECISION_MIN_SAMPLES), never beyond max_n. */
size_t hs_precision_next(size_t n, size_t max_n);

/* The stopping rule after `done` samples whose median's relative half-width is
 * `half_width`: 0 with *stop set ("met" from HS_PRECISION_MIN_SAMPLES on, "cap" at cap,
 * "budget" when not one more sample of `each_s` seconds fits in the `left_s` seconds
 * left; left_s = INFINITY: no budget), else the count to reach before the next look
 * (hs_precision_next, trimmed to what left_s holds at each_s a sample). */
size_t hs_precision_goal(double half_width, double target, size_t done, size_t cap,
                         double left_s, double each_s, const char **stop);

/* Rank 0's look after `done` timed blocks of a size measured to a precision (p2p.c,
 * rma.c): `values` the blocks' metric, `spent_s` the blocks' summed time, `elapsed_s` the
 * size's time so far (warm-up included) of its `budget_s` (0: no budget). Sets
 * *half_width (hs_median_half_width of the values) and returns hs_precision_goal's
 * answer: 0 with *stop set, or the block count to reach before the next look. */
size_t hs_precision_look(const double *values, size_t done, double spent_s,
                         double elapsed_s, double budget_s, double target, size_t cap,
                         double *half_width, const char **stop);

/* The summary's `precision` object: target, half_width (null without a 95 % CI), stop
 * and the count of what was repeated under `count_key` ("blocks", "repetitions"). */
void hs_precision_json(hs_json *j, double target, double half_width, const char *stop,
                       const char *count_key, int64_t count);

/* The --precision and --time-budget entries of an option table (options.h) of a program
 * that repeats to this rule (bench/mpi/coll_repeat.h, bench/node/node_repeat.h): each
 * `what` repeats, `most` is the option that caps it, the budget covers `budget_of`
 * (string literals). */
#define HS_PRECISION_OPTIONS(precision, budget_s, what, most, budget_of)                 \
    { "precision", HS_OPT_DOUBLE, &(precision), "0",                                     \
      "repeat each " what " until the 95 % CI of its median is within this fraction of " \
      "it (0.01 = 1 %), " most " being the most; 0: exactly " most },                    \
    {                                                                                    \
        "time-budget", HS_OPT_DOUBLE, &(budget_s), "0",                                  \
            "with --precision: seconds for " budget_of ", shared out as it goes (0: no " \
            "limit)"                                                                     \
    }

/* The --precision and --size-budget-ms entries of a program that adds timed blocks at a
 * size (p2p.c, rma.c: hs_precision_look after each round); `cap` says its cap. */
#define HS_SIZE_PRECISION_OPTIONS(precision, size_budget_ms, cap)                          \
    { "precision", HS_OPT_DOUBLE, &(precision), "0",                                       \
      "add blocks at a size until the 95 % CI of their median is within this fraction of " \
      "it (0.01 = 1 %), at least 10 blocks; 0 = the fixed counts" },                       \
    {                                                                                      \
        "size-budget-ms", HS_OPT_DOUBLE, &(size_budget_ms), "0",                           \
            "with --precision: stop adding blocks at a size after this long (warm-up "     \
            "included); 0 = no limit but the cap of " cap                                  \
    }

/* NULL, or what is wrong with a --precision and --time-budget pair; `most` names the
 * option a precision of 0 leaves in charge (e.g. "--reps"). */
const char *hs_precision_problem(double precision, double budget_s, const char *most);

#endif
