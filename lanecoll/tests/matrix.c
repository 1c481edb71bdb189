/* Correctness matrix: every algorithm of the catalogue (lanecoll_algorithms.def) against the
 * native collective, bit for bit, over many configurations inside one launch.
 *
 *   mpirun -np P [env LANECOLL_NODE_SIZE=K | LANECOLL_NODE_SIZES=a,b,..] matrix full|reduced
 *
 * Loops over communicators (world, world reversed, world interleaved over the nodes so
 * ranks are not consecutive, a duplicate of world), algorithms, datatypes (MPI_INT,
 * MPI_DOUBLE, a non-contiguous vector type with a gap, and "mixed": per-process types
 * with one signature, 2 contiguous ints on even world ranks and the gapped vector type
 * on odd ones, for the collectives without an operator), counts (0, 1, ppn-1, ppn,
 * ppn+1, a prime), roots (all in `full`, first/middle/last in `reduced`), operators
 * (MPI_SUM, MPI_MAX, a user commutative op, a user non-commutative op) and in-place
 * variants. A final "large" phase on world runs every algorithm once more with messages
 * past the libraries' protocol and pipelining switches (>= 512 KiB in total: MPICH
 * 4.0.2 aborts in in-place MPI_Reduce_scatter with unequal counts there, and its ring
 * MPI_Allgatherv splits mixed-type messages inconsistently; issue 14): the mixed type
 * with 60000 elements (120000 ints) per block, and MPI_INT reductions of 140000
 * elements in total. MATRIX_NO_LARGE=1 skips it.
 * The vector collectives (allgatherv, gatherv, scatterv) get their own loops
 * (run_vector): base counts 0, 1, ppn+1 and a prime under three count patterns (all
 * equal; irregular with zeros and odd sizes; zero on even ranks), blocks placed in
 * reverse rank order with gaps, every root on world in `full`, in place and not, and
 * the mixed type at about 60000 elements per process in the large phase.
 * MATRIX_ONLY_VECTOR=1 runs only those (and the queries).
 * Every buffer (send and receive, including gaps of the vector type) is compared after
 * the native and the lanecoll call started from identical contents. Values are small
 * integers so that sums are exact in any order, also in double.
 *
 * Prints one line on rank 0:
 *   matrix: np=P layout=... configs=N ran=R fallbacks=F failures=X vector_configs=V
 *           vector_ran=VR  (V, VR: the part of N, R for the vector collectives)
 * and exits non-zero when a configuration failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lanecoll.h"

enum { K_INT, K_DOUBLE, K_VEC, K_MIX };
typedef struct dtype {
    const char *name;
    MPI_Datatype type;
    int kind;
    size_t extent;
} dtype;

static MPI_Datatype vec_type;  /* 2 ints at offsets 0 and 2, extent 3 ints */
static MPI_Datatype pair_type; /* 2 contiguous ints: the mixed type on even world ranks */
static long configs, ran, fallbacks, failures, skipped;
static long vector_configs, vector_ran; /* of those: allgatherv, gatherv, scatterv */
static int is_mpich;
static int world_rank, verbose, small;

/* ---- values and user operators ---------------------------------------------------- */
/* Values encode an affine map x -> a x + b mod 251 as a*256 + b (a in 1..250). */
static int value(int rank, long e, int salt)
{
    int a = 1 + (int)((rank * 7 + e * 13 + salt) % 250);
    int b = (int)((rank * 11 + e * 5 + salt * 3) % 251);
    return a * 256 + b;
}

static int affine(int x, int y) /* x first, then y */
{
    int a1 = x / 256, b1 = x % 256, a2 = y / 256, b2 = y % 256;
    return (a1 * a2 % 251) * 256 + (a2 * b1 + b2) % 251;
}

static int addmod(int x, int y) { return (x + y) % 65521; }

static void apply(int (*f)(int, int), void *in, void *inout, int *len, MPI_Datatype *dt)
{
    if (*dt == MPI_INT) {
        for (int i = 0; i < *len; i++)
            ((int *)inout)[i] = f(((int *)in)[i], ((int *)inout)[i]);
    } else if (*dt == MPI_DOUBLE) {
        for (int i = 0; i < *len; i++)
            ((double *)inout)[i] = f((int)((double *)in)[i], (int)((double *)inout)[i]);
    } else { /* vec_type (the mixed type never meets an operator) */
        for (int i = 0; i < *len; i++)
            for (int j = 0; j <= 2; j += 2)
                ((int *)inout)[3 * i + j] =
                    f(((int *)in)[3 * i + j], ((int *)inout)[3 * i + j]);
    }
}

static void op_affine(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    apply(affine, in, inout, len, dt);
}
static void op_addmod(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    apply(addmod, in, inout, len, dt);
}

/* ---- buffers ------------------------------------------------------------------------ */
static void *alloc_buf(const dtype *t, long n)
{
    size_t bytes = (size_t)n * t->extent + 16;
    unsigned char *b = malloc(bytes);
    memset(b, 0x5A, bytes);
    return b;
}

static void set_elem(const dtype *t, void *buf, long e, int v)
{
    if (t->kind == K_INT)
        ((int *)buf)[e] = v;
    else if (t->kind == K_DOUBLE)
        ((double *)buf)[e] = v;
    else if (t->kind == K_VEC || t->extent == 3 * sizeof(int)) { /* also odd K_MIX */
        ((int *)buf)[3 * e] = v;
        ((int *)buf)[3 * e + 2] = value(v % 97, e, 5);
    } else { /* K_MIX on an even world rank: pair_type */
        ((int *)buf)[2 * e] = v;
        ((int *)buf)[2 * e + 1] = value(v % 97, e, 5);
    }
}

static void fill(const dtype *t, void *buf, long first, long n, int rank, int salt)
{
    for (long e = 0; e < n; e++) set_elem(t, buf, first + e, value(rank, e, salt));
}

typedef struct bufs {
    void *sa, *sb, *ra, *rb;
    size_t sbytes, rbytes;
} bufs;

static void make(bufs *b, const dtype *t, long sn, long rn)
{
    b->sa = alloc_buf(t, sn);
    b->sb = alloc_buf(t, sn);
    b->ra = alloc_buf(t, rn);
    b->rb = alloc_buf(t, rn);
    b->sbytes = (size_t)sn * t->extent + 16;
    b->rbytes = (size_t)rn * t->extent + 16;
}

static void release(bufs *b)
{
    free(b->sa);
    free(b->sb);
    free(b->ra);
    free(b->rb);
}

/* ---- one configuration -------------------------------------------------------------- */
typedef struct tcase {
    MPI_Comm comm;
    const char *comm_name;
    int rank, size;
    int coll;
    const char *variant;
    void (*fn)(void); /* LC_<Coll>_<variant>, called through its collective's type */
    const dtype *t;
    int count, root;
    MPI_Op op;
    const char *opname;
    int inplace;
} tcase;

enum {
    BCAST,
    GATHER,
    SCATTER,
    ALLGATHER,
    ALLTOALL,
    REDUCE,
    ALLREDUCE,
    RSB,
    SCAN,
    EXSCAN,
    ALLGATHERV,
    GATHERV,
    SCATTERV
};
static const char *const coll_names[] = {
    "bcast",    "gather", "scatter",    "allgather",
    "alltoall", "reduce", "allreduce",  "reduce_scatter_block",
    "scan",     "exscan", "allgatherv", "gatherv",
    "scatterv"
};
/* The function types of the LC_<Coll>_<variant> functions, per collective. */
#define X(coll, ...) typedef int (*coll##_fn)(LC_PARAMS(coll), MPI_Comm comm);
LC_COLLECTIVES(X)
#undef X
#define CALL(c, coll) ((coll##_fn)(c)->fn)

static void report(const tcase *c, const char *what)
{
    failures++;
    if (failures <= 10)
        fprintf(stderr,
                "FAIL world rank %d: %s_%s comm=%s type=%s count=%d root=%d op=%s "
                "inplace=%d: %s\n",
                world_rank, coll_names[c->coll], c->variant, c->comm_name, c->t->name,
                c->count, c->root, c->opname, c->inplace, what);
}

static void note_fallback(const tcase *c)
{
    const char *why = LC_Fallback_reason(c->comm);
    if (why)
        fallbacks++;
    else
        ran++;
}

/* Runs native (into the a-buffers) and lanecoll (into the b-buffers). */
static void run(const tcase *c, bufs *b)
{
    int n = c->count, r = c->root;
    MPI_Datatype T = c->t->type;
    MPI_Comm m = c->comm;
    int in = c->inplace;
#define SB(x) (in ? MPI_IN_PLACE : (x))
    switch (c->coll) {
    case BCAST:
        MPI_Bcast(b->ra, n, T, r, m);
        CALL(c, bcast)(b->rb, n, T, r, m);
        break;
    case GATHER: {
        int ip = in && c->rank == r;
        MPI_Gather(ip ? MPI_IN_PLACE : b->sa, n, T, b->ra, n, T, r, m);
        CALL(c, gather)(ip ? MPI_IN_PLACE : b->sb, n, T, b->rb, n, T, r, m);
        break;
    }
    case SCATTER: {
        int ip = in && c->rank == r;
        MPI_Scatter(b->sa, n, T, ip ? MPI_IN_PLACE : b->ra, n, T, r, m);
        CALL(c, scatter)(b->sb, n, T, ip ? MPI_IN_PLACE : b->rb, n, T, r, m);
        break;
    }
    case ALLGATHER:
        MPI_Allgather(SB(b->sa), n, T, b->ra, n, T, m);
        CALL(c, allgather)(SB(b->sb), n, T, b->rb, n, T, m);
        break;
    case ALLTOALL:
        MPI_Alltoall(SB(b->sa), n, T, b->ra, n, T, m);
        CALL(c, alltoall)(SB(b->sb), n, T, b->rb, n, T, m);
        break;
    case REDUCE: {
        /* Reference without MPI_IN_PLACE (same result): MPICH 4.0.2 crashes on in-place
         * MPI_Reduce to a root != 0 on non-power-of-two communicators. */
        int ip = in && c->rank == r;
        void *copy = NULL;
        if (ip) {
            copy = malloc(b->rbytes);
            memcpy(copy, b->ra, b->rbytes);
        }
        MPI_Reduce(ip ? copy : b->sa, b->ra, n, T, c->op, r, m);
        free(copy);
        CALL(c, reduce)(ip ? MPI_IN_PLACE : b->sb, b->rb, n, T, c->op, r, m);
        break;
    }
    case ALLREDUCE:
        MPI_Allreduce(SB(b->sa), b->ra, n, T, c->op, m);
        CALL(c, allreduce)(SB(b->sb), b->rb, n, T, c->op, m);
        break;
    case RSB:
        MPI_Reduce_scatter_block(SB(b->sa), b->ra, n, T, c->op, m);
        CALL(c, reduce_scatter_block)(SB(b->sb), b->rb, n, T, c->op, m);
        break;
    case SCAN:
        MPI_Scan(SB(b->sa), b->ra, n, T, c->op, m);
        CALL(c, scan)(SB(b->sb), b->rb, n, T, c->op, m);
        break;
    case EXSCAN:
        MPI_Exscan(SB(b->sa), b->ra, n, T, c->op, m);
        CALL(c, exscan)(SB(b->sb), b->rb, n, T, c->op, m);
        break;
    }
#undef SB
}

/* Prepares identical a/b buffers for collective c, runs both, compares. */
/* With MPICH, a lanecoll call that falls back runs MPICH's own in-place reduce, which
 * crashes for root != 0 (see run): probe with count 0 whether it would fall back. */
static int mpich_inplace_reduce_fallback(const tcase *c)
{
    if (!is_mpich || c->coll != REDUCE || !c->inplace || c->root == 0) return 0;
    int x = 0;
    CALL(c, reduce)
    (c->rank == c->root ? MPI_IN_PLACE : &x, &x, 0, c->t->type, c->op, c->root, c->comm);
    return LC_Fallback_reason(c->comm) != NULL;
}

static void check(tcase *c)
{
    if (mpich_inplace_reduce_fallback(c)) {
        skipped++;
        return;
    }
    const dtype *t = c->t;
    long n = c->count, p = c->size;
    int rank = c->rank, salt = c->coll * 31 + c->count;
    bufs b;
    long sn = n, rn = n;
    switch (c->coll) {
    case GATHER: rn = p * n; break;
    case SCATTER: sn = p * n; break;
    case ALLGATHER: rn = p * n; break;
    case ALLTOALL: sn = rn = p * n; break;
    case RSB:
        sn = p * n;
        rn = c->inplace ? p * n : n;
        break;
    default: break;
    }
    make(&b, t, sn, rn);
    /* inputs */
    switch (c->coll) {
    case BCAST:
        if (rank == c->root) fill(t, b.ra, 0, n, rank, salt);
        break;
    case GATHER:
        if (c->inplace && rank == c->root)
            fill(t, b.ra, rank * n, n, rank, salt);
        else
            fill(t, b.sa, 0, n, rank, salt);
        break;
    case SCATTER:
        if (rank == c->root) fill(t, b.sa, 0, p * n, rank, salt);
        break;
    case ALLGATHER:
        if (c->inplace)
            fill(t, b.ra, rank * n, n, rank, salt);
        else
            fill(t, b.sa, 0, n, rank, salt);
        break;
    case ALLTOALL: fill(t, c->inplace ? b.ra : b.sa, 0, p * n, rank, salt); break;
    case REDUCE:
        fill(t, c->inplace && rank == c->root ? b.ra : b.sa, 0, n, rank, salt);
        break;
    case RSB: fill(t, c->inplace ? b.ra : b.sa, 0, p * n, rank, salt); break;
    default: /* allreduce, scan, exscan */
        fill(t, c->inplace ? b.ra : b.sa, 0, n, rank, salt);
        break;
    }
    memcpy(b.sb, b.sa, b.sbytes);
    memcpy(b.rb, b.ra, b.rbytes);

    if (verbose && world_rank == 0) {
        fprintf(stderr, "run %s_%s comm=%s type=%s count=%d root=%d op=%s inplace=%d\n",
                coll_names[c->coll], c->variant, c->comm_name, c->t->name, c->count,
                c->root, c->opname, c->inplace);
        fflush(stderr);
    }
    run(c, &b);
    note_fallback(c);
    configs++;

    size_t rcmp = b.rbytes;
    if (c->coll == RSB && c->inplace) rcmp = (size_t)n * t->extent; /* rest undefined */
    if (c->coll == EXSCAN && rank == 0) rcmp = 0; /* undefined on rank 0 */
    if (memcmp(b.sa, b.sb, b.sbytes) != 0) report(c, "send buffers differ");
    if (rcmp && memcmp(b.ra, b.rb, rcmp) != 0) report(c, "receive buffers differ");
    release(&b);
}

/* ---- the matrix ---------------------------------------------------------------------- */
/* Every line of the catalogue; coll, rooted and reduction are filled in by main. */
typedef struct algo {
    const char *coll_name, *variant;
    void (*fn)(void);
    int coll, rooted, reduction;
} algo;
static algo algos[] = {
#define LC_ALGORITHM(coll, variant, ...) \
    { #coll, #variant, (void (*)(void))LC_PUBLIC_FN(coll, variant), 0, 0, 0 },
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
};
#define NALGOS (sizeof algos / sizeof *algos)

static void algos_init(void)
{
    for (size_t a = 0; a < NALGOS; a++) {
        for (int k = 0; k <= SCATTERV; k++)
            if (strcmp(algos[a].coll_name, coll_names[k]) == 0) algos[a].coll = k;
        int k = algos[a].coll;
        algos[a].rooted = k == BCAST || k == GATHER || k == SCATTER || k == REDUCE ||
                          k == GATHERV || k == SCATTERV;
        algos[a].reduction = k >= REDUCE && k <= EXSCAN;
    }
}

static int has_in_place(int coll) { return coll != BCAST; }

static void run_comm(MPI_Comm comm, const char *name, int full, dtype *types, int ntypes,
                     MPI_Op *ops, const char **opnames, int nops, int predefined_on_vec)
{
    LC_Decomposition dc;
    tcase c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.comm_name = name;
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    LC_Decomposition_get(comm, &dc);
    int ppn = dc.max_ppn, counts[6] = { 0, 1, ppn - 1, ppn, ppn + 1, full ? 1031 : 257 };
    int roots[3] = { 0, c.size / 2, c.size - 1 };

    for (size_t a = 0; a < NALGOS; a++) {
        if (algos[a].coll >= ALLGATHERV) continue; /* run_vector */
        c.coll = algos[a].coll;
        c.variant = algos[a].variant;
        c.fn = algos[a].fn;
        for (int ti = 0; ti < ntypes; ti++) {
            c.t = &types[ti];
            if (small && c.t->kind == K_DOUBLE) continue;
            if (algos[a].reduction && c.t->kind == K_MIX) continue; /* one type for ops */
            for (int ci = 0; ci < 6; ci++) {
                if (ci > 0 && counts[ci] <= counts[ci - 1]) continue; /* duplicates, -1 */
                c.count = counts[ci];
                int nroots = !algos[a].rooted ? 1 : full ? c.size : 3;
                for (int ri = 0; ri < nroots; ri++) {
                    c.root = !algos[a].rooted ? -1 : full ? ri : roots[ri];
                    if (!full && ri > 0 && c.root == roots[ri - 1]) continue;
                    for (int oi = 0; oi < (algos[a].reduction ? nops : 1); oi++) {
                        c.op = algos[a].reduction ? ops[oi] : MPI_OP_NULL;
                        c.opname = algos[a].reduction ? opnames[oi] : "-";
                        if (algos[a].reduction && c.t->kind == K_VEC && oi < 2 &&
                            !predefined_on_vec)
                            continue;
                        if (small && (oi == 1 || oi == 2)) continue; /* sum, non-comm. */
                        for (c.inplace = 0; c.inplace <= has_in_place(c.coll); c.inplace++)
                            check(&c);
                    }
                }
            }
        }
    }
}

/* Large messages on comm: every algorithm with the mixed type (collectives without an
 * operator; 60000 elements = 120000 ints per count, alltoall 60000/p + 1 per block) or
 * MPI_INT with MPI_SUM and the non-commutative op (140000 elements in all:
 * ceil(140000/p) per process for reduce_scatter_block), roots first and last, in place
 * and not. */
static void run_large(MPI_Comm comm, dtype *mixed, dtype *ints, MPI_Op *ops,
                      const char **opnames)
{
    tcase c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.comm_name = "world-large";
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    for (size_t a = 0; a < NALGOS; a++) {
        if (algos[a].coll >= ALLGATHERV) continue; /* run_vector_large */
        c.coll = algos[a].coll;
        c.variant = algos[a].variant;
        c.fn = algos[a].fn;
        int red = algos[a].reduction;
        c.t = red ? ints : mixed;
        c.count = !red ? 60000 : c.coll == RSB ? (140000 + c.size - 1) / c.size : 140000;
        if (c.coll == ALLTOALL) c.count = 60000 / c.size + 1;
        for (int ri = 0; ri < (algos[a].rooted ? 2 : 1); ri++) {
            c.root = !algos[a].rooted ? -1 : ri ? c.size - 1 : 0;
            if (ri && c.root == 0) continue;
            for (int oi = 0; oi < (red ? 2 : 1); oi++) {
                c.op = red ? ops[oi ? 3 : 0] : MPI_OP_NULL;
                c.opname = red ? opnames[oi ? 3 : 0] : "-";
                for (c.inplace = 0; c.inplace <= has_in_place(c.coll); c.inplace++)
                    check(&c);
            }
        }
    }
}

/* ---- vector collectives (allgatherv, gatherv, scatterv) ----------------------------- */
/* Count patterns for a base count n on p processes (pattern names go into the opname
 * slot of FAIL lines): every rank n; irregular n*(r%3) + r%2 (zero for some ranks, not
 * divisible by anything); only odd ranks 2n+1, the even ones 0. Blocks are placed in
 * reverse rank order with a gap of one element after each (left untouched: compared). */
static const char *const patterns[] = { "v-regular", "v-irregular", "v-zeros" };
enum { NPATTERNS = 3 };

static long layout(int pattern, long n, int p, int *counts, int *displs)
{
    long at = 0;
    for (int r = 0; r < p; r++)
        counts[r] = (int)(pattern == 0   ? n
                          : pattern == 1 ? n * (r % 3) + r % 2
                                         : (r % 2 ? 2 * n + 1 : 0));
    for (int r = p - 1; r >= 0; r--) {
        displs[r] = (int)at;
        at += counts[r] + 1;
    }
    return at; /* elements spanned by all blocks and gaps */
}

static void run_v(const tcase *c, bufs *b, const int *counts, const int *displs)
{
    MPI_Datatype T = c->t->type;
    MPI_Comm m = c->comm;
    int me = c->rank, r = c->root, ip = c->inplace && (c->coll == ALLGATHERV || me == r);
    switch (c->coll) {
    case ALLGATHERV:
        MPI_Allgatherv(ip ? MPI_IN_PLACE : b->sa, counts[me], T, b->ra, counts, displs, T,
                       m);
        CALL(c, allgatherv)
        (ip ? MPI_IN_PLACE : b->sb, counts[me], T, b->rb, counts, displs, T, m);
        break;
    case GATHERV:
        MPI_Gatherv(ip ? MPI_IN_PLACE : b->sa, counts[me], T, b->ra, counts, displs, T, r,
                    m);
        CALL(c, gatherv)
        (ip ? MPI_IN_PLACE : b->sb, counts[me], T, b->rb, counts, displs, T, r, m);
        break;
    case SCATTERV:
        MPI_Scatterv(b->sa, counts, displs, T, ip ? MPI_IN_PLACE : b->ra, counts[me], T, r,
                     m);
        CALL(c, scatterv)
        (b->sb, counts, displs, T, ip ? MPI_IN_PLACE : b->rb, counts[me], T, r, m);
        break;
    }
}

static void check_v(tcase *c, int pattern)
{
    const dtype *t = c->t;
    int p = c->size, me = c->rank, salt = c->coll * 31 + c->count + pattern;
    int *counts = malloc(2 * sizeof(int) * (size_t)p), *displs = counts + p;
    long span = layout(pattern, c->count, p, counts, displs), mine = counts[me];
    int gathers = c->coll != SCATTERV, root_side = c->coll == ALLGATHERV || me == c->root;
    bufs b;
    make(&b, t, gathers ? mine : span, gathers ? span : mine);
    if (c->coll == SCATTERV) {
        if (me == c->root)
            for (int q = 0; q < p; q++) fill(t, b.sa, displs[q], counts[q], q, salt);
    } else if (c->inplace && root_side) {
        fill(t, b.ra, displs[me], mine, me, salt);
    } else {
        fill(t, b.sa, 0, mine, me, salt);
    }
    memcpy(b.sb, b.sa, b.sbytes);
    memcpy(b.rb, b.ra, b.rbytes);
    if (verbose && world_rank == 0) {
        fprintf(stderr,
                "run %s_%s comm=%s type=%s count=%d root=%d pattern=%s inplace=%d\n",
                coll_names[c->coll], c->variant, c->comm_name, t->name, c->count, c->root,
                patterns[pattern], c->inplace);
        fflush(stderr);
    }
    run_v(c, &b, counts, displs);
    note_fallback(c);
    configs++;
    vector_configs++;
    vector_ran += LC_Fallback_reason(c->comm) == NULL;
    c->opname = patterns[pattern];
    if (memcmp(b.sa, b.sb, b.sbytes) != 0) report(c, "send buffers differ");
    if (memcmp(b.ra, b.rb, b.rbytes) != 0) report(c, "receive buffers differ");
    release(&b);
    free(counts);
}

/* Every vector algorithm on comm: types, base counts 0, 1, ppn+1, a prime, the three
 * patterns, roots (all when `full`, else first/middle/last), in place and not. */
static void run_vector(MPI_Comm comm, const char *name, int full, dtype *types, int ntypes)
{
    LC_Decomposition dc;
    tcase c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.comm_name = name;
    c.op = MPI_OP_NULL;
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    LC_Decomposition_get(comm, &dc);
    int counts[4] = { 0, 1, dc.max_ppn + 1, full ? 1031 : 257 };
    int roots[3] = { 0, c.size / 2, c.size - 1 };
    for (size_t a = 0; a < NALGOS; a++) {
        if (algos[a].coll < ALLGATHERV) continue;
        c.coll = algos[a].coll;
        c.variant = algos[a].variant;
        c.fn = algos[a].fn;
        int nroots = !algos[a].rooted ? 1 : full ? c.size : 3;
        for (int ti = 0; ti < ntypes; ti++) {
            c.t = &types[ti];
            if (c.t->kind == K_DOUBLE) continue; /* int, vec and mixed cover the layouts */
            for (int ci = 0; ci < 4; ci++) {
                if (ci > 0 && counts[ci] <= counts[ci - 1]) continue;
                c.count = counts[ci];
                for (int pi = 0; pi < NPATTERNS; pi++) {
                    if (ci == 0 && pi > 0) continue; /* all zero already */
                    for (int ri = 0; ri < nroots; ri++) {
                        c.root = !algos[a].rooted ? -1 : full ? ri : roots[ri];
                        if (!full && ri > 0 && c.root == roots[ri - 1]) continue;
                        for (c.inplace = 0; c.inplace <= 1; c.inplace++) check_v(&c, pi);
                    }
                }
            }
        }
    }
}

/* Large vector messages on comm: the mixed type, irregular pattern around 60000 elements
 * (120000 ints) per process, roots first and last, in place and not. Allgatherv on MPICH
 * uses MPI_INT instead: MPICH 4.0.2's own MPI_Allgatherv (the reference) hangs with
 * per-process datatypes of one signature at this size (its ring algorithm splits such
 * messages by each process's own extent; issue 14, the same bug allgather_hier avoids). */
static void run_vector_large(MPI_Comm comm, dtype *mixed, dtype *ints)
{
    tcase c;
    memset(&c, 0, sizeof c);
    c.comm = comm;
    c.comm_name = "world-large";
    c.op = MPI_OP_NULL;
    c.t = mixed;
    c.count = 60000;
    MPI_Comm_rank(comm, &c.rank);
    MPI_Comm_size(comm, &c.size);
    for (size_t a = 0; a < NALGOS; a++) {
        if (algos[a].coll < ALLGATHERV) continue;
        c.coll = algos[a].coll;
        c.variant = algos[a].variant;
        c.fn = algos[a].fn;
        c.t = is_mpich && c.coll == ALLGATHERV ? ints : mixed;
        for (int ri = 0; ri < (algos[a].rooted ? 2 : 1); ri++) {
            c.root = !algos[a].rooted ? -1 : ri ? c.size - 1 : 0;
            if (ri && c.root == 0) continue;
            for (c.inplace = 0; c.inplace <= 1; c.inplace++) check_v(&c, 1);
        }
    }
}

/* The decomposition of world must be what the override asks for, and the recorded
 * fallback reasons must say what they should. */
static void check_queries(MPI_Comm world, MPI_Op noncomm)
{
    LC_Decomposition d;
    int size, expect_nodes = 1, x = 1, y;
    MPI_Comm_size(world, &size);
    const char *k = getenv("LANECOLL_NODE_SIZE"), *ks = getenv("LANECOLL_NODE_SIZES");
    if (k) expect_nodes = (size + atoi(k) - 1) / atoi(k);
    if (ks) {
        expect_nodes = 1;
        for (const char *q = ks; *q; q++) expect_nodes += *q == ',';
    }
    LC_Decomposition_get(world, &d);
    configs++;
    if (d.nodes != expect_nodes) {
        failures++;
        fprintf(stderr, "FAIL: decomposition has %d nodes, expected %d\n", d.nodes,
                expect_nodes);
    }
    LC_Allreduce_lane(&x, &y, 1, MPI_INT, noncomm, world);
    const char *why = LC_Fallback_reason(world);
    configs++;
    if (!why || !strstr(why, d.regular ? "non-commutative" : "irregular")) {
        failures++;
        fprintf(stderr, "FAIL: no non-commutative fallback reason (got %s)\n",
                why ? why : "NULL");
    }
    LC_Allreduce_lane(&x, &y, 1, MPI_INT, MPI_SUM, world);
    why = LC_Fallback_reason(world);
    configs++;
    if (d.regular ? why != NULL : (!why || !strstr(why, "irregular"))) {
        failures++;
        fprintf(stderr, "FAIL: regular=%d but fallback reason is %s\n", d.regular,
                why ? why : "NULL");
    }
}

static int predefined_ops_work_on_vec(MPI_Comm comm)
{
    /* MPI implementations may refuse predefined ops on derived types; probe once with
     * the error handler returning codes. */
    int in[3] = { 1, 0, 2 }, out[3] = { 0, 0, 0 }, ok, err;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    err = MPI_Allreduce(in, out, 1, vec_type, MPI_SUM, comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    int mine = err == MPI_SUCCESS;
    MPI_Allreduce(&mine, &ok, 1, MPI_INT, MPI_MIN, comm);
    return ok;
}

int main(int argc, char **argv)
{
    int provided, size;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    verbose = getenv("MATRIX_VERBOSE") != NULL;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int liblen;
    MPI_Get_library_version(lib, &liblen);
    is_mpich = strstr(lib, "MPICH") != NULL;
    /* full: all roots on world; reduced: 3 roots; small (for busy-polling MPICH under
     * oversubscription): reduced, without MPI_DOUBLE, MPI_MAX and the user commutative
     * op, and only the world and interleaved communicators. */
    const char *mode = argc > 1 ? argv[1] : "full";
    small = strcmp(mode, "small") == 0;
    int full = strcmp(mode, "full") == 0;

    MPI_Type_vector(2, 1, 2, MPI_INT, &vec_type);
    MPI_Datatype vec_resized;
    MPI_Type_create_resized(vec_type, 0, 3 * sizeof(int), &vec_resized);
    MPI_Type_free(&vec_type);
    vec_type = vec_resized;
    MPI_Type_commit(&vec_type);
    MPI_Type_contiguous(2, MPI_INT, &pair_type);
    MPI_Type_commit(&pair_type);
    int odd = world_rank % 2;
    dtype types[4] = { { "int", MPI_INT, K_INT, sizeof(int) },
                       { "double", MPI_DOUBLE, K_DOUBLE, sizeof(double) },
                       { "vec", vec_type, K_VEC, 3 * sizeof(int) },
                       { "mixed", odd ? vec_type : pair_type, K_MIX,
                         (odd ? 3 : 2) * sizeof(int) } };
    algos_init();
    MPI_Op ops[4], noncomm, comm_op;
    MPI_Op_create(op_addmod, 1, &comm_op);
    MPI_Op_create(op_affine, 0, &noncomm);
    ops[0] = MPI_SUM;
    ops[1] = MPI_MAX;
    ops[2] = comm_op;
    ops[3] = noncomm;
    const char *opnames[4] = { "sum", "max", "user-commutative", "user-noncommutative" };
    int vec_ok = predefined_ops_work_on_vec(MPI_COMM_WORLD);

    check_queries(MPI_COMM_WORLD, noncomm);

    /* Communicators: world, reversed, interleaved over the nodes (non-consecutive), dup. */
    LC_Decomposition d;
    LC_Decomposition_get(MPI_COMM_WORLD, &d);
    MPI_Comm reversed, interleaved, dup;
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - 1 - world_rank, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, 0, d.node_rank * size + d.node_index, &interleaved);
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);

    int only_vector = getenv("MATRIX_ONLY_VECTOR") != NULL;
    if (!only_vector) {
        run_comm(MPI_COMM_WORLD, "world", full, types, 4, ops, opnames, 4, vec_ok);
        if (!small) run_comm(reversed, "reversed", 0, types, 4, ops, opnames, 4, vec_ok);
        run_comm(interleaved, "interleaved", 0, types, full || small ? 4 : 1, ops, opnames,
                 4, vec_ok);
        if (!small) run_comm(dup, "dup", 0, types, 1, ops, opnames, 4, vec_ok);
    }
    run_vector(MPI_COMM_WORLD, "world", full, types, 4);
    if (!small) run_vector(reversed, "reversed", 0, types, 1);
    run_vector(interleaved, "interleaved", 0, types, small ? 1 : 4);
    if (!getenv("MATRIX_NO_LARGE")) {
        if (!only_vector) run_large(MPI_COMM_WORLD, &types[3], &types[0], ops, opnames);
        run_vector_large(MPI_COMM_WORLD, &types[3], &types[0]);
    }

    MPI_Comm_free(&dup);
    MPI_Comm_free(&interleaved);
    MPI_Comm_free(&reversed);
    MPI_Op_free(&comm_op);
    MPI_Op_free(&noncomm);
    MPI_Type_free(&vec_type);
    MPI_Type_free(&pair_type);

    long local[4] = { configs, ran, fallbacks, failures }, total[4];
    MPI_Reduce(local, total, 4, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (world_rank == 0) {
        const char *k = getenv("LANECOLL_NODE_SIZE"), *ks = getenv("LANECOLL_NODE_SIZES");
        /* configurations are counted once (rank 0's view), failures over all ranks */
        printf("matrix: np=%d layout=%s%s mode=%s predefined_ops_on_vec=%d configs=%ld "
               "ran=%ld fallbacks=%ld skipped=%ld failures=%ld vector_configs=%ld "
               "vector_ran=%ld\n",
               size,
               k    ? "K="
               : ks ? "sizes="
                    : "default",
               k    ? k
               : ks ? ks
                    : "",
               mode, vec_ok, configs, ran, fallbacks, skipped, total[3], vector_configs,
               vector_ran);
        fflush(stdout);
    }
    MPI_Bcast(&total[3], 1, MPI_LONG, 0, MPI_COMM_WORLD);
    int rc = total[3] != 0;
    MPI_Finalize();
    return rc;
}
