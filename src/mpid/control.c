/* control.c -- the device's control plane: opening a channel and joining
 * the switch (HELLO/WELCOME), control round trips (CT_CREATE, CT_JOIN,
 * CT_FREE, STATS) resent until answered, leaving (BYE), and the embedded
 * switch this process may host.  Shares the device's context (dev.h). */
#include "config.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "mpid/dev.h"
#include "util/util.h"

#define RETRY_NS 100000000ull      /* control requests are resent every 100 ms */

static const struct acis_chan_ops *const channels[] = {
    [ACIS_DEV_UDP] = &acis_chan_udp,
    [ACIS_DEV_SHM] = &acis_chan_shm,
    [ACIS_DEV_VERBS] = &acis_chan_verbs,
};

/* A free control entry for kind and seq (and root, for a join), NULL if
 * none.  Entry 0 is kept for round trips that hold the lock throughout:
 * one thread at a time can be in one, so one always finds it free, however
 * many joins wait meanwhile with the lock let go. */
static struct acis_dev_ctl *ctl_claim(struct acis_dev_ctx *d, unsigned kind, uint32_t seq,
                                      const uint32_t *root)
{
    for (int i = root ? 1 : 0; i < (root ? ACIS_DEV_CTL_SLOTS : 1); i++)
        if (d->ctl[i].kind == ACIS_K_NONE) {
            d->ctl[i] = (struct acis_dev_ctl){ .kind = kind, .seq = seq,
                                               .root = root ? *root : 0, .by_root = !!root };
            return &d->ctl[i];
        }
    return NULL;
}

/* Send a control request and wait for its answer (kind, same seq); the
 * request is resent every RETRY_NS.  0 with the answer in *res, or -1
 * after timeout_ms or once the device was closed meanwhile.  join: the
 * caller holds the device lock and the answer waits for other ranks (a
 * set-up answers once every member joined; its answer names the set-up's
 * leader, *join): the lock is let go between looks, so that this
 * process's other threads can send their own joins meanwhile (holding it,
 * two threads setting up two communicators in opposite orders on two
 * ranks waited for each other until the timeout).  Any thread's poll
 * fills the entry. */
static int round_trip(struct acis_dev_ctx *d, uint8_t *hdr, const void *payload, size_t len,
                      unsigned kind, uint32_t seq, int timeout_ms, const uint32_t *join,
                      struct acis_dev_ctl *res)
{
    struct acis_dev_pkt p = { hdr, payload, (uint32_t)len };
    uint64_t start = acis_now_ns(), sent = 0;
    uint32_t opened = d->opened;
    int release = join && d->threaded;
    struct acis_dev_ctl *c = NULL;
    int got = 0;
    for (;;) {
        if (c && c->got) {                    /* filled by whoever polled last */
            got = 1;
            break;
        }
        uint64_t now = acis_now_ns();
        if (now - start > (uint64_t)timeout_ms * 1000000ull || !d->ch || d->opened != opened)
            break;                            /* (a rejoin meanwhile: another switch) */
        if (!c)
            c = ctl_claim(d, kind, seq, join);    /* none: wait for a join's to free */
        if (c && (sent == 0 || now - sent > RETRY_NS)) {
            if (acis_dev_chan_send(d, &p, 1) != 0)
                break;
            sent = now;
        }
        if (acis_dev_poll_ctx(d) < 0)
            break;
        if (c && c->got)
            continue;
        if (release) {
            struct timespec ts = { 0, 100000 };
            acis_dev_unlock();
            nanosleep(&ts, NULL);
            acis_dev_lock();
        } else {
            d->ops->wait(d->ch, 10);
        }
    }
    if (c) {
        if (got)
            *res = *c;
        c->kind = ACIS_K_NONE;
    }
    if (d->ch && d->ops->flush)           /* the caller frees the payload next */
        d->ops->flush(d->ch);
    /* A table set-up or free is not followed by a collective of ours (a
     * refused set-up goes to MPICH, a free returns to the application):
     * the switch we drove goes back to its thread here, if a row lacks us. */
    acis_dev_leave();
    return got ? 0 : -1;
}

uint32_t acis_dev_credits(uint32_t offered, int rcvbuf, int rx_packets, uint32_t payload)
{
    uint32_t mine = rx_packets > 0 ? (uint32_t)rx_packets
                                   : ACIS_BUF_PACKETS(rcvbuf > 0 ? rcvbuf : 0, payload);
    uint32_t cap = offered && offered < mine ? offered : mine;
    return cap ? cap : 1;
}

int acis_dev_open(int chan, const char *addr, uint64_t key, uint32_t rank, uint32_t world,
                  int timeout_ms, char *why, size_t whylen)
{
    memset(&acis_dev.info, 0, sizeof acis_dev.info);
    acis_dev.key = key;
    acis_dev.rank = rank;
    if (chan < 0 || chan > ACIS_DEV_VERBS) {
        snprintf(why, whylen, "no device");
        return -1;
    }
    acis_dev.ops = channels[chan];
    atomic_store(&acis_dev.heard_ns, acis_now_ns());
    if (acis_dev.ops->open(&acis_dev.ch, addr, why, whylen) != 0)
        return -1;
    acis_dev.rx_cap = ACIS_HDR_LEN + ACIS_MAX_PAYLOAD;
    for (int i = 0; i < ACIS_RX_BATCH; i++)
        if (!(acis_dev.rx[i] = malloc(acis_dev.rx_cap))) {
            snprintf(why, whylen, "out of memory");
            goto fail;
        }
    if (getrandom(&acis_dev.req, sizeof acis_dev.req, 0) != sizeof acis_dev.req)
        acis_dev.req = (uint32_t)acis_now_ns();
    uint8_t hdr[ACIS_HDR_LEN], pl[ACIS_HELLO_LEN] = { 0 };
    uint32_t seq = ++acis_dev.req;
    acis_dev.memory = acis_dev.ops->memory && acis_dev.ops->memory(acis_dev.ch);
    atomic_store(&acis_dev.unseal, 0);
    acis_put32(pl, world);
    acis_put32(pl + 4, acis_dev.memory ? ACIS_HELLO_UNSEALED : 0);
    acis_dev_control_packet(&acis_dev, hdr, ACIS_K_HELLO, 0, seq, pl, sizeof pl);
    uint64_t foreign = atomic_load(&acis_util.host.packets_foreign);
    struct acis_dev_ctl res;
    if (round_trip(&acis_dev, hdr, pl, sizeof pl, ACIS_K_WELCOME, seq, timeout_ms, NULL,
                   &res) != 0) {
        foreign = atomic_load(&acis_util.host.packets_foreign) - foreign;
        snprintf(why, whylen, "switch %s did not answer within %d ms%s", addr, timeout_ms,
                 foreign ? " (datagrams from other addresses were dropped: a switch that "
                           "answers from another address than it was given?)" : "");
        goto fail;
    }
    const uint8_t *w = res.answer + ACIS_HDR_LEN;
    uint32_t st = acis_get32(w);
    if (st != ACIS_ST_OK) {
        snprintf(why, whylen, "switch %s refused to join: %s", addr,
                 st == ACIS_ST_NO_PORT ? "no free host port"
                 : st == ACIS_ST_JOB_MISMATCH ? "job key in use with another size"
                 : st == ACIS_ST_JOB_LIMIT ? "the job holds all the ports one job may"
                                              : "bad request");
        goto fail;
    }
    acis_dev.info = (struct acis_dev_info){
        .port = acis_get32(w + 4), .max_payload = acis_get32(w + 8),
        .window = acis_get32(w + 12), .tables = acis_get32(w + 16),
        .radix = acis_get32(w + 20), .credits = acis_get32(w + 24),
        .boot = acis_get32(w + 28),
    };
    if (acis_dev.ops->attach(acis_dev.ch, &res.from) != 0) {
        snprintf(why, whylen, "cannot attach to switch port %u", acis_dev.info.port);
        goto fail;
    }
    if (acis_dev.embedded) {
        acis_udpsw_set_home(acis_dev.embedded, acis_dev.info.port);
        acis_dev_home_answers(&acis_dev);
    }
    uint32_t most = acis_dev.ops->max_packet ? acis_dev.ops->max_packet(acis_dev.ch) : 0;
    if (most && ACIS_HDR_LEN + acis_dev.info.max_payload > most) {
        snprintf(why, whylen, "the switch's %u-byte packets do not fit this channel's %u "
                 "(a smaller MTU here than at the switch?)",
                 ACIS_HDR_LEN + acis_dev.info.max_payload, most);
        goto fail;
    }
    const struct acis_chan_ops *ops = acis_dev.ops;
    acis_dev.credit_cap = acis_dev_credits(acis_dev.info.credits,
                                           ops->rcvbuf ? ops->rcvbuf(acis_dev.ch) : 0,
                                           ops->rx_packets ? ops->rx_packets(acis_dev.ch) : 0,
                                           acis_dev.info.max_payload);
    return 0;
fail:
    acis_dev_close();
    return -1;
}

void acis_dev_close(void)
{
    if (acis_dev.ch) {
        if (acis_dev.info.port || acis_dev.info.max_payload) {
            uint8_t hdr[ACIS_HDR_LEN];
            struct acis_dev_pkt p = { hdr, NULL, 0 };
            acis_dev_control_packet(&acis_dev, hdr, ACIS_K_BYE, 0, ++acis_dev.req, NULL, 0);
            acis_dev.ops->send(acis_dev.ch, &p, 1);
        }
        acis_dev.ops->close(acis_dev.ch);
        acis_dev.ch = NULL;
        acis_dev.opened++;               /* a round trip waiting unlocked gives up */
    }
    for (int i = 0; i < ACIS_RX_BATCH; i++) {
        free(acis_dev.rx[i]);
        acis_dev.rx[i] = NULL;
    }
    memset(&acis_dev.info, 0, sizeof acis_dev.info);
    acis_dev.memory = 0;
    atomic_store(&acis_dev.unseal, 0);
}

/* A CT_REPLY's fields (flags only where the switch sent them). */
static void read_reply(const struct acis_dev_ctl *res, uint32_t *status, uint32_t *ctx,
                       uint32_t *window, uint32_t *payload, uint32_t *flags)
{
    const uint8_t *r = res->answer + ACIS_HDR_LEN;
    *status = acis_get32(r);
    *ctx = acis_get32(r + 4);
    *window = acis_get32(r + 8);
    *payload = acis_get32(r + 12);
    *flags = res->len >= ACIS_HDR_LEN + 20 ? acis_get32(r + 16) : 0;
}

int acis_dev_ct_create(const uint32_t *granks, uint32_t n, uint32_t *status,
                       uint32_t *ctx, uint32_t *window, uint32_t *payload, uint32_t *flags)
{
    if (n > ACIS_CT_CREATE_MAX) {
        *status = ACIS_ST_BAD_REQUEST;
        return 0;
    }
    size_t len = 4 + 4 * (size_t)n;
    uint8_t hdr[ACIS_HDR_LEN], *pl = malloc(len);
    if (!pl)
        return -1;
    acis_put32(pl, n);
    for (uint32_t i = 0; i < n; i++)
        acis_put32(pl + 4 + 4 * i, granks[i]);
    uint32_t seq = ++acis_dev.req;
    acis_dev_control_packet(&acis_dev, hdr, ACIS_K_CT_CREATE, 0, seq, pl, len);
    struct acis_dev_ctl res;
    int rc = round_trip(&acis_dev, hdr, pl, len, ACIS_K_CT_REPLY, seq, acis_dev.timeout_ms, NULL,
                        &res);
    free(pl);
    if (rc != 0)
        return -1;
    read_reply(&res, status, ctx, window, payload, flags);
    return 0;
}

uint32_t acis_dev_request_id(void)
{
    return ++acis_dev.req | 0x80000000u;
}

int acis_dev_joins(void)
{
    return acis_dev.ops && acis_dev.ops != &acis_chan_shm;
}

int acis_dev_ct_join(uint32_t id, uint32_t leader, uint32_t n, uint32_t member,
                     uint32_t *status, uint32_t *ctx, uint32_t *window, uint32_t *payload,
                     uint32_t *flags)
{
    uint8_t hdr[ACIS_HDR_LEN], pl[ACIS_CT_JOIN_LEN];
    acis_put32(pl, n);
    acis_put32(pl + 4, member);
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_CT_JOIN, ACIS_ALG_FLAT), .payload_len = sizeof pl,
        .job_key = acis_dev.key, .seq = id, .src = acis_dev.rank, .root = leader,
    };
    acis_hdr_encode(&h, hdr);
    acis_hdr_seal(hdr, pl, sizeof pl);
    struct acis_dev_ctl res;
    if (round_trip(&acis_dev, hdr, pl, sizeof pl, ACIS_K_CT_REPLY, id, acis_dev.timeout_ms,
                   &leader, &res) != 0)
        return -1;
    read_reply(&res, status, ctx, window, payload, flags);
    return 0;
}

int acis_dev_ct_free(uint32_t ctx)
{
    uint8_t hdr[ACIS_HDR_LEN];
    uint32_t seq = ++acis_dev.req;
    acis_dev_control_packet(&acis_dev, hdr, ACIS_K_CT_FREE, ctx, seq, NULL, 0);
    struct acis_dev_ctl res;
    return round_trip(&acis_dev, hdr, NULL, 0, ACIS_K_CT_FREED, seq, acis_dev.timeout_ms, NULL,
                      &res);
}

_Static_assert(4 + 8 * ACIS_SWC_COUNT <= ACIS_DEV_CTL_BYTES - ACIS_HDR_LEN,
               "a switch's counters fit a control answer");

static int read_stats(const uint8_t *ans, size_t len, uint64_t *out, int max)
{
    uint32_t n = acis_get32(ans + ACIS_HDR_LEN);
    if ((size_t)ACIS_HDR_LEN + 4 + 8 * (size_t)n > len)
        return -1;
    int k = (int)n < max ? (int)n : max;
    for (int i = 0; i < k; i++)
        out[i] = acis_get64(ans + ACIS_HDR_LEN + 4 + 8 * i);
    return k;
}

int acis_dev_switch_stats(uint64_t *out, int max)
{
    uint8_t hdr[ACIS_HDR_LEN];
    uint32_t seq = ++acis_dev.req;
    if (!acis_dev.ch)
        return -1;
    acis_dev_control_packet(&acis_dev, hdr, ACIS_K_STATS_REQ, 0, seq, NULL, 0);
    struct acis_dev_ctl res;
    if (round_trip(&acis_dev, hdr, NULL, 0, ACIS_K_STATS_REPLY, seq, acis_dev.timeout_ms, NULL,
                   &res) != 0)
        return -1;
    return read_stats(res.answer, res.len, out, max);
}

int acis_dev_query_stats(const char *addr, uint64_t *out, int max, int timeout_ms,
                         char *why, size_t whylen)
{
    struct acis_dev_ctx *d = calloc(1, sizeof *d);
    int rc = -1;
    if (!d)
        return -1;
    d->ops = &acis_chan_udp;
    d->rx_cap = ACIS_HDR_LEN + ACIS_MAX_PAYLOAD;
    for (int i = 0; i < ACIS_RX_BATCH; i++)
        if (!(d->rx[i] = malloc(d->rx_cap)))
            goto out;
    if (d->ops->open(&d->ch, addr, why, whylen) != 0)
        goto out;
    uint8_t hdr[ACIS_HDR_LEN];
    acis_dev_control_packet(d, hdr, ACIS_K_STATS_REQ, 0, 1, NULL, 0);
    struct acis_dev_ctl res;
    if (round_trip(d, hdr, NULL, 0, ACIS_K_STATS_REPLY, 1, timeout_ms, NULL, &res) != 0)
        snprintf(why, whylen, "switch %s did not answer within %d ms", addr, timeout_ms);
    else
        rc = read_stats(res.answer, res.len, out, max);
out:
    if (d->ch)
        d->ops->close(d->ch);
    for (int i = 0; i < ACIS_RX_BATCH; i++)
        free(d->rx[i]);
    free(d);
    return rc;
}

int acis_dev_embed_start(const char *listen, const struct acis_sw_opts *o, int spin,
                         char *addr, size_t addrlen, char *why, size_t whylen)
{
    acis_dev.embedded = acis_udpsw_create(listen, o, why, whylen);
    if (!acis_dev.embedded)
        return -1;
    if (acis_udpsw_start(acis_dev.embedded, spin) != 0) {
        snprintf(why, whylen, "cannot start the switch thread");
        acis_udpsw_destroy(acis_dev.embedded);
        acis_dev.embedded = NULL;
        return -1;
    }
    snprintf(addr, addrlen, "%s", acis_udpsw_address(acis_dev.embedded));
    return 0;
}

void acis_dev_embed_stop(void)
{
    if (acis_dev.embedded) {
        acis_udpsw_destroy(acis_dev.embedded);        /* stops its thread first */
        acis_dev.embedded = NULL;
    }
}

void acis_dev_release(void)
{
    if (acis_dev.embedded)
        acis_udpsw_release(acis_dev.embedded);
}

void acis_dev_leave(void)
{
    if (acis_dev.embedded && acis_udpsw_serves_others(acis_dev.embedded))
        acis_udpsw_release(acis_dev.embedded);
}
