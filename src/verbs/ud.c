/* ud.c -- one unreliable-datagram queue pair on one device port: a ring
 * of registered receive buffers kept posted, a ring of registered send
 * slots (a multicast copies its packet once and posts one send per
 * member from that slot), address handles, and waiting on a completion
 * channel.  Every send is signaled: a slot is reused once all sends from
 * it completed.  Payloads of acis_ud_send_pkt go without a copy when the
 * device pages on demand (the registration cache is then safe); the
 * caller calls acis_ud_flush before it reuses or frees such a payload.
 * Sending is the caller's to serialise; receiving and waiting may run on
 * different threads (rx_lock). */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

#define MAX_CANDS 64
#define MAX_GIDS 128
#define POST_BATCH 32
#define ZCOPY_MIN 2048                  /* smaller payloads are copied */
#define CACHE_ENTRIES 256
#define CACHE_BYTES (1ull << 30)
#define RX_PAD 8            /* 8 + GRH 40 + acis header 80 = 128: every
                               received payload starts on 64 bytes */
#define QUIESCE_NS 2000000000ull  /* a send not completed by then never will */

struct acis_ud {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    struct ibv_comp_channel *cc;
    struct ibv_cq *rcq, *scq;
    struct ibv_qp *qp;
    uint8_t port;
    int gid_index;
    int ipv4;                           /* RoCE v2 over IPv4: datagrams come with
                                           an IPv4 header, not a GRH */
    struct acis_ib_addr local;
    uint32_t mtu, max_inline;
    char name[80];
    uint8_t *rx;                        /* rx_depth buffers of rx_stride */
    struct ibv_mr *rx_mr;
    uint32_t rx_depth, rx_stride;
    pthread_mutex_t rx_lock;            /* the receive queue, held, has_held */
    struct ibv_wc held;                 /* seen by acis_ud_wait, not yet received */
    int has_held;
    uint8_t *tx;                        /* tx_depth slots of mtu bytes */
    struct ibv_mr *tx_mr;
    uint32_t tx_depth, tx_head, outstanding;
    uint64_t posted, completed;         /* sends, ever */
    uint32_t *tx_pending;               /* sends in flight per slot */
    struct acis_regcache *cache;        /* zero-copy payloads, or NULL */
    int zc_out;                         /* zero-copy sends since the last flush */
};

static uint32_t mtu_bytes(enum ibv_mtu m)
{
    return 128u << (m < IBV_MTU_256 ? 1 : m > IBV_MTU_4096 ? 5 : (int)m);
}

/* After a failed send a UD queue pair stops sending (SQE): back to RTS.
 * 0, or -1 if it cannot send any more. */
static int recover_sq(struct acis_ud *u)
{
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(u->qp, &a, IBV_QP_STATE, &ia) != 0)
        return -1;
    if (a.qp_state == IBV_QPS_SQE) {
        a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS };
        return ibv_modify_qp(u->qp, &a, IBV_QP_STATE) == 0 ? 0 : -1;
    }
    return a.qp_state == IBV_QPS_RTS ? 0 : -1;
}

/* Take completed sends off the send queue.  A failed one is a lost
 * packet, as on UDP (the queue pair is made to send again).  0, or -1 if
 * the queue pair cannot send any more. */
static int reap(struct acis_ud *u)
{
    struct ibv_wc wc[POST_BATCH];
    int n = ibv_poll_cq(u->scq, POST_BATCH, wc), bad = 0;
    if (n < 0)
        return -1;
    u->completed += (uint64_t)n;
    for (int i = 0; i < n; i++) {
        uint32_t slot = (uint32_t)wc[i].wr_id;
        if (slot < u->tx_depth && u->tx_pending[slot])
            u->tx_pending[slot]--;
        if (u->outstanding)
            u->outstanding--;
        bad |= wc[i].status != IBV_WC_SUCCESS;
    }
    return bad ? recover_sq(u) : 0;
}

int acis_ud_quiesce(struct acis_ud *u)
{
    uint64_t start = acis_now_ns();
    while (u->outstanding) {                    /* every one: callers free what */
        if (reap(u) != 0 ||                     /* the sends read */
            acis_now_ns() - start > QUIESCE_NS)
            return -1;                          /* a dead queue pair reads nothing */
    }
    u->zc_out = 0;
    return 0;
}

int acis_ud_flush(struct acis_ud *u)
{
    return u->zc_out ? acis_ud_quiesce(u) : 0;
}

uint64_t acis_ud_posted(const struct acis_ud *u)
{
    return u->posted;
}

uint64_t acis_ud_completed(struct acis_ud *u)
{
    reap(u);                                    /* a failure shows in the next send */
    return u->completed;
}

static void *reg(void *arg, void *addr, size_t len, uint32_t *lkey)
{
    struct acis_ud *u = arg;
    struct ibv_mr *mr = ibv_reg_mr(u->pd, addr, len, IBV_ACCESS_ON_DEMAND);  /* read only */
    if (mr)
        *lkey = mr->lkey;
    return mr;
}

static void dereg(void *arg, void *handle)
{
    acis_ud_quiesce(arg);                       /* no send may still read it */
    ibv_dereg_mr(handle);
}

/* Does the device page on demand for UD sends? */
static int pages_on_demand(struct ibv_context *ctx)
{
    struct ibv_device_attr_ex ax;
    memset(&ax, 0, sizeof ax);
    if (ibv_query_device_ex(ctx, NULL, &ax) != 0)
        return 0;
    return (ax.odp_caps.general_caps & IBV_ODP_SUPPORT) &&
           (ax.odp_caps.per_transport_caps.ud_odp_caps & IBV_ODP_SUPPORT_SEND);
}

/* RESET -> INIT -> RTR -> RTS for a UD queue pair. */
static int qp_ready(struct ibv_qp *qp, uint8_t port)
{
    struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = port,
                             .qkey = ACIS_UD_QKEY };
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
        return -1;
    a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTR };
    if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
        return -1;
    a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = 0 };
    return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* Receive buffer slot: RX_PAD, then the GRH area, then the datagram. */
static uint8_t *rx_buf(const struct acis_ud *u, uint32_t slot)
{
    return u->rx + (size_t)slot * u->rx_stride + RX_PAD;
}

static int post_recv(struct acis_ud *u, uint32_t slot)
{
    struct ibv_recv_wr wr, *bad;
    struct ibv_sge sge;
    acis_ud_build_recv(&wr, &sge, slot, rx_buf(u, slot), ACIS_UD_GRH + u->mtu,
                       u->rx_mr->lkey);
    return ibv_post_recv(u->qp, &wr, &bad);
}

/* Open the device and port chosen by o into u.  0, or -1 with why. */
static int open_port(struct acis_ud *u, const struct acis_ud_opts *o, char *why, size_t whylen)
{
    struct acis_ud_cand c[MAX_CANDS];
    int n = acis_ud_candidates(c, MAX_CANDS, why, whylen), ndev = 0;
    int k = n < 0 ? -1 : acis_ud_choose(c, n, o->dev, o->port, why, whylen);
    if (k < 0)
        return -1;
    struct ibv_device **list = ibv_get_device_list(&ndev);
    for (int d = 0; list && d < ndev && !u->ctx; d++)
        if (strcmp(ibv_get_device_name(list[d]), c[k].name) == 0)
            u->ctx = ibv_open_device(list[d]);
    if (list)
        ibv_free_device_list(list);
    struct ibv_port_attr pa;
    if (!u->ctx || ibv_query_port(u->ctx, c[k].port, &pa) != 0) {
        snprintf(why, whylen, "verbs: cannot open %s port %u", c[k].name, c[k].port);
        return -1;
    }
    u->port = c[k].port;
    u->mtu = mtu_bytes(pa.active_mtu);
    snprintf(u->name, sizeof u->name, "%s:%u", c[k].name, c[k].port);
    u->local.lid = pa.lid;
    u->local.has_gid = pa.link_layer == IBV_LINK_LAYER_ETHERNET || pa.lid == 0;
    if (!u->local.has_gid)
        return 0;
    struct ibv_gid_entry e[MAX_GIDS];
    int ng = 0;
    for (int i = 0; i < pa.gid_tbl_len && ng < MAX_GIDS; i++)
        if (ibv_query_gid_ex(u->ctx, u->port, (uint32_t)i, &e[ng], 0) == 0)
            ng++;
    int g = acis_ud_pick_gid(e, ng);
    if (g < 0) {
        snprintf(why, whylen, "verbs: %s has no usable GID", u->name);
        return -1;
    }
    u->gid_index = (int)e[g].gid_index;
    memcpy(u->local.gid, e[g].gid.raw, sizeof u->local.gid);
    u->ipv4 = e[g].gid_type == IBV_GID_TYPE_ROCE_V2 && acis_ud_gid_ipv4(&e[g].gid);
    return 0;
}

/* Queue pair, rings and registrations.  0, or -1 with why. */
static int build(struct acis_ud *u, const struct acis_ud_opts *o, char *why, size_t whylen)
{
    struct ibv_device_attr da;
    if (ibv_query_device(u->ctx, &da) != 0)
        goto fail;
    uint32_t most = (uint32_t)(da.max_qp_wr < da.max_cqe ? da.max_qp_wr : da.max_cqe);
    u->rx_depth = o->rx_depth ? o->rx_depth : 512;
    u->tx_depth = o->tx_depth ? o->tx_depth : 256;
    u->rx_depth = u->rx_depth < most ? u->rx_depth : most;
    u->tx_depth = u->tx_depth < most ? u->tx_depth : most;
    u->rx_stride = (RX_PAD + ACIS_UD_GRH + u->mtu + 63) / 64 * 64;
    u->pd = ibv_alloc_pd(u->ctx);
    u->cc = ibv_create_comp_channel(u->ctx);
    if (!u->pd || !u->cc || fcntl(u->cc->fd, F_SETFL, O_NONBLOCK) != 0)
        goto fail;
    u->rcq = ibv_create_cq(u->ctx, (int)u->rx_depth, NULL, u->cc, 0);
    u->scq = ibv_create_cq(u->ctx, (int)u->tx_depth, NULL, NULL, 0);
    if (!u->rcq || !u->scq)
        goto fail;
    struct ibv_qp_init_attr qa = {
        .send_cq = u->scq, .recv_cq = u->rcq, .qp_type = IBV_QPT_UD,
        .cap = { .max_send_wr = u->tx_depth, .max_recv_wr = u->rx_depth,
                 .max_send_sge = 2, .max_recv_sge = 1, .max_inline_data = 128 },
    };
    u->qp = ibv_create_qp(u->pd, &qa);
    if (!u->qp) {                                    /* some devices have no inline */
        qa.cap.max_inline_data = 0;
        u->qp = ibv_create_qp(u->pd, &qa);
    }
    if (!u->qp || qp_ready(u->qp, u->port) != 0)
        goto fail;
    u->max_inline = qa.cap.max_inline_data;
    u->local.qpn = u->qp->qp_num;
    u->rx = aligned_alloc(64, (size_t)u->rx_depth * u->rx_stride);
    u->tx = aligned_alloc(64, (size_t)u->tx_depth * u->mtu);
    u->tx_pending = calloc(u->tx_depth, sizeof *u->tx_pending);
    if (!u->rx || !u->tx || !u->tx_pending)
        goto fail;
    u->rx_mr = ibv_reg_mr(u->pd, u->rx, (size_t)u->rx_depth * u->rx_stride,
                          IBV_ACCESS_LOCAL_WRITE);
    u->tx_mr = ibv_reg_mr(u->pd, u->tx, (size_t)u->tx_depth * u->mtu, 0);
    if (!u->rx_mr || !u->tx_mr)
        goto fail;
    for (uint32_t i = 0; i < u->rx_depth; i++)
        if (post_recv(u, i) != 0)
            goto fail;
    if (o->zcopy && pages_on_demand(u->ctx))
        u->cache = acis_regcache_new(CACHE_ENTRIES, CACHE_BYTES, reg, dereg, u);
    return 0;
fail:
    snprintf(why, whylen, "verbs: cannot set up a UD queue pair on %s: %s", u->name,
             strerror(errno ? errno : EINVAL));
    return -1;
}

struct acis_ud *acis_ud_open(const struct acis_ud_opts *o, char *why, size_t whylen)
{
    struct acis_ud *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(why, whylen, "out of memory");
        return NULL;
    }
    pthread_mutex_init(&u->rx_lock, NULL);
    if (open_port(u, o, why, whylen) != 0 || build(u, o, why, whylen) != 0) {
        acis_ud_close(u);
        return NULL;
    }
    return u;
}

void acis_ud_close(struct acis_ud *u)
{
    if (!u)
        return;
    if (u->qp)
        acis_ud_quiesce(u);
    acis_regcache_free(u->cache);
    if (u->qp)
        ibv_destroy_qp(u->qp);
    if (u->rx_mr)
        ibv_dereg_mr(u->rx_mr);
    if (u->tx_mr)
        ibv_dereg_mr(u->tx_mr);
    if (u->rcq)
        ibv_destroy_cq(u->rcq);
    if (u->scq)
        ibv_destroy_cq(u->scq);
    if (u->cc)
        ibv_destroy_comp_channel(u->cc);
    if (u->pd)
        ibv_dealloc_pd(u->pd);
    if (u->ctx)
        ibv_close_device(u->ctx);
    free(u->rx);
    free(u->tx);
    free(u->tx_pending);
    pthread_mutex_destroy(&u->rx_lock);
    free(u);
}

uint32_t acis_ud_mtu(const struct acis_ud *u) { return u->mtu; }
uint32_t acis_ud_rx_depth(const struct acis_ud *u) { return u->rx_depth; }
const char *acis_ud_name(const struct acis_ud *u) { return u->name; }
int acis_ud_fd(const struct acis_ud *u) { return u->cc->fd; }

void acis_ud_local(const struct acis_ud *u, struct acis_ib_addr *a)
{
    *a = u->local;
}

struct ibv_ah *acis_ud_ah(struct acis_ud *u, const struct acis_ib_addr *a)
{
    struct ibv_ah_attr at = { .dlid = a->lid, .port_num = u->port, .is_global = a->has_gid };
    if (a->has_gid) {
        memcpy(at.grh.dgid.raw, a->gid, sizeof a->gid);
        at.grh.sgid_index = (uint8_t)u->gid_index;
        at.grh.hop_limit = 64;
    }
    return ibv_create_ah(u->pd, &at);
}

struct ibv_ah *acis_ud_ah_from(struct acis_ud *u, const struct acis_ud_msg *m)
{
    struct ibv_wc wc = m->wc;
    return ibv_create_ah_from_wc(u->pd, &wc, (struct ibv_grh *)(m->data - ACIS_UD_GRH),
                                 u->port);
}

/* A send slot no send is reading any more.  Its index, or -1. */
static int64_t take_slot(struct acis_ud *u)
{
    uint32_t s = u->tx_head;
    while (u->tx_pending[s])
        if (reap(u) != 0)
            return -1;
    u->tx_head = (s + 1) % u->tx_depth;
    return s;
}

/* Post sends of one slot (wr already built, n of them) as room allows. */
static int post(struct acis_ud *u, uint32_t slot, struct ibv_send_wr *wr, uint32_t n)
{
    for (uint32_t done = 0; done < n;) {
        while (u->outstanding >= u->tx_depth)
            if (reap(u) != 0)
                return -1;
        uint32_t k = n - done, room = u->tx_depth - u->outstanding;
        k = k < room ? k : room;
        for (uint32_t i = 0; i < k; i++)
            wr[done + i].next = i + 1 < k ? &wr[done + i + 1] : NULL;
        struct ibv_send_wr *bad = NULL;
        if (ibv_post_send(u->qp, &wr[done], &bad) != 0) {
            uint32_t went = bad ? (uint32_t)(bad - &wr[done]) : 0;   /* those before */
            u->tx_pending[slot] += went;                            /* bad were posted */
            u->outstanding += went;
            u->posted += went;
            return -1;
        }
        u->tx_pending[slot] += k;
        u->outstanding += k;
        u->posted += k;
        done += k;
    }
    return 0;
}

int acis_ud_send(struct acis_ud *u, const struct acis_ud_dest *d, uint32_t n,
                 const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    if (len > u->mtu)
        return -1;
    int64_t slot = take_slot(u);
    if (slot < 0)
        return -1;
    uint8_t *buf = u->tx + (size_t)slot * u->mtu;
    for (int i = 0, off = 0; i < iovcnt; off += (int)iov[i].iov_len, i++)
        memcpy(buf + off, iov[i].iov_base, iov[i].iov_len);
    struct ibv_send_wr wr[POST_BATCH];
    struct ibv_sge sge[POST_BATCH][2];
    for (uint32_t done = 0; done < n;) {
        uint32_t k = n - done < POST_BATCH ? n - done : POST_BATCH;
        for (uint32_t i = 0; i < k; i++)
            acis_ud_build_send(&wr[i], sge[i], &d[done + i], (uint64_t)slot, buf,
                               (uint32_t)len, u->tx_mr->lkey, NULL, 0, 0, u->max_inline, 1);
        if (post(u, (uint32_t)slot, wr, k) != 0)
            return -1;
        done += k;
    }
    return 0;
}

int acis_ud_send_pkt(struct acis_ud *u, const struct acis_ud_dest *d, const void *hdr,
                     uint32_t hlen, const void *payload, uint32_t plen)
{
    uint32_t pkey;
    if (hlen + plen > u->mtu)
        return -1;
    if (!u->cache || plen < ZCOPY_MIN ||
        acis_regcache_get(u->cache, payload, plen, &pkey) != 0) {
        struct iovec iov[2] = { { (void *)hdr, hlen }, { (void *)payload, plen } };
        return acis_ud_send(u, d, 1, iov, plen ? 2 : 1);
    }
    int64_t slot = take_slot(u);
    if (slot < 0)
        return -1;
    uint8_t *buf = u->tx + (size_t)slot * u->mtu;
    memcpy(buf, hdr, hlen);
    struct ibv_send_wr wr;
    struct ibv_sge sge[2];
    acis_ud_build_send(&wr, sge, d, (uint64_t)slot, buf, hlen, u->tx_mr->lkey, payload, plen,
                       pkey, u->max_inline, 1);
    u->zc_out = 1;
    return post(u, (uint32_t)slot, &wr, 1);
}

/* The sender's GID from the 40 bytes before a datagram: a GRH, or on
 * RoCE v2 over IPv4 (our GID is IPv4-mapped, so every peer's is) an IPv4
 * header in its last 20 bytes (then the GID is the IPv4-mapped address). */
static void sender_gid(const struct acis_ud *u, const uint8_t *grh, uint8_t gid[16])
{
    if (u->ipv4) {
        memset(gid, 0, 16);
        gid[10] = gid[11] = 0xff;
        memcpy(gid + 12, grh + 20 + 12, 4);              /* IPv4 source address */
    } else {
        memcpy(gid, ((const struct ibv_grh *)grh)->sgid.raw, 16);
    }
}

/* One receive completion into m: 0; 1 if it carried nothing (reposted);
 * -1 if the queue pair failed (flushed: nothing will arrive again). */
static int take(struct acis_ud *u, const struct ibv_wc *wc, struct acis_ud_msg *m)
{
    uint32_t slot = (uint32_t)wc->wr_id;
    if (wc->status == IBV_WC_WR_FLUSH_ERR)
        return -1;
    if (wc->status != IBV_WC_SUCCESS || slot >= u->rx_depth || wc->byte_len < ACIS_UD_GRH) {
        if (slot < u->rx_depth)
            post_recv(u, slot);
        return 1;
    }
    const uint8_t *buf = rx_buf(u, slot);
    memset(m, 0, sizeof *m);
    m->data = buf + ACIS_UD_GRH;
    m->len = wc->byte_len - ACIS_UD_GRH;
    m->wc = *wc;
    m->from.qpn = wc->src_qp;
    m->from.lid = wc->slid;
    if (wc->wc_flags & IBV_WC_GRH) {
        sender_gid(u, buf, m->from.gid);
        m->from.has_gid = 1;
    }
    return 0;
}

int acis_ud_recv(struct acis_ud *u, struct acis_ud_msg *m, int max)
{
    struct ibv_wc wc[POST_BATCH + 1];
    int n = 0, got = 0, failed = 0;
    pthread_mutex_lock(&u->rx_lock);
    if (max > 0 && u->has_held) {
        u->has_held = 0;
        wc[n++] = u->held;
    }
    int want = max - n < POST_BATCH ? max - n : POST_BATCH;
    int polled = want > 0 ? ibv_poll_cq(u->rcq, want, wc + n) : 0;
    failed = polled < 0;
    n += polled > 0 ? polled : 0;
    for (int i = 0; i < n; i++) {
        int r = take(u, &wc[i], &m[got]);
        got += r == 0;
        failed |= r < 0;
    }
    pthread_mutex_unlock(&u->rx_lock);
    return failed ? -1 : got;
}

int acis_ud_repost(struct acis_ud *u, const struct acis_ud_msg *m, int n)
{
    int rc = 0;
    pthread_mutex_lock(&u->rx_lock);
    for (int i = 0; i < n && rc == 0; i++)
        rc = post_recv(u, (uint32_t)m[i].wc.wr_id);
    pthread_mutex_unlock(&u->rx_lock);
    return rc ? -1 : 0;
}

int acis_ud_wait(struct acis_ud *u, int ms)
{
    int n = 0;
    pthread_mutex_lock(&u->rx_lock);
    if (!u->has_held) {
        n = ibv_req_notify_cq(u->rcq, 0) != 0 ? -1 : ibv_poll_cq(u->rcq, 1, &u->held);
        u->has_held = n > 0;   /* one that came before the arming raises no event */
    }
    int ready = u->has_held;
    pthread_mutex_unlock(&u->rx_lock);
    if (ready || n < 0)
        return n < 0 ? -1 : 1;
    struct pollfd pf = { u->cc->fd, POLLIN, 0 };
    int r = poll(&pf, 1, ms);
    if (r <= 0)
        return r < 0 && errno != EINTR ? -1 : 0;
    struct ibv_cq *cq;
    void *cctx;
    if (ibv_get_cq_event(u->cc, &cq, &cctx) == 0)
        ibv_ack_cq_events(cq, 1);
    return 1;
}
