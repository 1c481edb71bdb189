#define _GNU_SOURCE
#include "binding.h"
#include "timer.h"
#include <errno.h>
#include <hwloc.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The affinity mask of the calling thread as a malloc'd list of OS CPU indices.
 * The kernel refuses a mask shorter than its own (EINVAL), so grow until it fits. */
static int read_affinity(int **cpus, int *ncpus)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF);
    int max = conf > 0 ? (int)conf : 64;
    for (;;) {
        cpu_set_t *set = CPU_ALLOC(max);
        size_t bytes = CPU_ALLOC_SIZE(max);
        if (!set) return -1;
        CPU_ZERO_S(bytes, set);
        if (sched_getaffinity(0, bytes, set) == 0) {
            int n = CPU_COUNT_S(bytes, set), k = 0;
            int *list = malloc(sizeof *list * (n > 0 ? n : 1));
            if (!list) {
                CPU_FREE(set);
                return -1;
            }
            for (int c = 0; c < max && k < n; c++)
                if (CPU_ISSET_S(c, bytes, set)) list[k++] = c;
            CPU_FREE(set);
            *cpus = list;
            *ncpus = k;
            return 0;
        }
        CPU_FREE(set);
        if (errno != EINVAL || max > (1 << 20)) return -1;
        max *= 2;
    }
}

/* OS index of the object of type t that contains obj (obj itself included), or -1. */
static int enclosing_os_index(hwloc_obj_t obj, hwloc_obj_type_t t)
{
    for (; obj; obj = obj->parent)
        if (obj->type == t)
            return obj->os_index == HWLOC_UNKNOWN_INDEX ? -1 : (int)obj->os_index;
    return -1;
}

/* Core, package and NUMA node that hold every CPU of the mask (-1 where they differ). */
static int locate(const int *cpus, int ncpus, int *core, int *socket, int *numa)
{
    hwloc_topology_t topo;
    *core = *socket = *numa = -1;
    if (hwloc_topology_init(&topo) != 0) return -1;
    if (hwloc_topology_load(topo) != 0) {
        hwloc_topology_destroy(topo);
        return -1;
    }
    hwloc_bitmap_t set = hwloc_bitmap_alloc(), nodes = hwloc_bitmap_alloc();
    for (int i = 0; i < ncpus; i++) hwloc_bitmap_set(set, (unsigned)cpus[i]);
    /* Smallest object whose cpuset contains the mask: a PU or core when bound to one core;
     * the package or machine when the mask spans several (then no core encloses it). */
    hwloc_obj_t cover = hwloc_get_obj_covering_cpuset(topo, set);
    if (cover) {
        *core = enclosing_os_index(cover, HWLOC_OBJ_CORE);
        *socket = enclosing_os_index(cover, HWLOC_OBJ_PACKAGE);
    }
    /* NUMA nodes are memory children in hwloc 2, not ancestors: ask for the nodeset local
     * to the mask instead (nodeset bits are OS indices). */
    if (hwloc_cpuset_to_nodeset(topo, set, nodes) == 0 && hwloc_bitmap_weight(nodes) == 1)
        *numa = hwloc_bitmap_first(nodes);
    hwloc_bitmap_free(nodes);
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return 0;
}

void hs_binding_read_lane(hs_binding *b)
{
    /* The lab's per-process lane wrapper (launch/launcher.py LAB_LANE_WRAPPER) names the
       one lane this process may use; the placement check compares it with the plan. */
    const char *lane = getenv("HPCSCOPE_LAB_LANE");
    snprintf(b->lane, sizeof b->lane, "%s", lane ? lane : "");
}

int hs_binding_read(hs_binding *b, int rank)
{
    memset(b, 0, sizeof *b);
    b->rank = rank;
    b->core = b->socket = b->numa = -1;
    /* Under SLURM the node is the one SLURM named: test clusters run several slurmd on
       one machine, where gethostname() would make two nodes look like one. */
    const char *slurm_node = getenv("SLURMD_NODENAME");
    if (slurm_node && *slurm_node)
        snprintf(b->host, sizeof b->host, "%s", slurm_node);
    else if (gethostname(b->host, sizeof b->host) != 0)
        return -1;
    b->host[sizeof b->host - 1] = '\0';
    hs_binding_read_lane(b);
    if (read_affinity(&b->cpus, &b->ncpus) != 0) return -1;
    if (locate(b->cpus, b->ncpus, &b->core, &b->socket, &b->numa) != 0) {
        hs_binding_free(b);
        errno = ENODEV; /* hwloc could not load the topology */
        return -1;
    }
    return 0;
}

void hs_binding_free(hs_binding *b)
{
    free(b->cpus);
    b->cpus = NULL;
    b->ncpus = 0;
}

static void int_or_null(hs_json *j, const char *key, int v)
{
    if (v < 0)
        hs_json_null(j, key);
    else
        hs_json_int(j, key, v);
}

void hs_binding_json(hs_json *j, const char *key, const hs_binding *b)
{
    hs_json_open_object(j, key);
    hs_json_int(j, "rank", b->rank);
    hs_json_str(j, "host", b->host);
    hs_json_int_array(j, "cpus", b->cpus, (size_t)b->ncpus);
    int_or_null(j, "core", b->core);
    int_or_null(j, "socket", b->socket);
    int_or_null(j, "numa", b->numa);
    /* only on the lab, with per-process lanes */
    if (b->lane[0]) hs_json_str(j, "lane", b->lane);
    hs_json_close(j);
}

void hs_meta_begin(hs_json *j, const char *benchmark, const char *version)
{
    hs_json_str(j, "schema", HS_SCHEMA);
    hs_json_str(j, "benchmark", benchmark);
    hs_json_str(j, "version", version);
}

/* wtick_s < 0: no MPI clock (programs without MPI). */
static void meta_end(hs_json *j, const hs_option *options, double wtick_s,
                     double wtime_cost_ns)
{
    hs_timer_quality q = hs_timer_probe();
    double tick_ns = q.resolution_ns, read_ns = q.overhead_ns;
    hs_json_open_object(j, "timer");
    hs_json_double(j, "resolution_ns", q.resolution_ns);
    hs_json_double(j, "overhead_ns", q.overhead_ns);
    if (wtick_s >= 0) {
        hs_json_double(j, "wtick_s", wtick_s);
        hs_json_double(j, "wtime_cost_ns", wtime_cost_ns);
        if (wtick_s * 1e9 > tick_ns) tick_ns = wtick_s * 1e9;
        if (wtime_cost_ns > read_ns) read_ns = wtime_cost_ns;
    }
    hs_json_close(j);
    hs_timer_set_facts(tick_ns, read_ns);
    if (options) hs_options_echo(options, j);
}

void hs_meta_end(hs_json *j, const hs_option *options) { meta_end(j, options, -1, 0); }

void hs_meta_end_mpi(hs_json *j, const hs_option *options, double wtick_s,
                     double wtime_cost_ns)
{
    meta_end(j, options, wtick_s, wtime_cost_ns);
}

int hs_write_meta_self(FILE *out, const char *benchmark, const char *version,
                       const hs_option *options)
{
    return hs_write_meta_self_with(out, benchmark, version, options, NULL);
}

int hs_write_meta_self_with(FILE *out, const char *benchmark, const char *version,
                            const hs_option *options, void (*extra)(hs_json *j))
{
    hs_binding b;
    if (hs_binding_read(&b, 0) != 0) {
        hs_json_error(out, "cannot read this process's binding: %s", strerror(errno));
        return -1;
    }
    hs_json j;
    hs_json_begin(&j, "meta");
    hs_meta_begin(&j, benchmark, version);
    hs_json_null(&j, "mpi");
    hs_json_open_array(&j, "ranks");
    hs_binding_json(&j, NULL, &b);
    hs_json_close(&j);
    if (extra) extra(&j);
    hs_meta_end(&j, options);
    hs_binding_free(&b);
    return hs_json_emit(&j, out);
}
