/* reduce_lane_v: the full-lane reduce of reduce_lane.c with the vector node collectives
 * even where the n processes of a node divide the count (the paper's "irregular
 * nodecomm collectives", often faster). Restrictions: as reduce_lane. */
#include "../internal.h"

int lc_reduce_lane_v(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                     int root, const lc_decomp *d)
{
    return lc_reduce_full_lane(sbuf, rbuf, count, type, op, root, d, 1);
}
