/* nbc_calls.h - the collectives nbc.c measures and how each is called: blocking,
 * non-blocking (MPI_I<coll>), persistent (MPI 4's MPI_<Coll>_init, or Open MPI's
 * MPIX_<Coll>_init from its pcollreq extension) and neighbourhood collectives, with the
 * buffer sizes, counts and data types of one message size (OSU 7.4's definitions, see
 * docs/nbc.md; written here, not copied).
 *
 * Size s in bytes (OSU's "Size"): the MPI count is s elements of one byte (MPI_CHAR for
 * moving data, MPI_SIGNED_CHAR with MPI_SUM for reductions: MPI_CHAR is not a reduction
 * type in the standard). What s counts, as in OSU:
 *   bcast, reduce, allreduce: the whole message;
 *   gather(v), scatter(v), allgather(v), alltoall(v,w): the block per process (the
 *     vector forms with every count s and blocks in rank order, OSU's regular counts);
 *   reduce_scatter: the whole vector, s / p per rank, the first s % p ranks one more
 *     (at least one element each for the first s ranks when s < p);
 *   reduce_scatter_block: the whole vector, block s / p (sizes with s < p are skipped);
 *   barrier: no data (recorded as size 0);
 *   neighbourhood: the block per neighbour.
 * Root 0 for the rooted collectives (OSU's default).
 *
 * Header-only (static functions), included once by nbc.c.
 */
#ifndef HS_NBC_CALLS_H
#define HS_NBC_CALLS_H
#include <mpi.h>
#include <stdint.h>

#if HS_HAVE_MPIX_PCOLL && !HS_HAVE_MPI_PCOLL
#include <mpi-ext.h>
#define HS_PINIT(name) MPIX_##name##_init
#define HS_PERSISTENT_API "MPIX_<Coll>_init (Open MPI's pcollreq extension, mpi-ext.h)"
#define HS_HAVE_PERSISTENT 1
#elif HS_HAVE_MPI_PCOLL
#define HS_PINIT(name) MPI_##name##_init
#define HS_PERSISTENT_API "MPI_<Coll>_init (MPI 4)"
#define HS_HAVE_PERSISTENT 1
#else
#define HS_PERSISTENT_API ""
#define HS_HAVE_PERSISTENT 0
#endif

typedef enum {
    OP_ALLGATHER,
    OP_ALLGATHERV,
    OP_ALLREDUCE,
    OP_ALLTOALL,
    OP_ALLTOALLV,
    OP_ALLTOALLW,
    OP_BARRIER,
    OP_BCAST,
    OP_GATHER,
    OP_GATHERV,
    OP_REDUCE,
    OP_REDUCE_SCATTER,
    OP_REDUCE_SCATTER_BLOCK,
    OP_SCATTER,
    OP_SCATTERV,
    NOP
} nbc_op;

static const char *const op_names[NOP] = { "allgather",
                                           "allgatherv",
                                           "allreduce",
                                           "alltoall",
                                           "alltoallv",
                                           "alltoallw",
                                           "barrier",
                                           "bcast",
                                           "gather",
                                           "gatherv",
                                           "reduce",
                                           "reduce_scatter",
                                           "reduce_scatter_block",
                                           "scatter",
                                           "scatterv" };

/* How a collective is called. NEIGHBOR ops are allgather(v) and alltoall(v,w) on the
 * distributed-graph communicator; ALLTOALLV_NBRS is MPI_Alltoallv on the whole
 * communicator moving the same blocks as neighbor_alltoall (the guideline's equivalent). */
typedef enum {
    K_BLOCKING,
    K_NONBLOCKING,
    K_PERSISTENT,
    K_NEIGHBOR,
    K_INEIGHBOR,
    K_ALLTOALLV_NBRS
} nbc_kind;

static const char *const kind_family[] = { "blocking",     "nonblocking",  "persistent",
                                           "neighborhood", "neighborhood", "neighborhood" };

typedef struct {
    char name[40];
    nbc_kind kind;
    nbc_op op;
} nbc_coll;

/* The catalogue: 15 blocking, 15 non-blocking, 15 persistent, 5 + 5 neighbourhood and
 * alltoallv_neighbors, filled by nbc_catalog_init. */
#define NBC_MAX 64
static nbc_coll nbc_colls[NBC_MAX];
static int nbc_n;

static int is_neighbor_op(nbc_op op)
{
    return op == OP_ALLGATHER || op == OP_ALLGATHERV || op == OP_ALLTOALL ||
           op == OP_ALLTOALLV || op == OP_ALLTOALLW;
}

static void nbc_catalog_init(void)
{
    nbc_n = 0;
    for (int o = 0; o < NOP; o++) {
        nbc_coll *b = &nbc_colls[nbc_n++], *i = &nbc_colls[nbc_n++],
                 *p = &nbc_colls[nbc_n++];
        snprintf(b->name, sizeof b->name, "%s", op_names[o]);
        snprintf(i->name, sizeof i->name, "i%s", op_names[o]);
        snprintf(p->name, sizeof p->name, "%s_persistent", op_names[o]);
        b->kind = K_BLOCKING;
        i->kind = K_NONBLOCKING;
        p->kind = K_PERSISTENT;
        b->op = i->op = p->op = (nbc_op)o;
    }
    for (int o = 0; o < NOP; o++) {
        if (!is_neighbor_op((nbc_op)o)) continue;
        nbc_coll *b = &nbc_colls[nbc_n++], *i = &nbc_colls[nbc_n++];
        snprintf(b->name, sizeof b->name, "neighbor_%s", op_names[o]);
        snprintf(i->name, sizeof i->name, "ineighbor_%s", op_names[o]);
        b->kind = K_NEIGHBOR;
        i->kind = K_INEIGHBOR;
        b->op = i->op = (nbc_op)o;
    }
    nbc_coll *v = &nbc_colls[nbc_n++];
    snprintf(v->name, sizeof v->name, "alltoallv_neighbors");
    v->kind = K_ALLTOALLV_NBRS;
    v->op = OP_ALLTOALLV;
}

static int is_overlap_kind(nbc_kind k) { return k == K_NONBLOCKING || k == K_INEIGHBOR; }

static int is_reduction(nbc_op op)
{
    return op == OP_ALLREDUCE || op == OP_REDUCE || op == OP_REDUCE_SCATTER ||
           op == OP_REDUCE_SCATTER_BLOCK;
}

/* Everything one call of (collective, size) needs. */
typedef struct {
    const nbc_coll *c;
    int64_t s;            /* size in bytes */
    int n;                /* MPI count per block */
    int p;                /* ranks of the communicator */
    int deg;              /* neighbours (neighbourhood kinds) */
    MPI_Comm comm, graph; /* the graph is MPI_COMM_NULL without neighbours */
    int *counts, *displs; /* p (or deg) entries */
    int *zeros;           /* p entries of 0 (alltoallv_neighbors) */
    int *rcounts, *rdispls;
    MPI_Aint *adispls;   /* neighbor_alltoallw's byte displacements */
    MPI_Datatype *types; /* p (or deg) times MPI_CHAR */
    char *sbuf, *rbuf;
    MPI_Request req; /* persistent: initialised once per size */
} nbc_call;

/* Bytes of send and receive buffer of one call (the largest role). */
static void nbc_bytes(const nbc_coll *c, int64_t s, int p, int deg, int64_t *send,
                      int64_t *recv)
{
    int64_t blocks =
        c->kind == K_NEIGHBOR || c->kind == K_INEIGHBOR || c->kind == K_ALLTOALLV_NBRS ? deg
                                                                                       : p;
    switch (c->op) {
    case OP_BARRIER: *send = *recv = 0; break;
    case OP_BCAST: *send = 0, *recv = s; break;
    case OP_GATHER:
    case OP_GATHERV:
    case OP_ALLGATHER:
    case OP_ALLGATHERV: *send = s, *recv = blocks * s; break;
    case OP_SCATTER:
    case OP_SCATTERV: *send = p * s, *recv = s; break;
    case OP_ALLTOALL:
    case OP_ALLTOALLV:
    case OP_ALLTOALLW: *send = *recv = blocks * s; break;
    default: *send = *recv = s; /* reductions */
    }
}

/* Sets the counts of (collective, size) into x; the counts arrays hold max(p, deg). */
static void nbc_prepare(nbc_call *x, int64_t s, const int *nbrs)
{
    x->s = s;
    x->n = (int)s;
    int blocks = x->c->kind == K_NEIGHBOR || x->c->kind == K_INEIGHBOR ? x->deg : x->p;
    for (int r = 0; r < blocks; r++) {
        x->counts[r] = x->n;
        x->displs[r] = r * x->n;
        x->adispls[r] = (MPI_Aint)r * x->n;
        x->types[r] = MPI_CHAR;
    }
    if (x->c->op == OP_REDUCE_SCATTER) {
        int portion = x->n / x->p, rest = x->n % x->p;
        for (int r = 0; r < x->p; r++)
            x->counts[r] = x->n < x->p ? (r < x->n) : portion + (r < rest);
    }
    if (x->c->op == OP_REDUCE_SCATTER_BLOCK) x->n = (int)(s / x->p);
    if (x->c->kind == K_ALLTOALLV_NBRS) {
        /* the neighbours' blocks at the neighbor_alltoall layout, 0 for everyone else */
        for (int r = 0; r < x->p; r++) x->rcounts[r] = x->rdispls[r] = x->zeros[r] = 0;
        for (int k = 0; k < x->deg; k++) {
            x->rcounts[nbrs[k]] = x->n;
            x->rdispls[nbrs[k]] = k * x->n;
        }
    }
}

/* The blocking call (K_BLOCKING, K_NEIGHBOR, K_ALLTOALLV_NBRS). */
static int nbc_blocking(nbc_call *x)
{
    MPI_Datatype t = is_reduction(x->c->op) ? MPI_SIGNED_CHAR : MPI_CHAR;
    MPI_Comm cm = x->c->kind == K_NEIGHBOR ? x->graph : x->comm;
    char *s = x->sbuf, *r = x->rbuf;
    int n = x->n;
    if (x->c->kind == K_ALLTOALLV_NBRS)
        return MPI_Alltoallv(s, x->rcounts, x->rdispls, MPI_CHAR, r, x->rcounts, x->rdispls,
                             MPI_CHAR, cm);
    if (x->c->kind == K_NEIGHBOR) switch (x->c->op) {
        case OP_ALLGATHER: return MPI_Neighbor_allgather(s, n, t, r, n, t, cm);
        case OP_ALLGATHERV:
            return MPI_Neighbor_allgatherv(s, n, t, r, x->counts, x->displs, t, cm);
        case OP_ALLTOALL: return MPI_Neighbor_alltoall(s, n, t, r, n, t, cm);
        case OP_ALLTOALLV:
            return MPI_Neighbor_alltoallv(s, x->counts, x->displs, t, r, x->counts,
                                          x->displs, t, cm);
        case OP_ALLTOALLW:
            return MPI_Neighbor_alltoallw(s, x->counts, x->adispls, x->types, r, x->counts,
                                          x->adispls, x->types, cm);
        default: return MPI_ERR_OTHER;
        }
    switch (x->c->op) {
    case OP_ALLGATHER: return MPI_Allgather(s, n, t, r, n, t, cm);
    case OP_ALLGATHERV: return MPI_Allgatherv(s, n, t, r, x->counts, x->displs, t, cm);
    case OP_ALLREDUCE: return MPI_Allreduce(s, r, n, t, MPI_SUM, cm);
    case OP_ALLTOALL: return MPI_Alltoall(s, n, t, r, n, t, cm);
    case OP_ALLTOALLV:
        return MPI_Alltoallv(s, x->counts, x->displs, t, r, x->counts, x->displs, t, cm);
    case OP_ALLTOALLW:
        return MPI_Alltoallw(s, x->counts, x->displs, x->types, r, x->counts, x->displs,
                             x->types, cm);
    case OP_BARRIER: return MPI_Barrier(cm);
    case OP_BCAST: return MPI_Bcast(r, n, t, 0, cm);
    case OP_GATHER: return MPI_Gather(s, n, t, r, n, t, 0, cm);
    case OP_GATHERV: return MPI_Gatherv(s, n, t, r, x->counts, x->displs, t, 0, cm);
    case OP_REDUCE: return MPI_Reduce(s, r, n, t, MPI_SUM, 0, cm);
    case OP_REDUCE_SCATTER: return MPI_Reduce_scatter(s, r, x->counts, t, MPI_SUM, cm);
    case OP_REDUCE_SCATTER_BLOCK: return MPI_Reduce_scatter_block(s, r, n, t, MPI_SUM, cm);
    case OP_SCATTER: return MPI_Scatter(s, n, t, r, n, t, 0, cm);
    case OP_SCATTERV: return MPI_Scatterv(s, x->counts, x->displs, t, r, n, t, 0, cm);
    default: return MPI_ERR_OTHER;
    }
}

/* Posts the non-blocking call (K_NONBLOCKING, K_INEIGHBOR) into x->req. */
static int nbc_post(nbc_call *x)
{
    MPI_Datatype t = is_reduction(x->c->op) ? MPI_SIGNED_CHAR : MPI_CHAR;
    char *s = x->sbuf, *r = x->rbuf;
    int n = x->n;
    MPI_Request *q = &x->req;
    if (x->c->kind == K_INEIGHBOR) {
        MPI_Comm cm = x->graph;
        switch (x->c->op) {
        case OP_ALLGATHER: return MPI_Ineighbor_allgather(s, n, t, r, n, t, cm, q);
        case OP_ALLGATHERV:
            return MPI_Ineighbor_allgatherv(s, n, t, r, x->counts, x->displs, t, cm, q);
        case OP_ALLTOALL: return MPI_Ineighbor_alltoall(s, n, t, r, n, t, cm, q);
        case OP_ALLTOALLV:
            return MPI_Ineighbor_alltoallv(s, x->counts, x->displs, t, r, x->counts,
                                           x->displs, t, cm, q);
        case OP_ALLTOALLW:
            return MPI_Ineighbor_alltoallw(s, x->counts, x->adispls, x->types, r, x->counts,
                                           x->adispls, x->types, cm, q);
        default: return MPI_ERR_OTHER;
        }
    }
    MPI_Comm cm = x->comm;
    switch (x->c->op) {
    case OP_ALLGATHER: return MPI_Iallgather(s, n, t, r, n, t, cm, q);
    case OP_ALLGATHERV: return MPI_Iallgatherv(s, n, t, r, x->counts, x->displs, t, cm, q);
    case OP_ALLREDUCE: return MPI_Iallreduce(s, r, n, t, MPI_SUM, cm, q);
    case OP_ALLTOALL: return MPI_Ialltoall(s, n, t, r, n, t, cm, q);
    case OP_ALLTOALLV:
        return MPI_Ialltoallv(s, x->counts, x->displs, t, r, x->counts, x->displs, t, cm,
                              q);
    case OP_ALLTOALLW:
        return MPI_Ialltoallw(s, x->counts, x->displs, x->types, r, x->counts, x->displs,
                              x->types, cm, q);
    case OP_BARRIER: return MPI_Ibarrier(cm, q);
    case OP_BCAST: return MPI_Ibcast(r, n, t, 0, cm, q);
    case OP_GATHER: return MPI_Igather(s, n, t, r, n, t, 0, cm, q);
    case OP_GATHERV: return MPI_Igatherv(s, n, t, r, x->counts, x->displs, t, 0, cm, q);
    case OP_REDUCE: return MPI_Ireduce(s, r, n, t, MPI_SUM, 0, cm, q);
    case OP_REDUCE_SCATTER: return MPI_Ireduce_scatter(s, r, x->counts, t, MPI_SUM, cm, q);
    case OP_REDUCE_SCATTER_BLOCK:
        return MPI_Ireduce_scatter_block(s, r, n, t, MPI_SUM, cm, q);
    case OP_SCATTER: return MPI_Iscatter(s, n, t, r, n, t, 0, cm, q);
    case OP_SCATTERV: return MPI_Iscatterv(s, x->counts, x->displs, t, r, n, t, 0, cm, q);
    default: return MPI_ERR_OTHER;
    }
}

/* Initialises the persistent request of (collective, size) into x->req (K_PERSISTENT);
 * MPI_ERR_OTHER where this build has no persistent collectives (never called then). */
static int nbc_persistent_init(nbc_call *x)
{
#if HS_HAVE_PERSISTENT
    MPI_Datatype t = is_reduction(x->c->op) ? MPI_SIGNED_CHAR : MPI_CHAR;
    char *s = x->sbuf, *r = x->rbuf;
    int n = x->n;
    MPI_Comm cm = x->comm;
    MPI_Info i = MPI_INFO_NULL;
    MPI_Request *q = &x->req;
    switch (x->c->op) {
    case OP_ALLGATHER: return HS_PINIT(Allgather)(s, n, t, r, n, t, cm, i, q);
    case OP_ALLGATHERV:
        return HS_PINIT(Allgatherv)(s, n, t, r, x->counts, x->displs, t, cm, i, q);
    case OP_ALLREDUCE: return HS_PINIT(Allreduce)(s, r, n, t, MPI_SUM, cm, i, q);
    case OP_ALLTOALL: return HS_PINIT(Alltoall)(s, n, t, r, n, t, cm, i, q);
    case OP_ALLTOALLV:
        return HS_PINIT(Alltoallv)(s, x->counts, x->displs, t, r, x->counts, x->displs, t,
                                   cm, i, q);
    case OP_ALLTOALLW:
        return HS_PINIT(Alltoallw)(s, x->counts, x->displs, x->types, r, x->counts,
                                   x->displs, x->types, cm, i, q);
    case OP_BARRIER: return HS_PINIT(Barrier)(cm, i, q);
    case OP_BCAST: return HS_PINIT(Bcast)(r, n, t, 0, cm, i, q);
    case OP_GATHER: return HS_PINIT(Gather)(s, n, t, r, n, t, 0, cm, i, q);
    case OP_GATHERV:
        return HS_PINIT(Gatherv)(s, n, t, r, x->counts, x->displs, t, 0, cm, i, q);
    case OP_REDUCE: return HS_PINIT(Reduce)(s, r, n, t, MPI_SUM, 0, cm, i, q);
    case OP_REDUCE_SCATTER:
        return HS_PINIT(Reduce_scatter)(s, r, x->counts, t, MPI_SUM, cm, i, q);
    case OP_REDUCE_SCATTER_BLOCK:
        return HS_PINIT(Reduce_scatter_block)(s, r, n, t, MPI_SUM, cm, i, q);
    case OP_SCATTER: return HS_PINIT(Scatter)(s, n, t, r, n, t, 0, cm, i, q);
    case OP_SCATTERV:
        return HS_PINIT(Scatterv)(s, x->counts, x->displs, t, r, n, t, 0, cm, i, q);
    default: return MPI_ERR_OTHER;
    }
#else
    (void)x;
    return MPI_ERR_OTHER;
#endif
}

#endif
