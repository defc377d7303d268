/* early.c -- calls finished before their answers came.  A member with
 * nothing to receive from a small blocking broadcast, scatter or gather
 * (the root of the first two, a leaf of the last) on the short path
 * returns once its packet is posted: the shared-memory switch copied it,
 * and MPICH's senders return once their data is out too (short.c).  A
 * nonblocking call on the short path leaves its packet posted the same
 * way, its request open until the answer is taken (nbc.c), unless the
 * answer was there at once.  The
 * segment's slot stays taken until every member has posted.  The answers
 * are taken late (late.c): when the slot is needed again, while the
 * engine moves, by the request's test or wait, and before the
 * communicator's next blocking collective through the engine (exec.c
 * settles them before it starts one: that call waits for every member
 * anyway, a nonblocking one must not wait).  One still out when the
 * communicator's offload state is freed is dropped (engine.c, coff_free
 * frees co->early): the members' closing barrier is done, so all have
 * posted, and the row may be another communicator's by then; an open
 * request holds its communicator, so none of those is dropped (but one
 * freed open: nbc.c). */
#include "config.h"

#include <stdlib.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

struct acis_early *acis_early_make(struct acis_coff *co)
{
    if (!co->early)
        co->early = calloc(co->win.size, sizeof *co->early);
    return co->early;
}

/* Wait, taking answers oldest first, until q's call is taken (q), every
 * early call is (all), or the slot of co's next segment is free. */
static void settle(struct acis_coff *co, int all, const struct acis_early_req *q)
{
    uint64_t idle = 0, poked = 0;
    struct acis_early *e;
    acis_dev_lock();
    while ((e = acis_early_sweep(co)) &&
           !(q && atomic_load_explicit(&q->done, memory_order_acquire))) {
        if (!q && !all && e != &co->early[co->win.next_pos % co->win.size])
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

void acis_early_settle(struct acis_coff *co, int all)
{
    settle(co, all, NULL);
}

void acis_early_wait(struct acis_coff *co, const struct acis_early_req *q)
{
    settle(co, 1, q);
}

int acis_early_test(struct acis_coff *co, const struct acis_early_req *q)
{
    acis_dev_lock();
    if (!atomic_load_explicit(&q->done, memory_order_acquire))
        acis_early_sweep(co);
    acis_dev_unlock();
    return atomic_load_explicit(&q->done, memory_order_acquire);
}

void acis_early_nap(struct acis_coff *co, const struct acis_early_req *q, uint64_t idle_since_ns)
{
    struct acis_dev_ticket t;
    struct acis_early *e = NULL;
    acis_dev_lock();
    /* The sweep may take q's own answer and return a later call still
     * out: then q is done, and nothing is slept on. */
    if (!atomic_load_explicit(&q->done, memory_order_acquire) && (e = acis_early_sweep(co)) &&
        !atomic_load_explicit(&q->done, memory_order_acquire))
        t = e->t;
    else
        e = NULL;
    acis_dev_unlock();
    if (e)
        acis_dev_wait_answer(&t, idle_since_ns);
}
