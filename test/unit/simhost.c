/* simhost.c -- simulated hosts around a switch core (see simhost.h). */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "simhost.h"

static uint64_t sim_clock = 1000000000ull;

uint64_t sim_now(void)
{
    return sim_clock += 20000;                     /* 20 us per event */
}

/* A roll of the dice: 1 with probability pct percent. */
static int roll(struct sim *s, unsigned pct)
{
    s->rng = s->rng * 1103515245u + 12345u;
    return pct && (s->rng >> 8) % 100 < pct;
}

/* Room for one more packet in h's queue (a full queue drops, as UDP
 * would). */
static int room(struct sim_host *h)
{
    if (h->qtail - h->qhead < h->qcap)
        return 1;
    if (h->qcap >= SIM_QUEUE)
        return 0;
    size_t cap = h->qcap ? 2 * h->qcap : 8;
    struct sim_pkt *q = malloc(sizeof *q * cap);
    if (!q)
        return 0;
    for (size_t i = 0; i < h->qtail - h->qhead; i++)
        q[i] = h->q[(h->qhead + i) % h->qcap];
    free(h->q);
    h->qtail -= h->qhead;
    h->qhead = 0;
    h->q = q;
    h->qcap = cap;
    return 1;
}

static void push(struct sim *s, struct sim_host *h, const struct iovec *iov, int iovcnt)
{
    if (roll(s, s->loss))
        return;                                    /* lost on the way down */
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++)
        len += iov[i].iov_len;
    uint8_t *d = malloc(len ? len : 1);
    size_t off = 0;
    for (int i = 0; i < iovcnt; i++) {
        memcpy(d + off, iov[i].iov_base, iov[i].iov_len);
        off += iov[i].iov_len;
    }
    if (!room(h)) {
        free(d);
        return;
    }
    h->q[h->qtail % h->qcap] = (struct sim_pkt){ d, len };
    h->qtail++;
}

static int io_open(void *ctx, uint32_t port, const void *peer)
{
    struct sim *s = ctx;
    if (port >= s->nports) {
        uint32_t n = port + 1 > 2 * s->nports ? port + 1 : 2 * s->nports;
        int *ph = realloc(s->port_host, sizeof(int) * n);
        if (!ph)
            return -1;
        memset(ph + s->nports, 0xff, sizeof(int) * (n - s->nports));
        s->port_host = ph;
        s->nports = n;
    }
    s->port_host[port] = *(const int *)peer;
    s->hosts[*(const int *)peer].port = port;
    return 0;
}

static void io_close(void *ctx, uint32_t port)
{
    struct sim *s = ctx;
    if (port < s->nports)
        s->port_host[port] = -1;
}

static void io_send(void *ctx, const uint32_t *ports, uint32_t n,
                    const struct iovec *iov, int iovcnt)
{
    struct sim *s = ctx;
    for (uint32_t i = 0; i < n; i++)
        if (ports[i] < s->nports && s->port_host[ports[i]] >= 0) {
            push(s, &s->hosts[s->port_host[ports[i]]], iov, iovcnt);
            if (roll(s, s->dup))
                push(s, &s->hosts[s->port_host[ports[i]]], iov, iovcnt);
        }
}

static void io_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    struct sim *s = ctx;
    struct sim_host tmp = { 0 };
    push(s, &tmp, iov, iovcnt);
    free(s->service.data);
    s->service = tmp.qtail ? tmp.q[0] : (struct sim_pkt){ NULL, 0 };
    free(tmp.q);
    s->service_peer = *(const int *)peer;
}

/* A fresh s; the hosts' side of the switch's transport. */
static struct acis_sw_io sim_reset(struct sim *s)
{
    memset(s, 0, sizeof *s);
    s->rng = 12345;
    return (struct acis_sw_io){ s, io_open, io_close, io_send, io_reply, NULL };
}

int sim_init(struct sim *s, const struct acis_sw_opts *o)
{
    char err[128];
    struct acis_sw_io io = sim_reset(s);
    s->sw = acis_sw_create(o, &io, err, sizeof err);
    return s->sw ? 0 : -1;
}

int sim_init_memory(struct sim *s, const struct acis_sw_opts *o,
                    int (*memory)(void *ctx, const void *peer))
{
    char err[128];
    struct acis_sw_io io = sim_reset(s);
    io.memory = memory;
    s->sw = acis_sw_create(o, &io, err, sizeof err);
    return s->sw ? 0 : -1;
}

int sim_init_fabric(struct sim *s, const char *topo, const struct acis_sw_opts *o,
                    char *err, size_t errlen)
{
    struct acis_sw_io io = sim_reset(s);
    s->fab = acis_fabric_create(topo, o, &io, err, errlen);
    return s->fab ? 0 : -1;
}

void sim_fini(struct sim *s)
{
    acis_sw_destroy(s->sw);
    acis_fabric_destroy(s->fab);
    for (int h = 0; h < s->nhosts; h++) {
        struct sim_pkt p;
        while (sim_pop(s, h, &p))
            free(p.data);
        free(s->hosts[h].q);
    }
    free(s->hosts);
    free(s->port_host);
    free(s->service.data);
    s->service.data = NULL;
    s->hosts = NULL;
    s->port_host = NULL;
}

struct sim_comm *sim_comm_new(int n)
{
    struct sim_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->n = n;
    c->host = calloc((size_t)n, sizeof *c->host);
    c->win = calloc((size_t)n, sizeof *c->win);
    if (!c->host || !c->win) {
        sim_comm_free(c);
        return NULL;
    }
    return c;
}

void sim_comm_free(struct sim_comm *c)
{
    if (!c)
        return;
    for (int i = 0; c->win && i < c->n; i++)
        acis_window_free(&c->win[i]);
    free(c->win);
    free(c->host);
    free(c);
}

size_t sim_control(uint8_t *buf, unsigned kind, uint64_t key, uint32_t src, uint32_t ctx,
                   uint32_t seq, const void *payload, size_t len)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .payload_len = (uint32_t)len,
        .job_key = key, .ctx = ctx, .seq = seq, .src = src,
    };
    acis_hdr_encode(&h, buf);
    if (len)
        memcpy(buf + ACIS_HDR_LEN, payload, len);
    acis_hdr_seal(buf, payload, len);
    return ACIS_HDR_LEN + len;
}

size_t sim_piece(uint8_t *buf, const struct sim *s, const struct sim_comm *c, int m, uint32_t i,
                 unsigned dt, const void *data, uint32_t n)
{
    const struct sim_host *h = &s->hosts[c->host[m]];
    uint32_t len = 4 * n;
    struct acis_hdr hd = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(n ? ACIS_K_ALLREDUCE : ACIS_K_BARRIER, ACIS_ALG_FLAT),
        .op = n ? ACIS_OP_SUM : ACIS_OP_NONE, .dtype = (uint8_t)(n ? dt : ACIS_DT_NONE),
        .flags = (uint16_t)(i / c->window % 2 ? ACIS_F_ROUND : 0),
        .slot = (uint16_t)(i % c->window), .payload_len = len, .job_key = h->job_key,
        .ctx = c->ctx, .seq = i + 1, .src = h->rank, .total_len = len, .rx_len = len,
        .member = (uint32_t)m,
    };
    acis_hdr_encode(&hd, buf);
    if (len)
        memcpy(buf + ACIS_HDR_LEN, data, len);
    acis_hdr_seal(buf, data, len);
    return ACIS_HDR_LEN + len;
}

static int none_open(void *ctx, uint32_t port, const void *peer)
{
    (void)ctx, (void)port, (void)peer;
    return 0;
}

static void none_close(void *ctx, uint32_t port)
{
    (void)ctx, (void)port;
}

static void none_reply(void *ctx, const void *peer, const struct iovec *iov, int iovcnt)
{
    (void)ctx, (void)peer, (void)iov, (void)iovcnt;
}

struct acis_sw_io sim_send_only_io(void *ctx,
                                   void (*send)(void *ctx, const uint32_t *ports, uint32_t n,
                                                const struct iovec *iov, int iovcnt))
{
    return (struct acis_sw_io){ ctx, none_open, none_close, send, none_reply, NULL };
}

int sim_pop(struct sim *s, int h, struct sim_pkt *p)
{
    struct sim_host *x = &s->hosts[h];
    if (x->qhead == x->qtail)
        return 0;
    *p = x->q[x->qhead % x->qcap];
    x->qhead++;
    return 1;
}

/* Wait-free "receive" of a decoded control answer of kind on host h. */
static int pop_control(struct sim *s, int h, unsigned kind, struct acis_hdr *hd,
                       uint8_t *payload, size_t max)
{
    struct sim_pkt p;
    while (sim_pop(s, h, &p)) {
        int ok = acis_wire_decode(p.data, p.len, ACIS_MAX_PAYLOAD, hd) == ACIS_WERR_OK &&
                 ACIS_OPC_KIND(hd->opcode) == kind && hd->payload_len <= max;
        if (ok)
            memcpy(payload, p.data + ACIS_HDR_LEN, hd->payload_len);
        free(p.data);
        if (ok)
            return 1;
    }
    return 0;
}

int sim_join(struct sim *s, uint64_t key, uint32_t rank, uint32_t world, uint32_t *status)
{
    return sim_join_at(s, 0, key, rank, world, status);
}

int sim_join_at(struct sim *s, uint32_t sw, uint64_t key, uint32_t rank, uint32_t world,
                uint32_t *status)
{
    int id = s->nhosts;
    if (id == s->hcap) {
        int cap = s->hcap ? 2 * s->hcap : 64;
        struct sim_host *hs = realloc(s->hosts, sizeof *hs * (size_t)cap);
        if (!hs) {
            *status = 0xffffffffu;
            return -1;
        }
        s->hosts = hs;
        s->hcap = cap;
    }
    struct sim_host *h = &s->hosts[id];
    uint8_t buf[ACIS_HDR_LEN + ACIS_HELLO_LEN], pl[ACIS_HELLO_LEN] = { 0 };
    memset(h, 0, sizeof *h);
    h->id = id;
    h->rank = rank;
    h->job_key = key;
    h->port = 0xffffffffu;
    acis_put32(pl, world);
    acis_put32(pl + 4, s->hello_flags);
    sim_control(buf, ACIS_K_HELLO, key, rank, 0, 1, pl, sizeof pl);
    if (s->fab)
        acis_fabric_service(s->fab, sw, &id, buf, sizeof buf);
    else
        sim_input(s->sw, ACIS_PORT_SERVICE, &id, buf, sizeof buf);
    struct acis_hdr hd;
    uint8_t w[ACIS_WELCOME_LEN];
    if (h->port != 0xffffffffu && pop_control(s, id, ACIS_K_WELCOME, &hd, w, sizeof w) &&
        acis_get32(w) == ACIS_ST_OK) {
        h->payload = acis_get32(w + 8);
        h->window = acis_get32(w + 12);
        h->credits = acis_get32(w + 24);
        s->nhosts++;
        *status = ACIS_ST_OK;
        return id;
    }
    struct sim_pkt left;
    while (sim_pop(s, id, &left))
        free(left.data);
    free(h->q);
    if (h->port != 0xffffffffu && h->port < s->nports)
        s->port_host[h->port] = -1;
    *status = 0xffffffffu;
    if (s->service.data &&
        acis_wire_decode(s->service.data, s->service.len, ACIS_MAX_PAYLOAD, &hd) == ACIS_WERR_OK)
        *status = acis_get32(s->service.data + ACIS_HDR_LEN);
    return -1;
}

void sim_leave(struct sim *s, int h)
{
    uint8_t buf[ACIS_HDR_LEN];
    sim_control(buf, ACIS_K_BYE, s->hosts[h].job_key, s->hosts[h].rank, 0, 0, NULL, 0);
    sim_send_raw(s, h, buf, sizeof buf);
}

void sim_send_raw(struct sim *s, int h, const void *pkt, size_t len)
{
    const int *peer = &s->hosts[h].id;   /* where a service answer goes */
    if (s->fab)
        acis_fabric_input(s->fab, s->hosts[h].port, peer, pkt, len);
    else
        sim_input(s->sw, s->hosts[h].port, peer, pkt, len);
}

/* A data packet from a host, lost or doubled on the way up as set. */
static void send_data(struct sim *s, int h, const void *pkt, size_t len)
{
    if (roll(s, s->loss))
        return;
    sim_send_raw(s, h, pkt, len);
    if (roll(s, s->dup))
        sim_send_raw(s, h, pkt, len);
}

uint32_t sim_ct_create(struct sim *s, struct sim_comm *c, uint32_t req)
{
    uint32_t leader = s->hosts[c->host[0]].rank;
    for (int i = 0; i < c->n; i++) {
        const struct sim_host *h = &s->hosts[c->host[i]];
        uint8_t pl[ACIS_CT_JOIN_LEN], buf[ACIS_HDR_LEN + ACIS_CT_JOIN_LEN];
        struct acis_hdr hd = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_CT_JOIN, ACIS_ALG_FLAT), .payload_len = sizeof pl,
            .job_key = h->job_key, .seq = req, .src = h->rank, .root = leader,
        };
        acis_put32(pl, (uint32_t)c->n);
        acis_put32(pl + 4, (uint32_t)i);
        acis_hdr_encode(&hd, buf);
        memcpy(buf + ACIS_HDR_LEN, pl, sizeof pl);
        acis_hdr_seal(buf, pl, sizeof pl);
        sim_send_raw(s, c->host[i], buf, sizeof buf);
    }
    uint32_t st = 0xffffffffu;
    for (int i = 0; i < c->n; i++) {
        struct acis_hdr hd;
        uint8_t r[ACIS_CT_REPLY_LEN];
        if (!pop_control(s, c->host[i], ACIS_K_CT_REPLY, &hd, r, sizeof r) ||
            hd.seq != req || hd.root != leader || (i > 0 && acis_get32(r) != st) ||
            (i > 0 && acis_get32(r + 4) != c->ctx))
            return 0xffffffffu;
        st = acis_get32(r);
        c->ctx = acis_get32(r + 4);
        c->window = acis_get32(r + 8);
        c->payload = acis_get32(r + 12);
        c->flags = acis_get32(r + 16);
    }
    c->seq = 0;
    for (int i = 0; i < c->n; i++) {
        acis_window_free(&c->win[i]);
        acis_window_init(&c->win[i], c->window ? c->window : 1);
    }
    return st;
}

uint32_t sim_ct_free(struct sim *s, struct sim_comm *c)
{
    struct sim_host *lead = &s->hosts[c->host[0]];
    uint8_t buf[ACIS_HDR_LEN];
    sim_control(buf, ACIS_K_CT_FREE, lead->job_key, lead->rank, c->ctx, 0, NULL, 0);
    sim_send_raw(s, c->host[0], buf, sizeof buf);
    for (int i = 0; i < c->n; i++)
        acis_window_free(&c->win[i]);
    struct acis_hdr hd;
    uint8_t r[ACIS_STATUS_LEN];
    return pop_control(s, c->host[0], ACIS_K_CT_FREED, &hd, r, sizeof r) ? acis_get32(r)
                                                                          : 0xffffffffu;
}

struct sim_part {                 /* one member of one running collective */
    int coll, host;
    struct acis_window *win;
    struct acis_stream st;
};

int sim_run(struct sim *s, const struct sim_coll *colls, int n, unsigned seed)
{
    int np = 0, bad = 0;
    for (int k = 0; k < n; k++)
        np += colls[k].c->n;
    struct sim_part *p = calloc((size_t)np, sizeof *p);
    int *order = malloc(sizeof(int) * (size_t)np);
    int *hfirst = malloc(sizeof(int) * (size_t)(s->nhosts + 1)), *pnext = malloc(sizeof(int) * (size_t)np);
    for (int h = 0; h <= s->nhosts; h++)
        hfirst[h] = -1;
    for (int k = 0, x = 0; k < n; k++) {
        const struct sim_coll *co = &colls[k];
        uint32_t seq = ++co->c->seq;
        for (int i = 0; i < co->c->n; i++, x++) {
            struct sim_host *h = &s->hosts[co->c->host[i]];
            p[x].coll = k;
            p[x].host = co->c->host[i];
            p[x].win = &co->c->win[i];
            p[x].st = (struct acis_stream){
                .kind = (uint8_t)co->kind, .op = (uint8_t)co->op, .dtype = (uint8_t)co->dtype,
                .root = co->root, .ctx = co->c->ctx, .seq = seq, .src = h->rank,
                .job_key = h->job_key, .total = co->total,
                .seg_bytes = acis_seg_bytes(co->c->payload, co->kind, co->dtype,
                                            co->c->flags & ACIS_CT_SCAN_SPLIT ? (uint32_t)co->c->n
                                                                              : 0),
                .member = (uint32_t)i,
                .src_buf = co->m[i].src, .src_off = co->m[i].src_off,
                .src_len = co->m[i].src_len, .dst_buf = co->m[i].dst,
                .dst_off = co->m[i].dst_off, .dst_len = co->m[i].dst_len,
                .abstain = (uint8_t)(s->abstainer == co->c->host[i] + 1),
            };
            if (s->owner == co->c->host[i] + 1) {
                p[x].st.own_off = s->own_off;
                p[x].st.own_len = s->own_len;
            }
            acis_stream_start(&p[x].st, p[x].win);
            order[x] = x;
            pnext[x] = hfirst[p[x].host];       /* the host's parts, to demultiplex */
            hfirst[p[x].host] = x;
        }
    }
    srand(seed);
    for (int round = 0, active = np; active > 0 && !bad && round < 1000000; round++) {
        for (int i = np - 1; i > 0; i--) {            /* shuffle who sends first */
            int j = rand() % (i + 1), t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int y = 0; y < np; y++) {
            struct sim_part *q = &p[order[y]];
            for (int burst = 1 + rand() % 4; burst > 0 && acis_stream_can_send(&q->st, q->win);
                 burst--) {
                uint8_t pkt[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
                const uint8_t *pl;
                uint32_t len;
                acis_stream_next(&q->st, q->win, pkt, &pl, &len, sim_now());
                if (len)
                    memcpy(pkt + ACIS_HDR_LEN, pl, len);
                acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, len);    /* as the device does */
                send_data(s, q->host, pkt, ACIS_HDR_LEN + len);
            }
        }
        /* Repeat segments whose answers are overdue (simulated 1 ms). */
        for (int y = 0; y < np && (s->loss || s->dup); y++) {
            struct acis_window *w = p[y].win;
            for (uint32_t slot = 0; slot < w->size; slot++) {
                uint8_t pkt[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
                const uint8_t *pl;
                uint32_t len;
                if (w->busy[slot] && w->owner[slot] == &p[y].st &&
                    acis_window_resend(w, slot, sim_now(), 1000000, pkt, &pl, &len)) {
                    if (len)
                        memcpy(pkt + ACIS_HDR_LEN, pl, len);
                    acis_hdr_seal(pkt, pkt + ACIS_HDR_LEN, len);
                    send_data(s, p[y].host, pkt, ACIS_HDR_LEN + len);
                }
            }
        }
        active = 0;
        for (int y = 0; y < np; y++) {
            struct sim_pkt pk;
            while (sim_pop(s, p[y].host, &pk)) {      /* demultiplex by context */
                struct acis_hdr hd;
                int x = -1;
                if (acis_wire_decode(pk.data, pk.len, ACIS_MAX_PAYLOAD, &hd) == ACIS_WERR_OK)
                    for (int z = hfirst[p[y].host]; z >= 0 && x < 0; z = pnext[z])
                        if (p[z].st.ctx == hd.ctx && p[z].st.seq == hd.seq)
                            x = z;
                if (x < 0 || (acis_stream_answer(&p[x].st, p[x].win, &hd, pk.data + ACIS_HDR_LEN) &&
                              !s->dup && !s->loss))
                    bad = 1;                       /* repeats are expected under loss */
                free(pk.data);
            }
        }
        for (int y = 0; y < np; y++)
            active += !acis_stream_finished(&p[y].st);
    }
    int unfinished = 0;
    s->refused = 0;
    for (int y = 0; y < np; y++) {
        unfinished += !acis_stream_finished(&p[y].st);
        s->refused += p[y].st.refused;
    }
    free(p);
    free(order);
    free(hfirst);
    free(pnext);
    return bad || unfinished ? -1 : 0;
}

int sim_collective(struct sim *s, struct sim_comm *c, unsigned kind, unsigned op,
                   unsigned dtype, uint32_t root, uint64_t total,
                   const struct sim_member *m, unsigned seed)
{
    struct sim_coll one = { c, kind, op, dtype, root, total, m };
    return sim_run(s, &one, 1, seed);
}

void sim_counters(struct sim *s)
{
    if (!s->fab) {
        acis_sw_counters(s->sw, s->c);
        return;
    }
    uint64_t c[ACIS_SWC_COUNT];
    memset(s->c, 0, sizeof s->c);
    for (uint32_t i = 0; i < acis_fabric_switches(s->fab); i++) {
        acis_fabric_counters(s->fab, i, c);
        for (int k = 0; k < ACIS_SWC_COUNT; k++)
            s->c[k] += c[k];
    }
}
