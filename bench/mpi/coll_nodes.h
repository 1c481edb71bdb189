/* coll_nodes.h - which node each rank is on, as lanecoll sees it (shared by coll,
 * lane_pattern and multi_coll so that all three agree with the library they measure).
 *
 * With lanecoll linked (its header visible), LC_Decomposition_get is the answer, so the
 * benchmark reports exactly the decomposition the algorithms use. Without lanecoll the
 * same rule is applied here: LANECOLL_NODE_SIZE=K makes world ranks 0..K-1 node 0, K..2K-1
 * node 1, ... (the last node may be smaller); otherwise MPI_COMM_TYPE_SHARED. (Only the
 * K rule is re-implemented; LANECOLL_NODE_SIZES / _NODE_NAME_SEP need lanecoll.)
 *
 * Collective over comm. Cost with lanecoll: its decomposition (built once per
 * communicator); without: one MPI_Allgather of 2 ints per rank, plus a communicator
 * split when no override is set, and O(p^2) local work
 * (fine for the few thousand ranks a benchmark launch has).
 */
#ifndef HS_COLL_NODES_H
#define HS_COLL_NODES_H
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "jsonl.h"

/* HS_HAVE_LANECOLL comes from bench/mpi/CMakeLists.txt (lanecoll linked or not); the
 * header search is the fallback for other builds. */
#ifndef HS_HAVE_LANECOLL
#if defined(__has_include)
#if __has_include("lanecoll.h")
#define HS_HAVE_LANECOLL 1
#endif
#endif
#endif
#ifndef HS_HAVE_LANECOLL
#define HS_HAVE_LANECOLL 0
#endif
#if HS_HAVE_LANECOLL
#include "lanecoll.h"
#endif

typedef struct {
    int nodes, ppn; /* ppn: processes per node when regular, else the largest */
    int min_ppn, max_ppn;
    int regular, consecutive;
    int node_index, node_rank; /* of this process */
    int *node_of, *rank_on;    /* [size]: node index and node rank of every comm rank */
    const char *override;      /* "LANECOLL_NODE_SIZE=2" etc., "" when MPI decides */
    char override_buf[128];
} hs_nodes;

/* The node override in force (environment), as NAME=VALUE, or "". */
static inline const char *hs_nodes_override(char *buf, size_t len)
{
    static const char *vars[] = { "LANECOLL_NODE_SIZE", "LANECOLL_NODE_SIZES",
                                  "LANECOLL_NODE_NAME_SEP" };
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            snprintf(buf, len, "%s=%s", vars[i], v);
            return buf;
        }
    }
    buf[0] = '\0';
    return buf;
}

/* This process's (node index, node rank) without lanecoll. Returns MPI_SUCCESS or an
 * MPI error (an override this fallback cannot interpret: MPI_ERR_ARG). */
static inline int hs_nodes_local(MPI_Comm comm, int *node, int *noderank)
{
    int wrank, wsize, rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Comm_rank(comm, &rank);
    const char *k = getenv("LANECOLL_NODE_SIZE");
    if ((getenv("LANECOLL_NODE_SIZES") && *getenv("LANECOLL_NODE_SIZES")) ||
        (getenv("LANECOLL_NODE_NAME_SEP") && *getenv("LANECOLL_NODE_NAME_SEP")))
        return MPI_ERR_ARG;
    int color;
    if (k && *k) {
        char *end;
        long kk = strtol(k, &end, 10);
        if (*end || kk <= 0) return MPI_ERR_ARG;
        color = (int)(wrank / kk);
    } else {
        MPI_Comm shared;
        int rc =
            MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared);
        if (rc != MPI_SUCCESS) return rc;
        int lowest = rank; /* node colour = lowest comm rank on the node */
        MPI_Allreduce(&rank, &lowest, 1, MPI_INT, MPI_MIN, shared);
        MPI_Comm_free(&shared);
        color = lowest;
    }
    /* Node index: colours ordered by their lowest rank; node rank: order inside. */
    int size;
    MPI_Comm_size(comm, &size);
    int *colors = malloc(sizeof(int) * (size_t)size);
    if (!colors) return MPI_ERR_NO_MEM;
    MPI_Allgather(&color, 1, MPI_INT, colors, 1, MPI_INT, comm);
    int nr = 0; /* node rank: ranks of our colour below us */
    for (int r = 0; r < rank; r++)
        if (colors[r] == color) nr++;
    /* node index: distinct colours whose lowest rank lies below our colour's lowest */
    int mylowest = rank;
    for (int q = 0; q < size; q++)
        if (colors[q] == color) {
            mylowest = q;
            break;
        }
    int index = 0;
    for (int r = 0; r < mylowest; r++) {
        int first = 1;
        for (int q = 0; q < r; q++)
            if (colors[q] == colors[r]) {
                first = 0;
                break;
            }
        if (first) index++;
    }
    free(colors);
    *node = index;
    *noderank = nr;
    return MPI_SUCCESS;
}

/* Fills *d for comm (collective). Returns MPI_SUCCESS or an MPI error code. */
static inline int hs_nodes_get(MPI_Comm comm, hs_nodes *d)
{
    memset(d, 0, sizeof *d);
    d->override = hs_nodes_override(d->override_buf, sizeof d->override_buf);
    int size, rank, pair[2];
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    int *count = calloc((size_t)size, sizeof(int));
    d->node_of = malloc(sizeof(int) * (size_t)size);
    d->rank_on = malloc(sizeof(int) * (size_t)size);
    if (!count || !d->node_of || !d->rank_on) return MPI_ERR_NO_MEM;
#if HS_HAVE_LANECOLL
    /* lanecoll's own tables: no exchange here (an MPI_Allgather over comm is O(p^2)
     * messages with a ring algorithm, 34 s of CPU at 1152 ranks under SimGrid). */
    int rc = LC_Decomposition_ranks(comm, d->node_of, d->rank_on);
    if (rc != MPI_SUCCESS) return rc;
    pair[0] = d->node_of[rank];
    pair[1] = d->rank_on[rank];
#else
    int rc = hs_nodes_local(comm, &pair[0], &pair[1]);
    if (rc != MPI_SUCCESS) return rc;
    int *all = malloc(sizeof(int) * 2 * (size_t)size);
    if (!all) return MPI_ERR_NO_MEM;
    MPI_Allgather(pair, 2, MPI_INT, all, 2, MPI_INT, comm);
    for (int r = 0; r < size; r++) {
        d->node_of[r] = all[2 * r];
        d->rank_on[r] = all[2 * r + 1];
    }
    free(all);
#endif
    d->consecutive = 1;
    for (int r = 0; r < size; r++) {
        count[d->node_of[r]]++;
        if (d->node_of[r] >= d->nodes) d->nodes = d->node_of[r] + 1;
        if (r > 0 && d->node_of[r] < d->node_of[r - 1]) d->consecutive = 0;
        if (r > 0 && d->node_of[r] != d->node_of[r - 1] &&
            d->node_of[r] != d->node_of[r - 1] + 1)
            d->consecutive = 0;
    }
    d->min_ppn = size;
    for (int n = 0; n < d->nodes; n++) {
        if (count[n] < d->min_ppn) d->min_ppn = count[n];
        if (count[n] > d->max_ppn) d->max_ppn = count[n];
    }
    d->regular = d->min_ppn == d->max_ppn;
    d->ppn = d->max_ppn;
    d->node_index = pair[0];
    d->node_rank = pair[1];
    free(count);
    return MPI_SUCCESS;
}

/* The comm rank on `node` with node rank `noderank`, or -1 when there is none. */
static inline int hs_nodes_rank_of(const hs_nodes *d, int size, int node, int noderank)
{
    for (int r = 0; r < size; r++)
        if (d->node_of[r] == node && d->rank_on[r] == noderank) return r;
    return -1;
}

/* The decomposition's part of a record's params object: nodes, ppn, p (ranks), regular,
 * node_override (the same keys in every record of coll, lane_pattern and multi_coll).
 */
static inline void hs_nodes_params(hs_json *j, const hs_nodes *d, int p)
{
    hs_json_int(j, "nodes", d->nodes);
    hs_json_int(j, "ppn", d->ppn);
    hs_json_int(j, "p", p);
    hs_json_bool(j, "regular", d->regular);
    hs_json_str(j, "node_override", d->override);
}

static inline void hs_nodes_free(hs_nodes *d)
{
    free(d->node_of);
    free(d->rank_on);
    d->node_of = d->rank_on = NULL;
}

#endif
