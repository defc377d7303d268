/* early.c -- answers taken after the call returned.  A member with
 * nothing to receive from a small blocking broadcast, scatter or gather
 * (the root of the first two, a leaf of the last) on the short path
 * returns once its packet is posted: the shared-memory switch copied it,
 * and MPICH's senders return once their data is out too (short.c).  The
 * segment's slot stays taken until every member has posted.  Its answer
 * is taken when the slot is needed again (the short path) or before the
 * communicator's next collective through the engine (exec.c settles
 * them before it starts one).  One still out when the communicator's
 * offload state is freed is dropped (engine.c, coff_free frees
 * co->early): the members' closing barrier is done, so all have posted,
 * and the row may be another communicator's by then.
 *
 * An answer that says the members' packets disagreed (they called
 * different collectives) breaks the communicator here: the call that
 * should have failed has returned, so the next one fails instead. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

/* e's answer is still to take: its slot waits for it. */
static int out(const struct acis_coff *co, const struct acis_early *e)
{
    uint32_t slot = (uint32_t)(e - co->early);
    return co->win.busy[slot] && co->win.owner[slot] == &e->st;
}

struct acis_early *acis_early_make(struct acis_coff *co)
{
    if (!co->early)
        co->early = calloc(co->win.size, sizeof *co->early);
    return co->early;
}

/* Take e's answer if it came: 1, else 0 (device lock held). */
static int take(struct acis_coff *co, struct acis_early *e)
{
    int rc;
    if (!acis_short_answer(&e->st, &co->win, &e->t, &rc))
        return 0;
    if (rc != 0 || e->st.refused) {
        acis_stream_release(&e->st, &co->win, 0);
        struct acis_comm *cs = co->cs;
        if (cs->state == ACIS_CT_READY) {
            cs->state = ACIS_CT_BROKEN;
            cs->refused = ACIS_REASON_BROKEN;
            acis_log(0, "the switch refused a %s this rank had returned from: the "
                        "members called different collectives; collectives on this "
                        "communicator fail from now on",
                     acis_wire_kind_name(e->st.kind));
        }
    }
    co->nearly--;
    return 1;
}

/* The first early call still out, in the order they were posted, or
 * NULL.  They are taken oldest first and a new one gets a position not
 * handed out yet, so none is out before co->early_from: the scan starts
 * there (at the oldest position a window can hold, if that is later)
 * instead of walking the whole window for the newest call. */
static struct acis_early *oldest(struct acis_coff *co)
{
    uint64_t end = co->win.next_pos, w = co->win.size;
    uint64_t pos = co->early_from + w < end ? end - w : co->early_from;
    for (; co->nearly && pos < end; pos++) {
        struct acis_early *e = &co->early[pos % w];
        if (out(co, e)) {
            co->early_from = pos;
            return e;
        }
    }
    co->early_from = end;
    return NULL;
}

/* Answers that came, oldest first (below), in one walk of the positions
 * oldest() would walk again and again; -1 if the first still out holds
 * the next segment's slot. */
int acis_early_sweep(struct acis_coff *co)
{
    uint64_t end = co->win.next_pos, w = co->win.size;
    uint64_t pos = co->early_from + w < end ? end - w : co->early_from;
    for (; co->nearly && pos < end; pos++) {
        struct acis_early *e = &co->early[pos % w];
        if (out(co, e) && !take(co, e)) {
            co->early_from = pos;
            return pos + w == end ? -1 : 0;     /* its slot is end's */
        }
    }
    co->early_from = end;
    return 0;
}

/* Answers come in the order the calls were posted (every member posts in
 * that order): take them oldest first, up to the first still out, so a
 * sweep reads one line of the switch that has not been written yet.  If
 * that one is on the slot of the next segment (all: if any is left),
 * wait for it and go on. */
void acis_early_settle(struct acis_coff *co, int all)
{
    uint64_t idle = 0, poked = 0;
    struct acis_early *e;
    acis_dev_lock();
    while ((e = oldest(co))) {
        if (take(co, e))
            continue;
        if (!all && e != &co->early[co->win.next_pos % co->win.size])
            break;
        struct acis_dev_ticket t = e->t;
        acis_dev_unlock();
        if (!idle)                      /* since the first answer found missing */
            idle = poked = acis_now_ns();
        /* The other members are on their way to post: one may first need
         * MPICH to move here (a send this rank made after returning). */
        acis_mpich_poke(&poked);
        if (acis_oc.thread_level == MPI_THREAD_MULTIPLE)
            acis_engine_progress();     /* other threads' collectives, meanwhile */
        if (!acis_dev_spin_answer(&t))
            acis_dev_wait_answer(&t, idle);
        acis_dev_lock();
    }
    acis_dev_unlock();
}
