/* node_util.h - what every node benchmark (cpu, mem, disk, net) shares: the meta record,
 * the CPUs this process may use and thread pinning, sample records, list options.
 *
 * Node benchmarks run without MPI, one process, threads pinned one per allowed CPU in the
 * order of the affinity mask, so "threads=2" always means the first two CPUs the launcher
 * gave us (taskset / cgroup limits are honoured, never widened).
 */
#ifndef HS_NODE_UTIL_H
#define HS_NODE_UTIL_H
#include <stdint.h>
#include <stdio.h>
#include "jsonl.h"
#include "options.h"

#define NODE_MAX_LIST 64
#define NODE_VERSION "1"

/* Opens --out ("-" is stdout). NULL on failure (message on stderr). */
FILE *node_open_out(const char *path);

/* The meta record (docs/records.md) for a program without MPI. Returns 0 or -1. */
int node_meta(FILE *out, const char *benchmark, const hs_option *opts);

/* CPUs in this process's affinity mask, ascending; returns how many (<= max). */
int node_cpus(int *cpus, int max);

/* Pins the calling thread to the idx-th allowed CPU (modulo their number). Returns the
 * OS CPU index, or -1 when pinning failed. */
int node_pin(int idx);

/* Parses "1,2,4" or "1-4" or "all" (1..ncpus) into v; returns the count or -1. */
int node_parse_int_list(const char *text, int64_t *v, int max, int64_t all_upto);
/* Parses a size list "4K,1M,10M"; returns the count or -1. */
int node_parse_size_list(const char *text, int64_t *v, int max);
/* True when name is in the comma list (or the list is "all"). */
int node_list_has(const char *list, const char *name);

/* Warns on stderr when threads exceed the allowed CPUs (timings then share cores). */
void node_warn_threads(const char *program, int64_t threads);

/* Sample record: begin writes type/metric/unit and opens "params"; the caller adds
 * params; end closes params, writes values and warmups, and emits. */
void node_sample_begin(hs_json *j, const char *metric, const char *unit);
int node_sample_end(hs_json *j, FILE *out, const double *values, int n, int warmups);

/* Ascending sort of doubles (percentiles). */
void node_sort(double *v, int n);

#endif
