/* The lc_call of every collective, from the MPI parameter names of
 * lanecoll_collectives.h in scope: which collective, op and root, and whether MPI would
 * accept the arguments. Shared by the public LC_ functions (api.c) and the
 * interposition wrappers (pmpi.c), so both check the same. */
#ifndef LANECOLL_CALLS_H
#define LANECOLL_CALLS_H

#include "internal.h"

/* clang-format off */
#define LC_CALL_bcast \
    { LC_C_bcast, comm, MPI_OP_NULL, root, \
      lc_args_ok_count(comm, count, datatype) && lc_args_ok_rooted(comm, root) }
#define LC_CALL_gather \
    { LC_C_gather, comm, MPI_OP_NULL, root, \
      lc_args_ok_rooted_pair(comm, root, sendcount, sendtype, recvcount, recvtype, \
                             sendbuf == MPI_IN_PLACE) }
#define LC_CALL_scatter \
    { LC_C_scatter, comm, MPI_OP_NULL, root, \
      lc_args_ok_rooted_pair(comm, root, recvcount, recvtype, sendcount, sendtype, \
                             recvbuf == MPI_IN_PLACE) }
#define LC_CALL_allgather \
    { LC_C_allgather, comm, MPI_OP_NULL, -1, \
      lc_args_ok_count(comm, recvcount, recvtype) && \
      (sendbuf == MPI_IN_PLACE || lc_args_ok_count(comm, sendcount, sendtype)) }
#define LC_CALL_alltoall \
    { LC_C_alltoall, comm, MPI_OP_NULL, -1, \
      lc_args_ok_count(comm, recvcount, recvtype) && \
      (sendbuf == MPI_IN_PLACE || lc_args_ok_count(comm, sendcount, sendtype)) }
#define LC_CALL_reduce \
    { LC_C_reduce, comm, op, root, \
      lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) && \
      lc_args_ok_rooted(comm, root) }
#define LC_CALL_allreduce \
    { LC_C_allreduce, comm, op, -1, lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) }
#define LC_CALL_reduce_scatter_block \
    { LC_C_reduce_scatter_block, comm, op, -1, \
      lc_args_ok_count(comm, recvcount, datatype) && lc_args_ok_op(op) }
#define LC_CALL_scan \
    { LC_C_scan, comm, op, -1, lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) }
#define LC_CALL_exscan \
    { LC_C_exscan, comm, op, -1, lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) }
#define LC_CALL_allgatherv \
    { LC_C_allgatherv, comm, MPI_OP_NULL, -1, \
      lc_args_ok_counts(comm, recvcounts, displs, recvtype) && \
      (sendbuf == MPI_IN_PLACE || lc_args_ok_count(comm, sendcount, sendtype)) }
#define LC_CALL_gatherv \
    { LC_C_gatherv, comm, MPI_OP_NULL, root, \
      lc_args_ok_rooted_v(comm, root, sendcount, sendtype, recvcounts, displs, recvtype, \
                          sendbuf == MPI_IN_PLACE) }
#define LC_CALL_scatterv \
    { LC_C_scatterv, comm, MPI_OP_NULL, root, \
      lc_args_ok_rooted_v(comm, root, recvcount, recvtype, sendcounts, displs, sendtype, \
                          recvbuf == MPI_IN_PLACE) }
/* clang-format on */

#endif
