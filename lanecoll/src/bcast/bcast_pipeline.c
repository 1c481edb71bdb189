/* k-lane pipelined broadcast (paper, section 5, "pipelined tree algorithms"): a
 * single-ported linear pipeline over the nodes, replicated once per port.
 *
 * k = the fewest processes on a node (min_ppn); node rank j < k is replica j and runs
 * pipeline j over lane j, through the nodes in the order root's node, next node, ...
 * (node indices from the root's node on, cyclically). Pipeline j carries lane segment j
 * (about c/k elements), cut into blocks of B elements. With v the position of a node in
 * the pipeline, block b of every lane is handled at global step
 *   root's node    the root sends block b of segment j to replica j    step b
 *   node v >= 1    replica j receives block b from replica j of v-1    step b + v
 *   node v         replica j sends block b to replica j of v+1 and
 *                  to the other processes of its node (exchange)      step b + v + 1
 * so in one step a replica receives its next block, forwards the previous one to its
 * successor and exchanges it with the other replicas of its node (the node allgather
 * of the paper, as point-to-point messages), all as nonblocking operations completed
 * together. Every message is posted by sender and receiver in the same step, so steps
 * complete in order (no deadlock, whatever the MPI library's protocol). Processes with
 * node rank >= k (irregular layouts) only receive in the exchange.
 * The root is a process of its node holding all blocks, so the exchange on the root's
 * node lacks nothing: the paper's extra step, in which the last node's replicas return
 * what the root's replica could not exchange, is not needed (the root does not receive;
 * when it is a replica itself it sends its own lane's blocks to its node).
 *
 * Block size B: LANECOLL_PIPELINE_BLOCK=bytes if set (at least one element), else
 *   bytes = sqrt(8192 x m / (N-1)), m = c x size / k the bytes of one lane, the optimum
 *   of the linear pipeline time (N-1 + m/b)(alpha + beta b) for alpha/beta = 8 KiB,
 *   at least 1 KiB and at most m (N = 1: one block).
 * Cost: T + N steps with T = ceil(c/(kB)) blocks per lane: each step moves one block
 *   per lane over every lane at once, so about (T + N)(alpha + beta c/(kT)) against
 *   (T + N)(alpha + beta c/T) for the single-lane pipeline (bcast_pipeline1): c/k per
 *   lane, c into each node over k lanes, (n-1) block copies per block inside a node.
 * Restrictions: none (any node sizes, any rank placement, any root). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c46

static long long isqrt(long long x)
{
    long long r = 0;
    for (long long bit = 1LL << 62; bit; bit >>= 2) {
        if (x >= r + bit) {
            x -= r + bit;
            r = (r >> 1) + bit;
        } else {
            r >>= 1;
        }
    }
    return r;
}

/* Elements per block for lanes of at most `lane` elements of `size` bytes. */
static int block_elems(int lane, int size, int nnodes)
{
    long long m = (long long)lane * size, bytes, v;
    /* checked at MPI_Init by the interposition library (select.c); through the API an
     * invalid value leaves the default */
    if (lc_env_number(getenv("LANECOLL_PIPELINE_BLOCK"), &v))
        bytes = v;
    else if (nnodes <= 1)
        bytes = m;
    else {
        bytes = isqrt(8192 * m / (nnodes - 1));
        if (bytes < 1024) bytes = 1024;
    }
    if (bytes > m) bytes = m;
    long long e = bytes / size;
    return e < 1 ? 1 : e > lane ? lane : (int)e;
}

int lc_bcast_pipelined(void *buf, int count, MPI_Datatype type, int root,
                       const lc_decomp *d, int k)
{
    if (lc_empty(count, type)) return MPI_SUCCESS;
    int N = d->nnodes, n = d->node_size, me = d->node_rank, size, err = MPI_SUCCESS;
    int root_node = d->rank_node[root], root_nr = d->rank_noderank[root];
    int v = (d->node_index - root_node + N) % N; /* position in the pipelines */
    int at_root = d->rank == root, on_root_node = v == 0;
    PMPI_Type_size(type, &size);
    if (k > count) k = count; /* every lane carries at least one element */
    int *cnt = malloc(2 * sizeof(int) * (size_t)k);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)(n + 2 * k + 2));
    if (!cnt || !reqs) {
        free(cnt);
        free(reqs);
        return MPI_ERR_NO_MEM;
    }
    int *displ = cnt + k;
    lc_split_counts(count, k, cnt, displ);
    int B = block_elems(cnt[0], size, N), T = (cnt[0] + B - 1) / B;
    MPI_Aint ext = lc_extent(type);
    int pred = (d->node_index - 1 + N) % N, succ = (d->node_index + 1) % N;

/* Block b of lane j: pointer and length (0 past the end of the lane). */
#define BLK_PTR(j, b) (LC_CHAR(buf) + ((MPI_Aint)displ[j] + (MPI_Aint)(b)*B) * ext)
#define BLK_LEN(j, b)                                  \
    ((b) < 0 || (b) >= T || (long long)(b)*B >= cnt[j] \
         ? 0                                           \
         : (cnt[j] - (b)*B < B ? cnt[j] - (b)*B : B))

    for (int t = 0; t <= T + N - 1 && err == MPI_SUCCESS; t++) {
        int nr = 0, len;
        if (on_root_node && at_root) { /* the root feeds the other replicas */
            for (int j = 0; j < k && err == MPI_SUCCESS; j++)
                if (j != me && (len = BLK_LEN(j, t)) > 0)
                    err = PMPI_Isend(BLK_PTR(j, t), len, type, j, TAG, d->nodecomm,
                                     &reqs[nr++]);
        } else if (me < k) { /* replica: next block from the root or the predecessor */
            int b = t - v;
            if ((len = BLK_LEN(me, b)) > 0)
                err = on_root_node ? PMPI_Irecv(BLK_PTR(me, b), len, type, root_nr, TAG,
                                                d->nodecomm, &reqs[nr++])
                                   : PMPI_Irecv(BLK_PTR(me, b), len, type, pred, TAG,
                                                d->lanecomm, &reqs[nr++]);
        }
        int b = t - v - 1; /* the previous block: forward and exchange */
        if (me < k && (len = BLK_LEN(me, b)) > 0) {
            if (v + 1 < N && err == MPI_SUCCESS)
                err = PMPI_Isend(BLK_PTR(me, b), len, type, succ, TAG, d->lanecomm,
                                 &reqs[nr++]);
            for (int q = 0; q < n && err == MPI_SUCCESS; q++)
                if (q != me && !(on_root_node && q == root_nr))
                    err = PMPI_Isend(BLK_PTR(me, b), len, type, q, TAG, d->nodecomm,
                                     &reqs[nr++]);
        }
        if (!at_root)
            for (int j = 0; j < k && err == MPI_SUCCESS; j++)
                if (j != me && (len = BLK_LEN(j, b)) > 0)
                    err = PMPI_Irecv(BLK_PTR(j, b), len, type, j, TAG, d->nodecomm,
                                     &reqs[nr++]);
        int werr = lc_waitall(nr, reqs);
        if (err == MPI_SUCCESS) err = werr;
    }
#undef BLK_PTR
#undef BLK_LEN
    free(reqs);
    free(cnt);
    return err;
}

int lc_bcast_pipeline(void *buf, int count, MPI_Datatype type, int root, const lc_decomp *d)
{
    return lc_bcast_pipelined(buf, count, type, root, d, d->min_ppn);
}
