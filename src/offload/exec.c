/* exec.c -- one offloaded call from start to finish, blocking or not: for
 * gatherv and scatterv first an exchange of block sizes through the switch
 * (only the root knows them all), then the collective itself: plan it, put
 * the data in wire form, run it through the engine, put the answer back.
 * If the communicator goes to MPICH first (its switch failed), or a
 * member had no memory for its data, a blocking call says so to its
 * caller, who redoes it there (redo.c); a nonblocking one is marked to be
 * redone (acis_exec.redo) or, after an abstention, fails on every member
 * (abstain, below).  Nothing here calls the stages above it.
 * acis_run_init() publishes which entry points have plans to src/fallback,
 * so a call is never selected for offload without a way to run it. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

void acis_run_init(void)
{
    for (int i = 0; i < ACIS_COLL_COUNT; i++)
        acis_fb.implemented[i] = (uint8_t)acis_has_plan((acis_coll_t)i);
    /* Nonblocking gatherv and scatterv would start their main collective
     * after the size exchange, whenever each member next enters acis: a
     * member blocked in MPICH meanwhile (a blocking call, or another
     * rank's wait) never starts it, and the members would number later
     * collectives differently.  They run in MPICH -- on every member alike,
     * so the decision is agreed.  (Their persistent forms learn the sizes
     * once, while their first start runs in MPICH: pers.c.) */
    acis_fb.implemented[ACIS_COLL_IGATHERV] = 0;
    acis_fb.implemented[ACIS_COLL_ISCATTERV] = 0;
}

int acis_call_broken(const struct acis_call *c)
{
    if (c->req)
        *c->req = MPI_REQUEST_NULL;
    return acis_raise(c->comm, MPI_ERR_INTERN);
}

static int failed(struct acis_exec *x, int err, const char *what)
{
    acis_log(0, "%s: %s; the call returns an error", acis_coll_name(x->c.coll), what);
    acis_exec_drop(x);
    x->err = err;
    x->phase = ACIS_PHASE_DONE;
    return -1;
}

/* This rank cannot have its data in wire form (no memory, or MPICH would
 * not pack it), after every member decided to offload.  Leaving the call
 * would leave the others waiting for its packets; so it takes part
 * without data: its packets carry ACIS_F_ABSTAIN, the switch answers
 * every member so, with no data, and nothing is written anywhere
 * (acis_exec_step, own_copy).  A blocking call is then redone in MPICH
 * by every member, inside the same call.  A nonblocking one fails on
 * every member with MPI_ERR_NO_MEM, as MPICH's own call fails when it has
 * no memory: redone in MPICH, it would need every member to start it, and
 * a member may sit in MPICH meanwhile (MPI_Wait on a request of MPICH's)
 * waiting for a peer that waits for this call -- a hang, seen in the
 * stress test at 4 ranks (docs/reliability.md).  A gatherv or scatterv
 * root abstains the same way when a member's block differs from what its
 * counts say (counts_differ). */
static void abstain(struct acis_exec *x, const char *why)
{
    acis_image_free(&x->src);
    acis_image_free(&x->dst);
    x->op.st.abstain = 1;
    x->op.st.inplace = 0;
    x->op.st.src_buf = NULL;
    x->op.st.dst_buf = NULL;
    x->op.st.src_len = x->op.st.dst_len = 0;
    ACIS_COUNT(abstained, 1);
    acis_log(2, "%s: %s; it sends none and every rank %s", acis_coll_name(x->c.coll), why,
             acis_coll_form(x->c.coll) == ACIS_FORM_NONBLOCKING ? "fails the call"
                                                                : "redoes the call in MPICH");
}

/* Start x's collective for the phase it is in.  A blocking call that
 * returns only once it is finished may be where the members agree on
 * MPICH after a switch failure (fix.c): every member tells it alike,
 * from the call's form, kind and size. */
static int start_op(struct acis_exec *x, int phase)
{
    struct acis_coff *co = x->c.cs->off;
    /* Early calls' answers still to come: a blocking call waits for
     * every member anyway; a nonblocking one must not wait, and the
     * engine takes them as they come (late.c) while its packets wait for
     * their slots. */
    if (x->c.cs->state == ACIS_CT_READY && co->nearly &&
        acis_coll_form(x->c.coll) == ACIS_FORM_BLOCKING)
        acis_early_settle(co, 1);
    x->phase = phase;
    x->op.blocking = (uint8_t)(acis_coll_form(x->c.coll) == ACIS_FORM_BLOCKING &&
                               !acis_early_kind(x->op.st.kind, x->op.st.total));
    return acis_op_start(&x->op, x->c.cs);
}

/* The exchange: an allgather of every rank's 8-byte block size. */
static int start_sizes(struct acis_exec *x)
{
    int size = x->c.cs->size, rank = x->c.cs->rank;
    x->blocks = acis_fault_nomem(x->c.coll) ? NULL : calloc((size_t)size, sizeof(uint64_t));
    memset(&x->op, 0, sizeof x->op);
    x->op.st.kind = ACIS_K_ALLGATHER;
    x->op.st.dtype = ACIS_DT_BYTE;
    x->op.st.total = 8 * (uint64_t)size;
    x->op.st.src_buf = (const uint8_t *)&x->mine;   /* little-endian on x86-64 */
    x->op.st.src_off = 8 * (uint64_t)rank;
    x->op.st.src_len = 8;
    x->op.st.dst_buf = (uint8_t *)x->blocks;
    x->op.st.dst_len = 8 * (uint64_t)size;
    if (!x->blocks)
        abstain(x, "no memory for this rank's data");
    return start_op(x, ACIS_PHASE_SIZES);
}

static int overlap(const uint8_t *a, uint64_t al, const uint8_t *b, uint64_t bl)
{
    return a && b && al && bl && a < b + bl && b < a + al;
}

/* No member of a small blocking broadcast, scatter or gather abstains: a
 * member with nothing to receive may have returned already (early.c), and
 * would not redo the call in MPICH.  Without memory for its data in wire
 * form, a member packs into (source) and unpacks from (result) the
 * calling frame's spare bytes, which hold any such call's data.  1 if it
 * could. */
static int borrow(struct acis_exec *x)
{
    const struct acis_plan *p = &x->p;
    if (!x->spare || p->wire || p->copy_src || !acis_early_kind(p->kind, p->total))
        return 0;
    acis_image_free(&x->src);
    acis_image_free(&x->dst);
    if ((p->has_src && acis_image_lend_in(&x->src, &p->src, x->spare, ACIS_EARLY_MAX,
                                          acis_comm_handle(x->c.cs)) != 0) ||
        (p->has_dst && acis_image_lend(&x->dst, &p->dst, x->spare + ACIS_EARLY_MAX,
                                       ACIS_EARLY_MAX) != 0))
        return 0;
    acis_log(2, "%s: no memory for this rank's data; it uses the call's own %d bytes "
                "(a member here never abstains)", acis_coll_name(x->c.coll),
             2 * ACIS_EARLY_MAX);
    return 1;
}

/* The root of a gather (or gatherv) or scatter neither sends nor asks for
 * the segments wholly inside its own block (stream.c), and copies that
 * block from its source to its result itself once the call succeeded
 * (own_copy): at 2 ranks that is half of what went through the switch.
 * Only where some segment lies inside the block, and the switch takes it
 * (ACIS_CT_OWN_BLOCK); not scatterv: the switch checks a scatter root's
 * empty pieces against equal blocks.  Every member of an allgather (or
 * allgatherv) does the same but still sends those segments' pieces (the
 * others need them): over a network those segments no longer come back
 * to it (nearly half of what it receives at 2 ranks, blocks of many
 * segments). */
static void own_block(struct acis_exec *x)
{
    struct acis_stream *st = &x->op.st;
    const struct acis_comm *cs = x->c.cs;
    uint64_t off, len, seg = acis_seg_bytes(cs->payload, st->kind, st->dtype, 0);
    int all = st->kind == ACIS_K_ALLGATHER;
    if ((!all && cs->rank != x->c.root) || !cs->own_block || st->abstain || !st->src_buf ||
        !seg)
        return;
    if (st->kind == ACIS_K_GATHER || all) {
        off = st->src_off;
        len = st->src_len;
        if (!st->dst_buf || off < st->dst_off || off + len > st->dst_off + st->dst_len)
            return;
    } else if (st->kind == ACIS_K_SCATTER &&
               acis_coll_blocking(x->c.coll) == ACIS_COLL_SCATTER) {
        off = x->p.dst_off;
        len = st->total / (uint64_t)cs->size;
        if (off < st->src_off || off + len > st->src_off + st->src_len ||
            (st->dst_len && st->dst_len != len))
            return;
    } else {
        return;
    }
    uint64_t first = (off + seg - 1) / seg * seg;      /* a segment's start */
    uint64_t end = first + seg < st->total ? first + seg : st->total;
    if (first >= st->total || end > off + len)
        return;                                        /* none lies inside */
    st->own_off = off;
    st->own_len = len;
    st->own_sends = (uint8_t)all;
}

/* The call succeeded: the root's own block into its result (memmove: an
 * erroneous root may pass overlapping buffers).  Not before: a call that
 * fails (a member abstained) writes nothing. */
static void own_copy(struct acis_exec *x)
{
    const struct acis_stream *st = &x->op.st;
    uint64_t off = st->own_off, len = st->own_len;
    if (!len)
        return;
    if (st->kind == ACIS_K_GATHER || st->kind == ACIS_K_ALLGATHER) {
        if (st->dst_buf + (off - st->dst_off) != st->src_buf)   /* else in place */
            memmove(st->dst_buf + (off - st->dst_off), st->src_buf, len);
    } else if (st->dst_len) {
        memmove(st->dst_buf, st->src_buf + (off - st->src_off), len);
    }
}

/* A blocking gatherv or scatterv whose root finds, after the size
 * exchange, that a member's block is not what its counts say: an
 * erroneous program, which MPICH answers its own way (a truncation error,
 * or a shorter block taken as it is).  Only the root can tell, and no
 * member of either returns early (the short path has no size exchange),
 * so the root abstains and every member redoes the call in MPICH, which
 * answers it so.  Not a persistent start: an abstention fails those. */
static int counts_differ(struct acis_exec *x)
{
    int q = acis_coll_form(x->c.coll) == ACIS_FORM_BLOCKING
                ? acis_plan_sizes_differ(&x->c, x->blocks) : -1;
    if (q >= 0)
        acis_log(1, "%s: rank %d sends or receives %llu bytes where the root's counts say "
                    "otherwise (MPI asks for equal type signatures); the call runs in MPICH",
                 acis_coll_name(x->c.coll), q, (unsigned long long)x->blocks[q]);
    return q >= 0;
}

static int start_main(struct acis_exec *x)
{
    struct acis_plan *p = &x->p;
    if (x->c.cs->state != ACIS_CT_READY)
        return ACIS_OP_SOFTWARE;
    if (acis_plan(&x->c, x->blocks, p) != 0)
        return failed(x, MPI_ERR_INTERN, "selected for offload without a plan");
    /* Past what one stream numbers: every member sees the same total and
     * payload here (gatherv and scatterv after the size exchange), so all
     * go to MPICH alike, counted as redone (the phase says it began). */
    const struct acis_comm *cs = x->c.cs;
    if (!acis_stream_fits(p->total, acis_seg_bytes(cs->payload, p->kind, p->dtype,
                                                   cs->scan_split ? (uint32_t)cs->size : 0))) {
        acis_log(1, "%s: %llu bytes are more segments than a stream numbers; it runs in MPICH",
                 acis_coll_name(x->c.coll), (unsigned long long)p->total);
        x->phase = ACIS_PHASE_MAIN;
        return ACIS_OP_SOFTWARE;
    }
    int differ = counts_differ(x);
    int no_data = differ || acis_fault_nomem(x->c.coll) ||
        (p->has_src &&
         acis_image_in(&x->src, &p->src, p->wire, p->copy_src, acis_comm_handle(cs)) != 0) ||
        (p->has_dst && acis_image_out(&x->dst, &p->dst, p->wire) != 0);
    if (no_data && !differ && borrow(x))
        no_data = 0;
    memset(&x->op, 0, sizeof x->op);
    x->op.st.kind = (uint8_t)p->kind;
    x->op.st.alg = (uint8_t)p->alg;
    x->op.st.op = (uint8_t)p->op;
    x->op.st.dtype = (uint8_t)p->dtype;
    x->op.st.root = p->root;
    x->op.st.total = p->total;
    x->op.st.src_buf = x->src.p;
    x->op.st.src_off = p->src_off;
    x->op.st.src_len = p->has_src ? x->src.len : 0;
    x->op.st.dst_buf = x->dst.p;
    x->op.st.dst_off = p->dst_off;
    x->op.st.dst_len = p->has_dst ? x->dst.len : 0;
    x->op.st.inplace = (uint8_t)(p->wire && overlap(x->op.st.src_buf, x->op.st.src_len,
                                                    x->op.st.dst_buf, x->op.st.dst_len));
    if (no_data)
        abstain(x, differ ? "the members' counts differ" : "no memory for this rank's data");
    own_block(x);
    int rc = start_op(x, ACIS_PHASE_MAIN);
    if (rc == 0 && x->op.st.own_len && !x->op.st.own_sends)
        ACIS_COUNT(own_block, 1);           /* roots (acis.h); an allgather's show in bytes */
    return rc;
}

void acis_exec_drop(struct acis_exec *x)
{
    acis_image_free(&x->src);
    acis_image_free(&x->dst);
    if (x->blocks != x->sizes)
        free(x->blocks);          /* not the starter's */
    x->blocks = NULL;
}

/* The communicator broke while the call started (fix.c): it fails
 * here as on every member, rather than going to MPICH alone. */
static int software_or_broken(struct acis_exec *x)
{
    if (x->c.cs->state != ACIS_CT_BROKEN)
        return ACIS_OP_SOFTWARE;
    return failed(x, MPI_ERR_INTERN, "its communicator is broken (why was said when it "
                                     "broke)");
}

/* What starting a phase returned, made final: software (what is held
 * freed), a failure this rank reports, or 0. */
static int after_start(struct acis_exec *x, int rc)
{
    if (rc == ACIS_OP_SOFTWARE && (rc = software_or_broken(x)) == ACIS_OP_SOFTWARE)
        acis_exec_drop(x);
    else if (rc != 0 && x->phase != ACIS_PHASE_DONE)
        return failed(x, MPI_ERR_NO_MEM, "out of memory starting the collective");
    return rc;
}

int acis_exec_start(struct acis_exec *x)
{
    x->blocks = (uint64_t *)x->sizes;  /* known already: no exchange (pers.c) */
    memset(&x->src, 0, sizeof x->src);
    memset(&x->dst, 0, sizeof x->dst);
    x->err = MPI_SUCCESS;
    if (x->sizes)
        return after_start(x, start_main(x));
    return after_start(x, acis_plan_needs_sizes(&x->c, &x->mine) ? start_sizes(x)
                                                                 : start_main(x));
}

int acis_exec_step(struct acis_exec *x)
{
    if (atomic_load(&x->op.failed))     /* recovery could not finish it, or
                                           the switch found the members disagreeing */
        return failed(x, MPI_ERR_INTERN, "the switch and the ranks could not finish it "
                                         "(why is said above)");
    if (x->op.st.refused) {             /* a member abstained */
        if (acis_coll_form(x->c.coll) == ACIS_FORM_NONBLOCKING)
            return failed(x, MPI_ERR_NO_MEM, "a member had no memory for its data");
        acis_exec_drop(x);
        return ACIS_OP_SOFTWARE;        /* all redo it in MPICH */
    }
    if (x->phase == ACIS_PHASE_SIZES)
        return after_start(x, start_main(x));
    if (x->phase == ACIS_PHASE_MAIN) {
        own_copy(x);
        if (x->p.has_dst &&
            acis_image_finish(&x->dst, &x->p.dst, x->p.wire, acis_comm_handle(x->c.cs)) != 0) {
            failed(x, MPI_ERR_NO_MEM, "cannot unpack the result");
            return 1;                   /* the others have theirs: only this rank fails */
        }
        acis_exec_drop(x);
        x->phase = ACIS_PHASE_DONE;
    }
    return 1;
}

int acis_exec_complete(const struct acis_exec *x)
{
    return x->phase == ACIS_PHASE_DONE;
}

int acis_exec_run(struct acis_exec *x)
{
    _Alignas(16) uint8_t spare[2 * ACIS_EARLY_MAX];
    x->spare = spare;
    int rc = acis_exec_start(x);
    while (rc == 0) {
        acis_op_wait(&x->op);
        if (atomic_load(&x->op.abandoned)) {
            acis_exec_drop(x);
            rc = ACIS_OP_SOFTWARE;
        } else {
            rc = acis_exec_step(x);
        }
    }
    if (rc == 1 || rc == -1)
        return x->err == MPI_SUCCESS ? MPI_SUCCESS : acis_raise(x->c.comm, x->err);
    /* The communicator went to MPICH, or a member abstained: the caller
     * redoes the call there (redo.c). */
    if (x->phase)
        ACIS_COUNT(redone, 1);
    return ACIS_OP_SOFTWARE;
}
