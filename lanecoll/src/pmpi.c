/* Interposition: MPI_Bcast ... MPI_Exscan, MPI_Allgatherv, MPI_Gatherv, MPI_Scatterv for
 * unmodified programs (liblanecoll_pmpi.so, LD_PRELOAD or linked before -lmpi). Each wrapper MPI_X first tests whether the
 * settings make X always native (LC_NATIVE_ONLY, select.h), then whether the message
 * size that the tuning table speaks of lies outside every lane/hier rule of X
 * (LC_NATIVE_BYTES; for gather and scatter the size depends on the root, so that test
 * is in the full path), and then tail-calls PMPI_X: loads, compares and no frame, a
 * few ns. Otherwise the out-of-line full path (full_x) asks lc_route_for_bytes
 * whether the settings still settle native, states what MPI would reject and hands
 * over to lc_dispatch (select.c); the algorithms use PMPI_ only, so nothing is
 * intercepted twice.
 * The vector collectives (allgatherv, gatherv, scatterv) measure bytes as the mean block,
 * sum of the counts x type size / p (what the tuning table's min_bytes/max_bytes mean for
 * them): an O(p) sum, done only past LC_NATIVE_ONLY. Gatherv and scatterv broadcast the
 * root's value first when the choice or the log needs it (lc_bytes_shared), not when
 * the tuning table picks one algorithm at every size for the communicator's shape.
 * MPI_Init and MPI_Init_thread are intercepted to validate all settings at
 * initialization (MPI_Abort there on an invalid setting or tuning file). */
#include "calls.h"
#include "select.h"

/* Sizes of the predefined datatypes programs pass most, read once in MPI_Init: a
 * predefined handle is never freed, so its size cannot change, and a few compares cost
 * less than PMPI_Type_size (~8 ns on MPICH 4.0, ~10 on Open MPI 4.1), which every call
 * under a tuning table needs for its byte count. Read-only after MPI_Init. */
enum { N_COMMON_TYPES = 8 };
static MPI_Datatype common_type[N_COMMON_TYPES]; /* zero: matches no valid handle */
static int common_size[N_COMMON_TYPES];

static void cache_common_types(void)
{
    const MPI_Datatype types[N_COMMON_TYPES] = { MPI_INT,      MPI_DOUBLE,   MPI_FLOAT,
                                                 MPI_BYTE,     MPI_CHAR,     MPI_LONG,
                                                 MPI_UNSIGNED, MPI_LONG_LONG };
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

static __attribute__((noinline)) int full_bcast(void *buffer, int count,
                                                MPI_Datatype datatype, int root,
                                                MPI_Comm comm, long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_bcast, bytes);
    if (route == LC_ROUTE_NATIVE) return PMPI_Bcast(buffer, count, datatype, root, comm);
    lc_call call = LC_CALL_bcast;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE) return PMPI_Bcast(buffer, count, datatype, root, comm);
    return LC_RUN(bcast, a, d);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_bcast) ||
        LC_NATIVE_BYTES(LC_C_bcast, bytes = nbytes(count, datatype)))
        return PMPI_Bcast(buffer, count, datatype, root, comm);
    return full_bcast(buffer, count, datatype, root, comm, bytes);
}

static __attribute__((noinline)) int full_gather(const void *sendbuf, int sendcount,
                                                 MPI_Datatype sendtype, void *recvbuf,
                                                 int recvcount, MPI_Datatype recvtype,
                                                 int root, MPI_Comm comm)
{
    long long bytes =
        rank_of(comm) == root ? nbytes(recvcount, recvtype) : nbytes(sendcount, sendtype);
    lc_route route = LC_NATIVE_BYTES(LC_C_gather, bytes)
                         ? LC_ROUTE_NATIVE
                         : lc_route_for_bytes(LC_C_gather, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    lc_call call = LC_CALL_gather;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    return LC_RUN(gather, a, d);
}

int MPI_Gather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
               int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_C_gather))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                           comm);
    return full_gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                       comm);
}

static __attribute__((noinline)) int full_scatter(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  int recvcount, MPI_Datatype recvtype,
                                                  int root, MPI_Comm comm)
{
    long long bytes =
        rank_of(comm) == root ? nbytes(sendcount, sendtype) : nbytes(recvcount, recvtype);
    lc_route route = LC_NATIVE_BYTES(LC_C_scatter, bytes)
                         ? LC_ROUTE_NATIVE
                         : lc_route_for_bytes(LC_C_scatter, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            root, comm);
    lc_call call = LC_CALL_scatter;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            root, comm);
    return LC_RUN(scatter, a, d);
}

int MPI_Scatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_C_scatter))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                            root, comm);
    return full_scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
                        comm);
}

static __attribute__((noinline)) int full_allgather(const void *sendbuf, int sendcount,
                                                    MPI_Datatype sendtype, void *recvbuf,
                                                    int recvcount, MPI_Datatype recvtype,
                                                    MPI_Comm comm, long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_allgather, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
    lc_call call = LC_CALL_allgather;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
    return LC_RUN(allgather, a, d);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_allgather) ||
        LC_NATIVE_BYTES(LC_C_allgather, bytes = nbytes(recvcount, recvtype)))
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                              comm);
    return full_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                          bytes);
}

static __attribute__((noinline)) int full_alltoall(const void *sendbuf, int sendcount,
                                                   MPI_Datatype sendtype, void *recvbuf,
                                                   int recvcount, MPI_Datatype recvtype,
                                                   MPI_Comm comm, long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_alltoall, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm);
    lc_call call = LC_CALL_alltoall;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm);
    return LC_RUN(alltoall, a, d);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_alltoall) ||
        LC_NATIVE_BYTES(LC_C_alltoall, bytes = nbytes(recvcount, recvtype)))
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
                             comm);
    return full_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                         bytes);
}

static __attribute__((noinline)) int full_reduce(const void *sendbuf, void *recvbuf,
                                                 int count, MPI_Datatype datatype,
                                                 MPI_Op op, int root, MPI_Comm comm,
                                                 long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_reduce, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    lc_call call = LC_CALL_reduce;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return LC_RUN(reduce, a, d);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, int root, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_reduce) ||
        LC_NATIVE_BYTES(LC_C_reduce, bytes = nbytes(count, datatype)))
        return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
    return full_reduce(sendbuf, recvbuf, count, datatype, op, root, comm, bytes);
}

static __attribute__((noinline)) int full_allreduce(const void *sendbuf, void *recvbuf,
                                                    int count, MPI_Datatype datatype,
                                                    MPI_Op op, MPI_Comm comm,
                                                    long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_allreduce, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = LC_CALL_allreduce;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE) return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return LC_RUN(allreduce, a, d);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_allreduce) ||
        LC_NATIVE_BYTES(LC_C_allreduce, bytes = nbytes(count, datatype)))
        return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
    return full_allreduce(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}

static __attribute__((noinline)) int full_reduce_scatter_block(const void *sendbuf,
                                                               void *recvbuf, int recvcount,
                                                               MPI_Datatype datatype,
                                                               MPI_Op op, MPI_Comm comm,
                                                               long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_reduce_scatter_block, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    lc_call call = LC_CALL_reduce_scatter_block;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return LC_RUN(reduce_scatter_block, a, d);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_reduce_scatter_block) ||
        LC_NATIVE_BYTES(LC_C_reduce_scatter_block, bytes = nbytes(recvcount, datatype)))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm);
    return full_reduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm,
                                     bytes);
}

static __attribute__((noinline)) int full_scan(const void *sendbuf, void *recvbuf,
                                               int count, MPI_Datatype datatype, MPI_Op op,
                                               MPI_Comm comm, long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_scan, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = LC_CALL_scan;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE) return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return LC_RUN(scan, a, d);
}

int MPI_Scan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
             MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_scan) ||
        LC_NATIVE_BYTES(LC_C_scan, bytes = nbytes(count, datatype)))
        return PMPI_Scan(sendbuf, recvbuf, count, datatype, op, comm);
    return full_scan(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}

static __attribute__((noinline)) int full_exscan(const void *sendbuf, void *recvbuf,
                                                 int count, MPI_Datatype datatype,
                                                 MPI_Op op, MPI_Comm comm, long long bytes)
{
    lc_route route = lc_route_for_bytes(LC_C_exscan, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    lc_call call = LC_CALL_exscan;
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, call.args_ok ? bytes : 0, route, &d);
    if (a == LC_NATIVE) return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return LC_RUN(exscan, a, d);
}

int MPI_Exscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
               MPI_Op op, MPI_Comm comm)
{
    long long bytes;
    if (LC_NATIVE_ONLY(LC_C_exscan) ||
        LC_NATIVE_BYTES(LC_C_exscan, bytes = nbytes(count, datatype)))
        return PMPI_Exscan(sendbuf, recvbuf, count, datatype, op, comm);
    return full_exscan(sendbuf, recvbuf, count, datatype, op, comm, bytes);
}

/* Mean block of a vector collective in bytes: sum(counts) x size / p (0 when invalid). */
static long long mean_block(const int *counts, MPI_Datatype type, MPI_Comm comm)
{
    int p = 0;
    long long total = 0;
    if (!counts || PMPI_Comm_size(comm, &p) != MPI_SUCCESS || p <= 0) return 0;
    for (int r = 0; r < p; r++) total += counts[r] > 0 ? counts[r] : 0;
    return nbytes(1, type) * total / p;
}

/* Gatherv/scatterv, before anything else: what the choice needs of the byte measure
 * (lc_bytes_shared), or ROOTED_INVALID when MPI rejects the root or the communicator
 * (the same on every process: native everywhere). LC_BYTES_NATIVE_HERE lets the wrapper
 * call PMPI_ without the argument checks. */
enum { ROOTED_INVALID = -1 };
static int rooted_need(lc_coll c, int root, MPI_Comm comm)
{
    int inter = 1;
    if (!lc_args_ok_rooted(comm, root) ||
        PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return ROOTED_INVALID;
    return (int)lc_bytes_shared(c, comm);
}

/* The byte measure for the choice, as `need` says: the root's mean block broadcast to
 * every process (-1 from the root when its own arguments are invalid: native
 * everywhere), 0 everywhere when the choice for this communicator does not depend on
 * it, or the local view (the root's value at the root, 0 elsewhere). Without the
 * broadcast a root with invalid arguments runs native alone: an erroneous program,
 * whose error MPI reports at the root (aborting under the default handler). */
static long long rooted_mean_block(int need, const int *counts, MPI_Datatype type,
                                   int args_ok_here, int root, MPI_Comm comm)
{
    long long bytes = 0;
    if (need == ROOTED_INVALID) return -1;
    if (need == LC_BYTES_ANY) return rank_of(comm) == root && !args_ok_here ? -1 : 0;
    if (rank_of(comm) == root) bytes = args_ok_here ? mean_block(counts, type, comm) : -1;
    if (need == LC_BYTES_BROADCAST &&
        PMPI_Bcast(&bytes, 1, MPI_LONG_LONG, root, comm) != MPI_SUCCESS)
        return -1;
    return bytes;
}

static __attribute__((noinline)) int full_allgatherv(const void *sendbuf, int sendcount,
                                                     MPI_Datatype sendtype, void *recvbuf,
                                                     const int recvcounts[],
                                                     const int displs[],
                                                     MPI_Datatype recvtype, MPI_Comm comm)
{
    lc_call call = LC_CALL_allgatherv;
    long long bytes = call.args_ok ? mean_block(recvcounts, recvtype, comm) : 0;
    lc_route route = LC_NATIVE_BYTES(LC_C_allgatherv, bytes)
                         ? LC_ROUTE_NATIVE
                         : lc_route_for_bytes(LC_C_allgatherv, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, bytes, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    return LC_RUN(allgatherv, a, d);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_C_allgatherv))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                               recvtype, comm);
    return full_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                           recvtype, comm);
}

static __attribute__((noinline)) int full_gatherv(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  const int recvcounts[],
                                                  const int displs[], MPI_Datatype recvtype,
                                                  int root, MPI_Comm comm)
{
    int need = rooted_need(LC_C_gatherv, root, comm);
    if (need == LC_BYTES_NATIVE_HERE)
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, root, comm);
    lc_call call = LC_CALL_gatherv;
    long long bytes =
        rooted_mean_block(need, recvcounts, recvtype, call.args_ok, root, comm);
    if (bytes < 0) call.args_ok = 0, bytes = 0;
    lc_route route = LC_NATIVE_BYTES(LC_C_gatherv, bytes)
                         ? LC_ROUTE_NATIVE
                         : lc_route_for_bytes(LC_C_gatherv, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, root, comm);
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, bytes, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, root, comm);
    return LC_RUN(gatherv, a, d);
}

int MPI_Gatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_C_gatherv))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, root, comm);
    return full_gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                        root, comm);
}

static __attribute__((noinline)) int full_scatterv(
    const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype,
    void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm)
{
    int need = rooted_need(LC_C_scatterv, root, comm);
    if (need == LC_BYTES_NATIVE_HERE)
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    lc_call call = LC_CALL_scatterv;
    long long bytes =
        rooted_mean_block(need, sendcounts, sendtype, call.args_ok, root, comm);
    if (bytes < 0) call.args_ok = 0, bytes = 0;
    lc_route route = LC_NATIVE_BYTES(LC_C_scatterv, bytes)
                         ? LC_ROUTE_NATIVE
                         : lc_route_for_bytes(LC_C_scatterv, bytes);
    if (route == LC_ROUTE_NATIVE)
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    const lc_decomp *d;
    lc_alg a = lc_dispatch(&call, bytes, route, &d);
    if (a == LC_NATIVE)
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    return LC_RUN(scatterv, a, d);
}

int MPI_Scatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                 MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                 int root, MPI_Comm comm)
{
    if (LC_NATIVE_ONLY(LC_C_scatterv))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                             recvtype, root, comm);
    return full_scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
                         recvtype, root, comm);
}
