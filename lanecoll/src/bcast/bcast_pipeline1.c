/* bcast_pipeline1: the single-lane linear pipeline, the baseline of bcast_pipeline
 * (bcast_pipeline.c with k = 1): one pipeline through the node leaders (node rank 0,
 * lane 0), the root's node first; the root feeds its node's leader block by block, and
 * every leader forwards each block to its successor and to the other processes of its
 * node in the same step.
 *
 * Block size: as bcast_pipeline with k = 1 (LANECOLL_PIPELINE_BLOCK or
 *   sqrt(8192 x c x size / (N-1)) bytes, at least 1 KiB).
 * Cost: T + N steps of one block of B elements each, T = ceil(c/B); c into each node
 *   over one lane; the leader sends each block n-1 times inside its node.
 * Restrictions: none. */
#include "../internal.h"

int lc_bcast_pipeline1(void *buf, int count, MPI_Datatype type, int root,
                       const lc_decomp *d)
{
    return lc_bcast_pipelined(buf, count, type, root, d, 1);
}
