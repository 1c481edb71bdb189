/* cacheline_mpi.h - how long one cache line takes between the CPUs of two ranks.
 *
 * Small-message results of two ranks on one node depend on the time a cache line needs
 * to move from one CPU to the other, and on a virtual machine that time changes when the
 * hypervisor moves the virtual CPUs to other physical cores (measured on a 2-vCPU KVM
 * guest: 20 ns and 60-90 ns one way within minutes, and small-message bandwidth changing
 * with it; docs/osu.md "Why hpcscope differs from OSU"). Every 2-rank launch
 * therefore records it in its meta record, so a launch-level shift has a visible cause.
 *
 * Collective over comm. Only for exactly 2 ranks sharing memory (one node); otherwise,
 * and in SimGrid builds (simulated ranks are threads of one scheduler: a spin wait would
 * never end), returns -1 (after one MPI_Bcast and one MPI_Allreduce where there are 2).
 * Cost: one POSIX shared-memory segment of 128 bytes (shm_open, unlinked as soon as both
 * ranks mapped it), up to 1,000 untimed round trips (at most a quarter
 * of budget_ms), then round trips for budget_ms: bounded in time, so two ranks sharing
 * one CPU (a scheduler quantum per round trip) cost about 1.5 x budget_ms, not 1,000
 * quanta. */
#ifndef HS_CACHELINE_MPI_H
#define HS_CACHELINE_MPI_H
#include <mpi.h>

typedef struct {
    double one_way_ns; /* mean one-way transfer: elapsed / (2 x round_trips) */
    long round_trips;  /* timed round trips */
} hs_cacheline;

/* 0 and *out filled on rank 0 (other ranks: 0, *out unspecified); -1 when not measured. */
int hs_cacheline_measure(MPI_Comm comm, double budget_ms, hs_cacheline *out);

#endif
