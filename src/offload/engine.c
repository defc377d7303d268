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

#include "commtable/commtable.h"
#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

#define BATCH 64

/* Offload state of one communicator (acis_comm.off). */
struct acis_coff {
    struct acis_window win;
    uint32_t seq;
    struct acis_op *ops;          /* started and unfinished, oldest first */
    struct acis_coff *next_active;
    int active;                   /* on acis_oc.active */
};

static void coff_free(void *p)
{
    struct acis_coff *co = p;
    acis_dev_lock();
    for (struct acis_coff **pp = &acis_oc.active; *pp; pp = &(*pp)->next_active)
        if (*pp == co) {
            *pp = co->next_active;
            break;
        }
    acis_oc.inflight -= co->win.busy_count;
    acis_dev_unlock();
    acis_window_free(&co->win);
    free(co);
}

static struct acis_coff *coff_of(struct acis_comm *cs)
{
    if (!cs->off) {
        struct acis_coff *co = calloc(1, sizeof *co);
        if (!co || acis_window_init(&co->win, cs->window) != 0) {
            free(co);
            return NULL;
        }
        cs->off = co;
    }
    return cs->off;
}

/* The device hands every data answer here (device lock held). */
static void deliver(void *arg, const struct acis_hdr *h, const uint8_t *payload)
{
    (void)arg;
    struct acis_comm *cs = acis_comm_by_ctx(h->ctx);
    struct acis_coff *co = cs ? cs->off : NULL;
    struct acis_op *op = co ? co->ops : NULL;
    while (op && op->st.seq != h->seq)
        op = op->next;
    if (!op || acis_stream_answer(&op->st, &co->win, h, payload) != 0)
        ACIS_COUNT(packets_dropped, 1);       /* a repeat, or stale */
    else
        acis_oc.inflight--;
}

void acis_engine_init(void)
{
    acis_ct.off_free = coff_free;
    acis_dev_set_deliver(deliver, NULL);
}

int acis_op_start(struct acis_op *op, struct acis_comm *cs)
{
    struct acis_coff *co = coff_of(cs);
    if (!co)
        return -1;
    acis_dev_lock();
    op->cs = cs;
    op->next = NULL;
    atomic_store(&op->done, 0);
    op->st.ctx = cs->ctx;
    op->st.seq = ++co->seq;
    op->st.src = (uint32_t)acis_oc.world_rank;
    op->st.job_key = acis_oc.job_key;
    op->st.seg_bytes = acis_seg_bytes(cs->payload, op->st.kind, op->st.dtype);
    int rc = acis_stream_start(&op->st, &co->win);
    if (rc == 0) {
        struct acis_op **tail = &co->ops;
        while (*tail)
            tail = &(*tail)->next;
        *tail = op;
        if (!co->active) {
            co->active = 1;
            co->next_active = acis_oc.active;
            acis_oc.active = co;
        }
    }
    acis_dev_unlock();
    return rc;
}

/* Send what the window and credit allow, oldest collective first. */
static int pump(struct acis_coff *co)
{
    uint8_t hdrs[BATCH][ACIS_HDR_LEN];
    struct acis_dev_pkt pk[BATCH];
    int n = 0;
    uint64_t now = acis_now_ns();
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
        ACIS_COUNT(retransmits, 1);
    }
    return 0;
}

/* Take finished collectives off their communicators' lists. */
static void reap(void)
{
    for (struct acis_coff **cp = &acis_oc.active; *cp;) {
        struct acis_coff *co = *cp;
        for (struct acis_op **pp = &co->ops; *pp;) {
            struct acis_op *op = *pp;
            if (acis_stream_finished(&op->st)) {
                *pp = op->next;
                acis_stream_done(&op->st);
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
    int rc = 0;
    acis_dev_lock();
    for (struct acis_coff *co = acis_oc.active; co && rc == 0; co = co->next_active)
        rc = pump(co);
    int got = rc == 0 ? acis_dev_poll() : -1;
    if (got == 0) {                             /* quiet: anything overdue? */
        uint64_t now = acis_now_ns(), rto = (uint64_t)ACIS_CV(OFFLOAD_RETRANSMIT_US) * 1000;
        for (struct acis_coff *co = acis_oc.active; co && rc == 0; co = co->next_active)
            rc = resend_overdue(co, now, rto);
        got = rc == 0 ? 0 : -1;
    }
    reap();
    acis_dev_unlock();
    return got;
}

int acis_op_wait(struct acis_op *op)
{
    uint64_t idle_since = acis_now_ns();
    for (;;) {
        int got = acis_engine_progress();
        if (atomic_load(&op->done))
            return 0;
        if (got < 0) {
            acis_log(0, "the channel to the switch failed; aborting the job");
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
        if (got > 0) {
            idle_since = acis_now_ns();
            continue;
        }
        if (acis_dev_wait(idle_since) < 0) {
            acis_log(0, "%s: the switch did not answer for %lld ms "
                        "(MPIR_CVAR_OFFLOAD_TIMEOUT_MS); aborting the job",
                     acis_wire_kind_name(op->st.kind), (long long)ACIS_CV(OFFLOAD_TIMEOUT_MS));
            PMPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}
