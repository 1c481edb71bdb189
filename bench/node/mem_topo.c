/* mem_topo.c - see mem_topo.h. */
#define _GNU_SOURCE
#include "mem_topo.h"
#include <hwloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

static hwloc_topology_t topo;

static int64_t mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = 0;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) break;
    if (f) fclose(f);
    return (int64_t)kb * 1024;
}

int mem_topo_read(mem_topo *t)
{
    memset(t, 0, sizeof *t);
    t->mem_available = mem_available();
    if (!topo && (hwloc_topology_init(&topo) || hwloc_topology_load(topo))) return -1;
    /* hwloc 2 has one object type per cache level: take the highest level present. */
    static const hwloc_obj_type_t levels[] = { HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
                                               HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE,
                                               HWLOC_OBJ_L1CACHE };
    for (int l = 0; l < 5 && !t->llc_bytes; l++) {
        int n = hwloc_get_nbobjs_by_type(topo, levels[l]);
        for (int i = 0; i < n; i++) {
            hwloc_obj_t c = hwloc_get_obj_by_type(topo, levels[l], i);
            if (c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION) continue;
            t->llc_bytes = (int64_t)c->attr->cache.size;
            t->llc_total += (int64_t)c->attr->cache.size;
            t->llc_level = (int)c->attr->cache.depth;
        }
    }
    int n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    t->numa_nodes = n < MEM_MAX_NUMA ? n : MEM_MAX_NUMA;
    for (int i = 0; i < t->numa_nodes; i++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, i);
        t->numa_os[i] = (int)node->os_index;
        t->numa_first_cpu[i] = hwloc_bitmap_first(node->cpuset);
        int cpu;
        hwloc_bitmap_foreach_begin(cpu, node->cpuset)
        {
            if (t->numa_ncpus[i] < MEM_MAX_NODE_CPUS)
                t->numa_cpus[i][t->numa_ncpus[i]++] = cpu;
        }
        hwloc_bitmap_foreach_end();
    }
    return t->llc_bytes > 0 ? 0 : -1;
}

void *mem_alloc_bound(size_t bytes, int numa_os)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    hwloc_bitmap_only(set, (unsigned)numa_os);
    void *p = hwloc_alloc_membind(topo, bytes, set, HWLOC_MEMBIND_BIND,
                                  HWLOC_MEMBIND_BYNODESET | HWLOC_MEMBIND_STRICT);
    hwloc_bitmap_free(set);
    return p;
}

void mem_free_bound(void *p, size_t bytes) { hwloc_free(topo, p, bytes); }

int mem_pin_os_cpu(int cpu)
{
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    return pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}
