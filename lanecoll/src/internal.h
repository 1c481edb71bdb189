/* Internal interfaces of lanecoll: the cached decomposition, the restriction check that
 * precedes every algorithm, buffer and datatype helpers, and the algorithm bodies that
 * the public LC_ wrappers and the interposition layer share. */
#ifndef LANECOLL_INTERNAL_H
#define LANECOLL_INTERNAL_H

#include <mpi.h>
#include <stddef.h>

#include "lanecoll.h"

/* Internal to the library: hidden, so calls between its files are direct (no PLT
 * indirection, ~1-2 ns each on the per-call path) and nothing leaks into programs. */
#pragma GCC visibility push(hidden)

/* ---- Collectives and algorithms (lanecoll_algorithms.def) ------------------------- */
typedef enum {
#define X(coll, ...) LC_C_##coll,
    LC_COLLECTIVES(X)
#undef X
        LC_NCOLL
} lc_coll;

/* Algorithm ids: LC_NATIVE (the MPI library's own collective, for every collective),
 * then LC_A_<coll>_<variant> for each line of lanecoll_algorithms.def, in its order. */
typedef enum {
    LC_NATIVE,
#define LC_ALGORITHM(coll, variant, ...) LC_A_##coll##_##variant,
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM
    LC_NALG
} lc_alg;

const char *lc_coll_name(lc_coll c);     /* "allreduce" */
const char *lc_alg_variant(lc_alg a);    /* "lane", "native" for LC_NATIVE */
int lc_coll_from_name(const char *name); /* -1 if unknown */
/* The algorithm of collective c called `variant` ("native" -> LC_NATIVE); -1 if none. */
int lc_alg_find(int c, const char *variant);
/* 1 when some collective has an algorithm called `variant` (or it is "native"). */
int lc_variant_known(const char *variant);
/* "native, lane, hier, lane_v": the variants collective c has (c < 0: all), for messages. */
void lc_variant_list(int c, char *buf, size_t len);

/* ---- Decomposition (decompose.c) ----------------------------------------------------- */
typedef struct lc_decomp {
    int size, rank;    /* of comm */
    MPI_Comm nodecomm; /* processes of this node, ranked in comm order */
    MPI_Comm lanecomm; /* same node rank on every node, ranked by node index */
    MPI_Comm leadcomm; /* node rank 0 of every node (MPI_COMM_NULL elsewhere) */
    MPI_Comm lastcomm; /* last node rank of every node (MPI_COMM_NULL elsewhere) */
    int nnodes, node_index, node_rank, node_size;
    int min_ppn, max_ppn;
    int regular, consecutive;
    int *node_sizes;    /* [nnodes] processes per node */
    int *node_first;    /* [nnodes] lowest comm rank of each node */
    int *rank_node;     /* [size] node index of every comm rank */
    int *rank_noderank; /* [size] node rank of every comm rank */
    /* Ranks not consecutive over the nodes (NULL otherwise): rank_pos[r] = position of
     * rank r in node order, and `ordered`, this decomposition with ranks renumbered so
     * (consecutive, same sub-communicators): see reindex.c. */
    int *rank_pos;
    struct lc_decomp *ordered;
} lc_decomp;

/* Per-communicator state stored as one attribute. */
typedef struct lc_comm_state {
    lc_decomp *decomp; /* built on first use */
    char reason[256];  /* last fallback reason, "" when none */
    /* Per collective, whether the tuning table's choice for this communicator's shape
     * depends on the byte count (select.c, lc_bytes_shared): 0 not yet known, else
     * LC_BYTES_NATIVE (native at every size), LC_BYTES_FREE (another algorithm at every
     * size) or LC_BYTES_MATTER. Same value on every process of comm. */
    signed char bytes_rule[LC_NCOLL];
} lc_comm_state;
enum { LC_BYTES_NATIVE = 1, LC_BYTES_FREE = 2, LC_BYTES_MATTER = 3 };

/* Node colour of this process (node_color.c): processes with equal colour share a node.
 * Returns MPI_SUCCESS, or an MPI error after printing why (invalid override). When no
 * override is set, *use_split_type is set and no colour is computed. */
int lc_node_color(MPI_Comm comm, int *color, int *use_split_type);

/* Validates LANECOLL_NODE_SIZE / _SIZES / _NAME_SEP for a world of wsize processes:
 * 0, or -1 with a message naming the variable in err. */
int lc_node_settings_check(int wsize, char *err, size_t errlen);

/* The one parser of numeric environment variables (LANECOLL_NODE_SIZE, the items of
 * LANECOLL_NODE_SIZES, LANECOLL_PIPELINE_BLOCK; node_color.c): decimal digits only (no
 * sign, space or suffix) of a value 1..LC_ENV_MAX. A larger value is refused, never
 * saturated (strtoll turns 99999999999999999999 into LLONG_MAX). Returns 1 and the
 * value in *out, or 0. A refusal reads "lanecoll: VAR=VALUE: expected a positive
 * integer[ (unit)] up to 1000000000". */
#define LC_ENV_MAX 1000000000LL
int lc_env_number(const char *s, long long *out);

/* State of comm, created on demand (never NULL for a valid intracommunicator). */
lc_comm_state *lc_state(MPI_Comm comm);
/* Decomposition of comm, built on first use (collective then). NULL on error. */
const lc_decomp *lc_decomposition(MPI_Comm comm, int *err);
/* The same for an intracommunicator whose state the caller has already looked up
 * (saves the attribute lookup: the interposition layer's per-call path). */
const lc_decomp *lc_decomposition_state(MPI_Comm comm, lc_comm_state *s, int *err);

/* ---- Restriction check (prepare.c) -------------------------------------------------- */
enum {
    LC_R_REGULAR = 1 << 0,       /* same number of processes on every node */
    LC_R_CONSECUTIVE = 1 << 1,   /* ranks consecutive over the nodes */
    LC_R_COMMUTATIVE = 1 << 2,   /* MPI_Op_commutative */
    LC_R_ORDER_OR_COMM = 1 << 3, /* consecutive ranks or commutative op */
    LC_R_ROOT_LANE = 1 << 4      /* root's node rank exists on every node */
};

typedef struct lc_call {
    lc_coll coll;
    MPI_Comm comm;
    MPI_Op op;   /* MPI_OP_NULL when the collective has none */
    int root;    /* -1 when the collective has none */
    int args_ok; /* 0 when MPI would reject the arguments */
} lc_call;

/* Decides whether algorithm `alg` may run for `call`. Returns the decomposition when it may;
 * otherwise NULL with *reason set (static text or the comm state's buffer). Records the
 * outcome as the comm's last fallback reason. Collective on the first use of comm. */
const lc_decomp *lc_prepare(const lc_call *call, lc_alg alg, const char **reason);
/* The same for an intracommunicator with its state `s` already looked up (may be NULL
 * when it could not be created: then "decomposition failed"). */
const lc_decomp *lc_prepare_state(const lc_call *call, lc_alg alg, lc_comm_state *s,
                                  const char **reason);
/* Called when a fallback reason is recorded (select.c): from then on the interposition
 * wrappers take the full path for every call, so the native choice clears the reason
 * exactly as before (LC_Fallback_reason). */
void lc_native_only_revoke(void);

/* Restriction flags of algorithm a for collective c (catalogue.c); -1 if a is not an
 * algorithm of c. 0 for LC_NATIVE. */
int lc_restrictions(lc_coll c, lc_alg a);

/* Argument checks MPI would fail (args.c). */
int lc_args_ok_rooted(MPI_Comm comm, int root);
int lc_args_ok_count(MPI_Comm comm, int count, MPI_Datatype type);
int lc_args_ok_op(MPI_Op op);
/* Gather/scatter: (count, type) is what every process passes on its own side, root_*
 * the root's other side; in place at the root the root's own side is not used. */
int lc_args_ok_rooted_pair(MPI_Comm comm, int root, int count, MPI_Datatype type,
                           int root_count, MPI_Datatype root_type, int in_place_at_root);
/* Vector collectives: counts and displacements given, no count negative (O(p)). */
int lc_args_ok_counts(MPI_Comm comm, const int *counts, const int *displs,
                      MPI_Datatype type);
/* Gatherv/scatterv: as lc_args_ok_rooted_pair with the root's counts and displs. */
int lc_args_ok_rooted_v(MPI_Comm comm, int root, int count, MPI_Datatype type,
                        const int *root_counts, const int *root_displs,
                        MPI_Datatype root_type, int in_place_at_root);

/* ---- Buffers and datatypes (buffers.c) ---------------------------------------------- */
/* counts[i] = count/parts (+1 for the first count%parts), displs their prefix sums.
 * With count < parts the last blocks are empty. The full-lane algorithms then skip the
 * lane step of an empty block: every process of a lane communicator has the same node
 * rank, so the same block, and all of them skip together. That saves a round of empty
 * messages, and SimGrid 3.32's MPI_Allreduce and MPI_Reduce divide by the count
 * (SIGFPE at count 0, where Open MPI and MPICH return at once). */
void lc_split_counts(int count, int parts, int *counts, int *displs);
/* One block per node for the v-collectives across nodes: counts[i] = node_sizes[i] x
 * per_rank, displs[i] = node_first[i] x per_rank (displs = counts + nnodes). Free the
 * result with free(); NULL when out of memory. */
int *lc_node_blocks(const lc_decomp *d, int per_rank);
/* Buffer able to hold `count` elements of `type` laid out as MPI would; *mem is what to
 * free (lc_free). Returns NULL only if allocation failed. */
void *lc_tmp_alloc(MPI_Aint count, MPI_Datatype type, void **mem);
void lc_free(void *mem);
/* dst[0..) = src[0..) as typed data (pack + unpack; no self messages, thread safe). */
int lc_local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int rcount,
                  MPI_Datatype rtype);
/* 1 when count elements of type carry no data. Every algorithm returns at once then:
 * matching type signatures make this true on all processes together, and MPI
 * libraries skip zero-count calls locally (Open MPI's gather returns early on a
 * non-root with sendcount 0), so running the decomposition would deadlock. */
int lc_empty(int count, MPI_Datatype type);
/* In-place MPI_Allgatherv of counts[i] elements of `type` at displs[i] (in elements) on
 * comm, exchanged as bytes so that processes may pass different types of one signature
 * (allgatherv_bytes.c: MPICH 4.0.2's ring mishandles them; gapped types are packed). */
int lc_allgatherv_in_place(void *buf, const int *counts, const int *displs,
                           MPI_Datatype type, MPI_Comm comm);
/* PMPI_Waitall(n, reqs, MPI_STATUSES_IGNORE) in one place: GCC 12's
 * -Wstringop-overflow takes Open MPI's MPI_STATUSES_IGNORE (a null MPI_Status *) for a
 * zero-size status array; the warning is silenced there only. */
int lc_waitall(int n, MPI_Request *reqs);
/* Byte offset of element block i for `count` elements of `type` per block. */
MPI_Aint lc_extent(MPI_Datatype type);
/* Type of `count` elements of `type` whose extent is set to `extent_blocks` such blocks:
 * consecutive items of this type are `extent_blocks` blocks apart. */
int lc_type_spaced_block(int count, MPI_Datatype type, int extent_blocks,
                         MPI_Datatype *out);
/* Type of `nblocks` blocks (each `count` elements of `type`), `stride` blocks apart,
 * with an extent of one block so that consecutive items interleave (tile). */
int lc_type_strided_column(int nblocks, int stride, int count, MPI_Datatype type,
                           MPI_Datatype *out);

#define LC_TRY(call)                                \
    do {                                            \
        int lc_err_ = (call);                       \
        if (lc_err_ != MPI_SUCCESS) return lc_err_; \
    } while (0)
#define LC_CHAR(p) ((char *)(p))
#define LC_CCHAR(p) ((const char *)(p))

/* ---- Algorithm bodies: restrictions already checked ---------------------------------- */
/* int lc_<coll>_<variant>(<parameters of MPI_<Coll>>, const lc_decomp *d) per line of
 * lanecoll_algorithms.def, defined in src/<coll>/<coll>_<variant>.c. */
#define LC_ALGORITHM(coll, variant, ...) \
    int lc_##coll##_##variant(LC_PARAMS(coll), const lc_decomp *d);
#include "lanecoll_algorithms.def"
#undef LC_ALGORITHM

/* The dispatch table: the body of every algorithm, called through the function type of
 * its collective (lc_<coll>_fn). LC_RUN(coll, a, d) runs algorithm a with the MPI
 * parameter names of the collective in scope (lanecoll_collectives.h). */
#define X(coll, ...) typedef int (*lc_##coll##_fn)(LC_PARAMS(coll), const lc_decomp *d);
LC_COLLECTIVES(X)
#undef X
typedef void (*lc_alg_fn)(void);
typedef struct lc_alg_entry {
    lc_coll coll;
    int flags;    /* LC_R_* */
    lc_alg_fn fn; /* NULL for LC_NATIVE */
    LC_Algorithm info;
} lc_alg_entry;
extern const lc_alg_entry lc_algorithms[LC_NALG];
#define LC_RUN(coll, a, d) (((lc_##coll##_fn)lc_algorithms[(a)].fn)(LC_ARGS(coll), (d)))

/* Full-lane bodies shared by lane (vector = 0: regular node collectives where n divides
 * the count) and lane_v (vector = 1: the vector node collectives always). */
int lc_bcast_full_lane(void *buf, int count, MPI_Datatype type, int root,
                       const lc_decomp *d, int vector);
int lc_reduce_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                        MPI_Op op, int root, const lc_decomp *d, int vector);
int lc_allreduce_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                           MPI_Op op, const lc_decomp *d, int vector);
int lc_scan_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                      const lc_decomp *d, int vector);
int lc_exscan_full_lane(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
                        MPI_Op op, const lc_decomp *d, int vector);

/* reindex.c: gather, scatter and allgather on communicators whose ranks are not
 * consecutive over the nodes, by running a body written for consecutive ranks on the
 * view d->ordered and permuting the blocks through a temporary of p blocks (at the
 * root; at every process for allgather). */
typedef int (*lc_gather_body)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                              int, const lc_decomp *);
typedef int (*lc_allgather_body)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype,
                                 const lc_decomp *);
int lc_gather_reindexed(lc_gather_body f, const void *sbuf, int scount, MPI_Datatype stype,
                        void *rbuf, int rcount, MPI_Datatype rtype, int root,
                        const lc_decomp *d);
int lc_scatter_reindexed(lc_gather_body f, const void *sbuf, int scount, MPI_Datatype stype,
                         void *rbuf, int rcount, MPI_Datatype rtype, int root,
                         const lc_decomp *d);
int lc_allgather_reindexed(lc_allgather_body f, const void *sbuf, int scount,
                           MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
                           const lc_decomp *d);

/* bcast_pipeline.c: the k-lane linear pipeline (k = 1: bcast_pipeline1). */
int lc_bcast_pipelined(void *buf, int count, MPI_Datatype type, int root,
                       const lc_decomp *d, int k);

/* scan_lane.c: E = reduction of the inputs of all earlier nodes (undefined on node 0),
 * block-wise over all lanes; shared by scan_lane and exscan_lane. */
int lc_lane_node_prefix(const void *input, void *E, int count, MPI_Datatype type, MPI_Op op,
                        const lc_decomp *d, int vector);

/* ---- Vector collectives (vector.c) ------------------------------------------------- */
/* grid[i * max_ppn + j] = comm rank of node rank j on node i (-1 where node i has fewer
 * processes); any rank order. free() it; NULL when out of memory. */
int *lc_rank_grid(const lc_decomp *d);
/* Committed indexed type of the blocks of ranks[0], ranks[stride], ... (nranks of them,
 * negative entries skipped): counts[r] elements of `type` at displs[r] extents, i.e.
 * where MPI_Gatherv/Allgatherv/Scatterv put rank r's block. */
int lc_type_rank_blocks(int nranks, const int *ranks, int stride, const int *counts,
                        const int *displs, MPI_Datatype type, MPI_Datatype *out);
/* counts/displs of lane `lane` (regular layouts): lc[i], ld[i] of node i's member. */
int lc_lane_counts(const lc_decomp *d, const int *grid, int lane, const int *counts,
                   const int *displs, int *lc, int *ld);
/* Root-node step of gatherv/scatterv lane: the root (node rank root_nr) scatters to each
 * process of its node the byte sizes of its lane's N blocks (counts x size of the root's
 * type) into mine[N]; one node scatter of N long longs per process. Root node only. */
int lc_v_lane_bytes(const lc_decomp *d, const int *grid, const int *counts,
                    MPI_Datatype type, int root_nr, long long *mine);
/* Node step of gatherv/scatterv hier on a node other than the root's: every process
 * gives the leader (node rank `leader`) its block's byte size (count x size of its own
 * type), which the leader receives into bytes[node_size] (NULL elsewhere). One node
 * gather of a long long per process. */
int lc_v_node_bytes(const lc_decomp *d, int leader, int count, MPI_Datatype type,
                    long long *bytes);

/* What the forwarding processes of gatherv/scatterv lane and hier (root-node processes,
 * other nodes' leaders) hold: n blocks of bytes[0..n) bytes one after another, in units
 * of the process's own type `own`, or of MPI_BYTE when that type's size does not divide
 * them all (possible only when processes pass different types: homogeneous systems, as
 * all of lanecoll assumes). */
typedef struct lc_v_hold {
    MPI_Datatype unit;
    int total;            /* units held: below 2^31 */
    int *counts, *displs; /* [n] each block in units */
    void *buf, *mem;      /* the temporary, and what to free */
} lc_v_hold;
/* Fills h for bytes[0..n) and allocates the temporary; MPI_ERR_COUNT when the total
 * exceeds 2^31 - 1 units, MPI_ERR_NO_MEM. Call lc_v_hold_free(h) either way. */
int lc_v_hold_alloc(MPI_Datatype own, const long long *bytes, int n, lc_v_hold *h);
void lc_v_hold_free(lc_v_hold *h);

/* The root's side of gatherv/scatterv lane and hier: its node step (lane: with every
 * other process of its node, peer q holding lane q's blocks, over nodecomm) or its lane
 * step (hier: with the leaders of the other nodes, peer i holding node i's blocks, over
 * lanecomm), each peer's blocks as one indexed type over the root's buffer at the
 * callers' displacements (zero-copy), posted as receives (collect = 1, gatherv) or
 * sends (collect = 0, scatterv) before the root's own collective, so the two overlap. */
typedef struct lc_v_peers {
    int n; /* transfers posted */
    MPI_Datatype *types;
    MPI_Request *reqs;
} lc_v_peers;
int lc_v_peers_post(const lc_decomp *d, const int *grid, int by_lane, int collect,
                    const void *buf, const int *counts, const int *displs,
                    MPI_Datatype type, int tag, lc_v_peers *t);
/* Waits for the transfers and frees what lc_v_peers_post made; returns err, or the
 * wait's error when err is MPI_SUCCESS. */
int lc_v_peers_finish(lc_v_peers *t, int err);

/* ---- The k-ported tree over the nodes (ktree.c) ------------------------------------- */
typedef struct lc_ktree_send {
    int round;       /* 0, 1, ...: sends of one port go out in this order */
    int port;        /* node rank that sends (and node rank of the receiver: lane `port`) */
    int node;        /* receiving node = first node of the part */
    int first, last; /* the part: nodes [first, last) */
} lc_ktree_send;
typedef struct lc_ktree {
    int k;           /* ports per node: min_ppn */
    int parent;      /* node that sends to this node; -1 on the root's node */
    int recv_port;   /* node rank (and lane) on which this node receives; -1 at the root */
    int first, last; /* this node's subtree: nodes [first, last) */
    int nsends;
    lc_ktree_send *sends; /* this node's children in round order; free() it */
} lc_ktree;
/* The tree for the node of this process, rooted at node root_node. */
int lc_ktree_build(const lc_decomp *d, int root_node, lc_ktree *t);
/* Blocks (processes) of nodes [first, last): consecutive communicators only. */
int lc_ktree_blocks(const lc_decomp *d, int first, int last);
/* The parts port `port` of this node sends (scatter) or receives (gather), in round
 * order, in a buffer of blocks (count x type each) starting at comm rank `base`: one
 * committed hindexed type (MPI_DATATYPE_NULL when the port has none) and the number of
 * blocks in it. Consecutive communicators only. */
int lc_ktree_parts_type(const lc_decomp *d, const lc_ktree *t, int port, int base,
                        int count, MPI_Datatype type, MPI_Datatype *out, int *nblocks);

/* The holder's node step of gather and scatter kported (node ranks i != holder): each
 * process's own block (tag LC_KTREE_TAG_OWN) and, for ports i < k, the bundle of parts
 * the port passes on (LC_KTREE_TAG_PARTS, an hindexed type over B), posted as receives
 * (collect = 1, gather) or sends (collect = 0, scatter) into reqs[*nr...]: at most
 * 2 (n-1) requests. B holds blocks of cnt x T starting at comm rank `base`. */
enum { LC_KTREE_TAG_OWN = 0x4c44, LC_KTREE_TAG_PARTS = 0x4c45 };
int lc_ktree_holder_post(const lc_decomp *d, const lc_ktree *t, int holder, char *B,
                         int cnt, MPI_Datatype T, int base, int collect, MPI_Request *reqs,
                         int *nr);

#pragma GCC visibility pop

#endif /* LANECOLL_INTERNAL_H */
