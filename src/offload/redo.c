/* redo.c -- calls acis would have offloaded that run in MPICH instead,
 * after a switch failure (fix.c) or an abstention (exec.c): each is redone
 * in call order, on its communicator's private dup, by every member.
 * A blocking call is redone by whoever ran it (flat.c, short.c, hier.c:
 * acis_call_redo); a nonblocking call marked to be redone
 * (acis_exec.redo, set by fix.c or nbc.c) is started in MPICH here and
 * completes with MPICH's request (nbc.c).  Also the list of nonblocking
 * calls in flight on a communicator, which gives that order. */
#include "config.h"

#include <pthread.h>

#include "mpid/device.h"
#include "offload.h"
#include "util/util.h"

static pthread_mutex_t redo_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;

/* Where MPICH runs a call acis would have offloaded on cs but the switch
 * could not finish: one redone after a switch failure or an abstention,
 * or made after the members agreed on MPICH.  Every member runs those
 * calls, and only those, in call order on cs's private dup, so their
 * order against the collectives MPICH runs on the user's communicator
 * anyway (MPI_Ialltoall, an Igatherv) does not depend on when each member
 * learns of the failure or starts what it must redo.  The dup has the
 * user's error handler (MPI_Comm_set_errhandler sets both, comm_life.c);
 * a handler is given the dup as its communicator.  Every member with a
 * row has the dup (ct.c); the user's communicator only if it did not. */
static MPI_Comm redo_comm(const struct acis_comm *cs)
{
    return cs->shadow != MPI_COMM_NULL ? cs->shadow : acis_comm_handle(cs);
}

int acis_call_redo(const struct acis_call *c)
{
    struct acis_call d = *c;
    acis_redo_drain(c->cs);             /* earlier nonblocking calls first */
    d.comm = redo_comm(c->cs);
    return acis_call_pmpi(&d);
}

void acis_redo_drain(struct acis_comm *cs)
{
    struct acis_exec *due = NULL, **tail = &due;   /* taken out, in call order */
    pthread_mutex_lock(&redo_lock);
    acis_dev_lock();
    struct acis_coff *co = cs->off;
    for (struct acis_exec **pp = co ? &co->execs : NULL; pp && *pp;) {
        struct acis_exec *x = *pp;
        if (atomic_load(&x->redo) == 1) {
            *pp = x->next_exec;
            x->next_exec = NULL;
            *tail = x;
            tail = &x->next_exec;
        } else {
            pp = &x->next_exec;
        }
    }
    acis_dev_unlock();
    for (struct acis_exec *x = due, *next; x; x = next) {
        next = x->next_exec;
        acis_exec_drop(x);
        x->c.req = &x->inner;
        x->c.comm = redo_comm(x->c.cs);
        x->inner = MPI_REQUEST_NULL;
        if ((x->err = acis_call_pmpi(&x->c)) != MPI_SUCCESS)
            x->inner = MPI_REQUEST_NULL;        /* failed at the start: done */
        ACIS_COUNT(redone, 1);
        atomic_store(&x->redo, 2);
        atomic_fetch_sub(&acis_oc.redo_pending, 1);
    }
    pthread_mutex_unlock(&redo_lock);
}

int acis_exec_link(struct acis_exec *x)
{
    struct acis_comm *cs = x->c.cs;
    struct acis_coff *co = cs->off;     /* made with the row */
    acis_dev_lock();
    int ready = co && cs->state == ACIS_CT_READY;
    if (ready) {
        struct acis_exec **pp = &co->execs;
        while (*pp)
            pp = &(*pp)->next_exec;
        *pp = x;
        x->next_exec = NULL;
    }
    acis_dev_unlock();
    return ready ? 0 : ACIS_OP_SOFTWARE;
}

void acis_exec_unlink(struct acis_exec *x)
{
    struct acis_coff *co = x->c.cs->off;
    acis_dev_lock();
    for (struct acis_exec **pp = co ? &co->execs : NULL; pp && *pp; pp = &(*pp)->next_exec)
        if (*pp == x) {
            *pp = x->next_exec;
            break;
        }
    acis_dev_unlock();
}

void acis_redo_before(MPI_Comm comm)
{
    struct acis_comm *cs = acis_comm_get(comm);
    if (cs && cs->off)
        acis_redo_drain(cs);
}
