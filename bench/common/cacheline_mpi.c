/* cacheline_mpi.c - cache-line ping-pong between two ranks through an MPI shared window
 * (see cacheline_mpi.h). One int flag: rank 0 writes 2i+1 and waits for 2i+2, rank 1
 * answers every odd value with the next even one; -1 ends rank 1's loop. The flag lives
 * in memory from MPI_Win_allocate_shared, accessed with C11 atomics (the MPI library maps
 * it into both processes; MPI_Win_sync and barriers order the set-up). */
#include "cacheline_mpi.h"

#include <stdatomic.h>

#include "timer.h"

#define WARMUP_ROUND_TRIPS 1000
#define MAX_CHUNK 4096 /* round trips between clock readings, at most */

#ifdef SMPI_SHARED_MALLOC
int hs_cacheline_measure(MPI_Comm comm, double budget_ms, hs_cacheline *out)
{
    (void)comm, (void)budget_ms, (void)out;
    return -1;
}
#else
/* Round trips first .. first + n - 1; returns first + n. */
static long round_trips(atomic_int *flag, long first, long n)
{
    for (long i = first; i < first + n; i++) {
        atomic_store_explicit(flag, (int)(2 * i + 1), memory_order_release);
        while (atomic_load_explicit(flag, memory_order_acquire) != (int)(2 * i + 2)) {}
    }
    return first + n;
}

/* Chunks of doubling length (at most MAX_CHUNK round trips), the clock read only between
 * chunks: a few dozen readings in 20 ms, so their cost stays out of the result, and on two
 * ranks sharing one CPU (a scheduler quantum per round trip) the budget still ends it. */
static long ping(atomic_int *flag, double budget_ns, double *elapsed_ns)
{
    long next = 0, timed = 0;
    int64_t w0 = hs_now_ns();
    for (long k = 1;
         next < WARMUP_ROUND_TRIPS && (double)(hs_now_ns() - w0) < budget_ns / 4;
         k = k < MAX_CHUNK ? 2 * k : k)
        next = round_trips(flag, next, k);
    int64_t t0 = hs_now_ns();
    for (long k = 1; (double)(hs_now_ns() - t0) < budget_ns;
         k = k < MAX_CHUNK ? 2 * k : k) {
        next = round_trips(flag, next, k);
        timed += k;
    }
    *elapsed_ns = (double)(hs_now_ns() - t0);
    atomic_store_explicit(flag, -1, memory_order_release);
    return timed;
}

static void pong(atomic_int *flag)
{
    for (;;) {
        int v = atomic_load_explicit(flag, memory_order_acquire);
        if (v == -1) return;
        if (v > 0 && (v & 1)) atomic_store_explicit(flag, v + 1, memory_order_release);
    }
}

int hs_cacheline_measure(MPI_Comm comm, double budget_ms, hs_cacheline *out)
{
    int size, rank, node_size;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (size != 2) return -1; /* same answer on every rank: no communication needed */
    MPI_Comm node;
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_size);
    /* Both ranks see node_size 2 or both see 1: the split is the same on both sides. */
    if (node_size != 2) {
        MPI_Comm_free(&node);
        return -1;
    }
    atomic_int *flag = NULL;
    MPI_Win win;
    MPI_Aint bytes = rank == 0 ? 128 : 0;
    if (MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, node, &flag, &win) !=
        MPI_SUCCESS) {
        MPI_Comm_free(&node);
        return -1;
    }
    MPI_Aint got;
    int disp;
    MPI_Win_shared_query(win, 0, &got, &disp, &flag);
    MPI_Win_lock_all(MPI_MODE_NOCHECK, win);
    if (rank == 0) atomic_store(flag, 0);
    MPI_Win_sync(win);
    MPI_Barrier(node);
    MPI_Win_sync(win);
    if (rank == 0) {
        double elapsed;
        long n = ping(flag, budget_ms * 1e6, &elapsed);
        out->round_trips = n;
        out->one_way_ns = n > 0 ? elapsed / (2.0 * (double)n) : -1;
    } else {
        pong(flag);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(node);
    MPI_Win_free(&win);
    MPI_Comm_free(&node);
    return 0;
}
#endif
