/* precision.c - the relative half-width of a median's 95 % CI (see precision.h). */
#include "precision.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_median_ci_ranks(size_t n, size_t *j, size_t *k)
{
    /* Largest q with P(B <= q) <= 0.025, B ~ Binomial(n, 1/2); then j = q + 1,
     * k = n + 1 - j (the symmetric choice). P(B = i) from lgamma: exact enough for any n
     * a benchmark takes, and no overflow. */
    const double tail = 0.025;
    double cdf = 0;
    long q = -1;
    for (size_t i = 0; i <= n / 2; i++) {
        double log_p = lgamma((double)n + 1) - lgamma((double)i + 1) -
                       lgamma((double)(n - i) + 1) - (double)n * log(2.0);
        cdf += exp(log_p);
        if (cdf > tail + 1e-12) break;
        q = (long)i;
    }
    if (q < 0) return 0;
    *j = (size_t)q + 1;
    *k = n + 1 - *j;
    return 1;
}

static int ascending(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double hs_median_half_width(const double *v, size_t n)
{
    size_t j, k;
    if (!hs_median_ci_ranks(n, &j, &k)) return INFINITY;
    double *s = malloc(sizeof *s * n);
    if (!s) return INFINITY;
    memcpy(s, v, sizeof *s * n);
    qsort(s, n, sizeof *s, ascending);
    double median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    double low = s[j - 1], high = s[k - 1];
    free(s);
    if (median == 0) return INFINITY;
    double half = fmax(median - low, high - median);
    return half / fabs(median);
}

size_t hs_precision_next(size_t n, size_t max_n)
{
    size_t next = n + (n / 2 > 0 ? n / 2 : 1);
    if (next < HS_PRECISION_MIN_SAMPLES) next = HS_PRECISION_MIN_SAMPLES;
    return next < max_n ? next : max_n;
}

size_t hs_precision_goal(double half_width, double target, size_t done, size_t cap,
                         double left_s, double each_s, const char **stop)
{
    size_t goal = hs_precision_next(done, cap);
    if (goal < done) goal = done;
    if (each_s > 0 && isfinite(left_s) && (double)(goal - done) > left_s / each_s)
        goal = done + (left_s > 0 ? (size_t)(left_s / each_s) : 0);
    *stop = NULL;
    if (half_width <= target && done >= HS_PRECISION_MIN_SAMPLES)
        *stop = "met";
    else if (done >= cap)
        *stop = "cap";
    else if (goal <= done)
        *stop = "budget";
    return *stop ? 0 : goal;
}

size_t hs_precision_look(const double *values, size_t done, double spent_s,
                         double elapsed_s, double budget_s, double target, size_t cap,
                         double *half_width, const char **stop)
{
    *half_width = hs_median_half_width(values, done);
    double left = budget_s > 0 ? budget_s - elapsed_s : INFINITY;
    return hs_precision_goal(*half_width, target, done, cap, left,
                             done > 0 ? spent_s / (double)done : 0, stop);
}

void hs_precision_json(hs_json *j, double target, double half_width, const char *stop,
                       const char *count_key, int64_t count)
{
    hs_json_open_object(j, "precision");
    hs_json_double(j, "target", target);
    hs_json_double(j, "half_width", half_width); /* null: no 95 % CI (under 6) */
    hs_json_str(j, "stop", stop);
    hs_json_int(j, count_key, count);
    hs_json_close(j);
}

const char *hs_precision_problem(double precision, double budget_s, const char *most)
{
    static char text[160];
    if (!(precision >= 0 && precision < 1)) {
        snprintf(text, sizeof text,
                 "--precision must be a fraction in 0..1 (0.01 = 1 %%; 0 = exactly %s)",
                 most);
        return text;
    }
    if (!(budget_s >= 0 && isfinite(budget_s))) return "--time-budget must be seconds >= 0";
    return NULL;
}
