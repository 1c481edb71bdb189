#include "timer.h"

#include <math.h>

hs_timer_quality hs_timer_probe(void)
{
    hs_timer_quality q;
    int64_t best = INT64_MAX;
    for (int i = 0; i < 10000; i++) {
        int64_t a = hs_now_ns(), b = hs_now_ns();
        while (b == a) b = hs_now_ns();
        if (b - a < best) best = b - a;
    }
    const int n = 100000;
    int64_t t0 = hs_now_ns();
    for (int i = 0; i < n; i++) (void)hs_now_ns();
    q.overhead_ns = (double)(hs_now_ns() - t0) / n;
    q.resolution_ns = (double)best;
    return q;
}

static hs_timer_facts facts;

void hs_timer_set_facts(double tick_ns, double read_ns)
{
    facts.tick_ns = tick_ns;
    facts.read_ns = read_ns;
}

hs_timer_facts hs_timer_get_facts(void) { return facts; }

void hs_timing_json(hs_json *j, const double *interval_s, const double *reads, size_t n)
{
    double min_s = INFINITY, share = 0;
    for (size_t i = 0; i < n; i++) {
        if (interval_s[i] < min_s) min_s = interval_s[i];
        double s =
            interval_s[i] > 0 ? reads[i] * facts.read_ns * 1e-9 / interval_s[i] : INFINITY;
        if (s > share) share = s;
    }
    double ticks = facts.tick_ns > 0 ? min_s * 1e9 / facts.tick_ns : INFINITY;
    hs_json_open_object(j, "timing");
    hs_json_double(j, "min_interval_s", min_s); /* non-finite values print as null */
    hs_json_double(j, "min_ticks", ticks);
    hs_json_double(j, "max_read_share", share);
    hs_json_bool(j, "short", ticks < HS_TIMER_MIN_TICKS);
    hs_json_bool(j, "read_heavy", share > HS_TIMER_MAX_READ_SHARE);
    hs_json_close(j);
}
