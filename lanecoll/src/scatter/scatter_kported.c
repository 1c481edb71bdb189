/* k-ported scatter (paper, section 5, "Non-pipelined tree algorithms").
 *
 * The nodes run the k-ported tree of ktree.c (k = the fewest processes on a node):
 * every node receives, once, the blocks of its subtree (a contiguous interval of
 * nodes) on one process, its holder (the root on the root's node; node rank j when the
 * parent's port j sent it, over lane j). The holder first spreads them on its node: to
 * every process its own block, and to every port j < k, in one message (an hindexed
 * type over the holder's buffer), the parts port j passes on in the following rounds;
 * then every port sends its parts, round by round, to node rank j of its children.
 * The root sends straight from its send buffer; a non-root holder receives its subtree
 * into a temporary, the other ports their parts into one.
 *
 * Cost: ceil(log_{k+1} N) rounds across the nodes, plus one node spread per node (the
 *   holder sends n-1 own blocks and k-1 part bundles, linear); (p-1)c leaves the root,
 *   (p-n)c of it through the root node's k ports, all lanes at once; each node's data
 *   cross the network once. Memory: a holder holds its subtree's blocks, a port its
 *   parts.
 * Restrictions: none. Any node sizes (node ranks >= min_ppn are no ports), any root.
 * A subtree's blocks are contiguous only for consecutive ranks: other rank orders run
 * on a renumbered view through reindex.c (a temporary of pc and one local permutation
 * of pc at the root). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c43
#define TAG_OWN LC_KTREE_TAG_OWN
#define TAG_PARTS LC_KTREE_TAG_PARTS

/* The holder spreads own blocks and part bundles on its node (ktree.c). */
static int holder_spread(const lc_decomp *d, const lc_ktree *t, int holder, const char *B,
                         int cnt, MPI_Datatype T, int base)
{
    int nr = 0;
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * 2 * (size_t)d->node_size);
    if (!reqs) return MPI_ERR_NO_MEM;
    /* sends only: B is read, never written */
    int err = lc_ktree_holder_post(d, t, holder, (char *)B, cnt, T, base, 0, reqs, &nr);
    int werr = lc_waitall(nr, reqs);
    free(reqs);
    return err != MPI_SUCCESS ? err : werr;
}

static int scatter_kported(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                           int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(scount, stype) : lc_empty(rcount, rtype))
        return MPI_SUCCESS;
    int root_node = d->rank_node[root], err = MPI_SUCCESS;
    lc_ktree t;
    LC_TRY(lc_ktree_build(d, root_node, &t));
    int holder = d->node_index == root_node ? d->rank_noderank[root] : t.recv_port;
    int base = d->node_first[t.first], nblk = lc_ktree_blocks(d, t.first, t.last);
    void *mem = NULL;

    if (d->node_rank == holder) {
        const char *B = sbuf;
        int cnt = scount;
        MPI_Datatype T = stype;
        if (d->rank != root) {
            char *tmp = lc_tmp_alloc((MPI_Aint)nblk * rcount, rtype, &mem);
            if (!tmp) err = MPI_ERR_NO_MEM;
            if (err == MPI_SUCCESS)
                err = PMPI_Recv(tmp, nblk * rcount, rtype, t.parent, TAG, d->lanecomm,
                                MPI_STATUS_IGNORE);
            B = tmp, cnt = rcount, T = rtype;
        }
        MPI_Aint blk = cnt * lc_extent(T);
        if (err == MPI_SUCCESS) err = holder_spread(d, &t, holder, B, cnt, T, base);
        if (err == MPI_SUCCESS && rbuf != MPI_IN_PLACE)
            err = lc_local_copy(B + (d->rank - base) * blk, cnt, T, rbuf, rcount, rtype);
        for (int i = 0; i < t.nsends && err == MPI_SUCCESS; i++) {
            const lc_ktree_send *s = &t.sends[i];
            if (s->port != holder) continue;
            err = PMPI_Send(B + (d->node_first[s->first] - base) * blk,
                            lc_ktree_blocks(d, s->first, s->last) * cnt, T, s->node, TAG,
                            d->lanecomm);
        }
    } else {
        err =
            PMPI_Recv(rbuf, rcount, rtype, holder, TAG_OWN, d->nodecomm, MPI_STATUS_IGNORE);
        int nb = 0;
        for (int i = 0; i < t.nsends; i++)
            if (t.sends[i].port == d->node_rank)
                nb += lc_ktree_blocks(d, t.sends[i].first, t.sends[i].last);
        if (nb > 0 && err == MPI_SUCCESS) {
            char *tmp = lc_tmp_alloc((MPI_Aint)nb * rcount, rtype, &mem);
            MPI_Aint blk = rcount * lc_extent(rtype);
            if (!tmp) err = MPI_ERR_NO_MEM;
            if (err == MPI_SUCCESS)
                err = PMPI_Recv(tmp, nb * rcount, rtype, holder, TAG_PARTS, d->nodecomm,
                                MPI_STATUS_IGNORE);
            for (int i = 0; i < t.nsends && err == MPI_SUCCESS; i++) {
                const lc_ktree_send *s = &t.sends[i];
                if (s->port != d->node_rank) continue;
                int b = lc_ktree_blocks(d, s->first, s->last);
                err = PMPI_Send(tmp, b * rcount, rtype, s->node, TAG, d->lanecomm);
                tmp += b * blk;
            }
        }
    }
    lc_free(mem);
    free(t.sends);
    return err;
}

int lc_scatter_kported(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                       int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_scatter_reindexed(scatter_kported, sbuf, scount, stype, rbuf, rcount,
                                    rtype, root, d);
    return scatter_kported(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
