/* bcast_lane_v: the full-lane bcast of bcast_lane.c with the vector node collectives
 * even where the n processes of a node divide the count (the paper's "irregular
 * nodecomm collectives", often faster). Restrictions: as bcast_lane. */
#include "../internal.h"

int lc_bcast_lane_v(void *buf, int count, MPI_Datatype type, int root, const lc_decomp *d)
{
    return lc_bcast_full_lane(buf, count, type, root, d, 1);
}
