/* node_util.c - see node_util.h. */
#define _GNU_SOURCE
#include "node_util.h"
#include "binding.h"
#include "out_file.h"
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FILE *node_open_out(const char *path)
{
    FILE *f = hs_create_out(path); /* never through a link planted under the name */
    if (!f) fprintf(stderr, "cannot write --out %s: %s\n", path, strerror(errno));
    return f;
}

int node_meta(FILE *out, const char *benchmark, const hs_option *opts)
{
    return hs_write_meta_self(out, benchmark, NODE_VERSION, opts);
}

int node_cpus(int *cpus, int max)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0) {
        cpus[0] = 0;
        return 1;
    }
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
        if (CPU_ISSET(c, &set)) cpus[n++] = c;
    return n;
}

int node_pin(int idx)
{
    static int cpus[1024];
    static int n;
    if (!n) n = node_cpus(cpus, 1024); /* first call happens before threads start */
    int cpu = cpus[idx % n];
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0 ? cpu : -1;
}

int node_parse_int_list(const char *text, int64_t *v, int max, int64_t all_upto)
{
    int n = 0;
    if (!strcmp(text, "all")) {
        for (int64_t i = 1; i <= all_upto && n < max; i++) v[n++] = i;
        return n;
    }
    const char *p = text;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p || a < 1) return -1;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (end == p || b < a) return -1;
        }
        for (long i = a; i <= b; i++) {
            if (n >= max) return -1;
            v[n++] = i;
        }
        if (*end == ',')
            end++;
        else if (*end)
            return -1;
        p = end;
    }
    return n;
}

int node_parse_size_list(const char *text, int64_t *v, int max)
{
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    int n = 0;
    for (char *save, *tok = strtok_r(buf, ",", &save); tok;
         tok = strtok_r(NULL, ",", &save)) {
        if (n >= max || hs_parse_size(tok, &v[n]) != 0 || v[n] <= 0) return -1;
        n++;
    }
    return n;
}

int node_list_has(const char *list, const char *name)
{
    if (!strcmp(list, "all")) return 1;
    size_t len = strlen(name);
    for (const char *p = list; (p = strstr(p, name)); p += len)
        if ((p == list || p[-1] == ',') && (p[len] == ',' || p[len] == '\0')) return 1;
    return 0;
}

void node_warn_threads(const char *program, int64_t threads)
{
    int cpus[1024];
    int n = node_cpus(cpus, 1024);
    if (threads > n)
        fprintf(stderr,
                "%s: warning: %lld threads but only %d CPUs allowed: threads share "
                "CPUs and the timings mean little\n",
                program, (long long)threads, n);
}

void node_sample_begin(hs_json *j, const char *metric, const char *unit)
{
    hs_json_begin(j, "sample");
    hs_json_str(j, "metric", metric);
    hs_json_str(j, "unit", unit);
    hs_json_open_object(j, "params");
}

int node_sample_end(hs_json *j, FILE *out, const double *values, int n, int warmups)
{
    hs_json_close(j);
    hs_json_double_array(j, "values", values, (size_t)n);
    hs_json_int(j, "warmups", warmups);
    return hs_json_emit(j, out);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void node_sort(double *v, int n) { qsort(v, (size_t)n, sizeof *v, cmp_double); }
