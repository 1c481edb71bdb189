/* mem_chase.c - see mem_chase.h. */
#include "mem_chase.h"
#include "mem_kernels.h"
#include "timer.h"
#include <stdio.h>
#include <stdlib.h>

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void **build_chain(char *buf, size_t lines, uint64_t *rng)
{
    uint32_t *perm = malloc(lines * sizeof *perm);
    for (size_t i = 0; i < lines; i++) perm[i] = (uint32_t)i;
    for (size_t i = lines - 1; i > 0; i--) {
        size_t j = next(rng) % i;
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
    for (size_t i = 0; i < lines; i++)
        *(void **)(buf + (size_t)i * 64) = buf + (size_t)perm[i] * 64;
    free(perm);
    return (void **)buf;
}

void **mem_chase_build(char *buf, size_t bytes, double seconds, uint64_t *rng,
                       int64_t *loads, char *err, size_t errlen)
{
    size_t lines = bytes / 64;
    void **p = build_chain(buf, lines, rng);
    /* Validation: the chain visits every line once before returning to the start. */
    size_t steps = 0;
    void **q = p;
    do {
        q = (void **)*q;
        steps++;
    } while (q != p && steps <= lines);
    if (steps != lines) {
        snprintf(err, errlen, "pointer chain of %zu lines has a cycle of %zu", lines,
                 steps);
        return NULL;
    }
    int64_t n = 1 << 16;
    double t;
    for (;;) { /* calibrate: loads that take about `seconds` */
        double t0 = hs_now_s();
        p = mk_chase(p, n);
        t = hs_now_s() - t0;
        if (t > seconds / 4) break;
        n *= 4;
    }
    *loads = (int64_t)((double)n * seconds / t) + 8;
    return p;
}

double mem_chase_time(void ***p, int64_t loads)
{
    double t0 = hs_now_s();
    *p = mk_chase(*p, loads); /* *p stays live: the chase cannot be optimised away */
    return (hs_now_s() - t0) * 1e9 / (double)loads;
}
