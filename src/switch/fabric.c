/* fabric.c -- switch cores linked into a fabric in one process: builds a
 * topology as one aggregation tree of cores (each core's parent on its
 * ACIS_PORT_UPLINK, each child on a link port of its parent), hands the
 * hosts' packets to their switch, and carries packets between switches
 * through a queue that is drained before acis_fabric_input returns, so no
 * core is ever entered from inside itself.
 *
 * Topologies:
 *   star                              one switch
 *   fattree:leaves=L,spines=S,radix=R L leaves of R/2 host ports; spine 0
 *                                     is the top of the tree (the other
 *                                     spines carry no collective traffic)
 *   torus:XxYxZ                       a switch with one host per node; the
 *                                     tree follows dimension order (z, y,
 *                                     then x) the short way round each
 *                                     ring to the middle node */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"

struct fab_node {
    struct acis_fabric *f;
    struct acis_sw *sw;
    uint32_t parent;         /* node, SW_NONE at the top */
    uint32_t parent_port;    /* this node's link port at its parent */
    uint32_t hosts;          /* host ports 0..hosts-1; links follow */
    uint32_t ports;
    uint32_t first;          /* fabric port of port 0 */
    uint32_t *port_node;     /* ports entries: the child behind a link */
};

struct fab_msg {
    uint32_t node, port;
    size_t len;
    uint8_t *data;
};

struct acis_fabric {
    struct acis_sw_io io;    /* the hosts' */
    uint32_t n;
    struct fab_node *nodes;
    uint32_t fports;
    uint32_t *fport_node;    /* fabric port -> node */
    struct fab_msg *q;       /* packets between switches, in order */
    size_t qhead, qtail, qcap;
};

/* --------------------------------------------------------- topologies */

static int parse_fattree(const char *s, uint32_t *L, uint32_t *S, uint32_t *R)
{
    unsigned l, sp, r;
    int end = 0;
    if (sscanf(s, "fattree:leaves=%u,spines=%u,radix=%u%n", &l, &sp, &r, &end) != 3 ||
        s[end] || r < 2 || r % 2 || r > 65534 || l < 1 || l > r || sp < 1 || sp > r / 2)
        return -1;
    *L = l;
    *S = sp;
    *R = r;
    return 0;
}

static int parse_torus(const char *s, uint32_t d[3])
{
    unsigned x, y, z;
    int end = 0;
    if (sscanf(s, "torus:%ux%ux%u%n", &x, &y, &z, &end) != 3 || s[end] || x < 1 || y < 1 ||
        z < 1 || (uint64_t)x * y * z > 65536)
        return -1;
    d[0] = x;
    d[1] = y;
    d[2] = z;
    return 0;
}

/* One step from c towards m on a ring of n, the short way. */
static uint32_t ring_step(uint32_t c, uint32_t m, uint32_t n)
{
    uint32_t fwd = (m + n - c) % n;             /* steps going up */
    return fwd <= n - fwd ? (c + 1) % n : (c + n - 1) % n;
}

static uint32_t torus_parent(uint32_t i, const uint32_t d[3])
{
    uint32_t c[3] = { i % d[0], i / d[0] % d[1], i / (d[0] * d[1]) };
    for (int k = 2; k >= 0; k--) {
        uint32_t m = d[k] / 2;
        if (c[k] != m) {
            c[k] = ring_step(c[k], m, d[k]);
            return c[0] + d[0] * (c[1] + d[1] * c[2]);
        }
    }
    return SW_NONE;                             /* the middle node */
}

int acis_fabric_plan(const char *topo, uint32_t star_ports, uint32_t *n, uint32_t **parent,
                     uint32_t **hosts, char *err, size_t errlen)
{
    uint32_t L = 0, S = 0, R = 0, d[3] = { 0 };
    if (strcmp(topo, "star") == 0) {
        *n = 1;
    } else if (parse_fattree(topo, &L, &S, &R) == 0) {
        *n = L + S;
    } else if (parse_torus(topo, d) == 0) {
        *n = d[0] * d[1] * d[2];
    } else {
        snprintf(err, errlen, "topology '%s': use star, fattree:leaves=L,spines=S,radix=R "
                 "(R even, L <= R, S <= R/2) or torus:XxYxZ", topo);
        return -1;
    }
    *parent = malloc(sizeof(uint32_t) * *n);
    *hosts = malloc(sizeof(uint32_t) * *n);
    if (!*parent || !*hosts) {
        free(*parent);
        free(*hosts);
        *parent = *hosts = NULL;
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < *n; i++) {
        if (strcmp(topo, "star") == 0) {
            (*parent)[i] = SW_NONE;
            (*hosts)[i] = star_ports;
        } else if (topo[0] == 'f') {
            (*parent)[i] = i < L ? L : SW_NONE;
            (*hosts)[i] = i < L ? R / 2 : 0;
        } else {
            (*parent)[i] = torus_parent(i, d);
            (*hosts)[i] = 1;
        }
    }
    return 0;
}

int acis_fabric_row_children(const uint32_t *parent, const uint32_t *hosts, uint32_t n,
                             uint64_t members, uint32_t *out)
{
    uint8_t *counted = calloc(n ? n : 1, 1);
    if (!counted)
        return -1;
    memset(out, 0, sizeof(uint32_t) * n);
    for (uint32_t i = 0; i < n && members; i++) {
        uint32_t k = hosts[i] < members ? hosts[i] : (uint32_t)members;
        if (!k)
            continue;
        out[i] += k;
        members -= k;
        for (uint32_t j = i; parent[j] != SW_NONE && !counted[j]; j = parent[j]) {
            counted[j] = 1;                     /* j is a child of its parent */
            out[parent[j]]++;
        }
    }
    free(counted);
    return members ? -1 : 0;
}

/* ---------------------------------------------------------------- io */

static void enqueue(struct acis_fabric *f, uint32_t node, uint32_t port,
                    const struct iovec *iov, int iovcnt)
{
    if (f->qtail - f->qhead == f->qcap) {
        size_t cap = f->qcap ? 2 * f->qcap : 64;
        struct fab_msg *q = malloc(sizeof *q * cap);
        if (!q)
            return;                             /* lost, as on a wire */
        for (size_t i = 0; i < f->qtail - f->qhead; i++)
            q[i] = f->q[(f->qhead + i) % f->qcap];
        free(f->q);
        f->q = q;
        f->qtail -= f->qhead;
        f->qhead = 0;
        f->qcap = cap;
    }
    size_t len = 0, off = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    uint8_t *d = malloc(len);
    if (!d)
        return;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    f->q[f->qtail++ % f->qcap] = (struct fab_msg){ node, port, len, d };
}

static int node_open(void *ctx, uint32_t port, const void *peer)
{
    struct fab_node *nd = ctx;
    return nd->f->io.port_open(nd->f->io.ctx, nd->first + port, peer);
}

static void node_close(void *ctx, uint32_t port)
{
    struct fab_node *nd = ctx;
    nd->f->io.port_close(nd->f->io.ctx, nd->first + port);
}

static void node_send(void *ctx, const uint32_t *ports, uint32_t n,
                      const struct iovec *iov, int iovcnt)
{
    struct fab_node *nd = ctx;
    struct acis_fabric *f = nd->f;
    uint32_t *hosts = malloc(sizeof(uint32_t) * n), k = 0;
    for (uint32_t i = 0; i < n; i++) {
        if (ports[i] == ACIS_PORT_UPLINK && nd->parent != SW_NONE)
            enqueue(f, nd->parent, nd->parent_port, iov, iovcnt);
        else if (ports[i] < nd->ports && nd->port_node[ports[i]] != SW_NONE)
            enqueue(f, nd->port_node[ports[i]], ACIS_PORT_UPLINK, iov, iovcnt);
        else if (ports[i] < nd->ports && hosts)
            hosts[k++] = nd->first + ports[i];
    }
    if (k)
        f->io.send(f->io.ctx, hosts, k, iov, iovcnt);
    free(hosts);
}

static void node_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    struct fab_node *nd = ctx;
    nd->f->io.reply(nd->f->io.ctx, peer, iov, iovcnt);
}

/* ------------------------------------------------------------ the API */

struct acis_fabric *acis_fabric_create(const char *topo, const struct acis_sw_opts *o,
                                       const struct acis_sw_io *hosts_io,
                                       char *err, size_t errlen)
{
    uint32_t n = 0, *parent = NULL, *hosts = NULL;
    struct acis_fabric *f = NULL;
    if (acis_fabric_plan(topo, o->ports, &n, &parent, &hosts, err, errlen) != 0)
        goto fail;
    f = calloc(1, sizeof *f);
    if (!f || !(f->nodes = calloc(n, sizeof *f->nodes)))
        goto nomem;
    f->io = *hosts_io;
    f->n = n;
    for (uint32_t i = 0; i < n; i++) {           /* ports: hosts, then a link per child */
        f->nodes[i].ports = hosts[i];
        f->nodes[i].parent = parent[i];
    }
    for (uint32_t i = 0; i < n; i++)
        if (parent[i] != SW_NONE)
            f->nodes[i].parent_port = f->nodes[parent[i]].ports++;
    for (uint32_t i = 0; i < n; i++) {
        struct fab_node *nd = &f->nodes[i];
        nd->f = f;
        nd->hosts = hosts[i];
        nd->first = f->fports;
        f->fports += nd->ports ? nd->ports : 1;
        nd->port_node = malloc(sizeof(uint32_t) * (nd->ports ? nd->ports : 1));
        if (!nd->port_node)
            goto nomem;
        memset(nd->port_node, 0xff, sizeof(uint32_t) * (nd->ports ? nd->ports : 1));
    }
    f->fport_node = malloc(sizeof(uint32_t) * f->fports);
    if (!f->fport_node)
        goto nomem;
    for (uint32_t i = 0; i < n; i++) {
        struct fab_node *nd = &f->nodes[i];
        for (uint32_t p = 0; p < (nd->ports ? nd->ports : 1); p++)
            f->fport_node[nd->first + p] = i;
        struct acis_sw_opts so = *o;
        so.ports = nd->ports ? nd->ports : 1;
        so.links = nd->ports - nd->hosts;
        so.threads = 0;                  /* a fabric's switches serve with one */
        struct acis_sw_io io = { nd, node_open, node_close, node_send, node_reply, NULL };
        nd->sw = acis_sw_create(&so, &io, err, errlen);
        if (!nd->sw)
            goto fail;
    }
    for (uint32_t i = 0; i < n; i++) {
        struct fab_node *nd = &f->nodes[i];
        if (nd->parent == SW_NONE)
            continue;
        struct fab_node *up = &f->nodes[nd->parent];
        uint32_t top = nd->parent;
        while (f->nodes[top].parent != SW_NONE)
            top = f->nodes[top].parent;
        acis_sw_set_parent(nd->sw, acis_sw_boot(f->nodes[top].sw));
        up->port_node[nd->parent_port] = i;
        up->sw->ports[nd->parent_port] = (struct sw_port){ .in_use = 1, .link = 1,
                                                          .lidx = up->sw->nlinks++ };
    }
    free(parent);
    free(hosts);
    return f;
nomem:
    snprintf(err, errlen, "out of memory");
fail:
    free(parent);
    free(hosts);
    acis_fabric_destroy(f);
    return NULL;
}

void acis_fabric_destroy(struct acis_fabric *f)
{
    if (!f)
        return;
    for (uint32_t i = 0; f->nodes && i < f->n; i++) {
        acis_sw_destroy(f->nodes[i].sw);
        free(f->nodes[i].port_node);
    }
    for (size_t i = f->qhead; i < f->qtail; i++)
        free(f->q[i % f->qcap].data);
    free(f->q);
    free(f->nodes);
    free(f->fport_node);
    free(f);
}

uint32_t acis_fabric_switches(const struct acis_fabric *f)
{
    return f->n;
}

uint32_t acis_fabric_host_ports(const struct acis_fabric *f, uint32_t sw)
{
    return sw < f->n ? f->nodes[sw].hosts : 0;
}

uint32_t acis_fabric_parent(const struct acis_fabric *f, uint32_t sw)
{
    return sw < f->n ? f->nodes[sw].parent : ACIS_PORT_SERVICE;
}

uint64_t acis_fabric_switch_bytes(const struct acis_fabric *f, uint32_t sw)
{
    return sw < f->n ? f->nodes[sw].sw->size.total : 0;
}

uint64_t acis_fabric_row_bytes(const struct acis_fabric *f, uint32_t sw)
{
    if (sw >= f->n)
        return 0;
    const struct acis_sw *s = f->nodes[sw].sw;
    return SWC(s, tables_in_use) * s->size.row + SWC(s, jobs) * s->size.job;
}

uint64_t acis_fabric_bytes(const struct acis_fabric *f)
{
    uint64_t b = sizeof *f + sizeof *f->nodes * f->n + sizeof(uint32_t) * f->fports;
    for (uint32_t i = 0; i < f->n; i++)
        b += sizeof(uint32_t) * (f->nodes[i].ports ? f->nodes[i].ports : 1);
    return b;
}

void acis_fabric_counters(const struct acis_fabric *f, uint32_t sw, uint64_t *out)
{
    acis_sw_counters(f->nodes[sw].sw, out);
}

static void drain(struct acis_fabric *f)
{
    while (f->qhead != f->qtail) {
        struct fab_msg m = f->q[f->qhead++ % f->qcap];
        acis_sw_input(f->nodes[m.node].sw, m.port, NULL, m.data, m.len);
        free(m.data);
    }
}

void acis_fabric_input(struct acis_fabric *f, uint32_t fport, const void *peer,
                       const uint8_t *pkt, size_t len)
{
    if (fport >= f->fports)
        return;
    const struct fab_node *nd = &f->nodes[f->fport_node[fport]];
    acis_sw_input(nd->sw, fport - nd->first, peer, pkt, len);
    drain(f);
}

void acis_fabric_service(struct acis_fabric *f, uint32_t sw, const void *peer,
                         const uint8_t *pkt, size_t len)
{
    if (sw >= f->n)
        return;
    acis_sw_input(f->nodes[sw].sw, ACIS_PORT_SERVICE, peer, pkt, len);
    drain(f);
}
