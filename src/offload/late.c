/* late.c -- early calls' answers, taken late (early.c says which calls
 * those are).  Answers come in the order the calls were posted (every
 * member posts in that order): they are taken oldest first, up to the
 * first still out.  The short path sweeps before it reuses a slot, the
 * engine sweeps every communicator it moves (so a nonblocking collective
 * started behind an early call never waits on a slot nobody frees), and a
 * nonblocking call's request (nbc.c) sweeps until its own is taken.
 *
 * An answer that says the members' packets disagreed (they called
 * different collectives) breaks the communicator here: the call that
 * should have failed has returned, so the next one fails instead.  A
 * nonblocking call whose request is still open fails itself, and so does
 * one a member abstained from (no memory for its data: the call fails on
 * every member, the communicator stays). */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "offload/offload.h"
#include "util/util.h"

/* e's answer is still to take: its slot waits for it. */
static int out(const struct acis_coff *co, const struct acis_early *e)
{
    uint32_t slot = (uint32_t)(e - co->early);
    return co->win.busy[slot] && co->win.owner[slot] == &e->st;
}

void acis_early_req_answered(struct acis_early_req *q, const struct acis_stream *st,
                             int failed)
{
    int abstained = !failed && st->refused;
    if (abstained)
        acis_log(0, "a nonblocking %s: a member had no memory for its data; the call "
                    "returns an error", acis_wire_kind_name(st->kind));
    q->err = failed ? MPI_ERR_INTERN : abstained ? MPI_ERR_NO_MEM : MPI_SUCCESS;
    if (q->err == MPI_SUCCESS && q->own_len) {      /* a gather root's own block */
        if (q->own_to != q->own_from)
            memmove(q->own_to, q->own_from, q->own_len);
        ACIS_COUNT(own_block, 1);
    }
    atomic_store_explicit(&q->done, 1, memory_order_release);
}

/* Take e's answer if it came: 1, else 0 (device lock held). */
static int take(struct acis_coff *co, struct acis_early *e)
{
    int rc;
    if (!acis_short_answer(&e->st, &co->win, &e->t, &rc))
        return 0;
    struct acis_early_req *q = e->req;
    int abstained = rc == 0 && e->st.refused && q;  /* a nonblocking call: it fails, the
                                                     communicator stays */
    if (rc != 0 || e->st.refused) {
        acis_stream_release(&e->st, &co->win, 0);
        if (!abstained) {               /* and what is open on it fails */
            char why[120];
            snprintf(why, sizeof why, "the switch refused a %s this rank had %s: the "
                     "members called different collectives", acis_wire_kind_name(e->st.kind),
                     q ? "started" : "returned from");
            acis_early_break(co, why);
        }
    }
    if (q && q->orphan)                 /* its request was freed (nbc.c) */
        free(q);
    else if (q)
        acis_early_req_answered(q, &e->st, rc != 0);
    e->req = NULL;
    co->nearly--;
    return 1;
}

/* Every nonblocking call whose early answer is still out fails: it may
 * never come, a member that broke first never posts its packet. */
static void fail_open(struct acis_coff *co)
{
    for (uint32_t slot = 0; co->nearly && co->early && slot < co->win.size; slot++) {
        struct acis_early *e = &co->early[slot];
        struct acis_early_req *q = e->req;
        if (!q || !out(co, e))
            continue;                   /* a blocking call's: nobody waits for it */
        acis_stream_release(&e->st, &co->win, 0);
        if (q->orphan)
            free(q);
        else
            acis_early_req_answered(q, &e->st, 1);
        e->req = NULL;
        co->nearly--;
    }
}

void acis_early_break(struct acis_coff *co, const char *what)
{
    acis_fix_break(co, what);
    fail_open(co);
}

int acis_early_holds_next(struct acis_coff *co)
{
    struct acis_early *e = co->nearly ? acis_early_sweep(co) : NULL;
    return e && e == &co->early[co->win.next_pos % co->win.size];
}

struct acis_early *acis_early_sweep(struct acis_coff *co)
{
    uint64_t end = co->win.next_pos, w = co->win.size;
    uint64_t pos = co->early_from + w < end ? end - w : co->early_from;
    for (; co->nearly && pos < end; pos++) {
        struct acis_early *e = &co->early[pos % w];
        if (out(co, e) && !take(co, e)) {
            co->early_from = pos;
            return e;
        }
    }
    co->early_from = end;
    return NULL;
}
