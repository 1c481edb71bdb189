#include "timer.h"

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
