/* binding.h - where this process really runs, read from inside (docs/architecture.md), and the meta
 * record of programs without MPI.
 *
 * The launcher's report of a binding can be wrong (a rankfile typo, a default that changed
 * between versions); the kernel's affinity mask cannot. hs_binding_read takes the mask from
 * sched_getaffinity and names, through hwloc, the core, socket (package) and NUMA node that
 * contain all of its CPUs. Everything is an OS index (what Linux, rankfiles and
 * --cpu-bind lists use), never an hwloc logical index.
 *
 *   hs_binding b;
 *   if (hs_binding_read(&b, rank) != 0) ... errno says why;
 *   hs_binding_json(&j, NULL, &b);   // {"rank":0,"host":"vm","cpus":[0],"core":0,"socket":0,"numa":0}
 *   hs_binding_free(&b);
 *
 * Cost: hs_binding_read loads the hwloc topology of the node (a few ms; ~1 MB of memory
 * that is released before returning). Call it once per process, before timing.
 */
#ifndef HS_BINDING_H
#define HS_BINDING_H
#include <stdio.h>
#include "jsonl.h"
#include "options.h"

#define HS_HOST_MAX 256 /* bytes for a host name, NUL included (HOST_NAME_MAX is 64) */
#define HS_LANE_MAX 16  /* bytes for a lab lane's interface name ("lane1"), NUL included */

typedef struct {
    int rank; /* as given by the caller (MPI rank, 0 without MPI) */
    char host
        [HS_HOST_MAX]; /* SLURMD_NODENAME under SLURM, else gethostname(); NUL-terminated */
    int ncpus;         /* number of CPUs in the affinity mask */
    int *cpus;         /* their OS indices, ascending (malloc'd, ncpus entries) */
    int core; /* OS index of the one core holding every CPU of the mask; -1 if several/unknown */
    int socket; /* OS index of the one package holding them; -1 if several/unknown */
    int numa;   /* OS index of the one NUMA node holding them; -1 if several/unknown */
    char lane[HS_LANE_MAX]; /* HPCSCOPE_LAB_LANE (the lab's per-process lane), else "" */
} hs_binding;

/* Fills b for the calling thread. Returns 0, or -1 with errno set (b is then empty and safe
 * to free). Linux core OS indices are core_id, unique only within a socket: compare
 * (socket, core) pairs, not core alone. */
int hs_binding_read(hs_binding *b, int rank);

/* Sets b->lane from HPCSCOPE_LAB_LANE ("" when unset). hs_binding_read calls it. */
void hs_binding_read_lane(hs_binding *b);

/* Releases b->cpus. */
void hs_binding_free(hs_binding *b);

/* Writes b as one JSON object; key is NULL inside an array. -1 fields are written as null. */
void hs_binding_json(hs_json *j, const char *key, const hs_binding *b);

/* Shared pieces of every meta record (record contract, docs/records.md):
 * hs_meta_begin writes "schema","benchmark","version" after hs_json_begin(j, "meta");
 * hs_meta_end probes the timer (about a millisecond) and writes "timer" and "options".
 * hs_meta_end_mpi also writes MPI's clock into "timer": wtick_s (MPI_Wtick) and
 * wtime_cost_ns (one MPI_Wtime call); both set the facts of the timing check
 * (hs_timer_set_facts: the coarser tick and the dearer reading of the two clocks). */
#define HS_SCHEMA "hpcscope.bench/1"
void hs_meta_begin(hs_json *j, const char *benchmark, const char *version);
void hs_meta_end(hs_json *j, const hs_option *options);
void hs_meta_end_mpi(hs_json *j, const hs_option *options, double wtick_s,
                     double wtime_cost_ns);

/* The whole meta record of a program without MPI: "mpi": null and "ranks" holding this
 * process alone (rank 0). Returns 0, or -1 when the binding could not be read or the
 * write failed (an error record is written in the first case). */
int hs_write_meta_self(FILE *out, const char *benchmark, const char *version,
                       const hs_option *options);
/* The same with `extra` (may be NULL) adding fields of the program's own to the record
 * after "ranks" (cpu: the BLAS it runs with). */
int hs_write_meta_self_with(FILE *out, const char *benchmark, const char *version,
                            const hs_option *options, void (*extra)(hs_json *j));

#endif
