/* device.c -- the device: join the switch (HELLO/WELCOME), control round
 * trips (CT_CREATE, CT_FREE, STATS), sending data packets within the
 * credit the switch port's buffer allows, receiving and validating
 * answers, and waiting by spinning or sleeping.  Single-threaded by
 * itself; src/offload serialises calls into it. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "mpid/channel.h"
#include "switch/switch.h"
#include "util/util.h"

#define RETRY_NS 100000000ull      /* control requests are resent every 100 ms */

/* Lock ownership: everything here is under the device lock
 * (acis_dev_lock; a real mutex once threaded is set: by the peer service,
 * MPI_THREAD_MULTIPLE or the progress helper), except: heard_ns and
 * asked_ns, atomic, which waiters read without it; ops, ch, embedded and
 * the wait settings, which waiters read without it too and which change
 * only when the device opens (MPI_Init, or a rejoin under the lock); and
 * threaded, set before a second thread uses the device.  A waiter sleeps
 * without the lock, on what the channel's wait_on gave it under the lock. */
struct acis_dev_ctx {
    const struct acis_chan_ops *ops;
    struct acis_chan *ch;
    struct acis_dev_info info;
    uint64_t key;
    uint32_t rank;
    uint32_t req;                  /* control request ids */
    uint32_t credit_cap;
    int spin, spin_us, timeout_ms;
    _Atomic uint64_t heard_ns;     /* last packet from the switch, any thread */
    _Atomic uint64_t asked_ns;     /* first repeat sent since then (0: none) */
    acis_dev_deliver deliver;
    void *deliver_arg;
    /* the control answer being waited for */
    unsigned want_kind;
    uint32_t want_seq;
    int got;
    uint8_t answer[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    size_t answer_len;
    struct acis_chan_from answer_from;  /* who sent it (the WELCOME's: our port) */
    /* receive buffers, and who sent what they hold */
    uint8_t *rx[ACIS_RX_BATCH];
    struct acis_chan_from rx_from[ACIS_RX_BATCH];
    size_t rx_cap;
    /* embedded switch */
    struct acis_udpsw *embedded;
    /* MPI_THREAD_MULTIPLE */
    int threaded;
    pthread_mutex_t lock;
    /* fault injection on what we send */
    struct acis_fault fault;
};

static struct acis_dev_ctx acis_dev = { .lock = PTHREAD_MUTEX_INITIALIZER };

static const struct acis_chan_ops *const channels[] = {
    [ACIS_DEV_UDP] = &acis_chan_udp,
    [ACIS_DEV_SHM] = &acis_chan_shm,
    [ACIS_DEV_VERBS] = &acis_chan_verbs,
};

void acis_dev_set_threaded(int on)
{
    if (acis_dev.threaded != on)        /* set already: no write for others'
                                           unlocked reads to race with */
        acis_dev.threaded = on;
}

void acis_dev_lock(void)
{
    if (acis_dev.threaded)
        pthread_mutex_lock(&acis_dev.lock);
}

void acis_dev_unlock(void)
{
    if (acis_dev.threaded)
        pthread_mutex_unlock(&acis_dev.lock);
}

const struct acis_dev_info *acis_dev_info(void)
{
    return &acis_dev.info;
}

void acis_dev_set_wait(int spin, int spin_us, int timeout_ms)
{
    acis_dev.spin = spin;
    acis_dev.spin_us = spin_us;
    acis_dev.timeout_ms = timeout_ms;
}

int acis_dev_spins(void)
{
    return acis_dev.spin;
}

void acis_dev_set_deliver(acis_dev_deliver fn, void *arg)
{
    acis_dev.deliver = fn;
    acis_dev.deliver_arg = arg;
}

static size_t control_packet(const struct acis_dev_ctx *d, uint8_t *buf, unsigned kind,
                             uint32_t ctx, uint32_t seq, const void *payload, size_t len)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, ACIS_ALG_FLAT), .payload_len = (uint32_t)len,
        .job_key = d->key, .ctx = ctx, .seq = seq, .src = d->rank,
    };
    acis_hdr_encode(&h, buf);
    acis_hdr_seal(buf, payload, len);
    return ACIS_HDR_LEN;
}

void acis_dev_set_faults(const struct acis_fault_rates *r, uint64_t seed)
{
    acis_fault_free(&acis_dev.fault);
    acis_fault_init(&acis_dev.fault, r, seed);
}

/* The injector's way out: one flat packet to the channel. */
static void fault_sink(void *ctx, uint32_t dest, const void *buf, size_t len)
{
    struct acis_dev_ctx *d = ctx;
    (void)dest;
    struct acis_dev_pkt p = { (uint8_t *)buf, (const uint8_t *)buf + ACIS_HDR_LEN,
                              (uint32_t)(len - ACIS_HDR_LEN) };
    d->ops->send(d->ch, &p, 1);
    if (d->ops->flush)                      /* buf is the injector's, reused at once */
        d->ops->flush(d->ch);
}

void acis_dev_flush(void)
{
    if (acis_dev.ops && acis_dev.ops->flush && acis_dev.ch)
        acis_dev.ops->flush(acis_dev.ch);
}

/* Send n packets, through the fault injector when one is set. */
static int chan_send(struct acis_dev_ctx *d, const struct acis_dev_pkt *pkts, int n)
{
    if (!d->fault.active || !d->ops->sealed)
        return d->ops->send(d->ch, pkts, n);
    uint8_t flat[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    uint64_t now = acis_now_ns();
    for (int i = 0; i < n; i++) {
        memcpy(flat, pkts[i].hdr, ACIS_HDR_LEN);
        if (pkts[i].len)
            memcpy(flat + ACIS_HDR_LEN, pkts[i].payload, pkts[i].len);
        acis_fault_send(&d->fault, fault_sink, d, 0, flat, ACIS_HDR_LEN + pkts[i].len, now);
    }
    return 0;
}

uint32_t acis_dev_credit_cap(void)
{
    return acis_dev.credit_cap;
}

int acis_dev_reliable(void)
{
    return acis_dev.ops && acis_dev.ops->reliable;
}

int acis_dev_send(const struct acis_dev_pkt *pkts, int n)
{
    if (acis_dev.ops->sealed)
        for (int i = 0; i < n; i++)
            acis_hdr_seal(pkts[i].hdr, pkts[i].payload, pkts[i].len);
    if (chan_send(&acis_dev, pkts, n) != 0)
        return -1;
    ACIS_COUNT(packets_sent, (uint64_t)n);
    uint64_t b = 0;
    for (int i = 0; i < n; i++)
        b += ACIS_HDR_LEN + pkts[i].len;
    ACIS_COUNT(bytes_sent, b);
    return 0;
}

/* One received datagram (from the switch: the channel dropped the
 * others; before the join, from another endpoint of the switch's only
 * the WELCOME we wait for): validate, then a control answer we wait for,
 * kept with its sender, or a data answer for src/offload. */
static int handle(struct acis_dev_ctx *d, const uint8_t *pkt, size_t len,
                  const struct acis_chan_from *from)
{
    struct acis_hdr h;
    size_t max = d->info.max_payload ? d->info.max_payload : ACIS_MAX_PAYLOAD;
    int valid = acis_wire_decode(pkt, len, max, &h) == ACIS_WERR_OK && h.job_key == d->key &&
                (h.flags & ACIS_F_RESULT) && h.src == ACIS_NO_RANK;
    if (!from->peer && !(valid && ACIS_OPC_KIND(h.opcode) == ACIS_K_WELCOME &&
                         d->want_kind == ACIS_K_WELCOME && h.seq == d->want_seq && !d->got)) {
        ACIS_COUNT(packets_foreign, 1);     /* only our WELCOME may come from there */
        return 0;
    }
    if (!valid) {
        ACIS_COUNT(packets_dropped, 1);
        return 0;
    }
    ACIS_COUNT(packets_received, 1);
    ACIS_COUNT(bytes_received, len);
    atomic_store_explicit(&d->heard_ns, acis_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&d->asked_ns, 0, memory_order_relaxed);
    unsigned kind = ACIS_OPC_KIND(h.opcode);
    if (kind >= ACIS_K_HELLO) {
        if (kind == d->want_kind && h.seq == d->want_seq && !d->got) {
            memcpy(d->answer, pkt, len);
            d->answer_len = len;
            d->answer_from = *from;
            d->got = 1;
        }
        return 1;
    }
    if (d->deliver)
        d->deliver(d->deliver_arg, &h, pkt + ACIS_HDR_LEN);
    return 1;
}

/* A data answer a channel hands over in place (already trusted). */
static void deliver_direct(void *arg, const struct acis_hdr *h, const uint8_t *payload)
{
    struct acis_dev_ctx *d = arg;
    ACIS_COUNT(packets_received, 1);
    ACIS_COUNT(bytes_received, ACIS_HDR_LEN + h->payload_len);
    if (d->deliver)
        d->deliver(d->deliver_arg, h, payload);
}

static int poll_ctx(struct acis_dev_ctx *d)
{
    size_t lens[ACIS_RX_BATCH];
    int total = 0, n;
    if (d->embedded)
        acis_udpsw_drive(d->embedded);           /* serve the switch we host */
    if (d->fault.nheld)
        acis_fault_flush(&d->fault, fault_sink, d, acis_now_ns());
    do {
        n = d->ops->recv(d->ch, d->rx, d->rx_cap, lens, d->rx_from, ACIS_RX_BATCH);
        if (n < 0)
            return -1;
        for (int i = 0; i < n; i++)
            total += handle(d, d->rx[i], lens[i], &d->rx_from[i]);
    } while (n == ACIS_RX_BATCH);
    if (d->ops->poll) {
        if ((n = d->ops->poll(d->ch, deliver_direct, d)) < 0)
            return -1;
        total += n;
    }
    return total;
}

int acis_dev_poll(void)
{
    return poll_ctx(&acis_dev);
}

/* Nanoseconds from t, or from idle_since_ns if later, to now (0 if t is
 * 0). */
static uint64_t since_at(uint64_t now, uint64_t t, uint64_t idle_since_ns)
{
    uint64_t from = t > idle_since_ns ? t : idle_since_ns;
    return t && now > from ? now - from : 0;
}

static uint64_t since(uint64_t t, uint64_t idle_since_ns)
{
    return since_at(acis_now_ns(), t, idle_since_ns);
}

/* Nanoseconds of quiet, for spinning or sleeping: since the last packet
 * any thread received (under MPI_THREAD_MULTIPLE another thread may take
 * the switch's answers), or since idle_since_ns if later. */
static uint64_t idle_ns(uint64_t idle_since_ns)
{
    return since(atomic_load_explicit(&acis_dev.heard_ns, memory_order_relaxed),
                 idle_since_ns);
}

/* Nanoseconds a repeat has gone unanswered: a live switch answers every
 * repeat, if only with "pending", so only time spent asking counts.  A
 * rank that was away (computing, in MPICH, descheduled) longer than the
 * timeout without repeating anything comes back to a switch it never
 * asked: its first repeat starts the clock. */
static uint64_t unanswered_ns(uint64_t idle_since_ns)
{
    return since(atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed),
                 idle_since_ns);
}

/* Silent for longer than timeout_ms (never on a reliable channel). */
static int too_long(uint64_t ns)
{
    return !acis_dev.ops->reliable && ns > (uint64_t)acis_dev.timeout_ms * 1000000ull;
}

void acis_dev_asked(void)
{
    uint64_t none = 0;
    atomic_compare_exchange_strong(&acis_dev.asked_ns, &none, acis_now_ns());
}

int acis_dev_asking(void)
{
    return atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed) != 0;
}

int acis_dev_silent(uint64_t idle_since_ns)
{
    return too_long(unanswered_ns(idle_since_ns));
}

int acis_dev_still_silent(uint64_t idle_since_ns)
{
    uint64_t now = acis_now_ns();            /* before the read: an answer sent
                                                before now is read below */
    int n = poll_ctx(&acis_dev);
    if (n != 0)
        return n < 0 ? -1 : 0;
    return too_long(since_at(now, atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed),
                             idle_since_ns));
}

/* How long a waiter quiet for idle ns, with a repeat unanswered for
 * unanswered ns (at most the timeout), sleeps: 0 to spin on.  A
 * millisecond at most, and not past the timeout: the waiter lets MPICH
 * move between sleeps (a peer may need this rank's point-to-point
 * progress), and another thread may take the packet this one sleeps for
 * and not wake it (MPI_THREAD_MULTIPLE, the progress thread). */
static int sleep_ms(uint64_t idle, uint64_t unanswered)
{
    if (acis_dev.spin || idle < (uint64_t)acis_dev.spin_us * 1000ull)
        return 0;
    uint64_t cap = 1, left_ms = acis_dev.ops->reliable
                                    ? cap
                                    : acis_dev.timeout_ms - unanswered / 1000000ull;
    return left_ms > cap ? (int)cap : (int)left_ms + 1;
}

int acis_dev_wait(uint64_t idle_since_ns)
{
    uint64_t unanswered = unanswered_ns(idle_since_ns);
    if (too_long(unanswered))
        return -1;
    int ms = sleep_ms(idle_ns(idle_since_ns), unanswered);
    return ms ? acis_dev_sleep(ms) : 0;
}

int acis_dev_can_post(void)
{
    return acis_dev.ops && acis_dev.ops->post;
}

int acis_dev_post(const struct acis_hdr *h, const uint8_t *payload, struct acis_dev_ticket *t)
{
    if (acis_dev.ops->post(acis_dev.ch, h, payload, t) != 0)
        return -1;
    ACIS_COUNT(packets_sent, 1);
    ACIS_COUNT(bytes_sent, ACIS_HDR_LEN + h->payload_len);
    return 0;
}

int acis_dev_answer(const struct acis_dev_ticket *t, struct acis_hdr *a, const uint8_t **payload)
{
    if (!acis_dev.ops->ready(acis_dev.ch, t, a, payload))
        return 0;
    ACIS_COUNT(packets_received, 1);
    ACIS_COUNT(bytes_received, ACIS_HDR_LEN + a->payload_len);
    return 1;
}

void acis_dev_wait_answer(const struct acis_dev_ticket *t, uint64_t idle_since_ns)
{
    int ms = sleep_ms(idle_ns(idle_since_ns), 0);   /* posting channels are reliable */
    if (ms)
        acis_dev.ops->sleep(acis_dev.ch, t, ms);
}

int acis_dev_sleep(int ms)
{
    if (acis_dev.embedded) {                     /* sleep on our socket and the switch's */
        struct pollfd pf[2] = { { acis_dev.ops->fd(acis_dev.ch), POLLIN, 0 },
                                { acis_udpsw_fd(acis_dev.embedded), POLLIN, 0 } };
        acis_udpsw_drive(acis_dev.embedded);     /* keep its thread parked */
        return poll(pf, 2, ms) < 0 && errno != EINTR ? -1 : 0;
    }
    if (acis_dev.ops->wait_on) {                 /* its wait reads what others change */
        struct acis_dev_ticket t;
        acis_dev_lock();
        int on = acis_dev.ops->wait_on(acis_dev.ch, t.b);
        acis_dev_unlock();
        if (on)
            acis_dev.ops->sleep(acis_dev.ch, t.b, ms);
        return 0;
    }
    return acis_dev.ops->wait(acis_dev.ch, ms) < 0 ? -1 : 0;
}

/* Send a control request and wait for its answer (kind, same seq); the
 * request is resent every RETRY_NS.  0 with the answer in acis_dev.answer,
 * or -1 after timeout_ms. */
static int round_trip(struct acis_dev_ctx *d, uint8_t *hdr, const void *payload, size_t len, unsigned kind,
                      uint32_t seq, int timeout_ms)
{
    struct acis_dev_pkt p = { hdr, payload, (uint32_t)len };
    uint64_t start = acis_now_ns(), sent = 0;
    d->want_kind = kind;
    d->want_seq = seq;
    d->got = 0;
    for (;;) {
        uint64_t now = acis_now_ns();
        if (now - start > (uint64_t)timeout_ms * 1000000ull)
            break;
        if (sent == 0 || now - sent > RETRY_NS) {
            if (chan_send(d, &p, 1) != 0)
                break;
            sent = now;
        }
        if (poll_ctx(d) < 0)
            break;
        if (d->got)
            break;
        d->ops->wait(d->ch, 10);
    }
    d->want_kind = ACIS_K_NONE;
    if (d->ops->flush)                    /* the caller frees the payload next */
        d->ops->flush(d->ch);
    /* A table set-up or free is not followed by a collective of ours (a
     * refused set-up goes to MPICH, a free returns to the application):
     * the switch we drove goes back to its thread here, if a row lacks us. */
    acis_dev_leave();
    return d->got ? 0 : -1;
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
    acis_put32(pl, world);
    control_packet(&acis_dev, hdr, ACIS_K_HELLO, 0, seq, pl, sizeof pl);
    uint64_t foreign = atomic_load(&acis_util.host.packets_foreign);
    if (round_trip(&acis_dev, hdr, pl, sizeof pl, ACIS_K_WELCOME, seq, timeout_ms) != 0) {
        foreign = atomic_load(&acis_util.host.packets_foreign) - foreign;
        snprintf(why, whylen, "switch %s did not answer within %d ms%s", addr, timeout_ms,
                 foreign ? " (datagrams from other addresses were dropped: a switch that "
                           "answers from another address than it was given?)" : "");
        goto fail;
    }
    const uint8_t *w = acis_dev.answer + ACIS_HDR_LEN;
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
    if (acis_dev.ops->attach(acis_dev.ch, &acis_dev.answer_from) != 0) {
        snprintf(why, whylen, "cannot attach to switch port %u", acis_dev.info.port);
        goto fail;
    }
    if (acis_dev.embedded)
        acis_udpsw_set_home(acis_dev.embedded, acis_dev.info.port);
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
            control_packet(&acis_dev, hdr, ACIS_K_BYE, 0, ++acis_dev.req, NULL, 0);
            acis_dev.ops->send(acis_dev.ch, &p, 1);
        }
        acis_dev.ops->close(acis_dev.ch);
        acis_dev.ch = NULL;
    }
    for (int i = 0; i < ACIS_RX_BATCH; i++) {
        free(acis_dev.rx[i]);
        acis_dev.rx[i] = NULL;
    }
    memset(&acis_dev.info, 0, sizeof acis_dev.info);
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
    control_packet(&acis_dev, hdr, ACIS_K_CT_CREATE, 0, seq, pl, len);
    int rc = round_trip(&acis_dev, hdr, pl, len, ACIS_K_CT_REPLY, seq, acis_dev.timeout_ms);
    free(pl);
    if (rc != 0)
        return -1;
    const uint8_t *r = acis_dev.answer + ACIS_HDR_LEN;
    *status = acis_get32(r);
    *ctx = acis_get32(r + 4);
    *window = acis_get32(r + 8);
    *payload = acis_get32(r + 12);
    *flags = acis_dev.answer_len >= ACIS_HDR_LEN + 20 ? acis_get32(r + 16) : 0;
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
    if (round_trip(&acis_dev, hdr, pl, sizeof pl, ACIS_K_CT_REPLY, id, acis_dev.timeout_ms) != 0)
        return -1;
    const uint8_t *r = acis_dev.answer + ACIS_HDR_LEN;
    *status = acis_get32(r);
    *ctx = acis_get32(r + 4);
    *window = acis_get32(r + 8);
    *payload = acis_get32(r + 12);
    *flags = acis_dev.answer_len >= ACIS_HDR_LEN + 20 ? acis_get32(r + 16) : 0;
    return 0;
}

int acis_dev_ct_free(uint32_t ctx)
{
    uint8_t hdr[ACIS_HDR_LEN];
    uint32_t seq = ++acis_dev.req;
    control_packet(&acis_dev, hdr, ACIS_K_CT_FREE, ctx, seq, NULL, 0);
    return round_trip(&acis_dev, hdr, NULL, 0, ACIS_K_CT_FREED, seq, acis_dev.timeout_ms);
}

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
    control_packet(&acis_dev, hdr, ACIS_K_STATS_REQ, 0, seq, NULL, 0);
    if (round_trip(&acis_dev, hdr, NULL, 0, ACIS_K_STATS_REPLY, seq, acis_dev.timeout_ms) != 0)
        return -1;
    return read_stats(acis_dev.answer, acis_dev.answer_len, out, max);
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
    control_packet(d, hdr, ACIS_K_STATS_REQ, 0, 1, NULL, 0);
    if (round_trip(d, hdr, NULL, 0, ACIS_K_STATS_REPLY, 1, timeout_ms) != 0)
        snprintf(why, whylen, "switch %s did not answer within %d ms", addr, timeout_ms);
    else
        rc = read_stats(d->answer, d->answer_len, out, max);
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
