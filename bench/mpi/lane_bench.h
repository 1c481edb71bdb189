/* lane_bench.h - start-up shared by the lane-pattern and multi-collective benchmarks:
 * options, output, meta record, and a node grouping of at least two nodes (both measure
 * traffic between nodes, so one node is an error that says how to emulate more).
 * Include after coll_util.h, binding_mpi.h and coll_nodes.h. */
#ifndef HS_LANE_BENCH_H
#define HS_LANE_BENCH_H

/* Call after MPI_Init. Returns -1 to go on, else the exit code (error already reported). */
static int hs_lane_bench_start(int argc, char **argv, const char *program,
                               const char *version, const hs_option *options,
                               const char *const *out_path, const char *description,
                               int (*check)(int quiet), hs_nodes *nodes)
{
    HB.program = program;
    HB.comm = MPI_COMM_WORLD;
    MPI_Comm_rank(HB.comm, &HB.rank);
    MPI_Comm_size(HB.comm, &HB.size);
    MPI_Comm_set_errhandler(HB.comm, MPI_ERRORS_RETURN);
    int rc = hs_parse_quiet(options, argc, argv, description, check);
    if (rc >= 0) return hs_finish(rc);
    if (!hs_open_out(*out_path)) return hs_finish(1);
    if (hs_write_meta_mpi(HB.out, program, version, options, HB.comm) != 0)
        return hs_finish(1);
    if (hs_nodes_get(HB.comm, nodes) != MPI_SUCCESS) {
        if (HB.rank == 0)
            hs_json_error(HB.out, "cannot determine the nodes of the ranks ('%s')",
                          nodes->override);
        return hs_finish(1);
    }
    if (nodes->nodes < 2) {
        if (HB.rank == 0)
            hs_json_error(HB.out,
                          "%s needs at least 2 nodes, got 1 (%d ranks); emulate nodes "
                          "with LANECOLL_NODE_SIZE=K (e.g. K=%d)",
                          program, HB.size, HB.size > 1 ? HB.size / 2 : 1);
        return hs_finish(1);
    }
    return -1;
}

/* The lane counts k of --lanes: "all" = 1..min_ppn, else a list (1,2,4) whose every k
 * is in 1..min_ppn. Returns how many (*out to free), or -1 after rank 0 wrote the error
 * record. */
static inline int hs_lane_bench_lanes(const char *spec, int min_ppn, int64_t **out)
{
    const char *why = NULL;
    int n;
    *out = NULL;
    if (!strcmp(spec, "all")) {
        *out = malloc(sizeof **out * (size_t)min_ppn);
        for (int i = 0; i < min_ppn; i++) (*out)[i] = i + 1;
        return min_ppn;
    }
    n = hs_counts_parse(spec, 1, out, &why);
    for (int i = 0; i < n && !why; i++)
        if ((*out)[i] < 1 || (*out)[i] > min_ppn)
            why = "each must be between 1 and the fewest processes on a node";
    if (!why) return n;
    if (HB.rank == 0) hs_json_error(HB.out, "--lanes '%s': %s (%d)", spec, why, min_ppn);
    free(*out);
    *out = NULL;
    return -1;
}

#endif
