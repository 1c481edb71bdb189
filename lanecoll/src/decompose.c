/* Decomposition of a communicator into node and lane communicators (paper, section 3),
 * cached as a communicator attribute.
 *
 * Built once per communicator, on the first lanecoll call on it (collective): one node
 * split (split_type or the override of node_color.c), one broadcast on the node, one
 * allgather of three ints per process over comm, and three more splits (lanes, node
 * leaders, last process per node). Memory O(size of comm) per process for the rank
 * tables used to locate any root and to check regularity/consecutiveness.
 *
 * No static handle caches: the only process-wide objects are the two keyvals, created
 * once under pthread_once, so concurrent first calls on different communicators under
 * MPI_THREAD_MULTIPLE are safe. The copy callback declines to copy (a duplicate gets its
 * own sub-communicators on first use): sharing them would let a collective on comm and
 * one on its duplicate, which MPI allows concurrently, collide on one sub-communicator.
 * The delete callback frees the sub-communicators. MPI_COMM_WORLD's state is released at
 * MPI_Finalize through an attribute on MPI_COMM_SELF, whose delete callback MPI runs
 * first thing in MPI_Finalize (MPI_Finalized still false in Open MPI and MPICH). SMPI
 * runs it after marking the process finalized, where every attribute call prints a
 * warning per rank; the hook then leaves the state to the process's end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static int state_keyval = MPI_KEYVAL_INVALID;
static int finalize_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t keyval_once = PTHREAD_ONCE_INIT;
static int keyvals_ready; /* release-stored after create_keyvals: skips pthread_once
                             (~10 ns) on every later lookup */

static void free_comm(MPI_Comm *c)
{
    if (*c != MPI_COMM_NULL) PMPI_Comm_free(c);
}

static void decomp_free(lc_decomp *d)
{
    if (!d) return;
    if (d->ordered) { /* the view shares the communicators: its tables only */
        lc_decomp *o = d->ordered;
        free(o->node_first);
        free(o->rank_node);
        free(o->rank_noderank);
        free(o);
    }
    free(d->rank_pos);
    free_comm(&d->nodecomm);
    free_comm(&d->lanecomm);
    free_comm(&d->leadcomm);
    free_comm(&d->lastcomm);
    free(d->node_sizes);
    free(d->node_first);
    free(d->rank_node);
    free(d->rank_noderank);
    free(d);
}

static int state_copy(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out,
                      int *flag)
{
    (void)oldcomm;
    (void)keyval;
    (void)extra;
    (void)in;
    (void)out;
    *flag = 0; /* see the file comment: duplicates build their own decomposition */
    return MPI_SUCCESS;
}

static int state_delete(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    lc_comm_state *s = value;
    if (s) {
        decomp_free(s->decomp);
        free(s);
    }
    return MPI_SUCCESS;
}

static int finalize_hook(MPI_Comm comm, int keyval, void *value, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)value;
    (void)extra;
    void *v;
    int flag = 0, finalized = 0;
    PMPI_Finalized(&finalized);
    if (finalized) return MPI_SUCCESS; /* SMPI, see the file comment */
    if (PMPI_Comm_get_attr(MPI_COMM_WORLD, state_keyval, &v, &flag) == MPI_SUCCESS && flag)
        PMPI_Comm_delete_attr(MPI_COMM_WORLD, state_keyval);
    return MPI_SUCCESS;
}

static void create_keyvals(void)
{
    PMPI_Comm_create_keyval(state_copy, state_delete, &state_keyval, NULL);
    PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, finalize_hook, &finalize_keyval, NULL);
    PMPI_Comm_set_attr(MPI_COMM_SELF, finalize_keyval, NULL);
    __atomic_store_n(&keyvals_ready, 1, __ATOMIC_RELEASE);
}

lc_comm_state *lc_state(MPI_Comm comm)
{
    if (comm == MPI_COMM_NULL) return NULL;
    if (!__atomic_load_n(&keyvals_ready, __ATOMIC_ACQUIRE))
        pthread_once(&keyval_once, create_keyvals);
    void *v;
    int flag = 0;
    if (PMPI_Comm_get_attr(comm, state_keyval, &v, &flag) != MPI_SUCCESS) return NULL;
    if (flag) return v;
    lc_comm_state *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    if (PMPI_Comm_set_attr(comm, state_keyval, s) != MPI_SUCCESS) {
        free(s);
        return NULL;
    }
    return s;
}

/* For a communicator whose ranks are not consecutive over the nodes: rank_pos (the
 * position of every rank in node order: node 0's processes by node rank, then node
 * 1's, ...) and the view `ordered` of the same decomposition with ranks renumbered to
 * those positions (consecutive; it shares the sub-communicators, whose orders - node
 * rank, node index, leaders by comm rank = by node index - are the same). */
static int build_ordered(lc_decomp *d)
{
    int p = d->size, N = d->nnodes;
    lc_decomp *o = calloc(1, sizeof *o);
    d->rank_pos = malloc(sizeof(int) * (size_t)p);
    if (!o || !d->rank_pos) {
        free(o);
        return MPI_ERR_NO_MEM;
    }
    *o = *d;
    o->ordered = NULL;
    o->rank_pos = NULL;
    o->node_first = malloc(sizeof(int) * (size_t)N);
    o->rank_node = malloc(sizeof(int) * (size_t)p);
    o->rank_noderank = malloc(sizeof(int) * (size_t)p);
    d->ordered = o;
    if (!o->node_first || !o->rank_node || !o->rank_noderank) return MPI_ERR_NO_MEM;
    for (int n = 0, at = 0; n < N; n++) {
        o->node_first[n] = at;
        at += d->node_sizes[n];
    }
    for (int r = 0; r < p; r++) {
        int q = o->node_first[d->rank_node[r]] + d->rank_noderank[r];
        d->rank_pos[r] = q;
        o->rank_node[q] = d->rank_node[r];
        o->rank_noderank[q] = d->rank_noderank[r];
    }
    o->rank = d->rank_pos[d->rank];
    o->consecutive = 1;
    return MPI_SUCCESS;
}

/* Node tables from the (first rank of my node, node rank, node size) of every rank. */
static int fill_tables(lc_decomp *d, const int *triples)
{
    int p = d->size;
    int *node_of_first = malloc(sizeof(int) * (size_t)p);
    d->rank_node = malloc(sizeof(int) * (size_t)p);
    d->rank_noderank = malloc(sizeof(int) * (size_t)p);
    if (!node_of_first || !d->rank_node || !d->rank_noderank) {
        free(node_of_first);
        return MPI_ERR_NO_MEM;
    }
    d->nnodes = 0;
    for (int r = 0; r < p; r++)
        node_of_first[r] = triples[3 * r + 1] == 0 ? d->nnodes++ : -1;
    d->node_sizes = malloc(sizeof(int) * (size_t)d->nnodes);
    d->node_first = malloc(sizeof(int) * (size_t)d->nnodes);
    if (!d->node_sizes || !d->node_first) {
        free(node_of_first);
        return MPI_ERR_NO_MEM;
    }
    for (int r = 0; r < p; r++) {
        int n = node_of_first[triples[3 * r]];
        d->rank_node[r] = n;
        d->rank_noderank[r] = triples[3 * r + 1];
        d->node_sizes[n] = triples[3 * r + 2];
        d->node_first[n] = triples[3 * r];
    }
    free(node_of_first);

    d->min_ppn = d->max_ppn = d->node_sizes[0];
    for (int n = 1; n < d->nnodes; n++) {
        if (d->node_sizes[n] < d->min_ppn) d->min_ppn = d->node_sizes[n];
        if (d->node_sizes[n] > d->max_ppn) d->max_ppn = d->node_sizes[n];
    }
    d->regular = d->min_ppn == d->max_ppn;
    d->consecutive = 1;
    for (int r = 0, n = 0, first = 0; r < p; r++) {
        if (r == first + d->node_sizes[n]) first += d->node_sizes[n++];
        if (d->rank_node[r] != n || d->rank_noderank[r] != r - first) d->consecutive = 0;
        if (!d->consecutive) break;
    }
    d->node_index = d->rank_node[d->rank];
    return MPI_SUCCESS;
}

/* Every rank's (first rank of its node, node rank, node size), indexed by comm rank, on
 * every process: gathered in each node, exchanged among the node leaders, broadcast in
 * each node. O(p + N^2) messages for N nodes, whatever the library's allgather does: a
 * ring MPI_Allgather over comm moves O(p^2), and under SimGrid with the NTSLR ring
 * allgather (forced where SMPI's others are unpatched, see launch/smpi_command.py) each
 * one took about 34 s of CPU at 1152 simulated ranks. Needs nodecomm and leadcomm; runs
 * once per communicator. */
static int exchange_triples(lc_decomp *d, int first, int *triples)
{
    int mine[4] = { d->rank, first, d->node_rank, d->node_size };
    int *node = d->node_rank == 0 ? malloc(sizeof(int) * 4 * (size_t)d->node_size) : NULL;
    int err = d->node_rank == 0 && !node ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (err == MPI_SUCCESS)
        err = PMPI_Gather(mine, 4, MPI_INT, node, 4, MPI_INT, 0, d->nodecomm);
    if (err == MPI_SUCCESS && d->node_rank == 0) {
        int leaders, *counts = NULL, *displs = NULL, *all = NULL;
        err = PMPI_Comm_size(d->leadcomm, &leaders);
        if (err == MPI_SUCCESS) {
            counts = malloc(sizeof(int) * (size_t)leaders);
            displs = malloc(sizeof(int) * (size_t)leaders);
            all = malloc(sizeof(int) * 4 * (size_t)d->size);
            if (!counts || !displs || !all) err = MPI_ERR_NO_MEM;
        }
        int block = 4 * d->node_size;
        if (err == MPI_SUCCESS)
            err = PMPI_Allgather(&block, 1, MPI_INT, counts, 1, MPI_INT, d->leadcomm);
        for (int i = 0, at = 0; err == MPI_SUCCESS && i < leaders; at += counts[i++])
            displs[i] = at;
        if (err == MPI_SUCCESS)
            err = PMPI_Allgatherv(node, block, MPI_INT, all, counts, displs, MPI_INT,
                                  d->leadcomm);
        for (int i = 0; err == MPI_SUCCESS && i < d->size; i++)
            memcpy(triples + 3 * all[4 * i], all + 4 * i + 1, sizeof(int) * 3);
        free(counts);
        free(displs);
        free(all);
    }
    free(node);
    if (err != MPI_SUCCESS) return err;
    return PMPI_Bcast(triples, 3 * d->size, MPI_INT, 0, d->nodecomm);
}

static int build(MPI_Comm comm, lc_decomp *d)
{
    int color, use_split_type;
    LC_TRY(PMPI_Comm_size(comm, &d->size));
    LC_TRY(PMPI_Comm_rank(comm, &d->rank));
    if (lc_node_color(comm, &color, &use_split_type) != MPI_SUCCESS)
        PMPI_Abort(comm, 2); /* message printed; a wrong node layout must not run */
    if (use_split_type)
        LC_TRY(PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, d->rank, MPI_INFO_NULL,
                                    &d->nodecomm));
    else
        LC_TRY(PMPI_Comm_split(comm, color, d->rank, &d->nodecomm));
    LC_TRY(PMPI_Comm_rank(d->nodecomm, &d->node_rank));
    LC_TRY(PMPI_Comm_size(d->nodecomm, &d->node_size));

    LC_TRY(PMPI_Comm_split(comm, d->node_rank == 0 ? 0 : MPI_UNDEFINED, d->rank,
                           &d->leadcomm));
    /* Node rank 0 has the lowest comm rank of the node (key = comm rank). */
    int first = d->rank;
    LC_TRY(PMPI_Bcast(&first, 1, MPI_INT, 0, d->nodecomm));
    int *triples = malloc(sizeof(int) * 3 * (size_t)d->size);
    if (!triples) return MPI_ERR_NO_MEM;
    int err = exchange_triples(d, first, triples);
    if (err == MPI_SUCCESS) err = fill_tables(d, triples);
    free(triples);
    if (err != MPI_SUCCESS) return err;

    LC_TRY(PMPI_Comm_split(comm, d->node_rank, d->node_index, &d->lanecomm));
    LC_TRY(PMPI_Comm_split(comm, d->node_rank == d->node_size - 1 ? 0 : MPI_UNDEFINED,
                           d->rank, &d->lastcomm));
    return d->consecutive ? MPI_SUCCESS : build_ordered(d); /* after the splits: shared */
}

const lc_decomp *lc_decomposition_state(MPI_Comm comm, lc_comm_state *s, int *err)
{
    *err = MPI_SUCCESS;
    if (s->decomp) return s->decomp;
    lc_decomp *d = calloc(1, sizeof *d);
    if (!d) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    d->nodecomm = d->lanecomm = d->leadcomm = d->lastcomm = MPI_COMM_NULL;
    *err = build(comm, d);
    if (*err != MPI_SUCCESS) {
        decomp_free(d);
        return NULL;
    }
    s->decomp = d;
    return d;
}

const lc_decomp *lc_decomposition(MPI_Comm comm, int *err)
{
    int inter = 0;
    *err = MPI_ERR_COMM;
    if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return NULL;
    lc_comm_state *s = lc_state(comm);
    if (!s) {
        *err = MPI_ERR_NO_MEM;
        return NULL;
    }
    return lc_decomposition_state(comm, s, err);
}

int LC_Decomposition_get(MPI_Comm comm, LC_Decomposition *out)
{
    int err;
    const lc_decomp *d = lc_decomposition(comm, &err);
    if (!d) return err;
    out->nodes = d->nnodes;
    out->ppn = d->regular ? d->min_ppn : 0;
    out->min_ppn = d->min_ppn;
    out->max_ppn = d->max_ppn;
    out->regular = d->regular;
    out->consecutive = d->consecutive;
    out->node_index = d->node_index;
    out->node_rank = d->node_rank;
    out->node_size = d->node_size;
    return MPI_SUCCESS;
}

int LC_Decomposition_ranks(MPI_Comm comm, int *node_index, int *node_rank)
{
    int err;
    const lc_decomp *d = lc_decomposition(comm, &err);
    if (!d) return err;
    memcpy(node_index, d->rank_node, sizeof(int) * (size_t)d->size);
    memcpy(node_rank, d->rank_noderank, sizeof(int) * (size_t)d->size);
    return MPI_SUCCESS;
}

const char *LC_Fallback_reason(MPI_Comm comm)
{
    int inter = 0;
    if (comm == MPI_COMM_NULL) return NULL;
    if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS) return NULL;
    lc_comm_state *s = lc_state(comm);
    return s && s->reason[0] ? s->reason : NULL;
}
