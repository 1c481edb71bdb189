/* The catalogue: every algorithm with its restrictions and cost, in one table (MPICH
 * style). The dispatcher (prepare.c) checks the restriction flags listed here; the
 * algorithm files assume them. Costs are the paper's best-case figures for p processes
 * on N nodes with n = p/N per node, c elements (per process block for the *gather,
 * scatter, alltoall and reduce_scatter_block collectives). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

typedef struct entry {
    int flags;
    LC_Algorithm info;     /* info.collective == NULL: no such algorithm */
} entry;

#define R_RC (LC_R_REGULAR | LC_R_CONSECUTIVE)

/* Indexed by [collective][variant] so the per-call restriction lookup is one load;
 * the native slots, alltoall's hier and lane_v where there is no regular/vector choice
 * stay empty. */
static const entry catalogue[LC_NCOLL][LC_NVARIANT] = {
    [LC_BCAST][LC_LANE] = { LC_R_REGULAR, { "bcast", "lane", "regular",
      "node scatter(v), N-process bcast of c/n per lane, node allgather(v): "
      "2 ceil(log n) + ceil(log N) rounds, ~2c per process, c into each node" } },
    [LC_BCAST][LC_HIER] = { LC_R_ROOT_LANE, { "bcast", "hier",
      "root's node rank present on every node",
      "bcast over the root's lane, node bcast: ceil(log N) + ceil(log n) rounds" } },
    [LC_GATHER][LC_LANE] = { R_RC, { "gather", "lane", "regular, consecutive",
      "lane gather to the root node, node gather with strided types at the root: "
      "ceil(log N) + ceil(log n) rounds, (p-1)c at the root, zero-copy at the root" } },
    [LC_GATHER][LC_HIER] = { LC_R_CONSECUTIVE | LC_R_ROOT_LANE, { "gather", "hier",
      "consecutive, root's node rank present on every node",
      "node gather, gatherv over the root's lane: ceil(log n) + ceil(log N) rounds" } },
    [LC_SCATTER][LC_LANE] = { R_RC, { "scatter", "lane", "regular, consecutive",
      "node scatter of strided columns at the root, lane scatter: "
      "ceil(log n) + ceil(log N) rounds, (p-1)c out of the root" } },
    [LC_SCATTER][LC_HIER] = { LC_R_CONSECUTIVE | LC_R_ROOT_LANE, { "scatter", "hier",
      "consecutive, root's node rank present on every node",
      "scatterv over the root's lane, node scatter: ceil(log N) + ceil(log n) rounds" } },
    [LC_ALLGATHER][LC_LANE] = { R_RC, { "allgather", "lane", "regular, consecutive",
      "lane allgather into strided blocks, node allgather of strided columns: "
      "ceil(log N) + ceil(log n) rounds, (p-1)c per process, zero-copy, no temporary" } },
    [LC_ALLGATHER][LC_HIER] = { LC_R_CONSECUTIVE, { "allgather", "hier", "consecutive",
      "node gather, allgatherv over node leaders, node bcast of pc: zero-copy" } },
    [LC_ALLTOALL][LC_LANE] = { R_RC, { "alltoall", "lane", "regular, consecutive",
      "lane alltoall of n-block groups, node alltoall of strided columns: "
      "(N-1)nc + (n-1)Nc per process (linear rounds), one temporary of pc" } },
    [LC_REDUCE][LC_LANE] = { LC_R_REGULAR | LC_R_COMMUTATIVE, { "reduce", "lane",
      "regular, commutative op",
      "node reduce_scatter(_block), lane reduce of c/n, node gather(v) to the root" } },
    [LC_REDUCE][LC_HIER] = { LC_R_ROOT_LANE | LC_R_ORDER_OR_COMM, { "reduce", "hier",
      "root's node rank present on every node; consecutive or commutative op",
      "node reduce, reduce over the root's lane: ceil(log n) + ceil(log N) rounds" } },
    [LC_ALLREDUCE][LC_LANE] = { LC_R_REGULAR | LC_R_COMMUTATIVE, { "allreduce", "lane",
      "regular, commutative op",
      "node reduce_scatter(_block), lane allreduce of c/n, node allgather(v): "
      "~2c + 2c/n per process" } },
    [LC_ALLREDUCE][LC_HIER] = { LC_R_ORDER_OR_COMM, { "allreduce", "hier",
      "consecutive or commutative op",
      "node reduce, allreduce over node leaders, node bcast" } },
    [LC_REDUCE_SCATTER_BLOCK][LC_LANE] = { R_RC | LC_R_COMMUTATIVE, {
      "reduce_scatter_block", "lane", "regular, consecutive, commutative op",
      "local block permutation, node reduce_scatter_block, lane reduce_scatter_block; "
      "one temporary of pc" } },
    [LC_REDUCE_SCATTER_BLOCK][LC_HIER] = { LC_R_CONSECUTIVE, { "reduce_scatter_block", "hier",
      "consecutive",
      "node reduce of pc, reduce_scatter over node leaders, node scatter" } },
    [LC_SCAN][LC_LANE] = { R_RC | LC_R_COMMUTATIVE, { "scan", "lane",
      "regular, consecutive, commutative op",
      "node reduce_scatter(_block), lane exscan of c/n, node allgather(v), node scan, "
      "local reduction" } },
    [LC_SCAN][LC_HIER] = { LC_R_CONSECUTIVE, { "scan", "hier", "consecutive",
      "node scan, exscan over the last process of each node, node bcast, "
      "local reduction" } },
    [LC_EXSCAN][LC_LANE] = { R_RC | LC_R_COMMUTATIVE, { "exscan", "lane",
      "regular, consecutive, commutative op",
      "node reduce_scatter(_block), lane exscan of c/n, node allgather(v), node exscan, "
      "local reduction" } },
    [LC_EXSCAN][LC_HIER] = { LC_R_CONSECUTIVE, { "exscan", "hier", "consecutive",
      "node exscan, exscan of node totals over the last processes, node bcast, "
      "local reduction" } },
    [LC_BCAST][LC_LANE_V] = { LC_R_REGULAR, { "bcast", "lane_v", "regular",
      "as lane, with node scatterv and allgatherv even where n divides c "
      "(the paper's irregular nodecomm collectives)" } },
    [LC_REDUCE][LC_LANE_V] = { LC_R_REGULAR | LC_R_COMMUTATIVE, { "reduce", "lane_v",
      "regular, commutative op",
      "as lane, with node reduce_scatter and gatherv even where n divides c" } },
    [LC_ALLREDUCE][LC_LANE_V] = { LC_R_REGULAR | LC_R_COMMUTATIVE, { "allreduce", "lane_v",
      "regular, commutative op",
      "as lane, with node reduce_scatter and allgatherv even where n divides c" } },
    [LC_SCAN][LC_LANE_V] = { R_RC | LC_R_COMMUTATIVE, { "scan", "lane_v",
      "regular, consecutive, commutative op",
      "as lane, with node reduce_scatter and allgatherv even where n divides c" } },
    [LC_EXSCAN][LC_LANE_V] = { R_RC | LC_R_COMMUTATIVE, { "exscan", "lane_v",
      "regular, consecutive, commutative op",
      "as lane, with node reduce_scatter and allgatherv even where n divides c" } },
};

static const char *const coll_names[LC_NCOLL] = {
    "bcast", "gather", "scatter", "allgather", "alltoall", "reduce", "allreduce",
    "reduce_scatter_block", "scan", "exscan"
};
static const char *const variant_names[LC_NVARIANT] = { "native", "lane", "hier", "lane_v" };

const char *lc_coll_name(lc_coll c) { return coll_names[c]; }
const char *lc_variant_name(lc_variant v) { return variant_names[v]; }

int lc_coll_from_name(const char *name)
{
    for (int c = 0; c < LC_NCOLL; c++)
        if (strcmp(name, coll_names[c]) == 0) return c;
    return -1;
}

int lc_variant_from_name(const char *name)
{
    for (int v = 0; v < LC_NVARIANT; v++)
        if (strcmp(name, variant_names[v]) == 0) return v;
    return -1;
}

void lc_variant_list(int c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int v = 0; v < LC_NVARIANT; v++) {
        if (c >= 0 && lc_restrictions((lc_coll)c, (lc_variant)v) < 0) continue;
        int k = snprintf(buf + used, len - used, "%s%s", used ? ", " : "", variant_names[v]);
        if (k < 0 || (size_t)k >= len - used) return;
        used += (size_t)k;
    }
}

int lc_restrictions(lc_coll c, lc_variant v)
{
    if (v == LC_NATIVE) return 0;
    return catalogue[c][v].info.collective ? catalogue[c][v].flags : -1;
}

/* The i-th existing algorithm in (collective, variant) order; NULL past the end. */
const LC_Algorithm *LC_Catalogue_get(int i)
{
    for (int c = 0; c < LC_NCOLL; c++)
        for (int v = 0; v < LC_NVARIANT; v++)
            if (catalogue[c][v].info.collective && i-- == 0) return &catalogue[c][v].info;
    return NULL;
}

int LC_Catalogue_size(void)
{
    int n = 0;
    while (LC_Catalogue_get(n)) n++;
    return n;
}
