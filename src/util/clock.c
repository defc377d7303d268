/* clock.c -- monotonic nanosecond clock used for spin budgets, timeouts and
 * the switch's timing model. */
#include "config.h"

#include <time.h>

#include "util.h"

uint64_t acis_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}
