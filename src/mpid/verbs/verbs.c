/* verbs.c -- the libibverbs channel (MPIR_CVAR_OFFLOAD_DEVICE=verbs): the
 * wire protocol's packets as unreliable datagrams (src/verbs) to the
 * switch's endpoint, MPIR_CVAR_OFFLOAD_SWITCH=LID/QPN or GID/QPN.  Until
 * HELLO is answered it takes datagrams only from that endpoint, and from
 * other queue pairs at its LID or GID, where a switch with a queue pair
 * per port answers from (the device takes only the WELCOME from those);
 * then it talks to and takes datagrams only from the queue pair whose
 * WELCOME answered (the host port).  A datagram from anyone else is
 * counted (packets_foreign) and dropped.  The device above does segmentation,
 * windows and retransmission, as for UDP.  Without RDMA devices, or in a
 * build without libibverbs, opening fails with a one-line reason and the
 * job runs its collectives in MPICH. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpid/channel.h"
#include "mpid/device.h"

#ifdef ACIS_HAVE_VERBS
#include "verbs/verbs.h"

#define RX_DEPTH 512
#define TX_DEPTH 256

struct acis_chan {
    struct acis_ud *ud;
    struct acis_ud_dest to;          /* the service endpoint, then our port */
    struct ibv_ah *svc_ah, *port_ah; /* port_ah: our port's, if not svc_ah's */
    struct acis_ib_addr svc, peer;   /* peer: whom we take datagrams from */
    int joined;                      /* attached to our port */
};

int acis_verbs_devices(char *names, size_t len)
{
    int n = 0;
    struct ibv_device **list = ibv_get_device_list(&n);
    size_t off = 0;
    if (names && len)
        names[0] = '\0';
    for (int i = 0; list && i < n && names && off < len; i++)
        off += (size_t)snprintf(names + off, len - off, "%s%s", i ? "," : "",
                                ibv_get_device_name(list[i]));
    if (list)
        ibv_free_device_list(list);
    return list ? n : 0;
}

int acis_verbs_choice(const char *dev, int port, char *out, size_t len)
{
    struct acis_ud_cand c[64];
    int n = acis_ud_candidates(c, 64, out, len);
    int k = n < 0 ? -1 : acis_ud_choose(c, n, dev, port, out, len);
    if (k >= 0)
        snprintf(out, len, "%s:%u", c[k].name, c[k].port);
    return k >= 0 ? 0 : -1;
}

static void verbs_close(struct acis_chan *ch)
{
    if (ch->ud)
        acis_ud_quiesce(ch->ud);
    if (ch->port_ah)
        ibv_destroy_ah(ch->port_ah);
    if (ch->svc_ah)
        ibv_destroy_ah(ch->svc_ah);
    acis_ud_close(ch->ud);
    free(ch);
}

static int verbs_open(struct acis_chan **out, const char *addr, char *why, size_t whylen)
{
    struct acis_ib_addr svc;
    int bad_addr = acis_ib_addr_parse(addr, &svc) != 0;
    struct acis_chan *ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    struct acis_ud_opts o = {
        .dev = acis_util.cv.str[ACIS_CV_OFFLOAD_VERBS_DEVICE],
        .port = (int)ACIS_CV(OFFLOAD_VERBS_PORT),
        .rx_depth = RX_DEPTH, .tx_depth = TX_DEPTH, .zcopy = 1,
    };
    if (!(ch->ud = acis_ud_open(&o, why, whylen)))       /* devices first: the */
        goto fail;                                      /* likelier reason */
    if (bad_addr) {
        snprintf(why, whylen, "verbs: MPIR_CVAR_OFFLOAD_SWITCH must be the switch's "
                 "endpoint LID/QPN or GID/QPN (acis-switchd --verbs prints it), not '%.60s'",
                 addr);
        goto fail;
    }
    if (!(ch->svc_ah = acis_ud_ah(ch->ud, &svc))) {
        snprintf(why, whylen, "verbs: no address handle for %.60s on %s", addr,
                 acis_ud_name(ch->ud));
        goto fail;
    }
    ch->to = (struct acis_ud_dest){ ch->svc_ah, svc.qpn };
    ch->svc = ch->peer = svc;
    *out = ch;
    return 0;
fail:
    verbs_close(ch);
    return -1;
}

/* Our port is the WELCOME's sender: on the verbs switch the service
 * endpoint itself (its one queue pair), else a handle of its own. */
static int verbs_attach(struct acis_chan *ch, const struct acis_chan_from *from)
{
    const struct acis_ib_addr *at = &from->a.ib;
    if (from->len != sizeof *at)
        return -1;
    struct ibv_ah *ah = ch->svc_ah;
    if (!acis_ud_same_sender(at, &ch->svc) && !(ah = ch->port_ah = acis_ud_ah(ch->ud, at)))
        return -1;
    ch->to = (struct acis_ud_dest){ ah, at->qpn };
    ch->peer = *at;
    ch->joined = 1;
    return 0;
}

static int verbs_send(struct acis_chan *ch, const struct acis_dev_pkt *pkts, int n)
{
    for (int i = 0; i < n; i++)
        if (acis_ud_send_pkt(ch->ud, &ch->to, pkts[i].hdr, ACIS_HDR_LEN, pkts[i].payload,
                             pkts[i].len) != 0)
            return -1;
    return 0;
}

static int verbs_recv(struct acis_chan *ch, uint8_t **bufs, size_t cap, size_t *lens,
                      struct acis_chan_from *from, int max)
{
    struct acis_ud_msg m[ACIS_RX_BATCH];
    int keep[ACIS_RX_BATCH], exact[ACIS_RX_BATCH];
    int n = acis_ud_recv(ch->ud, m, max < ACIS_RX_BATCH ? max : ACIS_RX_BATCH);
    if (n < 0)
        return -1;
    int got = acis_ud_keep(m, n, &ch->peer, ch->joined, keep, exact);
    if (got < n)
        ACIS_COUNT(packets_foreign, (uint64_t)(n - got));   /* not our switch: dropped */
    for (int k = 0; k < got; k++) {
        const struct acis_ud_msg *x = &m[keep[k]];
        lens[k] = x->len <= cap ? x->len : 0;
        memcpy(bufs[k], x->data, lens[k]);
        from[k].a.ib = x->from;
        from[k].len = sizeof x->from;
        from[k].peer = exact[k];
    }
    if (n > 0 && acis_ud_repost(ch->ud, m, n) != 0)
        return -1;
    return got;
}

static int verbs_wait(struct acis_chan *ch, int timeout_ms)
{
    return acis_ud_wait(ch->ud, timeout_ms);
}

static int verbs_fd(struct acis_chan *ch)
{
    return acis_ud_fd(ch->ud);
}

static int verbs_flush(struct acis_chan *ch)
{
    return acis_ud_flush(ch->ud);
}

static uint32_t verbs_max_packet(struct acis_chan *ch)
{
    return acis_ud_mtu(ch->ud);
}

/* Credits: half the receive buffers posted, whatever the packet size. */
static int verbs_rx_packets(struct acis_chan *ch)
{
    return (int)(acis_ud_rx_depth(ch->ud) / 2);
}

const struct acis_chan_ops acis_chan_verbs = {
    .name = "verbs", .sealed = 1, .reliable = 0, .open = verbs_open,
    .attach = verbs_attach, .send = verbs_send, .recv = verbs_recv, .wait = verbs_wait,
    .fd = verbs_fd, .rx_packets = verbs_rx_packets, .close = verbs_close,
    .flush = verbs_flush, .max_packet = verbs_max_packet,
};

#else /* no libibverbs in this build */

int acis_verbs_devices(char *names, size_t len)
{
    if (names && len)
        names[0] = '\0';
    return -1;
}

int acis_verbs_choice(const char *dev, int port, char *out, size_t len)
{
    (void)dev;
    (void)port;
    snprintf(out, len, "this acis was built without libibverbs (--with-verbs)");
    return -1;
}

static int verbs_open(struct acis_chan **ch, const char *addr, char *why, size_t whylen)
{
    (void)ch;
    (void)addr;
    snprintf(why, whylen, "this acis was built without libibverbs (--with-verbs)");
    return -1;
}

const struct acis_chan_ops acis_chan_verbs = { .name = "verbs", .open = verbs_open };

#endif
