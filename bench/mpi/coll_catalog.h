/* coll_catalog.h - the ten regular collectives of the multi-lane paper, their buffer needs,
 * and one call per (collective, algorithm): native MPI_<Coll>, lanecoll's LC_<Coll>_lane,
 * LC_<Coll>_hier and LC_<Coll>_lane_v.
 *
 * Conventions (what the benchmark's "count" means, so tables compare like with like):
 *   total collectives  bcast reduce allreduce scan exscan: count = the MPI count, every
 *                      process contributes/receives `count` elements; bytes = count*4.
 *   block collectives  gather scatter allgather alltoall reduce_scatter_block: count = the
 *                      per-process block (MPI sendcount / recvcount); bytes = block*4,
 *                      the same "bytes" lanecoll's tuning table uses.
 * Data type MPI_INT, reductions MPI_SUM (predefined, so commutative: every lanecoll
 * restriction about operators holds), root 0.
 * Alltoall has no hierarchical version (paper, section 3.6). lane_v, the lane algorithm
 * with the vector node collectives even where n divides count (the paper's "irregular
 * nodecomm collectives"), exists where lane has that choice: bcast, reduce, allreduce,
 * scan, exscan.
 */
#ifndef HS_COLL_CATALOG_H
#define HS_COLL_CATALOG_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "coll_nodes.h" /* HS_HAVE_LANECOLL and lanecoll.h when available */

enum { C_BCAST, C_GATHER, C_SCATTER, C_ALLGATHER, C_ALLTOALL, C_REDUCE, C_ALLREDUCE,
       C_REDUCE_SCATTER_BLOCK, C_SCAN, C_EXSCAN, NCOLL };
enum { A_NATIVE, A_LANE, A_HIER, A_LANE_V, A_TUNED, NALG };
#define HS_UNAVAILABLE (-12345) /* coll_call: this build has no such algorithm */

static const struct {
    const char *name;
    int block;    /* count is a per-process block */
    int has_hier;
    int has_lane_v;
    int root_only; /* only the root's receive buffer is defined (gather, reduce) */
} colls[NCOLL] = {
    {"bcast", 0, 1, 1, 0},     {"gather", 1, 1, 0, 1},    {"scatter", 1, 1, 0, 0},
    {"allgather", 1, 1, 0, 0}, {"alltoall", 1, 0, 0, 0},  {"reduce", 0, 1, 1, 1},
    {"allreduce", 0, 1, 1, 0}, {"reduce_scatter_block", 1, 1, 0, 0},
    {"scan", 0, 1, 1, 0},      {"exscan", 0, 1, 1, 0},
};
/* native calls PMPI_<Coll>: the library's own collective even when an interposition
 * library (liblanecoll_pmpi.so, a profiler) replaces MPI_<Coll>; tuned calls MPI_<Coll>,
 * which is whatever the interposition chose (without one it is native again). */
static const char *alg_names[NALG] = {"native", "lane", "hier", "lane_v", "tuned"};

/* Elements each process needs in its send and receive buffer for `count` on p ranks
 * (the largest role: e.g. the root's p*count receive buffer of gather). Bcast works in
 * the receive buffer only. */
static inline void coll_elems(int c, int64_t count, int p, int64_t *send, int64_t *recv)
{
    int64_t pc = count * p;
    switch (c) {
    case C_BCAST: *send = 0; *recv = count; break;
    case C_GATHER: case C_ALLGATHER: *send = count; *recv = pc; break;
    case C_SCATTER: case C_REDUCE_SCATTER_BLOCK: *send = pc; *recv = count; break;
    case C_ALLTOALL: *send = pc; *recv = pc; break;
    default: *send = count; *recv = count; break;
    }
}

/* Runs one call. Returns an MPI error code, or HS_UNAVAILABLE. (The unqualified MPI_INT
 * and MPI_SUM handles are fine for PMPI_ calls.) */
static inline int coll_call(int c, int a, int *s, int *r, int n, MPI_Comm comm)
{
    const MPI_Datatype T = MPI_INT;
    const MPI_Op OP = MPI_SUM;
    const int root = 0;
    if (a == A_NATIVE) {
        switch (c) {
        case C_BCAST: return PMPI_Bcast(r, n, T, root, comm);
        case C_GATHER: return PMPI_Gather(s, n, T, r, n, T, root, comm);
        case C_SCATTER: return PMPI_Scatter(s, n, T, r, n, T, root, comm);
        case C_ALLGATHER: return PMPI_Allgather(s, n, T, r, n, T, comm);
        case C_ALLTOALL: return PMPI_Alltoall(s, n, T, r, n, T, comm);
        case C_REDUCE: return PMPI_Reduce(s, r, n, T, OP, root, comm);
        case C_ALLREDUCE: return PMPI_Allreduce(s, r, n, T, OP, comm);
        case C_REDUCE_SCATTER_BLOCK: return PMPI_Reduce_scatter_block(s, r, n, T, OP, comm);
        case C_SCAN: return PMPI_Scan(s, r, n, T, OP, comm);
        case C_EXSCAN: return PMPI_Exscan(s, r, n, T, OP, comm);
        }
    }
    if (a == A_TUNED) {
        switch (c) {
        case C_BCAST: return MPI_Bcast(r, n, T, root, comm);
        case C_GATHER: return MPI_Gather(s, n, T, r, n, T, root, comm);
        case C_SCATTER: return MPI_Scatter(s, n, T, r, n, T, root, comm);
        case C_ALLGATHER: return MPI_Allgather(s, n, T, r, n, T, comm);
        case C_ALLTOALL: return MPI_Alltoall(s, n, T, r, n, T, comm);
        case C_REDUCE: return MPI_Reduce(s, r, n, T, OP, root, comm);
        case C_ALLREDUCE: return MPI_Allreduce(s, r, n, T, OP, comm);
        case C_REDUCE_SCATTER_BLOCK: return MPI_Reduce_scatter_block(s, r, n, T, OP, comm);
        case C_SCAN: return MPI_Scan(s, r, n, T, OP, comm);
        case C_EXSCAN: return MPI_Exscan(s, r, n, T, OP, comm);
        }
    }
#if HS_HAVE_LANECOLL
    if (a == A_LANE) {
        switch (c) {
        case C_BCAST: return LC_Bcast_lane(r, n, T, root, comm);
        case C_GATHER: return LC_Gather_lane(s, n, T, r, n, T, root, comm);
        case C_SCATTER: return LC_Scatter_lane(s, n, T, r, n, T, root, comm);
        case C_ALLGATHER: return LC_Allgather_lane(s, n, T, r, n, T, comm);
        case C_ALLTOALL: return LC_Alltoall_lane(s, n, T, r, n, T, comm);
        case C_REDUCE: return LC_Reduce_lane(s, r, n, T, OP, root, comm);
        case C_ALLREDUCE: return LC_Allreduce_lane(s, r, n, T, OP, comm);
        case C_REDUCE_SCATTER_BLOCK: return LC_Reduce_scatter_block_lane(s, r, n, T, OP, comm);
        case C_SCAN: return LC_Scan_lane(s, r, n, T, OP, comm);
        case C_EXSCAN: return LC_Exscan_lane(s, r, n, T, OP, comm);
        }
    }
    if (a == A_HIER) {
        switch (c) {
        case C_BCAST: return LC_Bcast_hier(r, n, T, root, comm);
        case C_GATHER: return LC_Gather_hier(s, n, T, r, n, T, root, comm);
        case C_SCATTER: return LC_Scatter_hier(s, n, T, r, n, T, root, comm);
        case C_ALLGATHER: return LC_Allgather_hier(s, n, T, r, n, T, comm);
        case C_REDUCE: return LC_Reduce_hier(s, r, n, T, OP, root, comm);
        case C_ALLREDUCE: return LC_Allreduce_hier(s, r, n, T, OP, comm);
        case C_REDUCE_SCATTER_BLOCK: return LC_Reduce_scatter_block_hier(s, r, n, T, OP, comm);
        case C_SCAN: return LC_Scan_hier(s, r, n, T, OP, comm);
        case C_EXSCAN: return LC_Exscan_hier(s, r, n, T, OP, comm);
        }
    }
    if (a == A_LANE_V) {
        switch (c) {
        case C_BCAST: return LC_Bcast_lane_v(r, n, T, root, comm);
        case C_REDUCE: return LC_Reduce_lane_v(s, r, n, T, OP, root, comm);
        case C_ALLREDUCE: return LC_Allreduce_lane_v(s, r, n, T, OP, comm);
        case C_SCAN: return LC_Scan_lane_v(s, r, n, T, OP, comm);
        case C_EXSCAN: return LC_Exscan_lane_v(s, r, n, T, OP, comm);
        }
    }
#else
    (void)s; (void)r; (void)n; (void)comm;
#endif
    return HS_UNAVAILABLE;
}

/* Why the last lanecoll call on comm ran the native collective, or NULL. */
static inline const char *coll_fallback(MPI_Comm comm)
{
#if HS_HAVE_LANECOLL
    return LC_Fallback_reason(comm);
#else
    (void)comm;
    return NULL;
#endif
}

#endif
