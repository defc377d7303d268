/* device.c -- the device's data path: its context and settings, sending
 * packets (through the fault injector when one is set), receiving and
 * validating what the switch sends (a control answer waited for, or a
 * data answer handed to src/offload), posting to and reading from a
 * channel that posts.  Joining and control round trips are in control.c,
 * waiting and the silence clock in wait.c; the three share the context
 * (dev.h).  Single-threaded by itself; src/offload serialises calls into
 * it. */
#include "config.h"

#include <stdatomic.h>
#include <string.h>

#include "mpid/dev.h"
#include "util/util.h"

struct acis_dev_ctx acis_dev = { .lock = PTHREAD_MUTEX_INITIALIZER };

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

size_t acis_dev_control_packet(const struct acis_dev_ctx *d, uint8_t *buf, unsigned kind,
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
int acis_dev_chan_send(struct acis_dev_ctx *d, const struct acis_dev_pkt *pkts, int n)
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

/* The switch we host takes our data packets in place when it can (the
 * device lock is held, as for its answers): from the first, until one it
 * does not take.  Returns how many it took; the rest go as datagrams. */
static int home_requests(struct acis_dev_ctx *d, const struct acis_dev_pkt *pkts, int n)
{
    int took = 0;
    if (!d->embedded || !acis_udpsw_take_begin(d->embedded))
        return 0;
    while (took < n && acis_udpsw_take(d->embedded, pkts[took].hdr, pkts[took].payload,
                                       pkts[took].len))
        took++;
    acis_udpsw_take_end(d->embedded);
    ACIS_COUNT(home_requests, (uint64_t)took);
    return took;
}

int acis_dev_send(const struct acis_dev_pkt *pkts, int n)
{
    /* Sealed unless the path is memory and the switch took the offer; a
     * corrupted packet (injected) must be caught by its checksum */
    int open = atomic_load_explicit(&acis_dev.unseal, memory_order_relaxed) &&
               !acis_dev.fault.r.corrupt;
    if (acis_dev.ops->sealed)
        for (int i = 0; i < n; i++) {
            if (open)
                acis_hdr_unsealed(pkts[i].hdr);
            else
                acis_hdr_seal(pkts[i].hdr, pkts[i].payload, pkts[i].len);
        }
    int took = open && !acis_dev.fault.active ? home_requests(&acis_dev, pkts, n) : 0;
    if (took < n && acis_dev_chan_send(&acis_dev, pkts + took, n - took) != 0)
        return -1;
    ACIS_COUNT(packets_sent, (uint64_t)n);
    uint64_t b = 0;
    for (int i = 0; i < n; i++)
        b += ACIS_HDR_LEN + pkts[i].len;
    ACIS_COUNT(bytes_sent, b);
    return 0;
}

/* A valid packet of len bytes came from the switch (h): count it, note
 * that the switch lives and whether it agreed to unsealed packets. */
static void heard(struct acis_dev_ctx *d, const struct acis_hdr *h, size_t len)
{
    ACIS_COUNT(packets_received, 1);
    ACIS_COUNT(bytes_received, len);
    if ((h->flags & ACIS_F_UNSEALED) && !h->checksum &&
        !atomic_load_explicit(&d->unseal, memory_order_relaxed))
        atomic_store_explicit(&d->unseal, 1, memory_order_relaxed);   /* the switch agreed */
    atomic_store_explicit(&d->heard_ns, acis_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&d->asked_ns, 0, memory_order_relaxed);
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
    int valid = acis_wire_decode_from(pkt, len, max, d->memory, &h) == ACIS_WERR_OK &&
                h.job_key == d->key &&
                (h.flags & ACIS_F_RESULT) && h.src == ACIS_NO_RANK;
    unsigned kind = valid ? ACIS_OPC_KIND(h.opcode) : ACIS_K_NONE;
    struct acis_dev_ctl *c = valid && kind >= ACIS_K_HELLO   /* data answers: no lookup */
                                 ? acis_dev_ctl_waiting(d, kind, h.seq, h.root)
                                 : NULL;
    if (!from->peer && !(c && c->kind == ACIS_K_WELCOME)) {
        ACIS_COUNT(packets_foreign, 1);     /* only our WELCOME may come from there */
        return 0;
    }
    if (!valid) {
        ACIS_COUNT(packets_dropped, 1);
        return 0;
    }
    heard(d, &h, len);
    if (kind >= ACIS_K_HELLO) {
        if (c && len <= sizeof c->answer) {
            memcpy(c->answer, pkt, len);
            c->len = len;
            c->from = *from;
            c->got = 1;
        }
        return 1;
    }
    if (d->deliver)
        d->deliver(d->deliver_arg, &h, pkt + ACIS_HDR_LEN);
    return 1;
}

struct acis_dev_ctl *acis_dev_ctl_waiting(struct acis_dev_ctx *d, unsigned kind, uint32_t seq,
                                          uint32_t root)
{
    if (kind == ACIS_K_NONE)
        return NULL;
    for (int i = 0; i < ACIS_DEV_CTL_SLOTS; i++) {
        const struct acis_dev_ctl *c = &d->ctl[i];
        if (c->kind == kind && c->seq == seq && !c->got && (!c->by_root || c->root == root))
            return &d->ctl[i];
    }
    return NULL;
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

/* The switch we host hands us its answer to our port in place, while we
 * drive it from acis_dev_poll_ctx (device lock held): a data answer is
 * taken as handle() takes a datagram but for the checks a datagram needs
 * (it never left this process); anything else goes out as a datagram. */
static int home_answer(void *arg, const uint8_t *hdr, const uint8_t *payload, size_t len)
{
    struct acis_dev_ctx *d = arg;
    struct acis_hdr h;
    acis_hdr_decode(hdr, &h);
    if (ACIS_OPC_KIND(h.opcode) >= ACIS_K_HELLO || !(h.flags & ACIS_F_RESULT) ||
        h.job_key != d->key || h.payload_len != len)
        return 0;
    heard(d, &h, ACIS_HDR_LEN + len);
    ACIS_COUNT(home_answers, 1);
    d->home_got++;
    if (d->deliver)
        d->deliver(d->deliver_arg, &h, payload);
    return 1;
}

void acis_dev_home_answers(struct acis_dev_ctx *d)
{
    acis_udpsw_set_home_answers(d->embedded, home_answer, d);
}

int acis_dev_poll_ctx(struct acis_dev_ctx *d)
{
    size_t lens[ACIS_RX_BATCH];
    int total = 0, n;
    if (d->embedded) {                           /* serve the switch we host */
        d->home_got = 0;
        acis_udpsw_drive(d->embedded);
        total = d->home_got;                     /* its answers to us, in place */
    }
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
    return acis_dev_poll_ctx(&acis_dev);
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

int acis_dev_prepare(const struct acis_hdr *h, struct acis_dev_prep *p)
{
    return acis_dev.ops && acis_dev.ops->prepare ? acis_dev.ops->prepare(acis_dev.ch, h, p) : -1;
}

int acis_dev_refused(const struct acis_hdr *h)
{
    acis_dev.ops->refused(acis_dev.ch, h, NULL);
    return -1;
}

void acis_dev_disagreed(const struct acis_dev_ticket *t)
{
    acis_dev.ops->refused(acis_dev.ch, NULL, t);
}
