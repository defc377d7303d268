/* nbc.c -- nonblocking offloaded collectives.  Each MPI_I* call that is
 * offloaded returns a generalized request (MPIX_Grequest_class) whose poll
 * function moves the engine and finishes the call, so MPI_Test, MPI_Wait
 * and MPI_Waitall -- on our requests alone or mixed with MPICH's own --
 * progress it.  Its wait function, used when every request waited on is
 * ours, blocks in the engine instead of spinning through MPICH.  A call
 * redone in MPICH after a switch failure completes with MPICH's request.
 * A call keeps what it uses alive until it completes, whatever the user
 * frees meanwhile: its communicator's state (a reference) and dups of its
 * derived datatypes.
 *
 * A call the short path can serve (one segment, buffers in place, nothing
 * else in flight: short.c) is posted there without an engine state: its
 * request, of its own class, is complete when it returns if the call's
 * answer was there at once, else it completes when the answer is taken
 * (early.c, late.c) -- even where the call has nothing to receive (a
 * root of a broadcast): a member that goes the engine's way may abstain
 * from a nonblocking call, and then every member fails it.  Its buffers
 * are used in place, their addresses worked out at the start, so it
 * needs no datatype afterwards and holds only its communicator. */
#include "config.h"

#include <sched.h>
#include <stddef.h>
#include <stdlib.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

/* A collective's status: no elements, not cancelled, no source or tag;
 * the call's error is what the query returns. */
static int collective_status(MPI_Status *status, int err)
{
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    status->MPI_SOURCE = MPI_UNDEFINED;
    status->MPI_TAG = MPI_UNDEFINED;
    return err;
}

static int query_fn(void *state, MPI_Status *status)
{
    return collective_status(status, ((const struct acis_exec *)state)->err);
}

/* An orphan's completion: no request to complete (the user freed it;
 * MPICH keeps its object, a few bytes for an erroneous call), only what
 * it holds to let go. */
static void orphan_done(struct acis_exec *x)
{
    acis_nb_release(x);
}

/* MPICH frees the request once a wait or test call has seen it complete;
 * MPI_Request_free refuses an open one (requests.c).  Only a
 * PMPI_Request_free, past acis, frees one still running: its state is
 * not freed under the engine, which still writes it, but kept as an
 * orphan that later nonblocking calls move and MPI_Finalize finishes
 * (until then it holds its communicator).  The caller has x to itself
 * (no look). */
static void drop_state(struct acis_exec *x)
{
    if (x->finished) {
        free(x);
        return;
    }
    acis_log(1, "%s: its request was freed while it ran (PMPI_Request_free): it finishes "
                "on its own", acis_coll_name(x->c.coll));
    x->complete = orphan_done;
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    x->ent.next = acis_oc.nbreg.orphans;
    acis_oc.nbreg.orphans = &x->ent;
    atomic_fetch_add(&acis_oc.nbreg.norphans, 1);
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
}

static int free_fn(void *state)
{
    struct acis_exec *x = state;
    if (acis_nbreg_drop(&x->ent))
        drop_state(x);                  /* else the look under way does */
    return MPI_SUCCESS;
}

static int cancel_fn(void *state, int complete)
{
    (void)state;
    (void)complete;
    return MPI_SUCCESS;                 /* collectives cannot be cancelled */
}

/* A dup of t if it is derived (MPI_DATATYPE_NULL if predefined). */
static MPI_Datatype dup_derived(MPI_Datatype t)
{
    int ni, na, nd, comb;
    MPI_Datatype d;
    if (t == MPI_DATATYPE_NULL || PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS ||
        comb == MPI_COMBINER_NAMED || PMPI_Type_dup(t, &d) != MPI_SUCCESS)
        return MPI_DATATYPE_NULL;
    return d;
}

/* Hold the datatypes the call reads (MPI says which are significant:
 * others may be garbage), and use the holds from now on. */
static void hold_types(struct acis_exec *x)
{
    struct acis_call *c = &x->c;
    acis_coll_t b = acis_coll_blocking(c->coll);
    int root = c->cs->rank == c->root;
    int scat = b == ACIS_COLL_SCATTER || b == ACIS_COLL_SCATTERV;
    int gath = b == ACIS_COLL_GATHER || b == ACIS_COLL_GATHERV;
    int has_r = (gath && root) || b == ACIS_COLL_ALLGATHER || b == ACIS_COLL_ALLGATHERV ||
                (scat && !(root && c->rbuf == MPI_IN_PLACE));
    int moves = gath || scat || b == ACIS_COLL_ALLGATHER || b == ACIS_COLL_ALLGATHERV;
    int has_s = b != ACIS_COLL_BARRIER &&
                (!moves || (c->sbuf != MPI_IN_PLACE && !(scat && !root)));
    MPI_Datatype s0 = c->stype, r0 = c->rtype;
    x->held[0] = has_s ? dup_derived(s0) : MPI_DATATYPE_NULL;
    x->held[1] = has_r && !(has_s && r0 == s0) ? dup_derived(r0) : MPI_DATATYPE_NULL;
    if (x->held[0] != MPI_DATATYPE_NULL) {
        c->stype = x->held[0];
        if (has_r && r0 == s0)
            c->rtype = x->held[0];
    }
    if (x->held[1] != MPI_DATATYPE_NULL)
        c->rtype = x->held[1];
    if (c->dtype == s0 && has_s)
        c->dtype = c->stype;
    else if (c->dtype == r0 && has_r)
        c->dtype = c->rtype;
}

void acis_nb_hold(struct acis_exec *x)
{
    acis_comm_hold(x->c.cs);
    hold_types(x);
}

void acis_nb_release(struct acis_exec *x)
{
    for (int i = 0; i < 2; i++)
        if (x->held[i] != MPI_DATATYPE_NULL)
            PMPI_Type_free(&x->held[i]);
    acis_comm_drop(x->c.cs);
}

/* The call was redone in MPICH: is MPICH's request done?  Its error, if
 * any (the dup returns errors only under the user's MPI_ERRORS_RETURN),
 * becomes the call's. */
static int inner_done(struct acis_exec *x, int wait)
{
    int flag = 1;
    int rc = wait ? PMPI_Wait(&x->inner, MPI_STATUS_IGNORE)
                  : PMPI_Test(&x->inner, &flag, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS) {
        flag = 1;
        x->err = rc;
    }
    if (flag)
        x->phase = ACIS_PHASE_DONE;
    return flag;
}

/* Finish phases whose collective is done, or follow the call into MPICH;
 * complete the request at the end. */
static void advance(struct acis_exec *x, int wait)
{
    while (!acis_exec_complete(x)) {
        int redo = atomic_load(&x->redo);
        if (redo == 1)
            acis_redo_drain(x->c.cs);          /* in call order, with the others */
        if (redo == 2 || atomic_load(&x->redo) == 2) {
            if (!inner_done(x, wait))
                return;
            break;
        }
        if (redo == 1 || !atomic_load(&x->op.done))
            return;
        if (acis_exec_step(x) == ACIS_OP_SOFTWARE)
            acis_redo_mark(x);                 /* the members agreed */
    }
    if (!x->finished) {
        x->finished = 1;                       /* complete once */
        if (atomic_load(&x->redo) != 2)
            acis_exec_unlink(x);
        acis_helper_leave();
        x->complete(x);                        /* the starter's: its request */
    }
}

/* A nonblocking call's own completion: its generalized request. */
static void grequest_done(struct acis_exec *x)
{
    MPI_Request r = x->ent.handle;
    acis_nb_release(x);
    PMPI_Grequest_complete(r);
}

/* Polled again this soon after the last poll returned: the caller loops
 * on it (MPI_Wait, or MPI_Test with nothing in between). */
#define ACIS_LOOP_NS 20000

int acis_nb_poll(struct acis_exec *x)
{
    acis_nb_orphans(0);
    if (x->finished)
        return 1;
    /* MPI_Wait runs nothing else: the silence of a dead switch must be
     * noticed here too, or it waits for it forever. */
    if (!atomic_load(&x->redo)) {
        int got = acis_engine_progress();
        if (got > 0 || !x->quiet_since || atomic_load(&x->op.done)) {
            x->quiet_since = acis_now_ns();   /* heard, first look, or not waiting */
        } else {
            acis_fault_stall(&x->op);
            if (got < 0 || (!acis_comm_lost(x->c.cs) && acis_dev_silent(x->quiet_since)))
                acis_engine_silent(got < 0, x->quiet_since);
        }
    }
    advance(x, 0);
    if (x->finished) {
        acis_dev_leave();                /* back to the application */
        return 1;
    }
    acis_mpich_poke(&x->poked);          /* MPI_Wait calls only this function */
    /* A caller looping on the request waits as a blocking call does: past
     * MPIR_CVAR_OFFLOAD_SPIN_US of quiet, unless it spins, it sleeps
     * until a packet comes (1 ms at most), leaving the core to the ranks
     * it waits for.  A single MPI_Test never sleeps. */
    if (acis_dev_spins())
        return 0;
    uint64_t now = acis_now_ns();
    if (x->polled && now - x->polled < ACIS_LOOP_NS && !atomic_load(&x->redo) &&
        !atomic_load(&x->op.done) && !acis_comm_lost(x->c.cs) &&
        acis_dev_wait(x->quiet_since) == 0)   /* -1: the silence is judged above */
        now = acis_now_ns();
    x->polled = now;
    return 0;
}

/* One look at x's request (x->ent taken), from MPICH's poll or from
 * MPI_Request_get_status: whether it is done and its error after the
 * look; 1 if the request was freed meanwhile (x is gone, *done 0). */
static int nb_look(struct acis_exec *x, int *done, int *err)
{
    acis_nb_poll(x);
    *done = x->finished;
    *err = x->err;
    if (!acis_nbent_leave(&x->ent))
        return 0;
    drop_state(x);
    *done = 0;
    return 1;
}

static int poll_fn(void *state, MPI_Status *status)
{
    struct acis_exec *x = state;
    int done, err;
    (void)status;
    if (acis_nbent_enter(&x->ent))      /* else another thread looks */
        nb_look(x, &done, &err);
    return MPI_SUCCESS;
}

static int wait_fn(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    for (int i = 0; i < count; i++) {
        struct acis_exec *x = states[i];
        while (!acis_nbent_enter(&x->ent))
            sched_yield();              /* a get_status look, in another thread */
        acis_nb_wait(x);
        if (acis_nbent_leave(&x->ent))
            drop_state(x);
    }
    acis_dev_leave();                        /* back to the application */
    return MPI_SUCCESS;
}

void acis_nb_wait(struct acis_exec *x)
{
    while (!x->finished) {
        if (!atomic_load(&x->redo))
            acis_op_wait(&x->op);
        advance(x, 1);
    }
}

void acis_nb_orphans(int wait)
{
    if (!atomic_load_explicit(&acis_oc.nbreg.norphans, memory_order_relaxed) ||
        atomic_flag_test_and_set(&acis_oc.nbreg.sweeping))
        return;                         /* none, or another thread moves them */
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    struct acis_nbent *e = acis_oc.nbreg.orphans, *next, *left = NULL, **tail = &left;
    acis_oc.nbreg.orphans = NULL;
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
    for (; e; e = next) {
        next = e->next;
        struct acis_exec *x = (struct acis_exec *)((char *)e - offsetof(struct acis_exec, ent));
        if (wait) {
            acis_nb_wait(x);
        } else {
            if (!atomic_load(&x->redo))
                acis_engine_progress();
            advance(x, 0);
        }
        if (x->finished) {
            free(x);
            atomic_fetch_sub(&acis_oc.nbreg.norphans, 1);
        } else {
            *tail = e;                  /* still running: back on the list */
            tail = &e->next;
        }
    }
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    *tail = acis_oc.nbreg.orphans;      /* before any orphaned meanwhile */
    acis_oc.nbreg.orphans = left;
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
    atomic_flag_clear(&acis_oc.nbreg.sweeping);
}

/* The short path's requests: state a struct acis_early_req. */
static int sq_query(void *state, MPI_Status *status)
{
    return collective_status(status, ((const struct acis_early_req *)state)->err);
}

/* A request freed before it completed (erroneous on a collective's, and
 * refused by MPI_Request_free, requests.c; PMPI_Request_free, past acis,
 * does it -- which must not leave late.c holding freed memory):
 * late.c frees q when its answer comes.  The communicator is let go at
 * once, so it can close: if its state goes first, the answer is dropped
 * with it, and q with it is lost (a few bytes, for an erroneous call). */
static void sq_release(struct acis_early_req *q)
{
    /* q is read before orphan is set: from then on a sweep in any
     * thread (the progress helper's too) may take the answer and free q. */
    struct acis_comm *cs = q->completed ? NULL : q->cs;   /* it will never complete */
    q->completed = 1;
    acis_dev_lock();
    int open = !atomic_load(&q->done);
    q->orphan = open;
    acis_dev_unlock();
    if (cs)
        acis_comm_drop(cs);
    if (!open)
        free(q);
}

static int sq_free(void *state)
{
    struct acis_early_req *q = state;
    if (acis_nbreg_drop(&q->ent))
        sq_release(q);                  /* else the look under way does */
    return MPI_SUCCESS;
}

/* q's answer was taken: its request completes (once). */
static void sq_complete(struct acis_early_req *q)
{
    if (q->completed)
        return;
    q->completed = 1;
    acis_comm_drop(q->cs);
    PMPI_Grequest_complete(q->ent.handle);
}

/* Is q's answer taken (wait: wait until it is)?  q holds its
 * communicator, so the communicator's offload state is there. */
static int sq_answered(struct acis_early_req *q, int wait)
{
    struct acis_coff *co = q->cs->off;
    if (wait)
        acis_early_wait(co, q);
    return acis_early_test(co, q);
}

/* MPI_Wait on q's request runs only this function: while the answer is
 * out, MPICH must move here too, or a member whose post waits behind a
 * send to this rank (a rendezvous) never posts (nbshort.c, needs_mpich;
 * 8-rank stress runs hung on it).  A caller looping on it waits as on
 * the engine's requests (acis_nb_poll): past MPIR_CVAR_OFFLOAD_SPIN_US of
 * quiet it sleeps until the oldest early answer comes (1 ms at most),
 * leaving the core to the members it waits for; a single MPI_Test never
 * sleeps. */
static void sq_move(struct acis_early_req *q)
{
    if (q->completed)
        return;
    if (sq_answered(q, 0)) {
        sq_complete(q);
        return;
    }
    acis_mpich_poke(&q->poked);
    if (acis_dev_spins())
        return;
    uint64_t now = acis_now_ns();
    if (!q->quiet_since) {
        q->quiet_since = now;               /* the first look */
    } else if (now - q->polled < ACIS_LOOP_NS) {
        acis_early_nap(q->cs->off, q, q->quiet_since);
        now = acis_now_ns();
    }
    q->polled = now;
}

/* The same for q's (nb_look). */
static int sq_look(struct acis_early_req *q, int *done, int *err)
{
    sq_move(q);
    *done = q->completed;
    *err = q->err;
    if (!acis_nbent_leave(&q->ent))
        return 0;
    sq_release(q);
    *done = 0;
    return 1;
}

static int sq_poll(void *state, MPI_Status *status)
{
    struct acis_early_req *q = state;
    int done, err;
    (void)status;
    if (acis_nbent_enter(&q->ent))      /* else another thread looks */
        sq_look(q, &done, &err);
    return MPI_SUCCESS;
}

static int sq_wait(int count, void **states, double timeout, MPI_Status *status)
{
    (void)timeout;
    (void)status;
    for (int i = 0; i < count; i++) {
        struct acis_early_req *q = states[i];
        while (!acis_nbent_enter(&q->ent))
            sched_yield();              /* a get_status look, in another thread */
        if (!q->completed)
            sq_answered(q, 1);
        sq_complete(q);
        if (acis_nbent_leave(&q->ent))
            sq_release(q);
    }
    return MPI_SUCCESS;
}

int acis_nb_get_status(MPI_Request r, int *flag, MPI_Status *status, int *rc)
{
    struct acis_nbent *e;
    int done, err;
    if (!acis_nbreg_take(r, &e))
        return 0;
    *flag = 0;
    *rc = MPI_SUCCESS;
    if (!e)
        return 1;                       /* another thread looks at it now */
    if (e->kind == ACIS_NB_ENGINE)
        nb_look((struct acis_exec *)((char *)e - offsetof(struct acis_exec, ent)), &done, &err);
    else
        sq_look((struct acis_early_req *)((char *)e - offsetof(struct acis_early_req, ent)),
                &done, &err);
    if (!done)
        return 1;
    *flag = 1;                          /* what MPICH would say, from the query function */
    if (status != MPI_STATUS_IGNORE)
        collective_status(status, err);
    if (err != MPI_SUCCESS)
        *rc = acis_raise(MPI_COMM_WORLD, err);
    return 1;
}

int acis_nb_init(void)
{
    return PMPIX_Grequest_class_create(query_fn, free_fn, cancel_fn, poll_fn, wait_fn,
                                       &acis_oc.nb_class) == MPI_SUCCESS &&
                   PMPIX_Grequest_class_create(sq_query, sq_free, cancel_fn, sq_poll, sq_wait,
                                               &acis_oc.nbs_class) == MPI_SUCCESS
               ? 0 : -1;
}

/* A request for a call on cs on the short path, in *req: its state, or
 * NULL (the call takes the engine's way). */
static struct acis_early_req *sq_new(struct acis_comm *cs, MPI_Request *req)
{
    struct acis_early_req *q = calloc(1, sizeof *q);
    if (!q)
        return NULL;
    if (PMPIX_Grequest_class_allocate(acis_oc.nbs_class, q, req) != MPI_SUCCESS) {
        free(q);
        return NULL;
    }
    q->cs = cs;
    q->poked = acis_now_ns();         /* a request answered soon never probes */
    acis_comm_hold(cs);
    acis_nbreg_add(&q->ent, *req, ACIS_NB_SHORT);
    return q;
}

/* The short path ran (ran: 1, with the start's result rc) or not (0)
 * for q: its request is complete if the call finished, gone if the call
 * did not start.  Returns ran. */
static int sq_started(struct acis_early_req *q, MPI_Request *req, int ran, int rc)
{
    if (ran && rc == MPI_SUCCESS) {
        if (atomic_load(&q->done))
            sq_complete(q);
        return 1;
    }
    atomic_store(&q->done, 1);               /* not started: no request */
    sq_complete(q);
    PMPI_Request_free(req);                  /* frees q */
    *req = MPI_REQUEST_NULL;
    return ran;
}

/* c on the short path (short.c): 1 with the start's result, or 0 if it
 * takes the engine's way (nothing was touched). */
static int start_short(const struct acis_call *c, int *rc)
{
    struct acis_short s;
    struct acis_early_req *q;
    *rc = MPI_SUCCESS;
    if (!acis_short_nb_prepare(c, &s) || !(q = sq_new(c->cs, c->req)))
        return 0;
    int ran = acis_short_nb_go(c, &s, q, rc);
    return sq_started(q, c->req, ran, *rc);
}

int acis_nb_quick(acis_coll_t coll, const struct acis_qargs *a, MPI_Request *req, int *rc)
{
    struct acis_comm *cs;
    struct acis_early_req *q;
    *rc = MPI_SUCCESS;
    const struct acis_qentry *e = acis_short_quick_find(coll, a, &cs);
    if (!e || !(q = sq_new(cs, req)))
        return 0;
    int ran = acis_short_quick_go(coll, a, cs, e, q, rc);
    return sq_started(q, req, ran, *rc);
}

/* No memory for the call's own state or for its request: every other
 * member has offloaded the call and will wait for this rank's packets, so
 * failing here alone would leave them waiting.  The call runs to its end
 * now, as a blocking one does (or goes to MPICH with the others), and
 * the caller gets MPI_REQUEST_NULL (or MPICH's request).  Starting is no
 * longer local then: a program whose peers start the call only after a
 * message this rank sends after starting it would wait -- only when out
 * of memory (docs/reliability.md). */
static int run_now(const struct acis_call *c, const char *why)
{
    acis_log(1, "%s: %s; the call completes before it returns", acis_coll_name(c->coll), why);
    struct acis_exec x = { .c = *c };
    *c->req = MPI_REQUEST_NULL;
    int rc = acis_exec_run(&x);
    if (rc == ACIS_OP_SOFTWARE)
        rc = acis_call_redo(&x.c);          /* MPICH's request, in *c->req */
    acis_dev_leave();
    return rc;
}

int acis_nb_start(const struct acis_call *c)
{
    int rc;
    acis_nb_orphans(0);
    if (start_short(c, &rc))
        return rc;
    struct acis_exec *x = calloc(1, sizeof *x);
    if (!x)
        return run_now(c, "no memory for its state");
    x->c = *c;
    rc = acis_exec_link(x);
    if (rc != 0) {                           /* the communicator went to MPICH */
        free(x);
        if (c->cs->state == ACIS_CT_BROKEN)  /* ... or broke (fix.c) */
            return acis_call_broken(c);
        return acis_call_redo(c);
    }
    if (acis_fault_nomem_request() ||
        PMPIX_Grequest_class_allocate(acis_oc.nb_class, x, c->req) != MPI_SUCCESS) {
        acis_exec_unlink(x);
        free(x);
        return run_now(c, "cannot allocate a request");
    }
    x->complete = grequest_done;
    acis_nb_hold(x);
    acis_nbreg_add(&x->ent, *c->req, ACIS_NB_ENGINE);
    acis_nb_launch(x);
    return MPI_SUCCESS;
}

void acis_nb_launch(struct acis_exec *x)
{
    x->poked = acis_now_ns();
    acis_helper_enter();
    int rc = acis_exec_start(x);
    if (rc == 0)
        acis_engine_progress();              /* the first window goes out now */
    else if (rc != -1)
        acis_redo_mark(x);                   /* the members agreed */
    advance(x, 0);
    if (!x->finished && !atomic_load(&x->redo))
        acis_dev_release();                  /* the switch thread serves while we are away */
}

void acis_nb_launch_redone(struct acis_exec *x)
{
    struct acis_call d = x->c;
    d.req = &x->inner;
    x->inner = MPI_REQUEST_NULL;
    acis_helper_enter();                     /* left at completion, as any */
    if ((x->err = acis_call_redo(&d)) != MPI_SUCCESS)
        x->inner = MPI_REQUEST_NULL;         /* failed at the start: done */
    atomic_store(&x->redo, 2);
    advance(x, 0);
}
