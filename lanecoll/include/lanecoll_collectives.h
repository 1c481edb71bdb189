/*
 * lanecoll_collectives.h - the MPI collectives lanecoll decomposes (the ten regular ones
 * and the vector collectives Allgatherv, Gatherv, Scatterv), as
 * X-macros, and the name helpers that turn a line of lanecoll_algorithms.def into the
 * functions it stands for. Header only (no MPI call, no library needed): the benchmark
 * (bench/mpi/coll_catalog.h) uses it even in builds without lanecoll.
 *
 *   LC_COLLECTIVES(X)  one X(coll, block, rooted, reduction, root_result, vector) per
 *                      collective:
 *                      coll         lower-case MPI name without MPI_ ("allreduce")
 *                      block        1: the count is a per-process block (gather, ...)
 *                      rooted       1: the collective has a root argument
 *                      reduction    1: the collective has an MPI_Op argument
 *                      root_result  1: only the root's receive buffer is defined
 *                      vector       1: per-process counts and displacements (recvcounts
 *                                   and displs, or sendcounts and displs for scatterv)
 *   LC_MPI_<coll>      the MPI spelling (Allreduce, Reduce_scatter_block)
 *   LC_SIG_<coll>      MPI-3 parameters without the communicator, parenthesised
 *   LC_ARGS_<coll>     their names, parenthesised
 *
 *   LC_FN(PMPI_, allreduce, )       -> PMPI_Allreduce
 *   LC_PUBLIC_FN(allreduce, lane)   -> LC_Allreduce_lane
 *   LC_PARAMS(allreduce)            -> const void *sendbuf, ..., MPI_Op op
 *   LC_ARGS(allreduce)              -> sendbuf, recvbuf, count, datatype, op
 *
 * Adding a collective means one X line and its three LC_*_<coll> macros here; adding an
 * algorithm of an existing collective needs nothing here (see lanecoll_algorithms.def).
 */
#ifndef LANECOLL_COLLECTIVES_H
#define LANECOLL_COLLECTIVES_H

/* clang-format off */
#define LC_COLLECTIVES(X)                  \
    X(bcast, 0, 1, 0, 0, 0)                \
    X(gather, 1, 1, 0, 1, 0)               \
    X(scatter, 1, 1, 0, 0, 0)              \
    X(allgather, 1, 0, 0, 0, 0)            \
    X(alltoall, 1, 0, 0, 0, 0)             \
    X(reduce, 0, 1, 1, 1, 0)               \
    X(allreduce, 0, 0, 1, 0, 0)            \
    X(reduce_scatter_block, 1, 0, 1, 0, 0) \
    X(scan, 0, 0, 1, 0, 0)                 \
    X(exscan, 0, 0, 1, 0, 0)               \
    X(allgatherv, 1, 0, 0, 0, 1)           \
    X(gatherv, 1, 1, 0, 1, 1)              \
    X(scatterv, 1, 1, 0, 0, 1)

#define LC_MPI_bcast Bcast
#define LC_SIG_bcast (void *buffer, int count, MPI_Datatype datatype, int root)
#define LC_ARGS_bcast (buffer, count, datatype, root)

#define LC_MPI_gather Gather
#define LC_SIG_gather (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                       void *recvbuf, int recvcount, MPI_Datatype recvtype, int root)
#define LC_ARGS_gather (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root)

#define LC_MPI_scatter Scatter
#define LC_SIG_scatter LC_SIG_gather
#define LC_ARGS_scatter LC_ARGS_gather

#define LC_MPI_allgather Allgather
#define LC_SIG_allgather (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                          void *recvbuf, int recvcount, MPI_Datatype recvtype)
#define LC_ARGS_allgather (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype)

#define LC_MPI_alltoall Alltoall
#define LC_SIG_alltoall LC_SIG_allgather
#define LC_ARGS_alltoall LC_ARGS_allgather

#define LC_MPI_reduce Reduce
#define LC_SIG_reduce (const void *sendbuf, void *recvbuf, int count, \
                       MPI_Datatype datatype, MPI_Op op, int root)
#define LC_ARGS_reduce (sendbuf, recvbuf, count, datatype, op, root)

#define LC_MPI_allreduce Allreduce
#define LC_SIG_allreduce (const void *sendbuf, void *recvbuf, int count, \
                          MPI_Datatype datatype, MPI_Op op)
#define LC_ARGS_allreduce (sendbuf, recvbuf, count, datatype, op)

#define LC_MPI_reduce_scatter_block Reduce_scatter_block
#define LC_SIG_reduce_scatter_block (const void *sendbuf, void *recvbuf, int recvcount, \
                                     MPI_Datatype datatype, MPI_Op op)
#define LC_ARGS_reduce_scatter_block (sendbuf, recvbuf, recvcount, datatype, op)

#define LC_MPI_scan Scan
#define LC_SIG_scan LC_SIG_allreduce
#define LC_ARGS_scan LC_ARGS_allreduce

#define LC_MPI_exscan Exscan
#define LC_SIG_exscan LC_SIG_allreduce
#define LC_ARGS_exscan LC_ARGS_allreduce

#define LC_MPI_allgatherv Allgatherv
#define LC_SIG_allgatherv (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                           void *recvbuf, const int recvcounts[], const int displs[], \
                           MPI_Datatype recvtype)
#define LC_ARGS_allgatherv (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype)

#define LC_MPI_gatherv Gatherv
#define LC_SIG_gatherv (const void *sendbuf, int sendcount, MPI_Datatype sendtype, \
                        void *recvbuf, const int recvcounts[], const int displs[], \
                        MPI_Datatype recvtype, int root)
#define LC_ARGS_gatherv (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, \
                         recvtype, root)

#define LC_MPI_scatterv Scatterv
#define LC_SIG_scatterv (const void *sendbuf, const int sendcounts[], const int displs[], \
                         MPI_Datatype sendtype, void *recvbuf, int recvcount, \
                         MPI_Datatype recvtype, int root)
#define LC_ARGS_scatterv (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, \
                          recvtype, root)

#define LC_UNPAREN(...) __VA_ARGS__
#define LC_APPLY_(m, a) m a
#define LC_PARAMS(coll) LC_APPLY_(LC_UNPAREN, LC_SIG_##coll)
#define LC_ARGS(coll) LC_APPLY_(LC_UNPAREN, LC_ARGS_##coll)
#define LC_FN__(prefix, mpi, suffix) prefix##mpi##suffix
#define LC_FN_(prefix, mpi, suffix) LC_FN__(prefix, mpi, suffix)
#define LC_FN(prefix, coll, suffix) LC_FN_(prefix, LC_MPI_##coll, suffix)
#define LC_PUBLIC_FN(coll, variant) LC_FN(LC_, coll, _##variant)
/* clang-format on */

#endif /* LANECOLL_COLLECTIVES_H */
