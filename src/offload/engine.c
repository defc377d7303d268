/* engine.c -- runs offloaded collectives: gives each one its sequence number
 * and slot positions on its communicator, sends its segments as the slot
 * window and the device's credit allow (in batches), delivers answers to
 * the right collective, and waits -- spinning or sleeping as the device is
 * told -- until its own collective is done.  Any thread's progress moves
 * every collective; the device lock is held only while packets move. */
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
};

static void coff_free(void *p)
{
    struct acis_coff *co = p;
    free(co->win.busy);
    free(co);
}

static struct acis_coff *coff_of(struct acis_comm *cs)
{
    if (!cs->off) {
        struct acis_coff *co = calloc(1, sizeof *co);
        if (!co || !(co->win.busy = calloc(cs->window, 1))) {
            free(co);
            return NULL;
        }
        co->win.size = cs->window;
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
        ACIS_COUNT(packets_dropped, 1);
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
    uint32_t credit = acis_dev_credits();
    for (struct acis_op *op = co->ops; op; op = op->next) {
        while (credit > 0 && acis_stream_can_send(&op->st, &co->win)) {
            const uint8_t *pl;
            uint32_t len;
            acis_stream_next(&op->st, &co->win, hdrs[n], &pl, &len);
            pk[n] = (struct acis_dev_pkt){ hdrs[n], pl, len };
            credit--;
            if (++n == BATCH) {
                if (acis_dev_send(pk, n) != 0)
                    return -1;
                n = 0;
                credit = acis_dev_credits();
            }
        }
    }
    return n ? acis_dev_send(pk, n) : 0;
}

int acis_op_wait(struct acis_op *op)
{
    struct acis_coff *co = op->cs->off;
    uint64_t idle_since = acis_now_ns();
    for (;;) {
        acis_dev_lock();
        int rc = pump(co), got = rc == 0 ? acis_dev_poll() : -1;
        int done = acis_stream_finished(&op->st);
        if (done) {
            struct acis_op **pp = &co->ops;
            while (*pp != op)
                pp = &(*pp)->next;
            *pp = op->next;
            acis_stream_done(&op->st);
        }
        acis_dev_unlock();
        if (done)
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
