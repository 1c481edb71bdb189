/* coll_catalog.h - the ten regular collectives of the multi-lane paper, the vector ones,
 * and the blocking collectives lanecoll does not decompose (native only: barrier,
 * alltoallv, alltoallw, reduce_scatter), their buffer needs, and one call per (collective,
 * algorithm): native PMPI_<Coll>, tuned MPI_<Coll>, lanecoll's LC_<Coll>_<variant> for
 * every line of lanecoll_algorithms.def, and the benchmark's own guideline mock-ups
 * (hs_mockups: MPI_Reduce + MPI_Scatterv for reduce_scatter, MPI_Alltoallv with regular
 * counts for alltoall; Traeff, Gropp & Thakur's self-consistent performance guidelines).
 *
 * Conventions (what the benchmark's "count" means, so tables compare like with like):
 *   total collectives  bcast reduce allreduce scan exscan: count = the MPI count, every
 *                      process contributes/receives `count` elements; bytes = count*4.
 *   block collectives  gather scatter allgather alltoall reduce_scatter_block: count = the
 *                      per-process block (MPI sendcount / recvcount); bytes = block*4,
 *                      the same "bytes" lanecoll's tuning table uses.
 *   vector collectives allgatherv gatherv scatterv: count = the mean block; the counts
 *                      are irregular: weights 1, 2, 3 repeating over the ranks (rank r
 *                      gets weight r%3+1), counts[r] = floor(p*count*w_r/W) with the
 *                      remainder given one element each to the first ranks, so the total
 *                      is exactly p*count; blocks in rank order, no gaps. bytes = count*4,
 *                      the mean block, which is what lanecoll's tuning table uses for
 *                      them (sum of the counts x type size / p).
 *   native only        barrier: count 0 (no data). alltoallv, alltoallw: count = the mean
 *                      block; the block rank r sends to rank q has vcounts[(r+q)%p]
 *                      elements (the weights above, rotated per rank), so every rank
 *                      sends and receives exactly p*count elements in irregular blocks;
 *                      alltoallw the same with byte displacements and MPI_INT types.
 *                      reduce_scatter: count = the mean block, recvcounts = the vector
 *                      counts above (irregular), send buffer p*count elements.
 *                      --protocol osu: every block `count` (OSU 7.4's are regular).
 * Data type MPI_INT, reductions MPI_SUM (predefined, so commutative: every lanecoll
 * restriction about operators holds), root 0.
 * Alltoall has no hierarchical version (paper, section 3.6). lane_v, the lane algorithm
 * with the vector node collectives even where n divides count (the paper's "irregular
 * nodecomm collectives"), exists where lane has that choice: bcast, reduce, allreduce,
 * scan, exscan. kported (section 5, k-ported trees over the nodes) exists for bcast,
 * scatter and gather, pipeline and pipeline1 (k-lane and single-lane linear pipelines)
 * for bcast.
 */
#ifndef HS_COLL_CATALOG_H
#define HS_COLL_CATALOG_H
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll_nodes.h" /* HS_HAVE_LANECOLL and lanecoll.h when available */

/* The collectives and the lanecoll algorithms come from lanecoll's catalogue
 * (lanecoll/include/lanecoll_collectives.h and lanecoll_algorithms.def, on the include
 * path of every build: header only). A build without lanecoll (HS_HAVE_LANECOLL 0)
 * knows the names but its lanecoll calls return HS_UNAVAILABLE. */
#include "lanecoll_collectives.h"

/* The blocking collectives lanecoll has no decomposition of (docs/collectives.md says
 * why): measured native (and tuned) only. Same columns as LC_COLLECTIVES. */
#define HS_NATIVE_COLLECTIVES(X) \
    X(barrier, 0, 0, 0, 0, 0)    \
    X(alltoallv, 1, 0, 0, 0, 1)  \
    X(alltoallw, 1, 0, 0, 0, 1)  \
    X(reduce_scatter, 1, 0, 1, 0, 1)

enum {
#define X(coll, ...) C_##coll,
    LC_COLLECTIVES(X) HS_NATIVE_COLLECTIVES(X)
#undef X
        NCOLL
};
/* Number of lines of lanecoll_algorithms.def: bounds the algorithm names. */
enum {
    HS_NDEF = 0
#define LC_ALGORITHM(...) +1
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
};
/* The benchmark's own mock-ups: compositions of the library's own collectives doing the
 * job of another, each a guideline check against native like lanecoll's (verdicts.py). */
enum { HS_NMOCKUP = 2 }; /* hs_mockups, below */
/* Algorithm names of the benchmark: native, the variants of the catalogue in order of
 * first appearance (lane, hier, lane_v, ...), the mock-ups, tuned. Filled by
 * coll_catalog_init. */
enum { NALG = HS_NDEF + HS_NMOCKUP + 2, A_NATIVE = 0 };
static const char *alg_names[NALG];
static int n_alg;
#define A_TUNED (n_alg - 1)
#define HS_UNAVAILABLE (-12345) /* coll_call: this build has no such algorithm */

static const struct {
    const char *name;
    int block;     /* count is a per-process block */
    int rooted;    /* has a root (always 0 here) */
    int reduction; /* has an op (MPI_SUM here) */
    int root_only; /* only the root's receive buffer is defined (gather, reduce) */
    int vector;    /* per-process counts (allgatherv, gatherv, scatterv) */
} colls[NCOLL] = {
#define X(coll, block, rooted, reduction, root_result, vector) \
    { #coll, block, rooted, reduction, root_result, vector },
    LC_COLLECTIVES(X) HS_NATIVE_COLLECTIVES(X)
#undef X
};
static const struct {
    int coll;
    const char *variant, *restrictions, *cost;
} hs_mockups[HS_NMOCKUP] = {
    { C_reduce_scatter, "reduce_scatterv", "",
      "MPI_Reduce of all p*count elements to rank 0, then MPI_Scatterv of the same "
      "irregular "
      "blocks (guideline: MPI_Reduce_scatter no slower than MPI_Reduce + MPI_Scatterv)" },
    { C_alltoall, "alltoallv", "",
      "MPI_Alltoallv with every count equal to the block (guideline: MPI_Alltoall no "
      "slower than MPI_Alltoallv with regular counts)" },
};

/* One entry per line of the catalogue: the public LC_<Coll>_<variant> (NULL without
 * lanecoll), its restrictions and cost. */
typedef void (*hs_lc_fn)(void);
static const struct {
    int coll;
    const char *variant, *restrictions, *cost;
    hs_lc_fn fn;
} lc_algs[HS_NDEF + 1] = {
#if HS_HAVE_LANECOLL
#define HS_LC_FN(coll, variant) (hs_lc_fn) LC_PUBLIC_FN(coll, variant)
#else
#define HS_LC_FN(coll, variant) NULL
#endif
#define LC_ALGORITHM(coll, variant, flags, restrictions, cost) \
    { C_##coll, #variant, restrictions, cost, HS_LC_FN(coll, variant) },
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
#undef HS_LC_FN
    { -1, NULL, NULL, NULL, NULL }
};
/* lc_fn[c][a]: the lanecoll function of benchmark algorithm a for collective c */
static hs_lc_fn lc_fn[NCOLL][NALG];
static int lc_has[NCOLL][NALG]; /* the catalogue has it (even when not built) */
static int hs_mock_of[NALG];    /* 1 + index in hs_mockups, 0: not a mock-up */

/* Fills alg_names, n_alg and the lookup tables from the catalogue (idempotent). */
static inline void coll_catalog_init(void)
{
    if (n_alg) return;
    alg_names[n_alg++] = "native";
    for (int i = 0; i < HS_NDEF; i++) {
        int a = 1;
        while (a < n_alg && strcmp(alg_names[a], lc_algs[i].variant) != 0) a++;
        if (a == n_alg) alg_names[n_alg++] = lc_algs[i].variant;
        lc_fn[lc_algs[i].coll][a] = lc_algs[i].fn;
        lc_has[lc_algs[i].coll][a] = 1;
    }
    for (int i = 0; i < HS_NMOCKUP; i++) {
        hs_mock_of[n_alg] = i + 1;
        lc_has[hs_mockups[i].coll][n_alg] = 1;
        alg_names[n_alg++] = hs_mockups[i].variant;
    }
    alg_names[n_alg++] = "tuned";
}

/* Does the catalogue have algorithm a for collective c (native and tuned: always)? */
static inline int coll_has(int c, int a)
{
    return a == A_NATIVE || a == A_TUNED || lc_has[c][a];
}
/* Is algorithm a one of lanecoll's (not native, tuned or the benchmark's mock-ups)? */
static inline int coll_is_lanecoll(int a)
{
    return a != A_NATIVE && a != A_TUNED && !hs_mock_of[a];
}
/* Is collective c one lanecoll has no decomposition of (native only)? */
static inline int coll_native_only(int c) { return c > C_scatterv; }
/* Elements each process needs in its send and receive buffer for `count` on p ranks
 * (the largest role: e.g. the root's p*count receive buffer of gather). Bcast works in
 * the receive buffer only. */
static inline void coll_elems(int c, int64_t count, int p, int64_t *send, int64_t *recv)
{
    int64_t pc = count * p;
    switch (c) {
    case C_bcast:
        *send = 0;
        *recv = count;
        break;
    case C_gather:
    case C_allgather:
        *send = count;
        *recv = pc;
        break;
    case C_scatter:
    case C_reduce_scatter_block:
        *send = pc;
        *recv = count;
        break;
    case C_barrier:
        *send = 0;
        *recv = 0;
        break;
    case C_alltoall:
    case C_allgatherv: /* vector: any rank's block is at most p*count */
    case C_gatherv:
    case C_scatterv:
    case C_alltoallv: /* p*count elements each way, in irregular blocks */
    case C_alltoallw:
    case C_reduce_scatter:
        *send = pc;
        *recv = pc;
        break;
    default:
        *send = count;
        *recv = count;
        break;
    }
}

/* The benchmark's counts of the vector collectives for mean block `count` on p ranks
 * (see the conventions above), cached for the last (count, p); NULL when out of memory.
 * hs_regular_vectors (coll.c sets it for --protocol osu): every block `count`, as OSU 7.4's
 * vector programs have them; with the irregular blocks Open MPI's and MPICH's gatherv,
 * alltoallv and alltoallw read 1.07-1.16 of OSU's on 2 ranks (docs/collectives.md). */
static int *hs_vcounts, *hs_vdispls, hs_vp = -1, hs_regular_vectors;
static int64_t hs_vcount = -1;
static inline int coll_vector_layout(int64_t count, int p)
{
    if (count == hs_vcount && p == hs_vp) return 0;
    free(hs_vcounts);
    hs_vcounts = malloc(2 * sizeof(int) * (size_t)p);
    if (!hs_vcounts) return -1;
    hs_vdispls = hs_vcounts + p;
    int64_t W = 0, total = count * p, given = 0, at = 0;
    for (int r = 0; r < p; r++) W += hs_regular_vectors ? 1 : r % 3 + 1;
    for (int r = 0; r < p; r++) {
        hs_vcounts[r] = (int)(total * (hs_regular_vectors ? 1 : r % 3 + 1) / W);
        given += hs_vcounts[r];
    }
    for (int r = 0; given < total; r = (r + 1) % p, given++) hs_vcounts[r]++;
    for (int r = 0; r < p; r++) {
        hs_vdispls[r] = (int)at;
        at += hs_vcounts[r];
    }
    hs_vcount = count;
    hs_vp = p;
    return 0;
}

/* Scratch of the mock-ups and the alltoallv/w layout, grown as needed (NULL: no memory). */
static void *hs_scratch(void **buf, size_t *have, size_t bytes)
{
    if (bytes > *have) {
        free(*buf);
        *buf = malloc(bytes);
        *have = *buf ? bytes : 0;
    }
    return *buf;
}

/* The alltoallv/w layout of rank me (see the conventions above): the counts this rank
 * sends to and receives from each rank (the same array: rank r's block to q has
 * vcounts[(r+q)%p] elements), its send and receive displacements in elements and
 * (alltoallw) bytes, and p MPI_INT types. Recomputed per call: O(p). */
static int *hs_av, *hs_av_sd, *hs_av_rd, *hs_aw_sd, *hs_aw_rd;
static MPI_Datatype *hs_aw_types;
static int coll_alltoallv_layout(int64_t count, int p, int me)
{
    static void *buf;
    static size_t have;
    if (coll_vector_layout(count, p)) return -1;
    char *m = hs_scratch(&buf, &have, (size_t)p * (5 * sizeof(int) + sizeof(MPI_Datatype)));
    if (!m) return -1;
    hs_aw_types = (MPI_Datatype *)m;
    hs_av = (int *)(m + (size_t)p * sizeof(MPI_Datatype));
    hs_av_sd = hs_av + p;
    hs_av_rd = hs_av_sd + p;
    hs_aw_sd = hs_av_rd + p;
    hs_aw_rd = hs_aw_sd + p;
    int64_t at = 0;
    for (int q = 0; q < p; q++) {
        hs_av[q] = hs_vcounts[(me + q) % p];
        hs_av_sd[q] = hs_av_rd[q] = (int)at; /* same counts both ways: same displs */
        hs_aw_sd[q] = hs_aw_rd[q] = (int)(at * (int64_t)sizeof(int));
        hs_aw_types[q] = MPI_INT;
        at += hs_av[q];
    }
    return 0;
}

/* The native-only collectives: PMPI_<Coll> (native) or MPI_<Coll> (tuned). */
static int coll_native_call(int c, int tuned, int *s, int *r, int n, MPI_Comm comm)
{
    int p, me;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    if (c == C_barrier) return tuned ? MPI_Barrier(comm) : PMPI_Barrier(comm);
    if (c == C_reduce_scatter) {
        if (coll_vector_layout(n, p)) return MPI_ERR_NO_MEM;
        return (tuned ? MPI_Reduce_scatter : PMPI_Reduce_scatter)(s, r, hs_vcounts, MPI_INT,
                                                                  MPI_SUM, comm);
    }
    if (coll_alltoallv_layout(n, p, me)) return MPI_ERR_NO_MEM;
    if (c == C_alltoallv)
        return (tuned ? MPI_Alltoallv : PMPI_Alltoallv)(s, hs_av, hs_av_sd, MPI_INT, r,
                                                        hs_av, hs_av_rd, MPI_INT, comm);
    return (tuned ? MPI_Alltoallw : PMPI_Alltoallw)(s, hs_av, hs_aw_sd, hs_aw_types, r,
                                                    hs_av, hs_aw_rd, hs_aw_types, comm);
}

/* The benchmark's mock-ups (hs_mockups), made of the library's own PMPI_ collectives. */
static int coll_mockup_call(int c, int *s, int *r, int n, MPI_Comm comm)
{
    static void *buf;
    static size_t have;
    int p, me, rc;
    MPI_Comm_size(comm, &p);
    MPI_Comm_rank(comm, &me);
    if (c == C_reduce_scatter) { /* reduce all p*n elements to 0, scatter the blocks */
        if (coll_vector_layout(n, p)) return MPI_ERR_NO_MEM;
        int *all = hs_scratch(&buf, &have, (size_t)p * (size_t)n * sizeof(int));
        if (!all && n > 0) return MPI_ERR_NO_MEM;
        rc = PMPI_Reduce(s, all, p * n, MPI_INT, MPI_SUM, 0, comm);
        if (rc != MPI_SUCCESS) return rc;
        return PMPI_Scatterv(all, hs_vcounts, hs_vdispls, MPI_INT, r, hs_vcounts[me],
                             MPI_INT, 0, comm);
    }
    if (c == C_alltoall) { /* alltoallv with every count n */
        int *counts = hs_scratch(&buf, &have, 2 * sizeof(int) * (size_t)p);
        if (!counts) return MPI_ERR_NO_MEM;
        for (int q = 0; q < p; q++) {
            counts[q] = n;
            counts[p + q] = q * n;
        }
        return PMPI_Alltoallv(s, counts, counts + p, MPI_INT, r, counts, counts + p,
                              MPI_INT, comm);
    }
    return HS_UNAVAILABLE;
}

/* Runs one call. Returns an MPI error code, or HS_UNAVAILABLE. The benchmark's buffers
 * are bound to the MPI parameter names of lanecoll_collectives.h, so one generated case
 * per collective calls PMPI_<Coll> (native), MPI_<Coll> (tuned) or LC_<Coll>_<variant>.
 * (The unqualified MPI_INT and MPI_SUM handles are fine for PMPI_ calls.) */
static inline int coll_call(int c, int a, int *s, int *r, int n, MPI_Comm comm)
{
    void *buffer = r, *recvbuf = r;
    const void *sendbuf = s;
    int count = n, sendcount = n, recvcount = n, root = 0;
    MPI_Datatype datatype = MPI_INT, sendtype = MPI_INT, recvtype = MPI_INT;
    MPI_Op op = MPI_SUM;
    const int *recvcounts = NULL, *sendcounts = NULL, *displs = NULL;
    if (colls[c].vector) {
        int p, me;
        MPI_Comm_size(comm, &p);
        MPI_Comm_rank(comm, &me);
        if (coll_vector_layout(n, p)) return MPI_ERR_NO_MEM;
        recvcounts = sendcounts = hs_vcounts;
        displs = hs_vdispls;
        sendcount = recvcount = hs_vcounts[me];
    }
    (void)recvcounts;
    (void)sendcounts;
    (void)displs;
    (void)buffer;
    (void)recvbuf;
    (void)sendbuf;
    (void)count;
    (void)sendcount;
    (void)recvcount;
    (void)root;
    (void)datatype;
    (void)sendtype;
    (void)recvtype;
    (void)op;
    if (hs_mock_of[a])
        return lc_has[c][a] ? coll_mockup_call(c, s, r, n, comm) : HS_UNAVAILABLE;
    if (coll_native_only(c))
        return a == A_NATIVE || a == A_TUNED
                   ? coll_native_call(c, a == A_TUNED, s, r, n, comm)
                   : HS_UNAVAILABLE;
    hs_lc_fn f = a > A_NATIVE && a < A_TUNED ? lc_fn[c][a] : NULL;
    if (a != A_NATIVE && a != A_TUNED && !f) return HS_UNAVAILABLE;
    switch (c) {
#define X(coll, ...)                                                         \
    case C_##coll:                                                           \
        if (a == A_NATIVE) return LC_FN(PMPI_, coll, )(LC_ARGS(coll), comm); \
        if (a == A_TUNED) return LC_FN(MPI_, coll, )(LC_ARGS(coll), comm);   \
        return ((int (*)(LC_PARAMS(coll), MPI_Comm))f)(LC_ARGS(coll), comm);
        LC_COLLECTIVES(X)
#undef X
    }
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
