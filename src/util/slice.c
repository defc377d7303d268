/* slice.c -- ask the kernel to treat a helper thread (progress thread,
 * embedded switch) as latency-sensitive: with Linux's EEVDF scheduler
 * (6.12 and later) a thread that requests a short slice preempts a
 * computing thread as soon as it wakes, instead of waiting out that
 * thread's slice (about 3 ms).  Needs no privilege; where the kernel does
 * not support it the request fails quietly and nothing changes. */
#include "config.h"

#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util.h"

/* The kernel's struct sched_attr (include/uapi/linux/sched/types.h). */
struct acis_sched_attr {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
    uint32_t sched_util_min, sched_util_max;
};

int acis_thread_short_slice(unsigned us)
{
#ifdef SYS_sched_setattr
    struct acis_sched_attr a;
    memset(&a, 0, sizeof a);
    a.size = sizeof a;
    a.sched_policy = 0;                      /* SCHED_OTHER */
    a.sched_runtime = (uint64_t)us * 1000;   /* the requested slice, ns */
    return (int)syscall(SYS_sched_setattr, 0, &a, 0);
#else
    (void)us;
    return -1;
#endif
}
