/* binding_mpi.h - the meta record of MPI programs: which MPI library, where every rank runs.
 *
 *   MPI_Init(&argc, &argv);
 *   ... parse options ...
 *   if (hs_write_meta_mpi(out, "p2p", "0.1.0", opts, MPI_COMM_WORLD) != 0) fail;
 *
 * Every function taking a communicator is collective over it; only rank 0 writes.
 * Cost: one hwloc topology load per rank (a few ms), MPI_Gather + MPI_Gatherv of
 * ~300 bytes + 4 bytes per bound CPU per rank, and ~1 ms timer probe plus ~10 ms
 * MPI_Wtime calibration on rank 0. hs_write_cpu_pair adds the cache-line probe of
 * cacheline_mpi.h (20 ms) for launches of exactly 2 ranks on one node.
 */
#ifndef HS_BINDING_MPI_H
#define HS_BINDING_MPI_H
#include <mpi.h>
#include <stdio.h>
#include "binding.h"
#include "options.h"

typedef struct {
    char library
        [64]; /* "Open MPI", "MPICH", "MVAPICH2", "Intel MPI", or the first word(s) */
    char version[64]; /* first dotted number after the name, e.g. "4.1.4"; "" if none */
    char full[256];   /* first line of MPI_Get_library_version */
} hs_mpi_library;

/* Identifies the MPI library this program runs with (not the one it was compiled with).
 * Local, not collective. */
void hs_mpi_library_get(hs_mpi_library *lib);
/* Parses a library version string (exposed for tests of the parser). */
void hs_mpi_library_parse(const char *text, hs_mpi_library *lib);
/* Writes {"library":...,"version":...,"full":...} under key. */
void hs_mpi_library_json(hs_json *j, const char *key, const hs_mpi_library *lib);

/* Collects every rank's binding at rank 0. On rank 0 *all receives a malloc'd array of
 * comm-size entries in rank order (free with hs_bindings_free); elsewhere *all = NULL.
 * Returns 0 on every rank, or -1 on every rank when any rank failed to read its binding;
 * then rank 0 has *all = NULL, *n = the first failing rank and errno = that rank's errno. */
int hs_binding_gather(MPI_Comm comm, hs_binding **all, int *n);
void hs_bindings_free(hs_binding *all, int n);

/* Mean cost of one MPI_Wtime call in ns (calibrated loop, ~10 ms; local). */
double hs_mpi_wtime_cost_ns(void);

/* Writes the whole meta record (rank 0) with "mpi", "ranks", "timer" (with MPI_Wtick as
 * wtick_s and hs_mpi_wtime_cost_ns as wtime_cost_ns) and "options".
 * Returns 0 on every rank, or -1 on every rank when a binding could not be read (rank 0
 * then wrote an error record instead) or rank 0's write failed. */
int hs_write_meta_mpi(FILE *out, const char *benchmark, const char *version,
                      const hs_option *options, MPI_Comm comm);

/* Measures the cache-line time between the two ranks' CPUs and writes it (rank 0) as a
 * record {"type":"cpu_pair","cacheline_ns","round_trips"}; nothing for other launches
 * (not 2 ranks, not one node, SimGrid). Call it after the measurements: run before them,
 * its 20 ms spin on a shared line changed MPICH 4.0.2's bibw for the rest of the launch
 * (-5 to -10 % at 16-64 B, +10 to +16 % at 128-256 B; docs/osu.md).
 * Returns 0 on every rank, or 1 on every rank when rank 0's write failed. */
int hs_write_cpu_pair(FILE *out, MPI_Comm comm);

#endif
