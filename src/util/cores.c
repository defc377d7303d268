/* cores.c -- how many processing units this process may run on (hwloc,
 * honouring its CPU binding), for the spin-or-sleep decision: spinning
 * only pays while every spinner has a core of its own. */
#include "config.h"

#include <hwloc.h>

#include "util.h"

int acis_cores(void)
{
    hwloc_topology_t topo;
    int n = 0;
    if (hwloc_topology_init(&topo) != 0)
        return 1;
    if (hwloc_topology_load(topo) == 0) {
        hwloc_bitmap_t set = hwloc_bitmap_alloc();
        if (set && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0)
            n = hwloc_bitmap_weight(set);
        if (n <= 0)
            n = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU);
        hwloc_bitmap_free(set);
    }
    hwloc_topology_destroy(topo);
    return n > 0 ? n : 1;
}
