/* shm.c -- the shared-memory channel (MPIR_CVAR_OFFLOAD_DEVICE=shm): the
 * ports of the shared-memory switch (src/switch/shmsw.c) are memory this
 * process maps.  A data packet is posted into its slot (the last member to
 * post does the switch's fold, in this process); its answer is read in
 * place from the slot when it is published.  Control requests are carried
 * out at once and their answers queued for recv(), so the device's
 * control plane is the same as on UDP.  Nothing is lost on this channel:
 * no checksums, no retransmission, no silence timeout. */
#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpid/channel.h"
#include "mpid/device.h"
#include "switch/switch.h"
#include "util/util.h"

#define CTL_MAX 4
#define CTL_LEN (ACIS_HDR_LEN + 4 + 8 * ACIS_SWC_COUNT)

struct acis_chan {
    struct acis_shmsw *sw;
    uint8_t ctl[CTL_MAX][CTL_LEN];      /* control answers not read yet */
    size_t ctl_len[CTL_MAX];
    int nctl;
    struct acis_shm_wait *out;          /* posted, waiting for answers */
    uint32_t nout, cap;
    int warned;                         /* a refused post was reported */
};

/* Members posted different collectives (an erroneous program), or a post
 * did not fit its row: say so once; the collective cannot complete. */
static void refused(struct acis_chan *ch, const struct acis_hdr *h, const char *what)
{
    if (ch->warned++)
        return;
    acis_log(0, "the shared-memory switch %s (%s, context %#x, sequence %u, segment %u); "
                "do all ranks call the same collectives in the same order?",
             what, acis_wire_kind_name(ACIS_OPC_KIND(h->opcode)), h->ctx, h->seq, h->seg_index);
}

static int shm_open_(struct acis_chan **out, const char *addr, char *why, size_t whylen)
{
    struct acis_chan *ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (!(ch->sw = acis_shmsw_attach(addr, why, whylen))) {
        free(ch);
        return -1;
    }
    ch->cap = acis_shmsw_capacity(ch->sw);
    if (!(ch->out = calloc(ch->cap, sizeof *ch->out))) {
        snprintf(why, whylen, "out of memory");
        acis_shmsw_detach(ch->sw);
        free(ch);
        return -1;
    }
    *out = ch;
    return 0;
}

static int shm_attach(struct acis_chan *ch, const struct acis_chan_from *from)
{
    (void)ch;
    (void)from;
    return 0;
}

static int shm_send(struct acis_chan *ch, const struct acis_dev_pkt *pkts, int n)
{
    for (int i = 0; i < n; i++) {
        struct acis_hdr h;
        acis_hdr_decode(pkts[i].hdr, &h);
        h.payload_len = pkts[i].len;
        if (ACIS_OPC_KIND(h.opcode) >= ACIS_K_HELLO) {
            uint8_t tmp[CTL_LEN];
            size_t len = acis_shmsw_control(ch->sw, &h, pkts[i].payload, tmp);
            if (len && ch->nctl < CTL_MAX) {
                memcpy(ch->ctl[ch->nctl], tmp, len);
                ch->ctl_len[ch->nctl++] = len;
            }
            continue;
        }
        if (ch->nout == ch->cap)
            return -1;                  /* more in flight than the switch has slots */
        if (acis_shmsw_post(ch->sw, &h, pkts[i].payload, &ch->out[ch->nout]) == 0)
            ch->nout++;
        else
            refused(ch, &h, "refused a packet");
    }
    return 0;
}

static int shm_recv(struct acis_chan *ch, uint8_t **bufs, size_t cap, size_t *lens,
                    struct acis_chan_from *from, int max)
{
    int n = 0;
    if (!ch->nctl)
        return 0;
    for (; n < ch->nctl && n < max; n++) {
        from[n].len = 0;                    /* the switch in our own memory */
        from[n].peer = 1;
        lens[n] = ch->ctl_len[n] <= cap ? ch->ctl_len[n] : 0;
        if (lens[n])
            memcpy(bufs[n], ch->ctl[n], lens[n]);
    }
    memmove(ch->ctl, ch->ctl[n], (size_t)(ch->nctl - n) * CTL_LEN);
    memmove(ch->ctl_len, ch->ctl_len + n, (size_t)(ch->nctl - n) * sizeof *ch->ctl_len);
    ch->nctl -= n;
    return n;
}

/* An answer of w, reported when members disagreed. */
static int answer(struct acis_chan *ch, const struct acis_shm_wait *w, struct acis_hdr *a,
                  const uint8_t **payload)
{
    if (!acis_shmsw_ready(ch->sw, w, a, payload))
        return 0;
    if ((a->flags & (ACIS_F_ERROR | ACIS_F_ABSTAIN)) == ACIS_F_ERROR)
        refused(ch, a, "found members' packets of a segment disagreeing");
    return 1;
}

static int shm_poll(struct acis_chan *ch, acis_chan_deliver fn, void *arg)
{
    int got = 0;
    uint32_t keep = 0;
    for (uint32_t i = 0; i < ch->nout; i++) {
        struct acis_hdr a;
        const uint8_t *payload;
        if (answer(ch, &ch->out[i], &a, &payload)) {
            fn(arg, &a, payload);
            got++;
        } else {
            if (keep != i)
                ch->out[keep] = ch->out[i];
            keep++;
        }
    }
    ch->nout = keep;
    return got;
}

/* What a wait sleeps on: the oldest post (device lock held; out[] is
 * what other threads change). */
static int shm_wait_on(struct acis_chan *ch, void *ticket)
{
    if (ch->nctl || !ch->nout)
        return 0;                       /* an answer to read, or nothing out */
    ((struct acis_dev_ticket *)ticket)->shm = ch->out[0];
    return 1;
}

/* With the device lock held (a control round trip). */
static int shm_wait(struct acis_chan *ch, int timeout_ms)
{
    struct acis_dev_ticket t;
    if (!shm_wait_on(ch, &t))
        return ch->nctl ? 1 : 0;
    acis_shmsw_sleep(ch->sw, &t.shm, timeout_ms);
    return 1;
}

/* The short path: the post, without the list of posts poll() goes over.
 * A ticket is the device's struct acis_dev_ticket: the wait is its shm. */
static int shm_post(struct acis_chan *ch, const struct acis_hdr *h, const uint8_t *payload,
                    void *ticket)
{
    struct acis_dev_ticket *t = ticket;
    if (acis_shmsw_post(ch->sw, h, payload, &t->shm) == 0)
        return 0;                       /* the wait's done and ring: t's bell and ring */
    refused(ch, h, "refused a packet");
    return -1;
}

static int shm_prepare(struct acis_chan *ch, const struct acis_hdr *h, void *prep)
{
    struct acis_dev_prep *p = prep;
    p->sw = ch->sw;                     /* the device posts there itself */
    return acis_shmsw_prepare(ch->sw, h, &p->shm);
}

static void shm_refused(struct acis_chan *ch, const struct acis_hdr *h, const void *ticket)
{
    struct acis_hdr q;
    if (h) {
        refused(ch, h, "refused a packet");
        return;
    }
    acis_shmsw_posted(ch->sw, &((const struct acis_dev_ticket *)ticket)->shm, &q);
    refused(ch, &q, "found members' packets of a segment disagreeing");
}

static void shm_sleep(struct acis_chan *ch, const void *ticket, int ms)
{
    acis_shmsw_sleep(ch->sw, &((const struct acis_dev_ticket *)ticket)->shm, ms);
}

static int shm_fd(struct acis_chan *ch)
{
    (void)ch;
    return -1;
}

static int shm_rcvbuf(struct acis_chan *ch)
{
    (void)ch;
    return INT_MAX;                     /* no buffer to overrun */
}

static void shm_close(struct acis_chan *ch)
{
    acis_shmsw_detach(ch->sw);
    free(ch->out);
    free(ch);
}

const struct acis_chan_ops acis_chan_shm = {
    .name = "shm", .sealed = 0, .reliable = 1, .open = shm_open_, .attach = shm_attach,
    .send = shm_send, .recv = shm_recv, .wait = shm_wait, .fd = shm_fd,
    .rcvbuf = shm_rcvbuf, .close = shm_close, .poll = shm_poll,
    .post = shm_post, .prepare = shm_prepare, .refused = shm_refused, .sleep = shm_sleep,
    .wait_on = shm_wait_on,
};
