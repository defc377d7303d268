/* pers.c -- persistent collectives (MPI_*_init, MPI-4) in the switch.
 *
 * MPI_*_init is decided as its nonblocking form (select.c: on every member
 * from the same facts, never waiting for the others), holds what every
 * start needs -- the communicator's state and dups of derived datatypes,
 * so the user may free theirs -- and hands the user a real MPICH request:
 * a persistent zero-byte receive from this process on a private dup of
 * MPI_COMM_SELF, one tag per request.  MPI_Start posts that receive and
 * starts the collective as a nonblocking one (nbc.c, with its redo after a
 * switch failure); when the collective is finished this process sends
 * itself the zero-byte message, and MPICH completes the request.  So the
 * request is MPICH's in every way the user can see -- inactive after
 * completion, restartable, in MPI_Startall, in any wait or test call mixed
 * with MPICH's own requests, MPI_Request_get_status -- and acis only has
 * to move the collective along when such a call looks at it (requests.c).
 * MPI_Request_free on a started request lets it finish first (the other
 * members need this rank's packets); on an inactive one it frees it.
 *
 * Gatherv and scatterv need every rank's block size, which only the root
 * knows; a nonblocking call would exchange them through the switch and
 * start the collective itself only afterwards, whenever each member next
 * enters acis -- numbered differently on different members (exec.c).  A
 * persistent request's sizes never change: MPI_*_init starts their
 * exchange as MPICH's MPI_Iallgather on the user's communicator (in the
 * user's call order there, as every collective MPICH runs on it), the
 * first start runs in MPICH while it travels, and completes only once it
 * is in; every later start goes to the switch with the sizes known. */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpid/device.h"
#include "offload.h"
#include "util/util.h"

#define BUCKETS (sizeof acis_oc.pers.by_handle / sizeof acis_oc.pers.by_handle[0])

struct acis_pers {
    struct acis_exec x;           /* the start in flight (or the last one) */
    struct acis_call c;           /* as at init: nonblocking form, held types */
    MPI_Request handle;           /* the user's: a persistent receive */
    int tag;
    int started;                  /* x is set up: started once at least */
    int live;                     /* started, the collective not finished */
    int err;                      /* the last finished start's error */
    int vsizes;                   /* gatherv, scatterv: the block sizes are
                                     exchanged once, in MPICH (below) */
    uint64_t mine, *sizes;        /* ... this rank's, and every rank's */
    MPI_Request sizes_req;        /* ... the exchange, until it is in */
    int sizes_lost;               /* ... failed in MPICH: starts run there */
    uint64_t mark;                /* the last MPI_Startall it was in */
    struct acis_pers *next;       /* in its bucket, or acis_oc.pers.orphans */
};

static void orphans(void);

static unsigned bucket(MPI_Request r)
{
    return (unsigned)r * 2654435761u % BUCKETS;
}

/* The acis request behind handle r, or NULL (pers.lock held). */
static struct acis_pers *find(MPI_Request r)
{
    struct acis_pers *p = acis_oc.pers.by_handle[bucket(r)];
    while (p && p->handle != r)
        p = p->next;
    return p;
}

static void unhash(struct acis_pers *p)
{
    for (struct acis_pers **pp = &acis_oc.pers.by_handle[bucket(p->handle)]; *pp;
         pp = &(*pp)->next)
        if (*pp == p) {
            *pp = p->next;
            return;
        }
}

static void drop(struct acis_pers *p)
{
    free(p->sizes);
    if (p->err != MPI_SUCCESS)
        atomic_fetch_sub(&acis_oc.pers.failed, 1);
    acis_nb_release(&p->x);       /* the communicator and the held types */
    free(p);
    atomic_fetch_sub(&acis_oc.pers.count, 1);
}

/* The start is complete (pers.lock held): tell MPICH, through the
 * receive; an orphan is freed once nothing of it is left in flight. */
static void done(struct acis_pers *p)
{
    p->err = p->x.err;
    if (p->err != MPI_SUCCESS)
        atomic_fetch_add(&acis_oc.pers.failed, 1);  /* until it is started again */
    p->live = 0;
    atomic_fetch_sub(&acis_oc.pers.active, 1);
    PMPI_Send(NULL, 0, MPI_BYTE, 0, p->tag, acis_oc.pers.comm);
}

/* The sizes' exchange is in (pers.lock held): 1, or 0.  If MPICH failed
 * it (an error the user's handler returned), the sizes are not known: the
 * first start reports the error and every later one runs in MPICH. */
static int sizes_in(struct acis_pers *p)
{
    int flag = 1, rc = MPI_SUCCESS;
    if (p->sizes_req != MPI_REQUEST_NULL &&
        (rc = PMPI_Test(&p->sizes_req, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS) {
        flag = 1;
        p->sizes_req = MPI_REQUEST_NULL;
        p->sizes_lost = 1;
        if (p->x.err == MPI_SUCCESS)
            p->x.err = rc;
    }
    return flag;
}

/* The collective of a start is finished (nbc.c, in whichever application
 * thread moved it, pers.lock held).  The first start of a gatherv or
 * scatterv is complete only once the sizes are in too (step). */
static void finished(struct acis_exec *x)
{
    struct acis_pers *p = (struct acis_pers *)((char *)x - offsetof(struct acis_pers, x));
    if (sizes_in(p))
        done(p);
}

/* Move p once (pers.lock held). */
static void step(struct acis_pers *p)
{
    if (!p->x.finished)
        acis_nb_poll(&p->x);      /* finished() may complete it */
    else if (p->live && sizes_in(p))
        done(p);
}

int acis_pers_setup(void)
{
    pthread_mutex_init(&acis_oc.pers.lock, NULL);
    return PMPI_Comm_dup(MPI_COMM_SELF, &acis_oc.pers.comm) == MPI_SUCCESS ? 0 : -1;
}

/* The nonblocking entry point of a persistent one. */
static acis_coll_t nonblocking(acis_coll_t coll)
{
    for (int n = 0; n < ACIS_COLL_COUNT; n++)
        if (acis_coll_form((acis_coll_t)n) == ACIS_FORM_NONBLOCKING &&
            acis_coll_blocking((acis_coll_t)n) == acis_coll_blocking(coll))
            return (acis_coll_t)n;
    return coll;
}

/* A tag no other acis persistent request has (pers.lock held): -1 if
 * every tag is taken. */
static int free_tag(int ub)
{
    for (int tries = 0; tries <= ub; tries++) {
        int tag = acis_oc.pers.next_tag++;
        if (acis_oc.pers.next_tag > ub) {
            acis_oc.pers.next_tag = 0;
            acis_oc.pers.wrapped = 1;
        }
        int taken = 0;
        for (size_t b = 0; acis_oc.pers.wrapped && !taken && b < BUCKETS; b++)
            for (const struct acis_pers *q = acis_oc.pers.by_handle[b]; q && !taken; q = q->next)
                taken = q->tag == tag;
        for (const struct acis_pers *q = acis_oc.pers.orphans; q && !taken; q = q->next)
            taken = q->tag == tag;
        if (!taken)
            return tag;
    }
    return -1;
}

int acis_pers_init(const struct acis_call *c)
{
    struct acis_pers *p = calloc(1, sizeof *p);
    int ub = 32767, *attr, flag = 0, rc = MPI_ERR_NO_MEM;
    if (!p)
        goto fail;
    if (PMPI_Comm_get_attr(acis_oc.pers.comm, MPI_TAG_UB, &attr, &flag) == MPI_SUCCESS && flag)
        ub = *attr;
    pthread_mutex_lock(&acis_oc.pers.lock);
    p->tag = free_tag(ub);
    rc = p->tag < 0 ? MPI_ERR_NO_MEM
                    : PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, p->tag, acis_oc.pers.comm, &p->handle);
    if (rc == MPI_SUCCESS) {
        unsigned b = bucket(p->handle);
        p->next = acis_oc.pers.by_handle[b];
        acis_oc.pers.by_handle[b] = p;
        atomic_fetch_add(&acis_oc.pers.count, 1);
    }
    pthread_mutex_unlock(&acis_oc.pers.lock);
    if (rc != MPI_SUCCESS)
        goto fail;
    p->c = *c;
    p->c.coll = nonblocking(c->coll);
    p->c.req = NULL;
    p->x.c = p->c;
    acis_nb_hold(&p->x);          /* x.c now names the held types */
    p->c = p->x.c;
    p->sizes_req = MPI_REQUEST_NULL;
    p->vsizes = acis_plan_needs_sizes(&p->c, &p->mine);
    if (p->vsizes) {
        int n = p->c.cs->size;
        if (!(p->sizes = malloc((size_t)n * sizeof *p->sizes)) ||
            PMPI_Iallgather(&p->mine, 1, MPI_UINT64_T, p->sizes, 1, MPI_UINT64_T, c->comm,
                            &p->sizes_req) != MPI_SUCCESS) {
            /* The others' exchange would wait for this rank forever. */
            acis_log(0, "%s: cannot exchange the block sizes (no memory); the job ends",
                     acis_coll_name(c->coll));
            PMPI_Abort(MPI_COMM_WORLD, MPI_ERR_NO_MEM);
        }
    }
    *c->req = p->handle;
    return MPI_SUCCESS;
fail:
    /* Every other member has its request and will start it in the switch:
     * MPICH's own request here would never meet theirs.  The call fails,
     * as MPICH's fails when it has no memory (through the handler). */
    free(p);
    acis_log(0, "%s: cannot make the persistent request (no memory, or no free tag); "
                "the call returns an error", acis_coll_name(c->coll));
    *c->req = MPI_REQUEST_NULL;
    return acis_raise(c->comm, rc);
}

/* Start the collective of p, whose receive is started (pers.lock held). */
static void launch(struct acis_pers *p)
{
    struct acis_exec *x = &p->x;
    MPI_Datatype held[2] = { x->held[0], x->held[1] };
    memset(x, 0, sizeof *x);
    x->c = p->c;
    x->held[0] = held[0];
    x->held[1] = held[1];
    x->complete = finished;
    int first = !p->started;
    x->sizes = p->vsizes && !first ? p->sizes : NULL;
    p->started = p->live = 1;
    if (p->err != MPI_SUCCESS)
        atomic_fetch_sub(&acis_oc.pers.failed, 1);
    p->err = MPI_SUCCESS;
    atomic_fetch_add(&acis_oc.pers.active, 1);
    if (p->vsizes && (first || p->sizes_lost)) {   /* in MPICH while the sizes travel */
        acis_nb_launch_redone(x);
    } else if (acis_exec_link(x) == 0) {
        ACIS_COUNT(persistent_starts, 1);
        acis_nb_launch(x);
    } else if (x->c.cs->state == ACIS_CT_BROKEN) {   /* fix.c: fails everywhere */
        x->err = MPI_ERR_INTERN;
        x->finished = 1;
        done(p);
    } else {                      /* the communicator went to MPICH */
        ACIS_COUNT(redone, 1);
        acis_nb_launch_redone(x);
    }
}

/* Start p (pers.lock held). */
static int start(struct acis_pers *p)
{
    if (p->live)
        return acis_raise(p->c.comm, MPI_ERR_REQUEST);   /* started, not completed */
    int rc = PMPI_Start(&p->handle);
    if (rc == MPI_SUCCESS)
        launch(p);
    return rc;
}

/* The acis request r is, or NULL; takes pers.lock if it returns one. */
static struct acis_pers *lookup(MPI_Request r)
{
    if (!atomic_load_explicit(&acis_oc.pers.count, memory_order_relaxed) ||
        r == MPI_REQUEST_NULL)
        return NULL;
    pthread_mutex_lock(&acis_oc.pers.lock);
    struct acis_pers *p = find(r);
    if (!p)
        pthread_mutex_unlock(&acis_oc.pers.lock);
    return p;
}

int acis_pers_start(MPI_Request *r, int *rc)
{
    struct acis_pers *p = lookup(*r);
    if (!p)
        return 0;
    if (acis_oc.pers.orphans)
        orphans();                /* freed while running: moved here too */
    *rc = start(p);
    pthread_mutex_unlock(&acis_oc.pers.lock);
    return 1;
}

int acis_pers_twice(int n, const MPI_Request r[], int *rc)
{
    MPI_Comm comm = MPI_COMM_NULL;
    if (!atomic_load_explicit(&acis_oc.pers.count, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&acis_oc.pers.lock);
    uint64_t mark = ++acis_oc.pers.marks;
    for (int i = 0; i < n && comm == MPI_COMM_NULL; i++) {
        struct acis_pers *p = r[i] == MPI_REQUEST_NULL ? NULL : find(r[i]);
        if (p && p->mark == mark)
            comm = p->c.comm;
        else if (p)
            p->mark = mark;
    }
    pthread_mutex_unlock(&acis_oc.pers.lock);
    if (comm == MPI_COMM_NULL)
        return 0;
    *rc = acis_raise(comm, MPI_ERR_REQUEST);
    return 1;
}

void acis_pers_started(MPI_Request r)
{
    struct acis_pers *p = lookup(r);
    if (!p)
        return;
    if (acis_oc.pers.orphans)
        orphans();
    if (!p->live)                 /* MPICH refuses an active receive: always */
        launch(p);
    pthread_mutex_unlock(&acis_oc.pers.lock);
}

/* Free an orphan: its receive (matched if it ran: taken first), then
 * the rest (pers.lock held). */
static void release(struct acis_pers *p)
{
    if (p->handle != MPI_REQUEST_NULL) {
        PMPI_Wait(&p->handle, MPI_STATUS_IGNORE);
        PMPI_Request_free(&p->handle);
    }
    drop(p);
}

/* Move the orphans; free those with nothing left in flight (pers.lock
 * held). */
static void orphans(void)
{
    for (struct acis_pers **pp = &acis_oc.pers.orphans; *pp;) {
        struct acis_pers *p = *pp;
        if (p->live)
            step(p);
        if (!p->live && sizes_in(p)) {
            *pp = p->next;
            atomic_fetch_sub(&acis_oc.pers.norphans, 1);
            release(p);
        } else {
            pp = &p->next;
        }
    }
}

int acis_pers_poll(MPI_Request r, int wait)
{
    /* The lock is let go between looks: another thread's start (of a
     * collective the members of this one may wait for) must not wait for
     * this one to finish.  Orphans move whenever a call looks. */
    for (;;) {
        if (!atomic_load_explicit(&acis_oc.pers.count, memory_order_relaxed))
            return -1;
        pthread_mutex_lock(&acis_oc.pers.lock);
        if (acis_oc.pers.orphans)
            orphans();
        struct acis_pers *p = r == MPI_REQUEST_NULL ? NULL : find(r);
        if (p && p->live)
            step(p);
        int done = p ? !p->live : -1;
        pthread_mutex_unlock(&acis_oc.pers.lock);
        if (done != 0 || !wait)
            return done;
    }
}

void acis_pers_tidy(void)
{
    if (!atomic_load_explicit(&acis_oc.pers.norphans, memory_order_relaxed))
        return;
    pthread_mutex_lock(&acis_oc.pers.lock);
    orphans();
    pthread_mutex_unlock(&acis_oc.pers.lock);
}

int acis_pers_err(MPI_Request r, MPI_Comm *comm)
{
    struct acis_pers *p = lookup(r);
    if (!p)
        return MPI_SUCCESS;
    int err = p->err;
    if (err != MPI_SUCCESS) {     /* reported once: the request is inactive now */
        p->err = MPI_SUCCESS;
        atomic_fetch_sub(&acis_oc.pers.failed, 1);
        *comm = p->c.comm;
    }
    pthread_mutex_unlock(&acis_oc.pers.lock);
    return err;
}

int acis_pers_free(MPI_Request *r, int *rc)
{
    struct acis_pers *p = lookup(*r);
    if (!p)
        return 0;
    unhash(p);
    /* A running one finishes first (the others need its packets), its
     * receive kept until then: MPICH 4.0.2 frees an active persistent
     * receive at once, and the message that completes it then writes
     * into freed memory (its assertion "incomplete >= 0" fired). */
    *rc = MPI_SUCCESS;
    if (p->live)
        *r = MPI_REQUEST_NULL;    /* the user's; p->handle stays ours */
    else if ((*rc = PMPI_Request_free(r)) == MPI_SUCCESS)
        p->handle = MPI_REQUEST_NULL;
    if (p->live || !sizes_in(p)) {
        atomic_fetch_add(&acis_oc.pers.norphans, 1);
        p->next = acis_oc.pers.orphans;
        acis_oc.pers.orphans = p;
    } else {
        drop(p);
    }
    pthread_mutex_unlock(&acis_oc.pers.lock);
    return 1;
}

void acis_pers_finalize(void)
{
    if (acis_oc.pers.comm == MPI_COMM_NULL)
        return;
    pthread_mutex_lock(&acis_oc.pers.lock);
    for (size_t b = 0; b < BUCKETS; b++)
        while (acis_oc.pers.by_handle[b]) {          /* not freed: orphans now */
            struct acis_pers *p = acis_oc.pers.by_handle[b];
            unhash(p);
            p->next = acis_oc.pers.orphans;
            acis_oc.pers.orphans = p;
        }
    while (acis_oc.pers.orphans) {
        struct acis_pers *p = acis_oc.pers.orphans;
        if (p->live && !p->x.finished)
            acis_nb_wait(&p->x);
        if (p->sizes_req != MPI_REQUEST_NULL)
            PMPI_Wait(&p->sizes_req, MPI_STATUS_IGNORE);
        if (p->live)
            done(p);
        acis_oc.pers.orphans = p->next;
        release(p);
    }
    atomic_store(&acis_oc.pers.norphans, 0);
    pthread_mutex_unlock(&acis_oc.pers.lock);
    PMPI_Comm_free(&acis_oc.pers.comm);
}
