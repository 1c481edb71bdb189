/* cacheline_mpi.c - cache-line ping-pong between two ranks through POSIX shared memory
 * (see cacheline_mpi.h). One int flag: rank 0 writes 2i+1 and waits for 2i+2, rank 1
 * answers every odd value with the next even one; -1 ends rank 1's loop. The flag lives
 * in a 128-byte shm_open segment that rank 0 creates and rank 1 maps, accessed with C11
 * atomics. Not an MPI shared window: creating one (and the node communicator it needs)
 * left MPICH 4.0.2's small-message bibw 8-12 % slower for the rest of the launch
 * (docs/osu.md); plain shared memory leaves the MPI library as OSU's programs find it. */
#define _GNU_SOURCE
#include "cacheline_mpi.h"

#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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

/* Rank 0's segment name and host, and whether rank 0 created it. */
typedef struct {
    char name[64];
    char host[MPI_MAX_PROCESSOR_NAME];
    int ok;
} segment;

int hs_cacheline_measure(MPI_Comm comm, double budget_ms, hs_cacheline *out)
{
    int size, rank, len;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (size != 2) return -1; /* same answer on every rank: no communication needed */
    segment seg = { { 0 }, { 0 }, 0 };
    int fd = -1;
    if (rank == 0) {
        snprintf(seg.name, sizeof seg.name, "/hpcscope-cacheline-%ld", (long)getpid());
        MPI_Get_processor_name(seg.host, &len);
        fd = shm_open(seg.name, O_CREAT | O_EXCL | O_RDWR, 0600);
        seg.ok = fd >= 0 && ftruncate(fd, 128) == 0;
    }
    MPI_Bcast(&seg, (int)sizeof seg, MPI_BYTE, 0, comm);
    int mine = seg.ok;
    if (rank == 1) { /* same host name and the segment opens: the two share memory */
        char host[MPI_MAX_PROCESSOR_NAME] = { 0 };
        MPI_Get_processor_name(host, &len);
        mine = seg.ok && strcmp(host, seg.host) == 0 &&
               (fd = shm_open(seg.name, O_RDWR, 0600)) >= 0;
    }
    atomic_int *flag = MAP_FAILED;
    if (mine) flag = mmap(NULL, 128, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fd >= 0) close(fd);
    mine = mine && flag != MAP_FAILED;
    int both = 0;
    MPI_Allreduce(&mine, &both, 1, MPI_INT, MPI_MIN, comm);
    if (rank == 0 && seg.ok)
        shm_unlink(seg.name); /* mapped where it is used: no leftovers */
    if (!both) {
        if (flag != MAP_FAILED) munmap(flag, 128);
        return -1;
    }
    if (rank == 0) atomic_store(flag, 0);
    MPI_Barrier(comm); /* the flag is 0 before rank 1 reads it */
    if (rank == 0) {
        double elapsed;
        long n = ping(flag, budget_ms * 1e6, &elapsed);
        out->round_trips = n;
        out->one_way_ns = n > 0 ? elapsed / (2.0 * (double)n) : -1;
    } else {
        pong(flag);
    }
    MPI_Barrier(comm);
    munmap(flag, 128);
    return 0;
}
#endif
