/* Helpers of the vector collectives (allgatherv, gatherv, scatterv): where every block
 * of a node or lane is, as derived datatypes over the caller's buffer, so the node and
 * lane steps move blocks straight between their places (paper, section 3.3: zero-copy
 * with derived datatypes). The caller's displacements already say where each rank's
 * block goes, so these work for any rank order (no renumbering as in reindex.c). */
#include <stdlib.h>

#include "internal.h"

int *lc_rank_grid(const lc_decomp *d)
{
    int m = d->max_ppn, cells = d->nnodes * m;
    int *grid = malloc(sizeof(int) * (size_t)cells);
    if (!grid) return NULL;
    for (int i = 0; i < cells; i++) grid[i] = -1;
    for (int r = 0; r < d->size; r++) grid[d->rank_node[r] * m + d->rank_noderank[r]] = r;
    return grid;
}

int lc_type_rank_blocks(int nranks, const int *ranks, int stride, const int *counts,
                        const int *displs, MPI_Datatype type, MPI_Datatype *out)
{
    int *len = malloc(2 * sizeof(int) * (size_t)(nranks > 0 ? nranks : 1));
    if (!len) return MPI_ERR_NO_MEM;
    int *at = len + nranks, m = 0;
    for (int i = 0; i < nranks; i++) {
        int r = ranks[(size_t)i * (size_t)stride];
        if (r < 0 || counts[r] == 0) continue;
        len[m] = counts[r];
        at[m++] = displs[r];
    }
    int err = PMPI_Type_indexed(m, len, at, type, out);
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(out);
    free(len);
    return err;
}

int lc_lane_counts(const lc_decomp *d, const int *grid, int lane, const int *counts,
                   const int *displs, int *lc, int *ld)
{
    int m = d->max_ppn;
    for (int i = 0; i < d->nnodes; i++) {
        int r = grid[i * m + lane];
        if (r < 0) return MPI_ERR_INTERN; /* lane missing on a node: regular layouts only */
        lc[i] = counts[r];
        ld[i] = displs[r];
    }
    return MPI_SUCCESS;
}

int lc_v_lane_bytes(const lc_decomp *d, const int *grid, const int *counts,
                    MPI_Datatype type, int root_nr, long long *mine)
{
    int N = d->nnodes, n = d->node_size, m = d->max_ppn, size = 0;
    if (d->node_rank != root_nr)
        return PMPI_Scatter(NULL, 0, MPI_LONG_LONG, mine, N, MPI_LONG_LONG, root_nr,
                            d->nodecomm);
    PMPI_Type_size(type, &size);
    long long *col = malloc(sizeof(long long) * (size_t)N * (size_t)n);
    if (!col) return MPI_ERR_NO_MEM;
    for (int q = 0; q < n; q++)
        for (int i = 0; i < N; i++)
            col[q * N + i] = (long long)counts[grid[i * m + q]] * size;
    int err = PMPI_Scatter(col, N, MPI_LONG_LONG, MPI_IN_PLACE, N, MPI_LONG_LONG, root_nr,
                           d->nodecomm);
    free(col);
    return err;
}

int lc_v_node_bytes(const lc_decomp *d, int leader, int count, MPI_Datatype type,
                    long long *bytes)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    long long mine = (long long)count * size;
    return PMPI_Gather(&mine, 1, MPI_LONG_LONG, bytes, 1, MPI_LONG_LONG, leader,
                       d->nodecomm);
}

/* The unit in which blocks of these byte sizes are held: `own` when its size divides
 * them all (always when every process passes the same type), else MPI_BYTE. */
static MPI_Datatype hold_unit(MPI_Datatype own, const long long *bytes, int n)
{
    int size = 0;
    PMPI_Type_size(own, &size);
    if (size <= 0) return MPI_BYTE;
    for (int i = 0; i < n; i++)
        if (bytes[i] % size) return MPI_BYTE;
    return own;
}

/* counts/displs in units of `unit` for blocks of bytes[0..n) placed one after another;
 * returns the total, or -1 when it exceeds INT_MAX. */
static int hold_units(const long long *bytes, int n, MPI_Datatype unit, int *counts,
                      int *displs)
{
    int size = 0;
    long long at = 0;
    PMPI_Type_size(unit, &size);
    for (int i = 0; i < n; i++) {
        long long c = bytes[i] / size;
        if (c > 2147483647LL || at > 2147483647LL) return -1;
        counts[i] = (int)c;
        displs[i] = (int)at;
        at += c;
    }
    return at > 2147483647LL ? -1 : (int)at;
}

int lc_v_hold_alloc(MPI_Datatype own, const long long *bytes, int n, lc_v_hold *h)
{
    h->mem = h->buf = NULL;
    h->counts = malloc(2 * sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!h->counts) return MPI_ERR_NO_MEM;
    h->displs = h->counts + n;
    h->unit = hold_unit(own, bytes, n);
    h->total = hold_units(bytes, n, h->unit, h->counts, h->displs);
    if (h->total < 0) return MPI_ERR_COUNT;
    h->buf = lc_tmp_alloc(h->total, h->unit, &h->mem);
    return h->buf ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

void lc_v_hold_free(lc_v_hold *h)
{
    lc_free(h->mem);
    free(h->counts);
    h->mem = h->buf = NULL;
    h->counts = h->displs = NULL;
}

int lc_v_peers_post(const lc_decomp *d, const int *grid, int by_lane, int collect,
                    const void *buf, const int *counts, const int *displs,
                    MPI_Datatype type, int tag, lc_v_peers *t)
{
    int m = d->max_ppn;
    /* lane: peer q = node rank q, its lane's N ranks are grid[q + i m];
     * hier: peer i = node i, its ranks are grid[i m + j] */
    int npeers = by_lane ? d->node_size : d->nnodes;
    int self = by_lane ? d->node_rank : d->node_index;
    int peer_step = by_lane ? 1 : m, rank_step = by_lane ? m : 1;
    int nranks = by_lane ? d->nnodes : m;
    MPI_Comm comm = by_lane ? d->nodecomm : d->lanecomm;
    t->n = 0;
    t->types = malloc(sizeof(MPI_Datatype) * (size_t)npeers);
    t->reqs = malloc(sizeof(MPI_Request) * (size_t)npeers);
    if (!t->types || !t->reqs) return MPI_ERR_NO_MEM;
    int err = MPI_SUCCESS;
    for (int q = 0; q < npeers && err == MPI_SUCCESS; q++) {
        if (q == self) continue;
        MPI_Datatype *blocks = &t->types[t->n];
        err = lc_type_rank_blocks(nranks, grid + q * peer_step, rank_step, counts, displs,
                                  type, blocks);
        if (err != MPI_SUCCESS) break;
        /* collect: buf is the root's receive buffer */
        err = collect ? PMPI_Irecv((void *)buf, 1, *blocks, q, tag, comm, &t->reqs[t->n])
                      : PMPI_Isend(buf, 1, *blocks, q, tag, comm, &t->reqs[t->n]);
        t->n++;
    }
    return err;
}

int lc_v_peers_finish(lc_v_peers *t, int err)
{
    int werr = lc_waitall(t->n, t->reqs);
    for (int q = 0; q < t->n; q++) PMPI_Type_free(&t->types[q]);
    free(t->reqs);
    free(t->types);
    t->n = 0;
    t->types = NULL;
    t->reqs = NULL;
    return err == MPI_SUCCESS ? werr : err;
}
