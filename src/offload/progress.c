/* progress.c -- the progress helper: a thread that moves this rank's
 * offloaded nonblocking collectives while the application is away from
 * acis, e.g. blocked inside MPICH on a message a peer sends only after
 * its own wait on such a collective returns.  MPICH would progress its
 * own nonblocking collective inside that wait; acis's engine runs only
 * when something calls it, so without the helper the rank's remaining
 * segments (beyond the first window) never leave and the peers wait for
 * them forever.
 *
 * The helper sleeps while no nonblocking collective has been in flight for
 * two looks (so a stream of short ones costs no wake-ups).  While one is,
 * it looks every MPIR_CVAR_OFFLOAD_PROGRESS_US: if no thread has
 * moved the engine since the last look and none is waiting in acis, it
 * moves it (sends, takes answers, resends overdue packets) until nothing
 * more arrives.  It makes no MPI call; finishing requests stays with the
 * application's threads.  It starts with the first nonblocking collective
 * offloaded, so a job that never makes one runs no extra thread and takes
 * no lock.  State: acis_oc.helper. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "mpid/device.h"
#include "offload/offload.h"
#include "util/util.h"

#define ROUNDS_PER_LOOK 256     /* engine rounds at most per look */

/* us from now on acis_now_ns's clock (CLOCK_MONOTONIC, as the condition
 * variable is set up to use). */
static struct timespec deadline_after(long us)
{
    uint64_t t = acis_now_ns() + (uint64_t)us * 1000;
    return (struct timespec){ (time_t)(t / 1000000000), (long)(t % 1000000000) };
}

/* Move the engine (the first round sends what the window allows) while
 * answers keep coming and no application thread takes over. */
static void drive(void)
{
    for (int i = 0; i < ROUNDS_PER_LOOK && atomic_load(&acis_oc.waiters) == 0; i++) {
        ACIS_COUNT(helper_rounds, 1);
        if (acis_engine_progress() <= 0)
            return;
    }
}

static void *run(void *arg)
{
    struct acis_helper *h = arg;
    uint64_t seen = 0;
    int idle = 0;                       /* looks in a row with nothing in flight */
    pthread_mutex_lock(&h->lock);
    while (!h->stop) {
        if (idle >= 2) {
            /* Park until a collective starts.  parked is published before
             * live is read again, and the starter adds to live before it
             * reads parked: one of them sees the other (no lost wake-up). */
            atomic_store(&h->parked, 1);
            if (atomic_load(&h->live) == 0 && !h->stop)
                pthread_cond_wait(&h->wake, &h->lock);
            atomic_store(&h->parked, 0);
            idle = 0;
            seen = atomic_load_explicit(&acis_oc.rounds, memory_order_relaxed);
            continue;
        }
        struct timespec ts = deadline_after(h->look_us);
        if (pthread_cond_timedwait(&h->wake, &h->lock, &ts) != ETIMEDOUT || h->stop)
            continue;
        if (atomic_load(&h->live) == 0) {
            idle++;
            continue;
        }
        idle = 0;
        pthread_mutex_unlock(&h->lock);
        uint64_t now = atomic_load_explicit(&acis_oc.rounds, memory_order_relaxed);
        if (now == seen && atomic_load(&acis_oc.waiters) == 0)
            drive();
        seen = atomic_load_explicit(&acis_oc.rounds, memory_order_relaxed);
        pthread_mutex_lock(&h->lock);
    }
    pthread_mutex_unlock(&h->lock);
    return NULL;
}

void acis_helper_init(void)
{
    struct acis_helper *h = &acis_oc.helper;
    h->look_us = ACIS_CV(OFFLOAD_PROGRESS_US);
    pthread_mutex_init(&h->lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&h->wake, &ca);
    pthread_condattr_destroy(&ca);
}

void acis_helper_enter(void)
{
    struct acis_helper *h = &acis_oc.helper;
    if (h->look_us <= 0)
        return;
    int first = atomic_fetch_add(&h->live, 1) == 0;
    if (!atomic_load(&h->started) && !h->failed) {
        /* Under MPI_THREAD_MULTIPLE two threads may get here at once: one
         * starts it.  Otherwise only this thread exists besides MPICH's own
         * (or the application serializes its MPI calls), so switching the
         * device to taking its lock is safe. */
        pthread_mutex_lock(&h->lock);
        if (!atomic_load(&h->started) && !h->failed) {
            acis_dev_set_threaded(1);
            int rc = pthread_create(&h->thread, NULL, run, h);
            if (rc == 0)
                atomic_store(&h->started, 1);
            else {
                h->failed = 1;
                acis_log(1, "cannot start the progress helper (%s): a rank blocked in "
                            "MPICH holds back its peers' nonblocking collectives",
                         strerror(rc));
            }
        }
        pthread_mutex_unlock(&h->lock);
    }
    if (first && atomic_load(&h->parked)) {      /* it sleeps without a deadline */
        pthread_mutex_lock(&h->lock);
        pthread_cond_signal(&h->wake);
        pthread_mutex_unlock(&h->lock);
    }
}

void acis_helper_leave(void)
{
    if (acis_oc.helper.look_us > 0)
        atomic_fetch_sub(&acis_oc.helper.live, 1);
}

void acis_helper_stop(void)
{
    struct acis_helper *h = &acis_oc.helper;
    if (atomic_load(&h->started)) {
        pthread_mutex_lock(&h->lock);
        h->stop = 1;
        pthread_cond_signal(&h->wake);
        pthread_mutex_unlock(&h->lock);
        pthread_join(h->thread, NULL);
        atomic_store(&h->started, 0);
        h->stop = 0;
    }
    atomic_store(&h->live, 0);
}
