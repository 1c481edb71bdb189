/* node_repeat.c - see node_repeat.h. */
#include "node_repeat.h"
#include "node_util.h"
#include "precision.h"
#include "timer.h"
#include <math.h>
#include <stdlib.h>

double node_precision, node_budget_s;
static int points_left = 1;
static double seconds_left = INFINITY;

const char *node_repeat_problem(void)
{
    return hs_precision_problem(node_precision, node_budget_s, "--reps");
}

void node_repeat_init(int series)
{
    points_left = series > 0 ? series : 1;
    seconds_left = node_budget_s > 0 ? node_budget_s : INFINITY;
}

int node_rep_begin(node_rep *r, int series, int warmups, int reps)
{
    *r = (node_rep){ .series = series, .warmups = warmups, .cap = reps, .t0 = hs_now_s() };
    for (int s = 0; s < series; s++)
        if (!(r->v[s] = calloc((size_t)(warmups + reps), sizeof(double)))) {
            node_rep_end(r);
            return -1;
        }
    /* The first look at 6, as p2p's: a point its budget share cannot carry further
     * ends there, with an interval (min to max); "met" still needs 10. */
    r->goal = node_precision > 0 && reps > HS_PRECISION_FIRST_LOOK ? HS_PRECISION_FIRST_LOOK
                                                                   : reps;
    /* a point of k series (measured together) counts k in the program's count */
    r->share = seconds_left * series / (points_left > series ? points_left : series);
    return 0;
}

int node_rep_more(node_rep *r)
{
    int done = r->n - r->warmups;
    if (done < r->goal) return 1;
    if (node_precision <= 0 || r->stop) return 0;
    double widest = 0;
    for (int s = 0; s < r->series; s++)
        widest = fmax(widest, hs_median_half_width(node_rep_values(r, s), (size_t)done));
    double spent = hs_now_s() - r->t0;
    r->goal = (int)hs_precision_goal(widest, node_precision, (size_t)done, (size_t)r->cap,
                                     r->share - spent, spent / r->n, &r->stop);
    return r->stop == NULL;
}

const double *node_rep_values(const node_rep *r, int s) { return r->v[s] + r->warmups; }

int node_rep_count(const node_rep *r) { return r->n > r->warmups ? r->n - r->warmups : 0; }

int node_rep_emit(hs_json *j, FILE *out, const node_rep *r, int s)
{
    hs_json summary;
    int n = node_rep_count(r);
    const double *v = node_rep_values(r, s);
    if (r->stop) hs_json_copy(&summary, j, "summary"); /* params still open in both */
    int bad = node_sample_end(j, out, v, n, r->warmups) != 0;
    if (!r->stop) return bad ? -1 : 0;
    hs_json_close(&summary);
    hs_precision_json(&summary, node_precision, hs_median_half_width(v, (size_t)n), r->stop,
                      "repetitions", n);
    bad |= hs_json_emit(&summary, out) != 0;
    return bad ? -1 : 0;
}

void node_rep_end(node_rep *r)
{
    for (int s = 0; s < r->series; s++) free(r->v[s]);
    points_left -= r->series;
    seconds_left -= hs_now_s() - r->t0;
    r->series = 0;
}
