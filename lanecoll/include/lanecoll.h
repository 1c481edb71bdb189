/*
 * lanecoll — full-lane and hierarchical decompositions of the regular MPI collectives
 * (after J. L. Träff and S. Hunold, "Decomposing MPI collectives for exploiting
 * multi-lane communication", IEEE Cluster 2020, section 3).
 *
 * A communicator `comm` is split into node communicators (`nodecomm`, the processes of
 * one node) and lane communicators (`lanecomm`, the processes with the same node rank on
 * every node). A "lane" algorithm divides the data over the processes of a node, runs
 * the collective concurrently on every lane communicator and assembles the result with
 * a node collective, so every network lane of a node carries a share of the data. A
 * "hier" algorithm lets one process per node communicate across nodes (node step, one
 * lane across nodes, node step). Where a lane algorithm chooses between regular node
 * collectives (when the n processes of a node divide the count) and vector ones, a
 * "lane_v" variant uses the vector ones always: the paper's "irregular nodecomm
 * collectives", which it measured faster in many cases (bcast, reduce, allreduce, scan,
 * exscan).
 *
 * Every LC_<Coll>_lane / _lane_v / _hier function has the signature of the MPI-3
 * collective it replaces and the same semantics, including MPI_IN_PLACE wherever MPI
 * allows it. All processes of `comm` must call the same function (as with MPI). When an
 * algorithm's restrictions do not hold for a call (see the catalogue below) the function
 * runs the native collective instead and records why (LC_Fallback_reason). Arguments
 * that MPI would reject are passed to MPI so that the caller sees MPI's own error.
 * The first call on a communicator builds and caches its decomposition (collective).
 *
 * Catalogue (lanecoll_algorithms.def, the single source: also at run time through
 * LC_Catalogue_get, and printed by the benchmark's `coll --list-algorithms`):
 *
 *   algorithm                   restrictions (otherwise: native collective)
 *   bcast_lane                  regular
 *   bcast_hier                  root's node rank present on every node
 *   bcast_kported               none
 *   bcast_pipeline, _pipeline1  none
 *   gather_lane                 regular
 *   gather_hier                 root's node rank present on every node
 *   gather_kported              none
 *   scatter_lane                regular
 *   scatter_hier                root's node rank present on every node
 *   scatter_kported             none
 *   allgather_lane              regular
 *   allgather_hier              none
 *   (gather, scatter, allgather on non-consecutive ranks: a permuted temporary of pc)
 *   alltoall_lane               regular, consecutive
 *   reduce_lane                 regular, commutative op
 *   reduce_hier                 root's node rank present on every node,
 *                               consecutive or commutative op
 *   allreduce_lane              regular, commutative op
 *   allreduce_hier              consecutive or commutative op
 *   reduce_scatter_block_lane   regular, consecutive, commutative op
 *   reduce_scatter_block_hier   consecutive
 *   scan_lane                   regular, consecutive, commutative op
 *   scan_hier                   consecutive
 *   exscan_lane                 regular, consecutive, commutative op
 *   exscan_hier                 consecutive
 *   bcast_lane_v, reduce_lane_v, allreduce_lane_v, scan_lane_v, exscan_lane_v:
 *                               as the lane algorithm of the same collective
 *
 *   regular      every node hosts the same number of processes of comm
 *   consecutive  the ranks of comm are consecutive over the nodes (node 0 holds ranks
 *                0..k0-1, node 1 the next k1 ranks, ...)
 *   commutative  MPI_Op_commutative says so (predefined ops are commutative)
 *   Bcast (lane, lane_v, pipeline, pipeline1), Reduce, Allreduce, Scan, Exscan split
 *   `count` over the processes of a node:
 *   like the paper they assume every process passes the same count and datatype (MPI
 *   only requires matching type signatures).
 *
 * Node definition (read by every process when a decomposition is built):
 *   default                       MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED)
 *   LANECOLL_NODE_SIZE=K          MPI_COMM_WORLD ranks 0..K-1 are node 0, K..2K-1 node 1,
 *                                 ... (the last node may be smaller); a communicator's
 *                                 node is that of its processes' world ranks.
 *   LANECOLL_NODE_SIZES=3,2,3     explicit consecutive blocks of MPI_COMM_WORLD ranks
 *                                 (must sum to the world size).
 *   LANECOLL_NODE_NAME_SEP=c      node = MPI processor name up to the last occurrence of
 *                                 character c (e.g. SimGrid hosts "node3-s0", "node3-s1"
 *                                 with c='-' form node "node3"); names without c are
 *                                 their own node.
 *   At most one of them may be set; an invalid value aborts with a message.
 *
 * Interposition (liblanecoll_pmpi.so, LD_PRELOAD or link before -lmpi): intercepts
 * MPI_Bcast ... MPI_Exscan, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv and chooses per
 * call, in this order:
 *   LANECOLL_<COLL>=native|lane|hier|lane_v|kported|pipeline|pipeline1   e.g. LANECOLL_ALLREDUCE=lane (COLL is the MPI name
 *                                      without MPI_, upper case); LANECOLL_ALL for all
 *                                      collectives (those without the named
 *                                      algorithm stay native), a per-collective
 *                                      setting wins
 *   LANECOLL_TUNING=path               tuning table, schema "lanecoll.tuning/1"
 *   otherwise native.
 *   LANECOLL_FALLBACK=error|warn|silent  what to do when the chosen algorithm's
 *                                      restrictions fail (default warn: one warning
 *                                      per collective and process, then native)
 *   LANECOLL_LOG=stderr|path           one line per call (written by rank 0 of comm)
 * Settings and the tuning file are validated in MPI_Init/MPI_Init_thread; an invalid
 * value or file prints a message naming the variable, or the file and line/key, and
 * calls MPI_Abort(MPI_COMM_WORLD, 2).
 *
 * Thread safety: safe under MPI_THREAD_MULTIPLE as long as the MPI rule holds that
 * collectives on one communicator are not called concurrently.
 */
#ifndef LANECOLL_H
#define LANECOLL_H

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LANECOLL_VERSION "0.1.0"

/* ---- Algorithms ---------------------------------------------------------------------
 * One function per line of lanecoll_algorithms.def, with the MPI-3 signature of the
 * collective it replaces:
 *   int LC_<Coll>_<variant>(<parameters of MPI_<Coll>>, MPI_Comm comm);
 * e.g. LC_Bcast_lane(void *buffer, int count, MPI_Datatype datatype, int root,
 * MPI_Comm comm), LC_Allreduce_lane_v(...), LC_Exscan_hier(...). Today: lane for all
 * ten regular collectives and Allgatherv, Gatherv, Scatterv, hier for all but Alltoall
 * (paper, section 3.6), lane_v for Bcast, Reduce, Allreduce, Scan, Exscan, kported for
 * Bcast, Scatter, Gather and pipeline, pipeline1 for Bcast (section 5). */
#include "lanecoll_collectives.h"
#define LC_ALGORITHM(coll, variant, flags, restrictions, cost) \
    int LC_PUBLIC_FN(coll, variant)(LC_PARAMS(coll), MPI_Comm comm);
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM

/* ---- Queries ----------------------------------------------------------------------- */

/* The decomposition of a communicator as lanecoll sees it. */
typedef struct LC_Decomposition {
    int nodes;       /* number of nodes spanned by comm */
    int ppn;         /* processes per node when regular, else 0 */
    int min_ppn;     /* fewest processes of comm on one node */
    int max_ppn;     /* most processes of comm on one node */
    int regular;     /* 1 if every node hosts the same number of processes */
    int consecutive; /* 1 if ranks are consecutive over the nodes */
    int node_index;  /* this process's node, 0..nodes-1, ordered by lowest rank */
    int node_rank;   /* this process's rank in its node communicator */
    int node_size;   /* processes of comm on this process's node */
} LC_Decomposition;

/* Fills *out for comm. Collective on the first use of comm (builds and caches the
 * decomposition), local afterwards. Returns MPI_SUCCESS or an MPI error code
 * (MPI_ERR_COMM for MPI_COMM_NULL or an intercommunicator). */
int LC_Decomposition_get(MPI_Comm comm, LC_Decomposition *out);

/* Where every rank of comm is: node_index[r] and node_rank[r] for r = 0..size-1 (arrays
 * of the communicator's size), as LC_Decomposition_get gives them to rank r itself.
 * Collective on the first use of comm, local afterwards. */
int LC_Decomposition_ranks(MPI_Comm comm, int *node_index, int *node_rank);

/* Why the last LC_ call (or intercepted collective) on comm ran the native collective
 * instead of the requested algorithm; NULL when it did not fall back. Local. The string
 * stays valid until the next lanecoll call on comm or until comm is freed. */
const char *LC_Fallback_reason(MPI_Comm comm);

/* One catalogue entry per algorithm. */
typedef struct LC_Algorithm {
    const char *collective;   /* "allreduce", ... (lowercase MPI name without MPI_) */
    const char *variant;      /* "lane", "hier", "lane_v", ... (lanecoll_algorithms.def) */
    const char *restrictions; /* human readable, "" when none */
    const char *cost;         /* rounds and volume under the paper's assumptions */
} LC_Algorithm;

/* Number of catalogue entries, and entry i (NULL when out of range). */
int LC_Catalogue_size(void);
const LC_Algorithm *LC_Catalogue_get(int i);

#ifdef __cplusplus
}
#endif
#endif /* LANECOLL_H */
