/* The k-ported tree over the nodes of the non-pipelined k-lane algorithms (paper,
 * section 5, "Non-pipelined tree algorithms"; bcast_kported, scatter_kported,
 * gather_kported).
 *
 * k = the fewest processes on a node (min_ppn): node rank j < k is port j of its node.
 * The tree splits intervals of node indices: the root's node holds [0, N); in every
 * round the holder of an interval of length L > 1 cuts it into min(k+1, L) nearly
 * equal parts (the first L mod (k+1) one longer), keeps the part containing itself and
 * hands each other part to that part's first node, over its ports 0, 1, ... in part
 * order (port j of the holder to node rank j of the receiver, i.e. over lane j). The
 * receiver holds that part from then on. So every node receives once, a holder's
 * subtree is a contiguous interval of nodes (contiguous data for scatter and gather on
 * consecutive communicators), and all nodes have their data after
 * ceil(log_{k+1} N) rounds (k = 1: a binomial-like tree over the nodes).
 *
 * Every node walks the splits from the top (O(log N) work, no communication). */
#include <stdlib.h>

#include "internal.h"

int lc_ktree_build(const lc_decomp *d, int root_node, lc_ktree *t)
{
    int N = d->nnodes, k = d->min_ppn, h = d->node_index;
    int a = 0, b = N, H = root_node, round = 0;
    t->k = k;
    t->parent = -1;
    t->recv_port = -1;
    t->nsends = 0;
    t->first = 0; /* the root node's subtree: all nodes */
    t->last = N;
    t->sends = malloc(sizeof *t->sends * (size_t)(N > 1 ? N - 1 : 1));
    if (!t->sends) return MPI_ERR_NO_MEM;
    while (b - a > 1) {
        int L = b - a, m = L < k + 1 ? L : k + 1, base = L / m, extra = L % m;
        int at = a, port = 0, qa = a, qb = b, next_holder = H;
        for (int q = 0; q < m; q++) {
            int pa = at, pb = at + base + (q < extra);
            at = pb;
            if (H >= pa && H < pb) { /* the holder's own part */
                if (H == h || (h >= pa && h < pb)) qa = pa, qb = pb, next_holder = H;
                continue;
            }
            if (H == h) {
                lc_ktree_send *s = &t->sends[t->nsends++];
                s->round = round;
                s->port = port;
                s->node = pa;
                s->first = pa;
                s->last = pb;
            } else if (h >= pa && h < pb) {
                qa = pa, qb = pb, next_holder = pa;
                if (pa == h) {
                    t->parent = H;
                    t->recv_port = port;
                    t->first = pa; /* h's subtree: the part it receives */
                    t->last = pb;
                }
            }
            port++;
        }
        a = qa, b = qb, H = next_holder, round++;
    }
    return MPI_SUCCESS;
}

int lc_ktree_blocks(const lc_decomp *d, int first, int last)
{
    return d->node_first[last - 1] + d->node_sizes[last - 1] - d->node_first[first];
}

int lc_ktree_parts_type(const lc_decomp *d, const lc_ktree *t, int port, int base,
                        int count, MPI_Datatype type, MPI_Datatype *out, int *nblocks)
{
    int n = 0;
    MPI_Aint blk = count * lc_extent(type);
    *nblocks = 0;
    *out = MPI_DATATYPE_NULL;
    for (int i = 0; i < t->nsends; i++) n += t->sends[i].port == port;
    if (n == 0) return MPI_SUCCESS;
    int *lens = malloc(sizeof(int) * (size_t)n);
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)n);
    if (!lens || !displs) {
        free(lens);
        free(displs);
        return MPI_ERR_NO_MEM;
    }
    n = 0;
    for (int i = 0; i < t->nsends; i++) {
        const lc_ktree_send *s = &t->sends[i];
        if (s->port != port) continue;
        int b = lc_ktree_blocks(d, s->first, s->last);
        lens[n] = b * count;
        displs[n++] = (d->node_first[s->first] - base) * blk;
        *nblocks += b;
    }
    int err = PMPI_Type_create_hindexed(n, lens, displs, type, out);
    if (err == MPI_SUCCESS) err = PMPI_Type_commit(out);
    free(lens);
    free(displs);
    return err;
}

int lc_ktree_holder_post(const lc_decomp *d, const lc_ktree *t, int holder, char *B,
                         int cnt, MPI_Datatype T, int base, int collect, MPI_Request *reqs,
                         int *nr)
{
    int n = d->node_size, err = MPI_SUCCESS;
    MPI_Aint blk = cnt * lc_extent(T);
    char *mine = B + (d->node_first[d->node_index] - base) * blk;
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        if (i == holder) continue;
        err = collect ? PMPI_Irecv(mine + i * blk, cnt, T, i, LC_KTREE_TAG_OWN, d->nodecomm,
                                   &reqs[(*nr)++])
                      : PMPI_Isend(mine + i * blk, cnt, T, i, LC_KTREE_TAG_OWN, d->nodecomm,
                                   &reqs[(*nr)++]);
        if (err != MPI_SUCCESS || i >= t->k) continue;
        MPI_Datatype parts;
        int nb;
        err = lc_ktree_parts_type(d, t, i, base, cnt, T, &parts, &nb);
        if (err == MPI_SUCCESS && nb > 0) {
            err = collect ? PMPI_Irecv(B, 1, parts, i, LC_KTREE_TAG_PARTS, d->nodecomm,
                                       &reqs[(*nr)++])
                          : PMPI_Isend(B, 1, parts, i, LC_KTREE_TAG_PARTS, d->nodecomm,
                                       &reqs[(*nr)++]);
            PMPI_Type_free(&parts);
        }
    }
    return err;
}
