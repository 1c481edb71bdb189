/* k-ported gather (paper, section 5, "Non-pipelined tree algorithms"): the scatter of
 * scatter_kported.c backwards.
 *
 * The nodes run the k-ported tree of ktree.c (k = the fewest processes on a node).
 * Every port j < k of a node receives, from node rank j of each of its children (over
 * lane j), the blocks of that child's subtree, into one temporary (the root's node's
 * holder straight into the receive buffer); then every process sends its own block and
 * every port its children's blocks, in one message, to the node's holder (the root on
 * the root's node, else the node rank on which the parent's port receives), which
 * collects them with an hindexed type at their places and sends the node's whole
 * subtree (a contiguous interval of nodes) to its parent.
 *
 * Cost: ceil(log_{k+1} N) rounds across the nodes, plus one node collection per node
 *   (linear at the holder); (p-1)c reach the root, (p-n)c of it through the root
 *   node's k ports, all lanes at once; each node's data cross the network once.
 *   Memory: a holder holds its subtree's blocks, a port its children's blocks.
 * Restrictions: none. Any node sizes (node ranks >= min_ppn are no ports), any root.
 * A subtree's blocks are contiguous only for consecutive ranks: other rank orders run
 * on a renumbered view through reindex.c (a temporary of pc and one local permutation
 * of pc at the root). */
#include <stdlib.h>

#include "../internal.h"

#define TAG 0x4c43
#define TAG_OWN LC_KTREE_TAG_OWN
#define TAG_PARTS LC_KTREE_TAG_PARTS

/* Posts the holder's receives: children of its own port over the lane, own blocks and
 * part bundles from the node (ktree.c). */
static int holder_collect(const lc_decomp *d, const lc_ktree *t, int holder, char *B,
                          int cnt, MPI_Datatype T, int base)
{
    int n = d->node_size, nr = 0, err = MPI_SUCCESS;
    MPI_Aint blk = cnt * lc_extent(T);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * (2 * (size_t)n + (size_t)t->nsends));
    if (!reqs) return MPI_ERR_NO_MEM;
    for (int i = 0; i < t->nsends && err == MPI_SUCCESS; i++) {
        const lc_ktree_send *s = &t->sends[i];
        if (s->port != holder) continue;
        err = PMPI_Irecv(B + (d->node_first[s->first] - base) * blk,
                         lc_ktree_blocks(d, s->first, s->last) * cnt, T, s->node, TAG,
                         d->lanecomm, &reqs[nr++]);
    }
    if (err == MPI_SUCCESS)
        err = lc_ktree_holder_post(d, t, holder, B, cnt, T, base, 1, reqs, &nr);
    int werr = lc_waitall(nr, reqs);
    free(reqs);
    return err != MPI_SUCCESS ? err : werr;
}

static int gather_kported(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                          int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (d->rank == root ? lc_empty(rcount, rtype) : lc_empty(scount, stype))
        return MPI_SUCCESS;
    int root_node = d->rank_node[root], err = MPI_SUCCESS;
    lc_ktree t;
    LC_TRY(lc_ktree_build(d, root_node, &t));
    int holder = d->node_index == root_node ? d->rank_noderank[root] : t.recv_port;
    int base = d->node_first[t.first], nblk = lc_ktree_blocks(d, t.first, t.last);
    void *mem = NULL;

    if (d->node_rank == holder) {
        char *B = rbuf;
        int cnt = rcount;
        MPI_Datatype T = rtype;
        if (d->rank != root) {
            B = lc_tmp_alloc((MPI_Aint)nblk * scount, stype, &mem);
            cnt = scount, T = stype;
            if (!B) err = MPI_ERR_NO_MEM;
        }
        MPI_Aint blk = cnt * lc_extent(T);
        if (err == MPI_SUCCESS && sbuf != MPI_IN_PLACE)
            err = lc_local_copy(sbuf, scount, stype, B + (d->rank - base) * blk, cnt, T);
        if (err == MPI_SUCCESS) err = holder_collect(d, &t, holder, B, cnt, T, base);
        if (err == MPI_SUCCESS && d->rank != root)
            err = PMPI_Send(B, nblk * cnt, T, t.parent, TAG, d->lanecomm);
    } else {
        int nb = 0, nr = 0;
        for (int i = 0; i < t.nsends; i++)
            if (t.sends[i].port == d->node_rank) {
                nb += lc_ktree_blocks(d, t.sends[i].first, t.sends[i].last);
                nr++;
            }
        err = PMPI_Send(sbuf, scount, stype, holder, TAG_OWN, d->nodecomm);
        if (nb > 0 && err == MPI_SUCCESS) {
            char *tmp = lc_tmp_alloc((MPI_Aint)nb * scount, stype, &mem), *at = tmp;
            MPI_Request *reqs = malloc(sizeof(MPI_Request) * (size_t)nr);
            MPI_Aint blk = scount * lc_extent(stype);
            if (!tmp || !reqs) err = MPI_ERR_NO_MEM;
            nr = 0;
            for (int i = 0; i < t.nsends && err == MPI_SUCCESS; i++) {
                const lc_ktree_send *s = &t.sends[i];
                if (s->port != d->node_rank) continue;
                int b = lc_ktree_blocks(d, s->first, s->last);
                err = PMPI_Irecv(at, b * scount, stype, s->node, TAG, d->lanecomm,
                                 &reqs[nr++]);
                at += b * blk;
            }
            if (err == MPI_SUCCESS) err = lc_waitall(nr, reqs);
            if (err == MPI_SUCCESS)
                err = PMPI_Send(tmp, nb * scount, stype, holder, TAG_PARTS, d->nodecomm);
            free(reqs);
        }
    }
    lc_free(mem);
    free(t.sends);
    return err;
}

int lc_gather_kported(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                      int rcount, MPI_Datatype rtype, int root, const lc_decomp *d)
{
    if (!d->consecutive)
        return lc_gather_reindexed(gather_kported, sbuf, scount, stype, rbuf, rcount, rtype,
                                   root, d);
    return gather_kported(sbuf, scount, stype, rbuf, rcount, rtype, root, d);
}
