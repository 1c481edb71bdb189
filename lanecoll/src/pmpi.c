/* Interposition: MPI_Bcast ... MPI_Exscan for unmodified programs (liblanecoll_pmpi.so,
 * LD_PRELOAD or linked before -lmpi). Each wrapper MPI_X first tests whether the
 * settings make X always native (LC_NATIVE_ONLY, select.h), then whether the message
 * size that the tuning table speaks of lies outside every lane/hier rule of X
 * (LC_NATIVE_BYTES; for gather and scatter the size depends on the root, so that test
 * is in the full path), and then tail-calls PMPI_X: loads, compares and no frame, a
 * few ns. Otherwise the out-of-line full path (full_x) asks lc_route_for_bytes
 * whether the settings still settle native, states what MPI would reject and hands
 * over to lc_dispatch (select.c); the algorithms use PMPI_ only, so nothing is
 * intercepted twice.
 * MPI_Init and MPI_Init_thread are intercepted to validate all settings at
 * initialization (MPI_Abort there on an invalid setting or tuning file). */
#include "select.h"

/* Sizes of the predefined datatypes programs pass most, read once in MPI_Init: a
 * predefined handle is never freed, so its size cannot change, and a few compares cost
 * less than PMPI_Type_size (~8 ns on MPICH 4.0, ~10 on Open MPI 4.1), which every call
 * under a tuning table needs for its byte count. Read-only after MPI_Init. */
enum { N_COMMON_TYPES = 8 };
static MPI_Datatype common_type[N_COMMON_TYPES];   /* zero: matches no valid handle */
static int common_size[N_COMMON_TYPES];

static void cache_common_types(void)
{
    const MPI_Datatype types[N_COMMON_TYPES] = { MPI_INT, MPI_DOUBLE, MPI_FLOAT, MPI_BYTE,
                                                 MPI_CHAR, MPI_LONG, MPI_UNSIGNED,
                                                 MPI_LONG_LONG };
    for (int i = 0; i < N_COMMON_TYPES; i++)
        if (PMPI_Type_size(types[i], &common_size[i]) == MPI_SUCCESS)
            common_type[i] = types[i];
}

/* Out of line, so that the wrappers need no stack frame unless a type is not cached. */
static __attribute__((noinline)) long long nbytes_uncached(int count, MPI_Datatype type)
{
    int size = 0;
    if (PMPI_Type_size(type, &size)) return 0;
    return (long long)count * size;
}

static inline __attribute__((always_inline)) long long nbytes(int count, MPI_Datatype type)
{
    if (count <= 0 || type == MPI_DATATYPE_NULL) return 0;
    for (int i = 0; i < N_COMMON_TYPES; i++)
        if (type == common_type[i]) return (long long)count * common_size[i];
    return nbytes_uncached(count, type);
}

static int rank_of(MPI_Comm comm)
{
    int rank = -1;
    if (comm != MPI_COMM_NULL) PMPI_Comm_rank(comm, &rank);
    return rank;
}

int MPI_Init(int *argc, char ***argv)
{
    int err = PMPI_Init(argc, argv);
    if (err == MPI_SUCCESS) {
        cache_common_types();
        lc_select_init(1);
    }
    return err;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    int err = PMPI_Init_thread(argc, argv, required, provided);
    if (err == MPI_SUCCESS) {
        cache_common_types();
        lc_select_init(1);
    }
    return err;
}

static __attribute__((noinline)) int
full_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
           long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_BCAST, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    lc_call call = { LC_BCAST, comm, MPI_OP_NULL, root,
                     lc_args_ok_count(comm, count, datatype) && lc_args_ok_rooted(comm, root) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_bcast_lane(buffer, count, datatype, root, d, 0);
    case LC_LANE_V: return lc_bcast_lane(buffer, count, datatype, root, d, 1);
    case LC_HIER: return lc_bcast_hier(buffer, count, datatype, root, d);
    default: return PMPI_Bcast(buffer, count, datatype, root, comm);
    }
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_BCAST) ||
        LC_NATIVE_BYTES(LC_BCAST, bytes = nbytes(count, datatype)))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return full_bcast(buffer, count, datatype, root, comm, bytes);
}

static __attribute__((noinline)) int
full_gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    long long bytes = rank_of(comm) == root ? nbytes(recvcount, recvtype)
                                            : nbytes(sendcount, sendtype);
    lc_route route = LC_NATIVE_BYTES(LC_GATHER, bytes) ? LC_ROUTE_NATIVE
                                                 : lc_route_for_bytes(LC_GATHER, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    lc_call call = { LC_GATHER, comm, MPI_OP_NULL, root,
                     lc_args_ok_rooted_pair(comm, root, sendcount, sendtype, recvcount,
                                            recvtype, sendbuf == MPI_IN_PLACE) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_gather_lane(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, root, d);
    case LC_HIER: return lc_gather_hier(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                        recvtype, root, d);
    default: return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                recvtype, root, comm);
    }
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_GATHER))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return full_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static __attribute__((noinline)) int
full_scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
             int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    long long bytes = rank_of(comm) == root ? nbytes(sendcount, sendtype)
                                            : nbytes(recvcount, recvtype);
    lc_route route = LC_NATIVE_BYTES(LC_SCATTER, bytes) ? LC_ROUTE_NATIVE
                                                 : lc_route_for_bytes(LC_SCATTER, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    lc_call call = { LC_SCATTER, comm, MPI_OP_NULL, root,
                     lc_args_ok_rooted_pair(comm, root, recvcount, recvtype, sendcount,
                                            sendtype, recvbuf == MPI_IN_PLACE) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_scatter_lane(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, root, d);
    case LC_HIER: return lc_scatter_hier(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                         recvtype, root, d);
    default: return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                 recvtype, root, comm);
    }
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_SCATTER))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    return full_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
}

static __attribute__((noinline)) int
full_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
               long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_ALLGATHER, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    lc_call call = { LC_ALLGATHER, comm, MPI_OP_NULL, -1,
                     lc_args_ok_count(comm, recvcount, recvtype) &&
                     (sendbuf == MPI_IN_PLACE || lc_args_ok_count(comm, sendcount, sendtype)) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_allgather_lane(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, d);
    case LC_HIER: return lc_allgather_hier(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                           recvtype, d);
    default: return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                   recvtype, comm);
    }
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_ALLGATHER) ||
        LC_NATIVE_BYTES(LC_ALLGATHER, bytes = nbytes(recvcount, recvtype)))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return full_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, bytes);
}

static __attribute__((noinline)) int
full_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
              int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
              long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_ALLTOALL, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    lc_call call = { LC_ALLTOALL, comm, MPI_OP_NULL, -1,
                     lc_args_ok_count(comm, recvcount, recvtype) &&
                     (sendbuf == MPI_IN_PLACE || lc_args_ok_count(comm, sendcount, sendtype)) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_alltoall_lane(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                          recvtype, d);
    default: return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
                                  recvtype, comm);
    }
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_ALLTOALL) ||
        LC_NATIVE_BYTES(LC_ALLTOALL, bytes = nbytes(recvcount, recvtype)))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    return full_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, bytes);
}

static __attribute__((noinline)) int
full_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
            MPI_Op op, int root, MPI_Comm comm,
            long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_REDUCE, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    lc_call call = { LC_REDUCE, comm, op, root,
                     lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) &&
                     lc_args_ok_rooted(comm, root) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_reduce_lane(sendbuf, recvbuf, count, datatype, op, root, d, 0);
    case LC_LANE_V: return lc_reduce_lane(sendbuf, recvbuf, count, datatype, op, root, d, 1);
    case LC_HIER: return lc_reduce_hier(sendbuf, recvbuf, count, datatype, op, root, d);
    default: return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    }
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, int root, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_REDUCE) ||
        LC_NATIVE_BYTES(LC_REDUCE, bytes = nbytes(count, datatype)))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return full_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, bytes);
}

static __attribute__((noinline)) int
full_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm,
               long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_ALLREDUCE, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = { LC_ALLREDUCE, comm, op, -1,
                     lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_allreduce_lane(sendbuf, recvbuf, count, datatype, op, d, 0);
    case LC_LANE_V: return lc_allreduce_lane(sendbuf, recvbuf, count, datatype, op, d, 1);
    case LC_HIER: return lc_allreduce_hier(sendbuf, recvbuf, count, datatype, op, d);
    default: return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    }
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_ALLREDUCE) ||
        LC_NATIVE_BYTES(LC_ALLREDUCE, bytes = nbytes(count, datatype)))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return full_allreduce(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}

static __attribute__((noinline)) int
full_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                          long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_REDUCE_SCATTER_BLOCK, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    lc_call call = { LC_REDUCE_SCATTER_BLOCK, comm, op, -1,
                     lc_args_ok_count(comm, recvcount, datatype) && lc_args_ok_op(op) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE:
        return lc_reduce_scatter_block_lane(sendbuf, recvbuf, recvcount, datatype, op, d);
    case LC_HIER:
        return lc_reduce_scatter_block_hier(sendbuf, recvbuf, recvcount, datatype, op, d);
    default:
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    }
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_REDUCE_SCATTER_BLOCK) ||
        LC_NATIVE_BYTES(LC_REDUCE_SCATTER_BLOCK, bytes = nbytes(recvcount, datatype)))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return full_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, bytes);
}

static __attribute__((noinline)) int
full_scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
          MPI_Comm comm,
          long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_SCAN, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = { LC_SCAN, comm, op, -1,
                     lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_scan_lane(sendbuf, recvbuf, count, datatype, op, d, 0);
    case LC_LANE_V: return lc_scan_lane(sendbuf, recvbuf, count, datatype, op, d, 1);
    case LC_HIER: return lc_scan_hier(sendbuf, recvbuf, count, datatype, op, d);
    default: return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    }
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
             MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_SCAN) ||
        LC_NATIVE_BYTES(LC_SCAN, bytes = nbytes(count, datatype)))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return full_scan(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}

static __attribute__((noinline)) int
full_exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
            MPI_Op op, MPI_Comm comm,
            long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_EXSCAN, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = { LC_EXSCAN, comm, op, -1,
                     lc_args_ok_count(comm, count, datatype) && lc_args_ok_op(op) };
    const lc_decomp *d;
    switch (lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d)) {
    case LC_LANE: return lc_exscan_lane(sendbuf, recvbuf, count, datatype, op, d, 0);
    case LC_LANE_V: return lc_exscan_lane(sendbuf, recvbuf, count, datatype, op, d, 1);
    case LC_HIER: return lc_exscan_hier(sendbuf, recvbuf, count, datatype, op, d);
    default: return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    }
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_EXSCAN) ||
        LC_NATIVE_BYTES(LC_EXSCAN, bytes = nbytes(count, datatype)))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return full_exscan(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}
