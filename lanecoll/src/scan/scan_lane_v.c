/* scan_lane_v: the full-lane scan of scan_lane.c with the vector node collectives
 * even where the n processes of a node divide the count (the paper's "irregular
 * nodecomm collectives", often faster). Restrictions: as scan_lane. */
#include "../internal.h"

int lc_scan_lane_v(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
                   const lc_decomp *d)
{
    return lc_scan_full_lane(sbuf, rbuf, count, type, op, d, 1);
}
