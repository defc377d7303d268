/* fix.c -- finishing collectives after their switch failed, with no hang
 * and no wrong result, and moving every member to MPICH at the same
 * collective (the calls are then redone there by redo.c, told through each
 * nonblocking call's acis_exec.redo).
 *
 * A rank learns that the switch failed when it hears nothing from it for
 * MPIR_CVAR_OFFLOAD_TIMEOUT_MS while waiting (a live switch answers every
 * repeat, if only with "pending"), or when another rank asks it for help.
 * From then on the members finish each open segment themselves: a rank
 * asks every other member for its packet of the segment (PEER_ASK, over
 * src/mpid's peer service, which answers on a thread of its own even while
 * that rank computes or sits in MPI_Recv), feeds all of them to a private
 * switch core (acis_swemu) and takes its own answer: bitwise what the
 * switch gave, or would have given, every other member.  A member keeps
 * what it may still be asked for -- the last window of packets of finished
 * collectives, and pieces an in-place answer overwrote (engine.c) -- for
 * a member can only lack an answer for a segment less than one window
 * older than the newest it has itself.
 *
 * Going to MPICH: a packet carries ACIS_F_LOST when its sender already
 * knew of the failure as it started the collective.  When the first
 * segment of a blocking collective finished this way carries the flag
 * from every member, every member saw the same packets, so all decide
 * alike: MPICH for every later collective on the communicator.  Only a
 * blocking call that returns once it is finished (not an early return)
 * can be that point: no member can have started a later collective in
 * the switch before it decides, so nothing must be redone in MPICH -- a
 * redone call needs every member to start it, and a member sitting in
 * MPICH (MPI_Recv, waiting for a peer that waits for that call) cannot.
 * Until then every collective, nonblocking ones started after the failure
 * too, is finished by the members, whose peer services answer even while
 * they sit in MPICH.  Should collectives after the point be open anyway,
 * they are abandoned and redone in MPICH, in the order they were called.
 * Collectives are finished one at a time, oldest first, so none can
 * complete before that decision is known. */
#include "config.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "switch/switch.h"
#include "util/util.h"

#define CASES 4                   /* segments finished at a time per communicator */
#define TAG_SHIFT 2               /* reply tag (slot field): fix id << 2 | case */
#define PKT_MAX (ACIS_HDR_LEN + ACIS_MAX_PAYLOAD)

/* One segment being finished: whose packets are in. */
struct fix_case {
    struct acis_op *op;           /* NULL: free */
    uint32_t seg;
    uint8_t round;                /* of the private core's slot (= case index) */
    uint8_t all_lost;             /* every packet so far carried ACIS_F_LOST */
    uint32_t in;                  /* members whose packet is in */
    uint64_t *have;               /* bitmap over members */
    uint64_t asked_ns;
    unsigned tries;
};

/* A communicator's recovery state (acis_coff.fix): under the device lock,
 * as the acis_coff it belongs to. */
struct acis_fix {
    uint16_t id;
    struct acis_swemu *emu;
    uint8_t round[CASES];         /* next round of each private slot */
    struct fix_case c[CASES];
    uint32_t cur_seq, cursor;     /* head collective, next segment to open */
    uint32_t stop_seq;            /* ... whose first segment all flagged */
    int stop;
    unsigned warned;              /* a peer service was unreachable */
};

static uint16_t next_id;

/* Take op off co (*pp points at it): its slots and flags go back, and
 * flag (abandoned or failed) tells its caller why (device lock held). */
static void take_off(struct acis_coff *co, struct acis_op **pp, atomic_int *flag)
{
    struct acis_op *op = *pp;
    int counted = !acis_comm_lost(co->cs);      /* its segments out count as in flight */
    *pp = op->next;
    for (uint32_t s = 0; s < co->win.size; s++)
        if (co->win.busy[s] && co->win.owner[s] == &op->st) {
            co->win.busy[s] = 0;
            co->win.busy_count--;
            if (counted)
                acis_oc.inflight--;
        }
    acis_dev_flush();                   /* its buffers go back to the user */
    atomic_store(flag, 1);
}

/* The members' packets cannot finish a collective of co (a member lost
 * one it had to keep, or they do not fit: a bug; or the switch found them
 * disagreeing).  Never an abort, never a hang: the communicator is
 * broken.  Every collective open on it fails with MPI_ERR_INTERN (through
 * its error handler), and so does every later call acis would offload on
 * it; and every member that asks this rank for a packet is told it is
 * gone, so it breaks the communicator the same way at its next collective
 * that needs this rank.  No member goes on in MPICH while another still
 * waits in acis (device lock held). */
void acis_fix_break(struct acis_coff *co, const char *what)
{
    struct acis_comm *cs = co->cs;
    if (cs->state == ACIS_CT_READY) {
        if (what)
            acis_log(0, "%s; collectives acis would offload on this communicator of %d "
                        "ranks return MPI_ERR_INTERN from now on", what, cs->size);
        cs->state = ACIS_CT_BROKEN;
        cs->refused = ACIS_REASON_BROKEN;
    }
    if (cs->state != ACIS_CT_BROKEN)
        return;                         /* agreed on MPICH */
    for (int i = 0; co->fix && i < CASES; i++)
        co->fix->c[i].op = NULL;
    while (co->ops) {
        struct acis_op *op = co->ops;
        take_off(co, &co->ops, &op->failed);
        atomic_store(&op->done, 1);
    }
}

static void give_up(struct acis_coff *co, const char *what)
{
    char why[160];
    if (co->cs->state != ACIS_CT_READY)
        return;                         /* broken already, or agreed on MPICH */
    snprintf(why, sizeof why, "recovery after a switch failure: %s", what);
    acis_fix_break(co, why);
    ACIS_COUNT(recovery_failed, 1);
}

static struct acis_fix *fix_of(struct acis_coff *co)
{
    struct acis_comm *cs = co->cs;
    if (co->fix)
        return co->fix;
    struct acis_fix *f = calloc(1, sizeof *f);
    size_t words = ((size_t)cs->size + 63) / 64;
    if (!f)
        return NULL;
    for (int i = 0; i < CASES; i++)
        if (!(f->c[i].have = calloc(words, sizeof(uint64_t))))
            goto fail;
    f->emu = acis_swemu_create(acis_oc.job_key, cs->granks, (uint32_t)cs->size,
                               (uint32_t)acis_oc.world_size, CASES, cs->payload);
    if (!f->emu)
        goto fail;
    next_id = (uint16_t)((next_id + 1) & ((1u << (16 - TAG_SHIFT)) - 1));
    f->id = next_id ? next_id : ++next_id;
    co->fix = f;
    acis_oc.fixing++;
    return f;
fail:
    for (int i = 0; i < CASES; i++)
        free(f->c[i].have);
    free(f);
    return NULL;
}

void acis_fix_free(struct acis_coff *co)
{
    struct acis_fix *f = co->fix;
    if (!f)
        return;
    acis_swemu_destroy(f->emu);
    for (int i = 0; i < CASES; i++)
        free(f->c[i].have);
    free(f);
    co->fix = NULL;
    acis_oc.fixing--;
}

/* This member's packet of segment seg of collective seq into out: from
 * the collective if it is still open here (unless an in-place answer
 * overwrote the piece), else from the kept copies.  Its length, or 0.
 * Only what this member has sent, to the switch or as good as sent (its
 * window had room): so no member gets more than a window ahead of
 * another, and kept copies of one window always suffice. */
static size_t packet_for(const struct acis_coff *co, uint32_t seq, uint32_t seg, uint8_t *out)
{
    for (const struct acis_op *op = co->ops; op; op = op->next) {
        if (op->st.seq != seq)
            continue;
        if (seg >= op->st.next)
            return 0;                               /* not sent yet: ask again */
        if (op->st.inplace && acis_stream_has(&op->st, &co->win, seg))
            break;                                  /* kept when the answer came */
        const uint8_t *pl;
        uint32_t len;
        acis_stream_packet(&op->st, &co->win, seg, out, &pl, &len);
        if (len)
            memcpy(out + ACIS_HDR_LEN, pl, len);
        return ACIS_HDR_LEN + len;
    }
    for (uint32_t i = 0; co->kept && i < co->win.size; i++) {
        const struct acis_kept *e = &co->kept[i];
        if (e->pkt && e->seq == seq && e->seg == seg) {
            memcpy(out, e->pkt, e->len);
            return e->len;
        }
    }
    return 0;
}

static struct acis_coff *coff_named(uint32_t ctx, uint32_t boot)
{
    for (struct acis_coff *co = acis_oc.coffs; co; co = co->next_all)
        if (co->cs->ctx == ctx && co->cs->boot == boot)
            return co;
    return NULL;
}

size_t acis_fix_serve(void *arg, const struct acis_hdr *ask, uint8_t *reply)
{
    (void)arg;
    size_t len = 0;
    uint32_t my_seq = 0;
    acis_dev_lock();
    if (ask->root == acis_dev_info()->boot && !atomic_load(&acis_ct.device_lost)) {
        char why[64];
        snprintf(why, sizeof why, "rank %u found it silent", ask->src);
        acis_switch_lost(why);
    }
    struct acis_coff *co = coff_named(ask->ctx, ask->root);
    int later = !co;
    uint64_t forget = (uint64_t)ACIS_CV(OFFLOAD_FAULT_FORGET);
    if (co && (co->cs->state == ACIS_CT_BROKEN ||
               (forget && acis_fault_pick(forget, acis_oc.fault_seed,
                                          atomic_fetch_add(&acis_oc.fault_draws, 1))))) {
        my_seq = co->seq;                           /* gone: the asker breaks it */
    } else if (co) {
        len = packet_for(co, ask->seq, ask->seg_index, reply);
        my_seq = co->seq;
        later = (int32_t)(ask->seq - my_seq) > 0;
        for (const struct acis_op *op = co->ops; op && !later; op = op->next)
            later = op->st.seq == ask->seq && ask->seg_index >= op->st.next &&
                    ask->seg_index < op->st.nseg;
    }
    acis_dev_unlock();

    if (len) {
        ACIS_COUNT(peer_served, 1);
    } else {                   /* not started or sent here yet (ask again), or gone */
        struct acis_hdr r = {
            .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
            .opcode = ACIS_OPC(ACIS_K_PEER_ASK, 0), .job_key = ask->job_key,
            .ctx = ask->ctx, .seq = ask->seq, .seg_index = ask->seg_index,
            .src = (uint32_t)acis_oc.world_rank, .root = ask->root,
            .flags = later ? ACIS_F_PENDING : ACIS_F_ERROR,
            .rx_len = my_seq,
        };
        acis_hdr_encode(&r, reply);
        len = ACIS_HDR_LEN;
    }
    acis_put16(reply + 10, ask->slot);              /* the asker's tag */
    acis_hdr_seal(reply, reply + ACIS_HDR_LEN, len - ACIS_HDR_LEN);
    return len;
}

/* ---------------------------------------------------------- finishing */

struct emu_out {
    struct acis_coff *co;
    struct fix_case *fc;
};

/* The private core's answer for this member: back to the real slot. */
static void take_answer(void *arg, uint32_t member, const void *pkt, size_t len)
{
    struct emu_out *o = arg;
    struct acis_comm *cs = o->co->cs;
    struct acis_op *op = o->fc->op;
    struct acis_hdr h;
    if (member != (uint32_t)cs->rank ||
        acis_wire_decode(pkt, len, ACIS_MAX_PAYLOAD, &h) != ACIS_WERR_OK)
        return;
    uint64_t pos = op->st.pos0 + o->fc->seg;
    h.slot = (uint16_t)(pos % o->co->win.size);
    h.ctx = cs->ctx;
    if (acis_take_answer(o->co, op, &h, (const uint8_t *)pkt + ACIS_HDR_LEN) == 0)
        ACIS_COUNT(peer_segments, 1);
}

/* Every member agreed: MPICH after collective stop_seq.  Collectives
 * started after it are taken back and marked to be redone, nonblocking
 * ones in call order (device lock held). */
static void go_to_mpich(struct acis_coff *co)
{
    struct acis_comm *cs = co->cs;
    cs->state = ACIS_CT_FAILED;
    cs->refused = ACIS_REASON_DEVICE_FAILED;
    for (struct acis_op **pp = &co->ops; *pp;) {
        struct acis_op *op = *pp;
        if (op->st.seq == co->fix->stop_seq) {
            pp = &op->next;
            continue;
        }
        take_off(co, pp, &op->abandoned);
    }
    /* nonblocking calls not finished by then, in call order */
    for (struct acis_exec *x = co->execs; x; x = x->next_exec) {
        int finishes = (x->phase == ACIS_PHASE_MAIN && !atomic_load(&x->op.abandoned)) ||
                       x->phase == ACIS_PHASE_DONE;     /* complete, not yet unlinked */
        if (!finishes)
            acis_redo_mark(x);
    }
    if (cs->rank == 0)
        acis_log(1, "communicator of %d ranks: its switch failed; the members finished "
                    "its collectives up to #%u, MPICH from the next one",
                 cs->size, co->fix->stop_seq);
}

static void feed(struct acis_coff *co, struct fix_case *fc, uint32_t m, const uint8_t *pkt,
                 size_t len)
{
    struct acis_fix *f = co->fix;
    if (fc->have[m / 64] >> (m % 64) & 1)
        return;
    fc->have[m / 64] |= 1ull << (m % 64);
    fc->in++;
    if (!(acis_get16(pkt + 8) & ACIS_F_LOST))
        fc->all_lost = 0;
    struct emu_out o = { co, fc };
    uint32_t ci = (uint32_t)(fc - f->c);
    if (acis_swemu_input(f->emu, m, ci, fc->round, pkt, len, take_answer, &o) != 0) {
        give_up(co, "a member's packet does not fit its segment");
        return;
    }
    if (fc->in < (uint32_t)co->cs->size)
        return;
    if (!acis_stream_has(&fc->op->st, &co->win, fc->seg)) {
        give_up(co, "the members' packets of a segment did not complete it");
        return;
    }
    struct acis_op *op = fc->op;
    if (fc->seg == 0 && fc->all_lost && op->blocking) {
        f->stop = 1;
        f->stop_seq = op->st.seq;
    }
    fc->op = NULL;
    if (acis_stream_finished(&op->st)) {
        ACIS_COUNT(recovered, 1);
        if (f->stop && f->stop_seq == op->st.seq)
            go_to_mpich(co);
    }
}

static void open_case(struct acis_coff *co, struct fix_case *fc, struct acis_op *op, uint32_t k)
{
    struct acis_fix *f = co->fix;
    uint32_t ci = (uint32_t)(fc - f->c);
    uint8_t pkt[PKT_MAX];
    fc->op = op;
    fc->seg = k;
    fc->round = f->round[ci];
    f->round[ci] ^= 1;
    fc->all_lost = 1;
    fc->in = 0;
    memset(fc->have, 0, ((size_t)co->cs->size + 63) / 64 * sizeof(uint64_t));
    fc->asked_ns = 0;
    fc->tries = 0;
    size_t len = packet_for(co, op->st.seq, k, pkt);
    if (!len) {
        give_up(co, "this rank's own packet of an open segment is gone");
        return;
    }
    feed(co, fc, (uint32_t)co->cs->rank, pkt, len);
}

static void ask(struct acis_coff *co, struct fix_case *fc, uint64_t now)
{
    struct acis_comm *cs = co->cs;
    uint64_t rto = (uint64_t)ACIS_CV(OFFLOAD_RETRANSMIT_US) * 1000;
    if (fc->asked_ns && now - fc->asked_ns < rto << (fc->tries < 4 ? fc->tries : 4))
        return;
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_PEER_ASK, 0), .job_key = acis_oc.job_key,
        .slot = (uint16_t)(co->fix->id << TAG_SHIFT | (uint32_t)(fc - co->fix->c)),
        .ctx = cs->ctx, .seq = fc->op->st.seq, .seg_index = fc->seg,
        .src = (uint32_t)acis_oc.world_rank, .root = cs->boot,
    };
    uint8_t pkt[ACIS_HDR_LEN];
    acis_hdr_encode(&h, pkt);
    acis_hdr_seal(pkt, NULL, 0);
    for (int m = 0; m < cs->size; m++)
        if (!(fc->have[m / 64] >> (m % 64) & 1) && acis_peer_ask(cs->granks[m], pkt, sizeof pkt) &&
            !co->fix->warned++)                     /* asked again at the next timeout */
            acis_log(0, "recovery after a switch failure: cannot reach rank %u's recovery "
                        "service yet; asking again", cs->granks[m]);
    fc->asked_ns = now;
    fc->tries++;
}

int acis_fix_progress(struct acis_coff *co)
{
    struct acis_op *op = co->ops;
    if (!op || co->cs->state != ACIS_CT_READY)
        return 0;
    struct acis_fix *f = fix_of(co);
    if (!f) {                                       /* try again at the next round */
        if (!acis_oc.fix_nomem_warned++)
            acis_log(0, "recovery after a switch failure: out of memory; trying again");
        return 0;
    }
    uint64_t now = acis_now_ns();
    if (f->cur_seq != op->st.seq || f->cursor > op->st.next) {
        f->cur_seq = op->st.seq;
        f->cursor = 0;
    }
    /* What this member has not sent is as good as sent: all finish it. */
    while (acis_stream_can_send(&op->st, &co->win)) {
        uint8_t hdr[ACIS_HDR_LEN];
        const uint8_t *pl;
        uint32_t len;
        acis_stream_next(&op->st, &co->win, hdr, &pl, &len, now);
    }
    for (int i = 0; i < CASES; i++) {
        struct fix_case *fc = &f->c[i];
        while (!fc->op && f->cursor < op->st.next) {
            uint32_t k = f->cursor++;
            if (!acis_stream_has(&op->st, &co->win, k))
                open_case(co, fc, op, k);
            if (co->cs->state != ACIS_CT_READY)
                return 0;                           /* given up, or gone to MPICH */
        }
        if (fc->op)
            ask(co, fc, now);
    }
    return 0;
}

/* A reply's case: the tag names the communicator's recovery and the case;
 * the rest must match what was asked. */
static struct fix_case *case_of(const struct acis_hdr *h, struct acis_coff **out)
{
    for (struct acis_coff *co = acis_oc.coffs; co; co = co->next_all) {
        struct acis_fix *f = co->fix;
        if (!f || f->id != h->slot >> TAG_SHIFT)
            continue;
        struct fix_case *fc = &f->c[h->slot & ((1u << TAG_SHIFT) - 1)];
        if (!fc->op || h->ctx != co->cs->ctx || h->seq != fc->op->st.seq ||
            h->seg_index != fc->seg)
            return NULL;
        *out = co;
        return fc;
    }
    return NULL;
}

int acis_fix_input(void)
{
    static uint8_t buf[PKT_MAX];
    struct acis_hdr h;
    ssize_t n;
    int got = 0;
    while ((n = acis_peer_recv(buf, sizeof buf, &h)) > 0) {
        struct acis_coff *co;
        struct fix_case *fc = case_of(&h, &co);
        if (!fc)
            continue;                               /* answered already */
        got++;
        unsigned kind = ACIS_OPC_KIND(h.opcode);
        if (kind == ACIS_K_PEER_ASK) {
            if (h.flags & ACIS_F_ERROR) {
                acis_log(0, "rank %u no longer has its packet of segment %u of collective "
                            "#%u (its last is #%u)", h.src, h.seg_index, h.seq, h.rx_len);
                give_up(co, "a member lost a packet it had to keep");
            }
            continue;                               /* not started there: ask later */
        }
        int m = 0;
        while (m < co->cs->size && co->cs->granks[m] != h.src)
            m++;
        if (m == co->cs->size || kind != fc->op->st.kind)
            continue;
        feed(co, fc, (uint32_t)m, buf, (size_t)n);
    }
    return n < 0 ? -1 : got;
}

void acis_fix_wait(void)
{
    acis_peer_wait(1 + (int)(ACIS_CV(OFFLOAD_RETRANSMIT_US) / 1000));
}

void acis_switch_lost(const char *why)
{
    if (atomic_exchange(&acis_ct.device_lost, 1))
        return;
    acis_oc.inflight = 0;                       /* nothing out counts any more */
    ACIS_COUNT(switch_failures, 1);
    acis_log(1, "the switch failed (%s): finishing open collectives with the other "
                "ranks, then MPICH", why);
}
