/* verbsw.c -- the switch core on one RDMA unreliable-datagram queue pair
 * (src/verbs): the queue pair is the service endpoint and every host
 * port.  A host port is the sender its HELLO came from; senders are
 * looked up in the UDP switch's address map, a sender written as an IPv6
 * address (its GID, or its LID in the last two bytes) with its queue pair
 * number as the scope id.  A multicast copies the packet once and posts
 * a send per member.  Answers to senders without a port (service
 * packets) go through a few cached address handles and never wait for a
 * send to complete (ahcache.c).  Runs in acis-switchd --verbs; built only
 * with libibverbs. */
#include "config.h"

#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sw.h"
#include "verbs/verbs.h"

#define RX_DEPTH 4096
#define TX_DEPTH 1024
#define BATCH 32
#define SPIN_NS 200000
#define REPLY_AHS 16             /* address handles kept for service answers */

struct acis_verbsw {
    struct acis_sw *core;
    struct acis_ud *ud;
    struct sw_addrmap map;
    struct acis_ud_dest *dest;        /* per port: its address handle */
    struct acis_ud_dest *out;         /* a multicast's destinations */
    struct acis_ahcache *replies;     /* handles to senders without a port */
    uint32_t ports;
    char address[80];
};

/* What the core hands back to port_open and reply. */
struct vpeer {
    struct sw_peer key;
    const struct acis_ud_msg *m;
};

static void peer_key(const struct acis_ib_addr *a, struct sw_peer *k)
{
    struct sockaddr_in6 *s = (struct sockaddr_in6 *)&k->a;
    memset(k, 0, sizeof *k);
    s->sin6_family = AF_INET6;
    if (a->has_gid) {
        memcpy(&s->sin6_addr, a->gid, sizeof a->gid);
    } else {
        s->sin6_addr.s6_addr[14] = (uint8_t)(a->lid >> 8);
        s->sin6_addr.s6_addr[15] = (uint8_t)a->lid;
    }
    s->sin6_scope_id = a->qpn;
    k->len = sizeof *s;
}

static int port_open(void *ctx, uint32_t port, const void *vp)
{
    struct acis_verbsw *v = ctx;
    const struct vpeer *p = vp;
    struct ibv_ah *ah = acis_ud_ah_from(v->ud, p->m);
    if (!ah || sw_addrmap_add(&v->map, port, &p->key) != 0) {
        if (ah)
            ibv_destroy_ah(ah);
        return -1;
    }
    v->dest[port] = (struct acis_ud_dest){ ah, p->m->from.qpn };
    return 0;
}

static void port_close(void *ctx, uint32_t port)
{
    struct acis_verbsw *v = ctx;
    if (port >= v->ports || !v->dest[port].ah)
        return;
    acis_ud_quiesce(v->ud);                      /* no send may still use it */
    ibv_destroy_ah(v->dest[port].ah);
    v->dest[port] = (struct acis_ud_dest){ 0 };
    sw_addrmap_del(&v->map, port);
}

static void send_ports(void *ctx, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct acis_verbsw *v = ctx;
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; i++)
        if (ports[i] < v->ports && v->dest[ports[i]].ah)
            v->out[k++] = v->dest[ports[i]];
    if (k)
        acis_ud_send(v->ud, v->out, k, iov, iovcnt);
}

/* An answer on the service endpoint.  Its address handle stays cached
 * (destroying it would mean waiting for the send to complete); with
 * every cached one still in use it is not sent, as a full UDP socket
 * would lose it: the host asks again. */
static void reply(void *ctx, const void *vp, const struct iovec *iov, int iovcnt)
{
    struct acis_verbsw *v = ctx;
    const struct vpeer *p = vp;
    struct acis_ud_dest d = {
        acis_ahcache_get(v->replies, &p->m->from, p->m, acis_ud_completed(v->ud)),
        p->m->from.qpn,
    };
    if (!d.ah)
        return;
    acis_ud_send(v->ud, &d, 1, iov, iovcnt);
    acis_ahcache_used(v->replies, acis_ud_posted(v->ud));
}

static struct ibv_ah *make_ah(void *arg, const void *m)
{
    return acis_ud_ah_from(arg, m);
}

static void drop_ah(void *arg, struct ibv_ah *ah)
{
    (void)arg;
    ibv_destroy_ah(ah);
}

struct acis_verbsw *acis_verbsw_create(const char *dev, int port,
                                       const struct acis_sw_opts *o,
                                       char *err, size_t errlen)
{
    struct acis_verbsw *v = calloc(1, sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    struct acis_ud_opts uo = { .dev = dev, .port = port, .rx_depth = RX_DEPTH,
                               .tx_depth = TX_DEPTH };
    if (!(v->ud = acis_ud_open(&uo, err, errlen)))
        goto fail;
    v->ports = o->ports;
    v->dest = calloc(o->ports, sizeof *v->dest);
    v->out = calloc(o->ports, sizeof *v->out);
    v->replies = acis_ahcache_new(REPLY_AHS, make_ah, drop_ah, v->ud);
    if (!v->dest || !v->out || !v->replies || sw_addrmap_init(&v->map, o->ports) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    struct acis_sw_opts co = *o;
    uint32_t fit = acis_ud_payload(acis_ud_mtu(v->ud), ACIS_HDR_LEN);
    if (fit < ACIS_MIN_PAYLOAD) {
        snprintf(err, errlen, "verbs: the MTU of %s (%u bytes) holds no packet",
                 acis_ud_name(v->ud), acis_ud_mtu(v->ud));
        goto fail;
    }
    if (co.payload > fit)
        co.payload = fit;
    if (co.credits == 0)
        co.credits = RX_DEPTH / 2;
    co.threads = 0;              /* one queue pair, one worker (no locks taken) */
    struct acis_sw_io io = { v, port_open, port_close, send_ports, reply, NULL };
    if (!(v->core = acis_sw_create(&co, &io, err, errlen)))
        goto fail;
    struct acis_ib_addr me;
    acis_ud_local(v->ud, &me);
    acis_ib_addr_format(&me, v->address, sizeof v->address);
    return v;
fail:
    acis_verbsw_destroy(v);
    return NULL;
}

void acis_verbsw_destroy(struct acis_verbsw *v)
{
    if (!v)
        return;
    acis_sw_destroy(v->core);
    for (uint32_t p = 0; v->dest && p < v->ports; p++)
        port_close(v, p);
    if (v->ud)
        acis_ud_quiesce(v->ud);                 /* no answer uses a cached handle */
    acis_ahcache_free(v->replies);
    acis_ud_close(v->ud);
    sw_addrmap_free(&v->map);
    free(v->dest);
    free(v->out);
    free(v);
}

const char *acis_verbsw_address(const struct acis_verbsw *v)
{
    return v->address;
}

const char *acis_verbsw_device(const struct acis_verbsw *v)
{
    return acis_ud_name(v->ud);
}

void acis_verbsw_counters(const struct acis_verbsw *v, uint64_t *out)
{
    acis_sw_counters(v->core, out);
}

int acis_verbsw_run(struct acis_verbsw *v, atomic_int *stop, int spin)
{
    struct acis_ud_msg m[BATCH];
    uint64_t last = acis_now_ns();
    while (!atomic_load(stop)) {
        int n = acis_ud_recv(v->ud, m, BATCH);
        if (n < 0)
            return -1;
        for (int i = 0; i < n; i++) {
            struct vpeer p = { .m = &m[i] };
            peer_key(&m[i].from, &p.key);
            uint32_t port = sw_addrmap_find(&v->map, &p.key);
            if (port == SW_NONE || sw_is_hello(m[i].data, m[i].len))
                port = ACIS_PORT_SERVICE;
            acis_sw_input(v->core, port, &p, m[i].data, m[i].len);
        }
        if (n > 0) {
            if (acis_ud_repost(v->ud, m, n) != 0)
                return -1;
            last = acis_now_ns();
        } else if (!(spin && acis_now_ns() - last < SPIN_NS) &&
                   acis_ud_wait(v->ud, 100) < 0) {
            return -1;
        }
    }
    return 0;
}
