/* engine.c -- runs offloaded collectives: gives each one its sequence number
 * and slot positions on its communicator, sends its segments as the slot
 * window and the device's credit allow (in batches), delivers answers to
 * the right collective, and waits -- spinning or sleeping as the device is
 * told -- until a given collective is done.  Any thread's progress moves
 * every collective in flight, blocking or not; the device lock is held
 * only while packets move. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "commtable/commtable.h"
#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

#define BATCH 64

/* Take cs's state off the engine's lists (device lock held, by
 * acis_ct_drop_off, which has cleared cs->off and cs's row already): from
 * here no thread can reach it.  Early answers still out are dropped, not
 * waited for: the members' closing barrier is done (a communicator with a
 * row has its private dup), so every member has posted and nobody needs
 * them, and another member may have given the row back already -- a new
 * communicator can hold it, and the answer would never come (MPICH's
 * coll/bcast test hung so at 4 ranks on shm). */
static void coff_unhook(void *p)
{
    struct acis_coff *co = p;
    for (struct acis_coff **pp = &acis_oc.active; *pp; pp = &(*pp)->next_active)
        if (*pp == co) {
            *pp = co->next_active;
            break;
        }
    for (struct acis_coff **pp = &acis_oc.coffs; *pp; pp = &(*pp)->next_all)
        if (*pp == co) {
            *pp = co->next_all;
            break;
        }
    if (!acis_comm_lost(co->cs))
        acis_oc.inflight -= co->win.busy_count - co->nearly;   /* early ones never counted */
    acis_fix_free(co);                  /* acis_oc.fixing changes under the lock */
}

/* Free cs's state once it is unhooked (no lock: nothing reaches it). */
static void coff_free(void *p)
{
    struct acis_coff *co = p;
    free(co->early);                    /* early.c's, by then never read */
    if (co->kept)
        for (uint32_t i = 0; i < co->win.size; i++)
            free(co->kept[i].pkt);
    free(co->kept);
    acis_window_free(&co->win);
    free(co);
}

/* The row has fewer slots than the window coff_new made (a fabric's
 * row has the smallest window of its switches): use that many, before
 * anything was sent. */
static void coff_window(void *p, uint32_t window)
{
    struct acis_coff *co = p;
    if (window && window < co->win.size)
        co->win.size = window;
}

/* cs's offload state, made when its row is set up (acis_comm_setup, with
 * the window every row of the switch has), before the members agree: a
 * member short of memory makes the communicator stay in MPICH on all of
 * them, instead of failing its first collective alone.  0, or -1. */
static int coff_new(struct acis_comm *cs, uint32_t window)
{
    struct acis_coff *co = calloc(1, sizeof *co);
    if (!co || acis_fault_nomem_setup() || acis_window_init(&co->win, window) != 0) {
        free(co);
        acis_log(2, "no memory for the offload state of a communicator of %d ranks: "
                    "every member keeps it in MPICH", cs->size);
        return -1;
    }
    co->cs = cs;
    acis_dev_lock();
    co->next_all = acis_oc.coffs;
    acis_oc.coffs = co;
    cs->off = co;
    acis_dev_unlock();
    return 0;
}

/* The switch answered a segment of an open collective of co ERROR (the
 * members' packets of it disagree: an erroneous program): the
 * communicator breaks, on every member, since every member's packet of
 * that segment is answered so (device lock held). */
static void disagreed(struct acis_coff *co, const struct acis_hdr *h)
{
    char why[200];
    snprintf(why, sizeof why, "the switch found the members' packets of a segment "
             "disagreeing (%s, sequence %u, segment %u): do all ranks call the same "
             "collectives in the same order, with matching counts?",
             acis_wire_kind_name(ACIS_OPC_KIND(h->opcode)), h->seq, h->seg_index);
    acis_early_break(co, why);
}

/* The device hands every data answer here (device lock held). */
static void deliver(void *arg, const struct acis_hdr *h, const uint8_t *payload)
{
    (void)arg;
    struct acis_comm *cs = acis_comm_by_ctx(h->ctx);
    struct acis_coff *co = cs && !acis_comm_lost(cs) ? cs->off : NULL;
    struct acis_op *op = co ? co->ops : NULL;
    while (op && op->st.seq != h->seq)
        op = op->next;
    int rc = op ? acis_take_answer(co, op, h, payload) : -1;
    if (rc == 0)
        acis_oc.inflight--;
    else if (rc == -2)                        /* never answered: no hang, an error */
        disagreed(co, h);
    else if (rc < 0)
        ACIS_COUNT(packets_dropped, 1);       /* a repeat, or stale */
}

void acis_engine_init(void)
{
    acis_ct.off_new = coff_new;
    acis_ct.off_unhook = coff_unhook;
    acis_ct.off_free = coff_free;
    acis_ct.off_window = coff_window;
    acis_dev_set_deliver(deliver, NULL);
}

int acis_op_start(struct acis_op *op, struct acis_comm *cs)
{
    if (cs->state != ACIS_CT_READY)
        return ACIS_OP_SOFTWARE;
    struct acis_coff *co = cs->off;       /* made with the row */
    acis_dev_lock();
    if (cs->state != ACIS_CT_READY) {           /* members just agreed on MPICH */
        acis_dev_unlock();
        return ACIS_OP_SOFTWARE;
    }
    op->cs = cs;
    op->next = NULL;
    atomic_store(&op->done, 0);
    atomic_store(&op->abandoned, 0);
    atomic_store(&op->failed, 0);
    op->stalled = 0;
    op->st.ctx = cs->ctx;
    op->st.seq = ++co->seq;
    op->st.src = (uint32_t)acis_oc.world_rank;
    op->st.member = (uint32_t)cs->rank;
    op->st.job_key = acis_oc.job_key;
    op->st.lost = (uint8_t)acis_comm_lost(cs);
    op->st.seg_bytes = acis_seg_bytes(cs->payload, op->st.kind, op->st.dtype,
                                      cs->scan_split ? (uint32_t)cs->size : 0);
    acis_stream_start(&op->st, &co->win);
    struct acis_op **tail = &co->ops;
    while (*tail)
        tail = &(*tail)->next;
    *tail = op;
    if (!co->active) {
        co->active = 1;
        co->next_active = acis_oc.active;
        acis_oc.active = co;
    }
    acis_dev_unlock();
    return 0;
}

/* Send what the window and credit allow, in stream position order: a
 * slot's uses must reach the switch in order, so a later collective waits
 * while an earlier one still has segments to send (else its segment would
 * take a slot out of turn: dropped as stale by a network switch and sent
 * again much later, never accepted by the shared-memory one). */
static int pump(struct acis_coff *co)
{
    uint8_t hdrs[BATCH][ACIS_HDR_LEN];
    struct acis_dev_pkt pk[BATCH];
    int n = 0;
    uint64_t now = acis_dev_reliable() ? 0 : acis_now_ns();   /* for retransmission */
    uint32_t cap = acis_dev_credit_cap();
    for (struct acis_op *op = co->ops; op; op = op->next) {
        while (acis_oc.inflight < cap && acis_stream_can_send(&op->st, &co->win)) {
            const uint8_t *pl;
            uint32_t len;
            acis_stream_next(&op->st, &co->win, hdrs[n], &pl, &len, now);
            pk[n] = (struct acis_dev_pkt){ hdrs[n], pl, len };
            acis_oc.inflight++;
            if (++n == BATCH) {
                if (acis_dev_send(pk, n) != 0)
                    return -1;
                n = 0;
            }
        }
        if (op->st.next < op->st.nseg)
            break;
    }
    return n ? acis_dev_send(pk, n) : 0;
}

/* Send again every segment whose answer is overdue (loss recovery). */
static int resend_overdue(struct acis_coff *co, uint64_t now, uint64_t rto)
{
    uint8_t hdr[ACIS_HDR_LEN];
    for (uint32_t slot = 0; slot < co->win.size && co->win.busy_count; slot++) {
        const uint8_t *pl;
        uint32_t len;
        if (!acis_window_resend(&co->win, slot, now, rto, hdr, &pl, &len))
            continue;
        struct acis_dev_pkt p = { hdr, pl, len };
        if (acis_dev_send(&p, 1) != 0)
            return -1;
        acis_dev_asked();                       /* a live switch answers it */
        ACIS_COUNT(retransmits, 1);
    }
    return 0;
}

/* Take finished collectives off their communicators' lists; keep the
 * last window of their packets (in-place ones kept theirs as answers
 * came). */
static void reap(void)
{
    int reliable = acis_dev_reliable();     /* nothing to recover: keep nothing */
    int flushed = 0;
    for (struct acis_coff **cp = &acis_oc.active; *cp;) {
        struct acis_coff *co = *cp;
        for (struct acis_op **pp = &co->ops; *pp;) {
            struct acis_op *op = *pp;
            if (acis_stream_finished(&op->st)) {
                if (!flushed++)
                    acis_dev_flush();       /* its buffers go back to the user */
                *pp = op->next;
                uint32_t n = op->st.nseg, w = co->win.size;
                for (uint32_t k = n > w ? n - w : 0; k < n && !op->st.inplace && !reliable; k++)
                    acis_keep(co, &op->st, k);
                atomic_store(&op->done, 1);
            } else {
                pp = &op->next;
            }
        }
        if (!co->ops) {
            co->active = 0;
            *cp = co->next_active;
        } else {
            cp = &co->next_active;
        }
    }
}

int acis_engine_progress(void)
{
    int rc = 0, got = 0, alive = !atomic_load(&acis_ct.device_lost);
    acis_dev_lock();
    atomic_store_explicit(&acis_oc.rounds,
                          atomic_load_explicit(&acis_oc.rounds, memory_order_relaxed) + 1,
                          memory_order_relaxed);
    for (struct acis_coff *co = acis_oc.active; co && rc >= 0; co = co->next_active) {
        if (co->nearly && !acis_comm_lost(co->cs))
            acis_early_sweep(co);       /* their slots, for the packets behind them */
        rc = acis_comm_lost(co->cs) ? acis_fix_progress(co) : pump(co);
    }
    if (rc >= 0 && acis_oc.fixing && acis_fix_input() > 0)
        got = 1;
    if (rc >= 0 && alive) {
        int n = acis_dev_poll();
        if (n > 0)
            got += n;
        else if (n < 0)
            rc = -1;
        else if (!got && !acis_dev_reliable()) {  /* quiet: anything overdue? */
            uint64_t now = acis_now_ns();
            uint64_t rto = (uint64_t)ACIS_CV(OFFLOAD_RETRANSMIT_US) * 1000;
            for (struct acis_coff *co = acis_oc.active; co && rc == 0; co = co->next_active)
                if (!acis_comm_lost(co->cs))
                    rc = resend_overdue(co, now, rto);
        }
    }
    reap();
    acis_dev_unlock();
    return rc < 0 ? -1 : got;
}

void acis_engine_silent(int channel_failed, uint64_t idle_since_ns)
{
    char why[96] = "the channel failed";
    acis_dev_lock();
    int silent = channel_failed || atomic_load(&acis_ct.device_lost)   /* lost already */
                     ? -1 : acis_dev_still_silent(idle_since_ns);
    if (silent > 0)
        snprintf(why, sizeof why, "no answer for %lld ms", (long long)ACIS_CV(OFFLOAD_TIMEOUT_MS));
    if (silent != 0)
        acis_switch_lost(why);
    acis_dev_unlock();
}

void acis_mpich_poke(uint64_t *last_ns)
{
    uint64_t now = acis_now_ns();
    if (now - *last_ns < ACIS_POKE_NS)
        return;
    *last_ns = now;
    int flag;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, acis_oc.poke_comm, &flag, MPI_STATUS_IGNORE);
}

void acis_fault_stall(struct acis_op *op)
{
    long long ms = ACIS_CV(OFFLOAD_FAULT_STALL_MS);
    if (!ms || op->stalled || !acis_dev_asking())
        return;
    op->stalled = 1;
    struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

void acis_op_wait(struct acis_op *op)
{
    uint64_t idle_since = acis_now_ns(), poked = idle_since;
    int counted = atomic_load_explicit(&acis_oc.helper.started, memory_order_relaxed);        /* the progress helper keeps off */
    if (counted)
        atomic_fetch_add(&acis_oc.waiters, 1);
    for (;;) {
        int got = acis_engine_progress();
        if (atomic_load(&op->done) || atomic_load(&op->abandoned))
            break;
        if (got > 0) {
            idle_since = acis_now_ns();
            continue;
        }
        acis_mpich_poke(&poked);                /* a peer may need our MPICH */
        if (acis_comm_lost(op->cs)) {
            acis_fix_wait();                    /* the members finish it */
            continue;
        }
        acis_fault_stall(op);
        if (got < 0 || acis_dev_wait(idle_since) < 0)
            acis_engine_silent(got < 0, idle_since);
    }
    if (counted)
        atomic_fetch_sub(&acis_oc.waiters, 1);
}
