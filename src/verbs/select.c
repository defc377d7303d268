/* select.c -- which RDMA device and port a process uses: every port of
 * every device is a candidate, described by its state and by whether the
 * device hangs off the PCI bus near this process's CPUs (hwloc); the
 * choice itself is a pure function of that list, so unit tests hand it
 * any list they like.  The same for a RoCE port's GID. */
#include "config.h"

#include <errno.h>
#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "verbs.h"

/* Names of the devices in c, for reasons ("mlx5_0,mlx5_1"). */
static void names(const struct acis_ud_cand *c, int n, char *out, size_t len)
{
    size_t off = 0;
    out[0] = '\0';
    for (int i = 0; i < n && off < len; i++)
        if (i == 0 || strcmp(c[i].name, c[i - 1].name) != 0)
            off += (size_t)snprintf(out + off, len - off, "%s%s", off ? "," : "", c[i].name);
}

/* Near 2, unknown 1, far 0. */
static int rank(const struct acis_ud_cand *c)
{
    return c->near > 0 ? 2 : c->near < 0 ? 1 : 0;
}

int acis_ud_choose(const struct acis_ud_cand *c, int n, const char *dev, int port,
                   char *why, size_t whylen)
{
    int any_dev = !dev || !*dev || strcasecmp(dev, "auto") == 0;
    int named = 0, ported = 0, best = -1;
    char have[128];
    if (n <= 0) {
        snprintf(why, whylen, "verbs: no RDMA device found");
        return -1;
    }
    for (int i = 0; i < n; i++) {
        if (!any_dev && strcmp(c[i].name, dev) != 0)
            continue;
        named++;
        if (port && c[i].port != port)
            continue;
        ported++;
        if (!c[i].active)
            continue;
        if (best < 0 || rank(&c[i]) > rank(&c[best]))
            best = i;
    }
    if (best >= 0)
        return best;
    names(c, n, have, sizeof have);
    if (!named)
        snprintf(why, whylen, "verbs: no RDMA device named %s (present: %s)", dev, have);
    else if (!ported)
        snprintf(why, whylen, "verbs: %s has no port %d", any_dev ? have : dev, port);
    else if (port)
        snprintf(why, whylen, "verbs: port %d of %s is not active", port, any_dev ? have : dev);
    else
        snprintf(why, whylen, "verbs: no active port on %s", any_dev ? have : dev);
    return -1;
}

static int zero_gid(const union ibv_gid *g)
{
    static const uint8_t zero[16];
    return memcmp(g->raw, zero, sizeof zero) == 0;
}

int acis_ud_gid_ipv4(const union ibv_gid *g)
{
    static const uint8_t prefix[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
    return memcmp(g->raw, prefix, sizeof prefix) == 0;
}

int acis_ud_pick_gid(const struct ibv_gid_entry *e, int n)
{
    int best = -1, score = 0;
    for (int i = 0; i < n; i++) {
        if (zero_gid(&e[i].gid))
            continue;
        int v2 = e[i].gid_type == IBV_GID_TYPE_ROCE_V2;
        int sc = v2 && acis_ud_gid_ipv4(&e[i].gid) ? 3 : v2 ? 2 : 1;
        if (sc > score) {
            best = i;
            score = sc;
        }
    }
    return best;
}

static int by_name(const void *a, const void *b)
{
    const struct acis_ud_cand *x = a, *y = b;
    int d = strcmp(x->name, y->name);
    return d ? d : (int)x->port - (int)y->port;
}

/* 1 if dev's CPUs meet ours, 0 if not, -1 if hwloc cannot tell. */
static int nearness(hwloc_topology_t topo, hwloc_cpuset_t mine, struct ibv_device *dev)
{
    if (!topo || !mine)
        return -1;
    hwloc_cpuset_t set = hwloc_bitmap_alloc();
    int r = -1;
    if (set && hwloc_ibv_get_device_cpuset(topo, dev, set) == 0 &&
        !hwloc_bitmap_isequal(set, hwloc_topology_get_complete_cpuset(topo)))
        r = hwloc_bitmap_intersects(set, mine);
    hwloc_bitmap_free(set);
    return r;
}

int acis_ud_candidates(struct acis_ud_cand *c, int max, char *why, size_t whylen)
{
    int ndev = 0, n = 0;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    if (!list) {                       /* no RDMA subsystem in this kernel */
        snprintf(why, whylen, "verbs: no RDMA device found (ibv_get_device_list: %s)",
                 strerror(errno));
        return -1;
    }
    hwloc_topology_t topo = NULL;
    hwloc_cpuset_t mine = NULL;
    if (ndev > 0 && hwloc_topology_init(&topo) == 0) {
        if (hwloc_topology_load(topo) != 0) {
            hwloc_topology_destroy(topo);
            topo = NULL;
        } else if ((mine = hwloc_bitmap_alloc()) &&
                   hwloc_get_cpubind(topo, mine, HWLOC_CPUBIND_PROCESS) != 0) {
            hwloc_bitmap_free(mine);
            mine = NULL;
        }
    }
    for (int d = 0; d < ndev && n < max; d++) {
        struct ibv_context *ctx = ibv_open_device(list[d]);
        struct ibv_device_attr attr;
        if (!ctx)
            continue;
        if (ibv_query_device(ctx, &attr) == 0) {
            int near = nearness(topo, mine, list[d]);
            for (int p = 1; p <= attr.phys_port_cnt && n < max; p++) {
                struct ibv_port_attr pa;
                if (ibv_query_port(ctx, (uint8_t)p, &pa) != 0)
                    continue;
                snprintf(c[n].name, sizeof c[n].name, "%s", ibv_get_device_name(list[d]));
                c[n].port = (uint8_t)p;
                c[n].active = pa.state == IBV_PORT_ACTIVE;
                c[n].near = (int8_t)near;
                n++;
            }
        }
        ibv_close_device(ctx);
    }
    if (mine)
        hwloc_bitmap_free(mine);
    if (topo)
        hwloc_topology_destroy(topo);
    ibv_free_device_list(list);
    qsort(c, (size_t)n, sizeof *c, by_name);
    return n;
}
