/* wait.c -- waiting for the switch: spinning or sleeping by the time
 * since the last packet, and the silence clock that decides a switch is
 * lost (it runs only while this rank repeats a request: a live switch
 * answers every repeat, if only with "pending").  Shares the device's
 * context (dev.h). */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdatomic.h>

#include "mpid/dev.h"
#include "util/util.h"

/* Nanoseconds from t, or from idle_since_ns if later, to now (0 if t is
 * 0). */
static uint64_t since_at(uint64_t now, uint64_t t, uint64_t idle_since_ns)
{
    uint64_t from = t > idle_since_ns ? t : idle_since_ns;
    return t && now > from ? now - from : 0;
}

static uint64_t since(uint64_t t, uint64_t idle_since_ns)
{
    return since_at(acis_now_ns(), t, idle_since_ns);
}

/* Nanoseconds of quiet, for spinning or sleeping: since the last packet
 * any thread received (under MPI_THREAD_MULTIPLE another thread may take
 * the switch's answers), or since idle_since_ns if later. */
static uint64_t idle_ns(uint64_t idle_since_ns)
{
    return since(atomic_load_explicit(&acis_dev.heard_ns, memory_order_relaxed),
                 idle_since_ns);
}

/* Nanoseconds a repeat has gone unanswered: a live switch answers every
 * repeat, if only with "pending", so only time spent asking counts.  A
 * rank that was away (computing, in MPICH, descheduled) longer than the
 * timeout without repeating anything comes back to a switch it never
 * asked: its first repeat starts the clock. */
static uint64_t unanswered_ns(uint64_t idle_since_ns)
{
    return since(atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed),
                 idle_since_ns);
}

/* Silent for longer than timeout_ms (never on a reliable channel). */
static int too_long(uint64_t ns)
{
    return !acis_dev.ops->reliable && ns > (uint64_t)acis_dev.timeout_ms * 1000000ull;
}

void acis_dev_asked(void)
{
    uint64_t none = 0;
    atomic_compare_exchange_strong(&acis_dev.asked_ns, &none, acis_now_ns());
}

int acis_dev_asking(void)
{
    return atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed) != 0;
}

int acis_dev_silent(uint64_t idle_since_ns)
{
    return too_long(unanswered_ns(idle_since_ns));
}

int acis_dev_still_silent(uint64_t idle_since_ns)
{
    uint64_t now = acis_now_ns();            /* before the read: an answer sent
                                                before now is read below */
    int n = acis_dev_poll_ctx(&acis_dev);
    if (n != 0)
        return n < 0 ? -1 : 0;
    return too_long(since_at(now, atomic_load_explicit(&acis_dev.asked_ns, memory_order_relaxed),
                             idle_since_ns));
}

/* How long a waiter quiet for idle ns, with a repeat unanswered for
 * unanswered ns (at most the timeout), sleeps: 0 to spin on.  A
 * millisecond at most, and not past the timeout: the waiter lets MPICH
 * move between sleeps (a peer may need this rank's point-to-point
 * progress), and another thread may take the packet this one sleeps for
 * and not wake it (MPI_THREAD_MULTIPLE, the progress thread). */
static int sleep_ms(uint64_t idle, uint64_t unanswered)
{
    if (acis_dev.spin || idle < (uint64_t)acis_dev.spin_us * 1000ull)
        return 0;
    uint64_t cap = 1, left_ms = acis_dev.ops->reliable
                                    ? cap
                                    : acis_dev.timeout_ms - unanswered / 1000000ull;
    return left_ms > cap ? (int)cap : (int)left_ms + 1;
}

int acis_dev_wait(uint64_t idle_since_ns)
{
    uint64_t unanswered = unanswered_ns(idle_since_ns);
    if (too_long(unanswered))
        return -1;
    int ms = sleep_ms(idle_ns(idle_since_ns), unanswered);
    return ms ? acis_dev_sleep(ms) : 0;
}

void acis_dev_wait_answer(const struct acis_dev_ticket *t, uint64_t idle_since_ns)
{
    int ms = sleep_ms(idle_ns(idle_since_ns), 0);   /* posting channels are reliable */
    if (ms)
        acis_dev.ops->sleep(acis_dev.ch, t, ms);
}

int acis_dev_sleep(int ms)
{
    if (acis_dev.embedded) {                     /* sleep on our socket and the switch's */
        struct pollfd pf[2] = { { acis_dev.ops->fd(acis_dev.ch), POLLIN, 0 },
                                { acis_udpsw_fd(acis_dev.embedded), POLLIN, 0 } };
        acis_dev_lock();                         /* its answers to us come in place */
        int got = acis_dev_poll_ctx(&acis_dev);  /* (and it keeps its thread parked) */
        acis_dev_unlock();
        if (got != 0)
            return got < 0 ? -1 : 0;             /* something came: no sleep */
        return poll(pf, 2, ms) < 0 && errno != EINTR ? -1 : 0;
    }
    if (acis_dev.ops->wait_on) {                 /* its wait reads what others change */
        struct acis_dev_ticket t;
        acis_dev_lock();
        int on = acis_dev.ops->wait_on(acis_dev.ch, &t);
        acis_dev_unlock();
        if (on)
            acis_dev.ops->sleep(acis_dev.ch, &t, ms);
        return 0;
    }
    return acis_dev.ops->wait(acis_dev.ch, ms) < 0 ? -1 : 0;
}
