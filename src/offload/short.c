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
 * itself and asks the switch for nothing; a gather root at either end
 * copies its block itself and asks back only the others' (gather_keeps).
 * Where a root's block begins or ends the data, it leaves it out of its
 * piece: nobody asks the switch for it.
 *
 * What the short path works out of a call's arguments -- plan, images,
 * the packet -- is the same for every call of the same shape on the same
 * communicator; it is kept (qcache.c), and such a call later takes the
 * quick path: from the MPI entry point straight to the post, past
 * acis_select() and the stages, deciding and counting as they would. */
#include "config.h"

#include <string.h>

#include "commtable/commtable.h"
#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

/* The call's plan and its buffers as images, if the call (of form) qualifies. */
static int qualifies(const struct acis_call *c, int form, struct acis_plan *p,
                     struct acis_image *src, struct acis_image *dst)
{
    uint64_t mine;
    if (!ACIS_CV(OFFLOAD_SHORT_PATH) || !acis_dev_can_post() || ACIS_CV(OFFLOAD_FAULT_NOMEM) ||
        (form != ACIS_FORM_BLOCKING &&          /* injected faults: the engine's way */
         (ACIS_CV(OFFLOAD_FAULT_NOMEM_NB) || ACIS_CV(OFFLOAD_FAULT_NOMEM_REQUEST))) ||
        acis_coll_form(c->coll) != form || acis_plan_needs_sizes(c, &mine) ||
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

/* The caller's buffer an image is in: the source is in sbuf but where
 * that is MPI_IN_PLACE (a gather root's block in rbuf); results in rbuf. */
static uint8_t *caller_buf(const struct acis_qargs *a, int rbuf)
{
    return rbuf ? (uint8_t *)a->rbuf : (uint8_t *)(uintptr_t)a->sbuf;
}

static uint64_t offset_in(const struct acis_call *c, int rbuf, const uint8_t *p)
{
    struct acis_qargs a = acis_qargs_of(c);
    return (uint64_t)((uintptr_t)p - (uintptr_t)caller_buf(&a, rbuf));
}

/* The root of a gather whose block begins or ends the result places
 * that block itself and posts no piece: the shared-memory switch takes an
 * empty piece of a data-moving collective (docs/protocol.md), and the
 * root asks back the others' blocks alone -- one copy of its block where
 * sending it through the slot and back made two.  A blocking call copies
 * it when posted (one that fails is redone in MPICH, which writes every
 * block); a nonblocking one once its answer says it succeeded (one that
 * fails writes no result byte: acis_early_req_answered).  Narrows *p and
 * *dst to the others' part and says where the block goes (*to, in dst
 * before): 1, or 0 if the call is not such. */
static int gather_keeps(const struct acis_call *c, struct acis_plan *p,
                        const struct acis_image *src, struct acis_image *dst, uint8_t **to)
{
    uint64_t lo = p->src_off, hi = lo + src->len, dlo = p->dst_off, dhi = dlo + dst->len;
    if (p->kind != ACIS_K_GATHER || c->cs->rank != c->root || !p->has_src || !p->has_dst ||
        !c->cs->own_block || !src->len || c->cs->size < 2 ||
        src->len * (uint64_t)c->cs->size != dhi - dlo || (lo != dlo && hi != dhi))
        return 0;                       /* only the root's share, at either end: blocks
                                           of other sizes are an error the switch reports */
    *to = dst->p + (lo - dlo);
    if (lo == dlo) {
        dst->p += src->len;
        p->dst_off = hi;
    }
    dst->len -= src->len;
    return 1;
}

/* The root of a scatter that returns early (its block at `at` in the send
 * data, dst_len bytes) copies that block itself; where the block begins
 * or ends the data, its piece leaves it out too, since nobody asks the
 * switch for it.  Only the root's share of the data: a root that receives
 * more than it sends (MPICH takes it) would cut a leaf's bytes out of the
 * piece.  Narrows *p and *src to the others' blocks: 1, or 0 if not. */
static int scatter_keeps(const struct acis_comm *cs, struct acis_plan *p,
                         struct acis_image *src, uint64_t at, uint64_t dst_len)
{
    if (!cs->own_block || cs->size < 2 || dst_len * (uint64_t)cs->size != src->len ||
        (at && at + dst_len != src->len))
        return 0;
    if (!at) {
        src->p += dst_len;
        p->src_off += dst_len;
    }
    src->len -= dst_len;
    return 1;
}

/* Prepare c, a call of form, for the short path in s: 1, or 0 if it
 * does not qualify. */
static int prepare(const struct acis_call *c, int form, struct acis_short *s)
{
    struct acis_plan p;
    struct acis_image src, dst;
    struct acis_comm *cs = c->cs;
    if (!cs->off || !qualifies(c, form, &p, &src, &dst))
        return 0;
    memset(s, 0, sizeof *s);
    /* Not a nonblocking call: a member that goes the engine's way may
     * abstain from one (exec.c), and every member must then fail it, so
     * each takes the answer before its request completes. */
    s->early = form == ACIS_FORM_BLOCKING && returns_early(c, &p);
    s->own_block = s->early && p.has_dst;   /* scatter: the root copies its own */
    if (s->own_block && p.dst_off - p.src_off + dst.len > src.len)
        s->early = s->own_block = 0;        /* blocks of different sizes: an error the
                                               switch reports, not a copy past sbuf */
    s->src_rbuf = c->sbuf == MPI_IN_PLACE;
    s->dst_rbuf = 1;
    int piece = p.has_src;
    uint8_t *to;
    if (s->own_block) {                     /* scatter root */
        uint64_t at = p.dst_off - p.src_off;
        s->own_len = dst.len;
        s->own_from = offset_in(c, s->src_rbuf, src.p + at);
        s->own_to = offset_in(c, s->dst_rbuf, dst.p);
        p.has_dst = 0;
        s->keeps = (uint8_t)scatter_keeps(cs, &p, &src, at, dst.len);
    } else if (gather_keeps(c, &p, &src, &dst, &to)) {
        s->own_block = s->keeps = 1;
        s->own_len = src.len;
        s->own_from = offset_in(c, s->src_rbuf, src.p);
        s->own_to = offset_in(c, s->dst_rbuf, to);
        piece = 0;
    }
    s->has_src = (uint8_t)p.has_src;
    s->has_dst = (uint8_t)p.has_dst;
    if (p.has_src)
        s->src_at = offset_in(c, s->src_rbuf, src.p);
    if (p.has_dst)
        s->dst_at = offset_in(c, s->dst_rbuf, dst.p);
    s->st = (struct acis_stream){
        .kind = (uint8_t)p.kind, .alg = (uint8_t)p.alg, .op = (uint8_t)p.op,
        .dtype = (uint8_t)p.dtype, .root = p.root, .total = p.total,
        .src_buf = src.p, .src_off = p.src_off, .src_len = piece ? src.len : 0,
        .dst_off = p.dst_off, .dst_len = p.has_dst ? dst.len : 0,
        .ctx = cs->ctx, .src = (uint32_t)acis_oc.world_rank, .member = (uint32_t)cs->rank,
        .job_key = acis_oc.job_key,
        .seg_bytes = acis_seg_bytes(cs->payload, (unsigned)p.kind, (unsigned)p.dtype,
                                    cs->scan_split ? (uint32_t)cs->size : 0),
    };
    const uint8_t *pl;
    uint32_t len;
    acis_stream_packet_hdr(&s->st, &((struct acis_coff *)cs->off)->win, 0, &s->h, &pl, &len);
    s->pl_at = pl ? (uint64_t)(pl - src.p) : 0;
    s->prepped = acis_dev_prepare(&s->h, &s->prep) == 0;
    s->st.src_buf = NULL;
    return 1;
}

/* go()'s answer when a member abstained: the caller redoes the call in
 * MPICH (acis_call_redo, from the whole call). */
#define REDO 2

/* A nonblocking call (q, its request's) was posted on slot (device lock
 * held): done at once if its answer is there (the last member to post
 * has it; a member that abstained fails the call on every member), else
 * kept for q.  1 with the lock
 * released, or 0 with it held if the answer says the members' packets
 * disagree (go() breaks the communicator). */
static int nb_posted(struct acis_coff *co, uint32_t slot, const struct acis_short *s,
                     struct acis_early_req *q)
{
    struct acis_stream *st = &co->early[slot].st;
    int taken = 0;
    if (acis_short_answer(st, &co->win, &co->early[slot].t, &taken)) {
        if (taken != 0)
            return 0;
        acis_early_req_answered(q, st, 0);
    } else {
        acis_early_kept(co, slot, q);   /* its answer is taken later */
    }
    acis_dev_unlock();
    ACIS_COUNT(short_path, 1);
    return 1;
}

/* Run the call with arguments a on cs as s prepared it: 1 with *rc the
 * call's result, REDO if it is to be redone in MPICH (counted), or 0 if
 * it must take the engine (nothing was touched but early answers
 * taken).  A nonblocking call (q, its request's) never waits: it is
 * posted and q is done if its answer was there at once, else its answer
 * is taken later for q (late.c). */
static int go(struct acis_comm *cs, const struct acis_qargs *a, const struct acis_short *s,
              struct acis_early_req *q, int *rc)
{
    struct acis_coff *co = cs->off;
    uint8_t *src = s->has_src ? caller_buf(a, s->src_rbuf) + s->src_at : NULL;
    uint8_t *dst = s->has_dst ? caller_buf(a, s->dst_rbuf) + s->dst_at : NULL;
    struct acis_hdr h = s->h;
    struct acis_stream own_st, *st = &own_st;
    struct acis_dev_ticket own_t, *t = &own_t;
    uint32_t slot;

    acis_dev_lock();
    if (co && co->nearly && acis_early_holds_next(co)) {
        acis_dev_unlock();              /* the slot waits for an early call's answer */
        if (q)
            return 0;
        acis_early_settle(co, 0);
        acis_dev_lock();
    }
    /* Nothing in flight anywhere but early calls (early.c): no other
     * collective waits for this process to move it, and this call's slot
     * is free. */
    if (cs->state != ACIS_CT_READY || !co || acis_oc.active || acis_oc.fixing ||
        acis_comm_lost(cs) || co->win.busy[slot = (uint32_t)(co->win.next_pos % co->win.size)]) {
        acis_dev_unlock();
        return 0;
    }
    int early = (q || s->early) && acis_early_room(co, slot, &st, &t) == 0;
    if (q && !early) {
        acis_dev_unlock();              /* no memory to leave it posted in */
        return 0;
    }
    if (s->own_block) {
        const uint8_t *from = caller_buf(a, s->src_rbuf) + s->own_from;
        uint8_t *to = caller_buf(a, s->dst_rbuf) + s->own_to;
        if (q) {                        /* once it succeeded (a gather root's) */
            q->own_from = from;
            q->own_to = to;
            q->own_len = s->own_len;
        } else if (to != from) {        /* memmove: an erroneous root may pass
                                           overlapping buffers; in place, none */
            memmove(to, from, s->own_len);
        }
    }
    *st = s->st;                        /* an early call's where early.c keeps it */
    st->src_buf = src;
    st->dst_buf = dst;
    st->seq = ++co->seq;
    acis_stream_start_like(st, &co->win, &h, 0);
    const uint8_t *pl = h.payload_len ? src + s->pl_at : NULL;
    int posted = s->prepped ? acis_dev_post_like(&s->prep, &h, pl, t) : acis_dev_post(&h, pl, t);
    if (posted == 0 && q) {
        if (!nb_posted(co, slot, s, q)) {
            acis_dev_unlock();
            goto refused;
        }
        *rc = MPI_SUCCESS;
        return 1;
    }
    if (posted == 0 && early) {
        acis_early_kept(co, slot, NULL);
        acis_dev_unlock();
        ACIS_COUNT(short_path, 1);
        ACIS_COUNT(early_return, 1);
        if (s->keeps)
            ACIS_COUNT(own_block, 1);
        *rc = MPI_SUCCESS;
        return 1;
    }
    if (posted != 0) {
        acis_dev_unlock();
        goto refused;
    }

    /* Under MPI_THREAD_MULTIPLE another thread may start collectives
     * meanwhile: move them too, as the engine's wait would.  The first
     * look is under the lock of the post (the last member to post has
     * its answer at once). */
    int others = acis_oc.thread_level == MPI_THREAD_MULTIPLE;
    uint64_t idle = 0, poked = 0;
    for (;;) {
        int taken = 0, got = acis_short_answer(st, &co->win, t, &taken);
        acis_dev_unlock();
        if (got && taken != 0)
            goto refused;
        if (got)
            break;
        if (!idle)                      /* since the answer was first missing */
            idle = poked = acis_now_ns();
        if (others)
            acis_engine_progress();
        acis_mpich_poke(&poked);
        if (!acis_dev_spin_answer(t))
            acis_dev_wait_answer(t, idle);
        acis_dev_lock();
    }
    if (st->refused) {                   /* a member abstained: all redo it in MPICH */
        ACIS_COUNT(redone, 1);
        return REDO;
    }
    ACIS_COUNT(short_path, 1);
    if (s->keeps)
        ACIS_COUNT(own_block, 1);
    *rc = MPI_SUCCESS;
    return 1;

refused:
    /* The switch refused the packet, or answered that the members' packets
     * disagree: they called different collectives (the channel said
     * which).  The engine would wait forever; here the communicator
     * breaks on this rank (the switch's slot is out of step now) and the
     * call fails, as every later one acis would offload on it and every
     * one open on it. */
    acis_dev_lock();
    acis_stream_release(st, &co->win, 0);
    acis_early_break(co, NULL);
    acis_dev_unlock();
    *rc = acis_raise(a->comm, MPI_ERR_INTERN);
    return 1;
}

int acis_short_run(struct acis_call *c, int *rc)
{
    struct acis_short s;
    if (!prepare(c, ACIS_FORM_BLOCKING, &s))
        return 0;
    if (!acis_oc.hier)
        acis_qcache_keep(c->cs->off, c, c->cs->rank, acis_qrow(c->cs), &s);
    struct acis_qargs a = acis_qargs_of(c);
    int ran = go(c->cs, &a, &s, NULL, rc);
    if (ran == REDO) {
        *rc = acis_call_redo(c);
        ran = 1;
    }
    return ran;
}

/* What acis_select() and acis_offload_run() would do on the way to the
 * short path is settled for this shape (the cache holds only calls they
 * sent there, and what they read of the call is in its key): left is
 * what changes between calls -- the communicator's row (its state, ctx),
 * persistent requests and communicators to finish first (run.c), and
 * reports (VERBOSE) -- looked at here. */
struct acis_qentry *acis_short_quick_find(acis_coll_t coll, const struct acis_qargs *a,
                                          struct acis_comm **csp)
{
    struct acis_comm *cs;
    struct acis_qentry *e;
    if (!acis_oc.quick ||
        atomic_load_explicit(&acis_oc.pers.norphans, memory_order_relaxed) ||
        atomic_load_explicit(&acis_ct.nclosing, memory_order_relaxed) ||
        a->comm == MPI_COMM_NULL)
        return NULL;
    cs = acis_ct.last;                  /* acis_comm_get()'s cache, read first */
    if ((!cs || cs->comm != a->comm || acis_ct.threaded) && !(cs = acis_comm_get(a->comm)))
        return NULL;
    struct acis_qkey k = acis_qkey_of(coll, a);
    if (cs->state != ACIS_CT_READY || !cs->off ||
        !(e = acis_qcache_find(cs->off, &k, acis_qrow(cs), a->rcounts)))
        return NULL;
    /* A buffer the call reads or writes must be there: the ordinary way
     * finds one missing (its image is refused) and reports the error. */
    if ((e->s.has_src && !caller_buf(a, e->s.src_rbuf)) ||
        ((e->s.has_dst || e->s.own_block) && !caller_buf(a, e->s.dst_rbuf)))
        return NULL;
    *csp = cs;
    return e;
}

int acis_short_quick_go(acis_coll_t coll, const struct acis_qargs *a, struct acis_comm *cs,
                        const struct acis_qentry *e, struct acis_early_req *q, int *rc)
{
    uint64_t bytes = e->bytes;
    int ran = go(cs, a, &e->s, q, rc);
    if (!ran)
        return 0;
    if (ran == REDO) {                  /* the whole call, as acis_select() would leave it
                                           for acis_call_pmpi */
        struct acis_call c = { .coll = coll, .sbuf = a->sbuf, .rbuf = a->rbuf,
                               .scount = a->scount, .rcount = a->rcount, .stype = a->stype,
                               .rtype = a->rtype, .op = a->op, .root = a->root,
                               .comm = a->comm, .rcounts = a->rcounts,
                               .cs = cs, .bytes = bytes };
        *rc = acis_call_redo(&c);
    } else {
        ACIS_COUNT(quick_path, 1);
    }
    acis_count_call(&acis_util.coll[coll], ACIS_REASON_NONE, bytes);
    return 1;
}

int acis_short_quick(acis_coll_t coll, const struct acis_qargs *a, int *rc)
{
    struct acis_comm *cs;
    const struct acis_qentry *e = acis_short_quick_find(coll, a, &cs);
    return e ? acis_short_quick_go(coll, a, cs, e, NULL, rc) : 0;
}

int acis_short_nb_prepare(const struct acis_call *c, struct acis_short *s)
{
    if (!prepare(c, ACIS_FORM_NONBLOCKING, s))
        return 0;
    if (!acis_oc.hier)
        acis_qcache_keep(c->cs->off, c, c->cs->rank, acis_qrow(c->cs), s);
    return 1;
}

int acis_short_nb_go(const struct acis_call *c, const struct acis_short *s,
                     struct acis_early_req *q, int *rc)
{
    struct acis_qargs a = acis_qargs_of(c);
    return go(c->cs, &a, s, q, rc);
}
