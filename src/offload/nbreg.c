/* nbreg.c -- which MPI requests are acis's open nonblocking calls, and
 * who may look at one.
 *
 * MPICH runs a generalized request's poll function in the wait and test
 * calls, but not in MPI_Request_get_status: a program that polls an
 * offloaded MPI_Ibcast with it alone would loop forever.  So every
 * request of nbc.c's two classes is in this table, by its handle, from
 * its allocation until MPICH frees it (the class's free function), and
 * MPI_Request_get_status (requests.c) moves the one it is given once,
 * as MPI_Test would, and answers from the call's own state (nbc.c,
 * acis_nb_get_status): MPICH, asked, would run the request's query
 * function on the request's own status in every thread that asks, two
 * threads writing it at once (ThreadSanitizer, threads.c).
 *
 * That look runs outside MPICH, so under MPI_THREAD_MULTIPLE it may meet
 * MPICH's own poll of the same request, or its free.  Every look takes
 * the entry's BUSY bit first (a look that finds it taken does nothing:
 * the other thread moves the call), and a free that finds a look under
 * way only marks the entry FREED: the look's end frees the state.  The
 * table's lock is held only to find an entry and take its bit, never
 * during a look, which may take the device lock and MPICH's.  The
 * entries are the states' own (intrusive), so adding one cannot fail.
 * MPI_Request_free and MPI_Cancel refuse a request in the table, as
 * MPICH refuses its own nonblocking collectives' (requests.c). */
#include "config.h"

#include "offload/offload.h"

enum { NB_BUSY = 1, NB_FREED = 2 };

static struct acis_nbent **chain(MPI_Request r)
{
    _Static_assert(ACIS_NBREG_BUCKETS == 256, "the top 8 bits of a Fibonacci hash");
    return &acis_oc.nbreg.by_handle[(uint32_t)r * 2654435761u >> 24];
}

void acis_nbreg_setup(void)
{
    pthread_mutex_init(&acis_oc.nbreg.lock, NULL);
    atomic_flag_clear(&acis_oc.nbreg.sweeping);
}

void acis_nbreg_add(struct acis_nbent *e, MPI_Request r, int kind)
{
    e->handle = r;
    e->kind = kind;
    atomic_init(&e->bits, 0);
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    struct acis_nbent **c = chain(r);
    e->next = *c;
    *c = e;
    atomic_fetch_add_explicit(&acis_oc.nbreg.count, 1, memory_order_relaxed);
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
}

int acis_nbreg_drop(struct acis_nbent *e)
{
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    for (struct acis_nbent **p = chain(e->handle); *p; p = &(*p)->next)
        if (*p == e) {
            *p = e->next;
            atomic_fetch_sub_explicit(&acis_oc.nbreg.count, 1, memory_order_relaxed);
            break;
        }
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
    return !(atomic_fetch_or_explicit(&e->bits, NB_FREED, memory_order_acq_rel) & NB_BUSY);
}

int acis_nbent_enter(struct acis_nbent *e)
{
    return !(atomic_fetch_or_explicit(&e->bits, NB_BUSY, memory_order_acquire) & NB_BUSY);
}

int acis_nbent_leave(struct acis_nbent *e)
{
    return (atomic_fetch_and_explicit(&e->bits, ~NB_BUSY, memory_order_acq_rel) & NB_FREED) != 0;
}

/* r's entry, or NULL (the lock held). */
static struct acis_nbent *find(MPI_Request r)
{
    struct acis_nbent *f = *chain(r);
    while (f && f->handle != r)
        f = f->next;
    return f;
}

int acis_nbreg_has(MPI_Request r)
{
    if (!atomic_load_explicit(&acis_oc.nbreg.count, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    int has = find(r) != NULL;
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
    return has;
}

int acis_nbreg_take(MPI_Request r, struct acis_nbent **e)
{
    *e = NULL;
    if (!atomic_load_explicit(&acis_oc.nbreg.count, memory_order_relaxed))
        return 0;
    pthread_mutex_lock(&acis_oc.nbreg.lock);
    struct acis_nbent *f = find(r);
    if (f && acis_nbent_enter(f))
        *e = f;                             /* else another thread looks at it */
    pthread_mutex_unlock(&acis_oc.nbreg.lock);
    return f != NULL;
}
