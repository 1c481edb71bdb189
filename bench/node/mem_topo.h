/* mem_topo.h - the memory facts mem.c sizes its tests by, read through hwloc: the size of
 * the last-level cache (all instances together: STREAM's "available cache"), the NUMA
 * nodes with their CPUs, and the memory the OS says is available (sizes beyond it are
 * refused, with the limit, instead of swapping or being killed).
 */
#ifndef HS_MEM_TOPO_H
#define HS_MEM_TOPO_H
#include <stddef.h>
#include <stdint.h>

#define MEM_MAX_NUMA 64
#define MEM_MAX_NODE_CPUS 256

typedef struct {
    int64_t llc_bytes; /* one instance of the last-level cache */
    int64_t llc_total; /* all instances */
    int llc_level;
    int numa_nodes;
    int numa_os[MEM_MAX_NUMA];
    int numa_first_cpu[MEM_MAX_NUMA]; /* OS index of the first PU of each node, -1: none */
    int numa_ncpus[MEM_MAX_NUMA];     /* PUs of each node (at most MEM_MAX_NODE_CPUS) */
    int numa_cpus[MEM_MAX_NUMA][MEM_MAX_NODE_CPUS]; /* their OS indexes */
    int64_t mem_available; /* MemAvailable from /proc/meminfo, bytes; 0 when unknown */
} mem_topo;

int mem_topo_read(mem_topo *t);

/* Allocates bytes bound to NUMA node os_index (hwloc membind); free with mem_free_bound. */
void *mem_alloc_bound(size_t bytes, int numa_os);
void mem_free_bound(void *p, size_t bytes);
/* Pins the calling thread to one OS CPU. */
int mem_pin_os_cpu(int cpu);

#endif
