/* cores.c -- how many processing units this node has for the job (hwloc:
 * the PUs the process's cgroup allows, not the ones this rank is bound
 * to), for the spin-or-sleep decision: spinning only pays while every
 * spinner of the node has a core of its own, and a rank bound to one core
 * says nothing about how many cores its node has.  Also the node's shape
 * for acis-info. */
#include "config.h"

#include <hwloc.h>

#include "util.h"

int acis_node_topo(struct acis_node_topo *t)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    int rc = hwloc_topology_load(topo);
    if (rc == 0) {
        hwloc_const_bitmap_t set = hwloc_topology_get_allowed_cpuset(topo);
        t->packages = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE);
        t->numa_nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        t->cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        t->pus = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        t->allowed_pus = set ? hwloc_bitmap_weight(set) : t->pus;
    }
    hwloc_topology_destroy(topo);
    return rc == 0 ? 0 : -1;
}

int acis_cores(void)
{
    struct acis_node_topo t;
    if (acis_node_topo(&t) != 0)
        return 1;
    int n = t.allowed_pus > 0 ? t.allowed_pus : t.pus;
    return n > 0 ? n : 1;
}
