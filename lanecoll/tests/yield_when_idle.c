/* Test harness only: makes an MPICH built on UCX (Debian's ch4:ucx) give up the CPU when
 * a progress poll finds nothing to do, as Open MPI does under --oversubscribe
 * (mpi_yield_when_idle). Preloaded by tests/run-matrix into MPICH launches only.
 *
 * Why: MPICH busy-polls. With more processes than cores (the matrix runs up to 12 on a
 * 2-core machine), a process waiting for a descheduled peer spins until the scheduler
 * preempts it, so every message between processes sharing a core costs a time slice
 * (milliseconds). The 3- and 4-process matrix runs took 17-31 s each that way, and 0-1 s
 * with this library; the 12-process run 10 s.
 *
 * How: MPICH calls ucp_worker_progress() on every poll of its UCX netmod; this wrapper
 * calls the real one and sched_yield()s when it reported no event. Results cannot change:
 * only when a process runs changes. Never preload it into a measurement: every idle poll
 * then costs a system call. With another netmod (ch4:ofi, ch3) nothing calls the wrapper
 * and MPICH spins as before. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <sched.h>
#include <stddef.h>

typedef struct ucp_worker *ucp_worker_h; /* opaque, as in <ucp/api/ucp.h> */
typedef unsigned (*progress_fn)(ucp_worker_h);

unsigned ucp_worker_progress(ucp_worker_h worker);

unsigned ucp_worker_progress(ucp_worker_h worker)
{
    static progress_fn real;
    if (real == NULL) {
        real = (progress_fn)dlsym(RTLD_NEXT, "ucp_worker_progress");
        if (real == NULL) return 0; /* no UCX below: nothing to progress */
    }
    unsigned events = real(worker);
    if (events == 0) sched_yield();
    return events;
}
