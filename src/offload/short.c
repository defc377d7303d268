/* short.c -- the short path of the commonest call: a blocking collective
 * of one segment whose buffers are used where they are, on the
 * shared-memory switch, while no other collective is in flight.  It takes
 * the sequence number and slot position the engine would give it and
 * builds the same packet with the same packetizer, then posts it straight
 * to the switch and reads the answer where the switch published it: no
 * operation lists, no packet encoding and decoding, no channel queue.
 * Since the packet is the same, members on the short path and members on
 * the engine's (a rank whose datatype must be packed) serve one
 * collective together.  Anything else takes the engine (exec.c).
 *
 * The root of a small broadcast or scatter, and a leaf of a small gather,
 * return as soon as their packet is posted (MPIR_CVAR_OFFLOAD_EARLY_RETURN);
 * early.c takes the answer later.  A scatter root copies its own block
 * itself and asks the switch for nothing. */
#include "config.h"

#include <string.h>

#include "commtable/commtable.h"
#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

/* The call's plan and its buffers as images, if the call qualifies. */
static int qualifies(const struct acis_call *c, struct acis_plan *p, struct acis_image *src,
                     struct acis_image *dst)
{
    uint64_t mine;
    if (!ACIS_CV(OFFLOAD_SHORT_PATH) || !acis_dev_can_post() || ACIS_CV(OFFLOAD_FAULT_NOMEM) ||
        acis_coll_form(c->coll) != ACIS_FORM_BLOCKING || acis_plan_needs_sizes(c, &mine) ||
        acis_plan(c, NULL, p) != 0 || p->copy_src ||
        p->total > acis_seg_bytes(c->cs->payload, p->kind, p->dtype,
                                  c->cs->scan_split ? (uint32_t)c->cs->size : 0))
        return 0;
    memset(src, 0, sizeof *src);
    memset(dst, 0, sizeof *dst);
    return (!p->has_src || acis_image_view(src, &p->src, p->wire) == 0) &&
           (!p->has_dst || acis_image_view(dst, &p->dst, p->wire) == 0);
}

/* This rank has nothing to receive from a call small enough that no
 * member abstains: the root of a broadcast or scatter, a leaf of a
 * gather.  It may return once its packet is posted. */
static int returns_early(const struct acis_call *c, const struct acis_plan *p)
{
    if (!ACIS_CV(OFFLOAD_EARLY_RETURN) || !acis_early_kind(p->kind, p->total))
        return 0;
    return p->kind == ACIS_K_GATHER ? c->cs->rank != c->root : c->cs->rank == c->root;
}

int acis_short_run(struct acis_call *c, int *rc)
{
    struct acis_plan p;
    struct acis_image src, dst;
    if (!qualifies(c, &p, &src, &dst))
        return 0;
    struct acis_comm *cs = c->cs;
    struct acis_coff *co = cs->off;
    int early = returns_early(c, &p);
    int own_block = early && p.has_dst; /* scatter: the root copies its own */
    if (own_block && p.dst_off - p.src_off + dst.len > src.len)
        early = own_block = 0;          /* blocks of different sizes: an error the
                                           switch reports, not a copy past sbuf */
    if (own_block)
        p.has_dst = 0;
    if (co && co->nearly)               /* the slot may hold an early call */
        acis_early_settle(co, 0);
    struct acis_stream st = {
        .kind = (uint8_t)p.kind, .alg = (uint8_t)p.alg, .op = (uint8_t)p.op,
        .dtype = (uint8_t)p.dtype, .root = p.root, .total = p.total,
        .src_buf = src.p, .src_off = p.src_off, .src_len = p.has_src ? src.len : 0,
        .dst_buf = dst.p, .dst_off = p.dst_off, .dst_len = p.has_dst ? dst.len : 0,
    };
    struct acis_hdr h, a;
    struct acis_dev_ticket t;
    const uint8_t *pl, *answer;
    uint32_t len;

    /* Nothing in flight anywhere but early calls (early.c): no other
     * collective waits for this process to move it, and this call's slot
     * is free. */
    acis_dev_lock();
    if (cs->state != ACIS_CT_READY || !co || acis_oc.active || acis_oc.fixing ||
        acis_comm_lost(cs) || co->win.busy[co->win.next_pos % co->win.size]) {
        acis_dev_unlock();
        return 0;
    }
    if (own_block)
        memmove(dst.p, src.p + (p.dst_off - p.src_off), dst.len);
    st.ctx = cs->ctx;
    st.seq = ++co->seq;
    st.src = (uint32_t)acis_oc.world_rank;
    st.member = (uint32_t)cs->rank;
    st.job_key = acis_oc.job_key;
    st.seg_bytes = acis_seg_bytes(cs->payload, st.kind, st.dtype,
                                  cs->scan_split ? (uint32_t)cs->size : 0);
    acis_stream_start(&st, &co->win);
    acis_stream_next_hdr(&st, &co->win, &h, &pl, &len, 0);
    int posted = acis_dev_post(&h, pl, &t);
    if (posted == 0 && early && acis_early_keep(co, &st, t.b) == 0) {
        acis_dev_unlock();
        ACIS_COUNT(short_path, 1);
        ACIS_COUNT(early_return, 1);
        *rc = MPI_SUCCESS;
        return 1;
    }
    acis_dev_unlock();
    if (posted != 0)
        goto refused;

    /* Under MPI_THREAD_MULTIPLE another thread may start collectives
     * meanwhile: move them too, as the engine's wait would. */
    int others = acis_oc.thread_level == MPI_THREAD_MULTIPLE;
    uint64_t idle = acis_now_ns(), poked = idle;
    for (;;) {
        acis_dev_lock();
        int got = acis_dev_answer(&t, &a, &answer);
        int taken = got ? acis_stream_answer(&st, &co->win, &a, answer) : 0;
        acis_dev_unlock();
        if (got && taken != 0)
            goto refused;
        if (got)
            break;
        if (others)
            acis_engine_progress();
        acis_mpich_poke(&poked);
        acis_dev_wait_answer(&t, idle);
    }
    if (st.refused) {                   /* a member abstained: all redo it in MPICH */
        ACIS_COUNT(redone, 1);
        *rc = acis_call_redo(c);
        return 1;
    }
    ACIS_COUNT(short_path, 1);
    *rc = MPI_SUCCESS;
    return 1;

refused:
    /* The switch refused the packet, or answered that the members' packets
     * disagree: they called different collectives (the channel said
     * which).  The engine would wait forever; here the communicator
     * breaks on this rank (the switch's slot is out of step now) and the
     * call fails, as every later one acis would offload on it. */
    acis_dev_lock();
    acis_stream_release(&st, &co->win, 0);
    if (cs->state == ACIS_CT_READY) {
        cs->state = ACIS_CT_BROKEN;
        cs->refused = ACIS_REASON_BROKEN;
    }
    acis_dev_unlock();
    *rc = acis_raise(c->comm, MPI_ERR_INTERN);
    return 1;
}
