/* api.c -- the counter functions of include/acis/acis.h. */
#include "config.h"

#include "mpid/device.h"
#include "offload.h"
#include "util/util.h"

ACIS_API int acis_get_stats(acis_coll_t coll, struct acis_coll_stats *out)
{
    if ((unsigned)coll >= ACIS_COLL_COUNT || !out)
        return -1;
    acis_stats_snapshot(coll, out);
    return 0;
}

ACIS_API int acis_get_host_stats(struct acis_host_stats *out)
{
    if (!out)
        return -1;
    acis_host_snapshot(out);
    return 0;
}

ACIS_API void acis_reset_stats(void)
{
    acis_stats_zero();
}

ACIS_API int acis_comm_offloaded(MPI_Comm comm, acis_reason_t *why)
{
    acis_reason_t r = acis_oc.mode == ACIS_MODE_PASS ? ACIS_REASON_INVALID
                                                     : acis_comm_reason(comm);
    if (why)
        *why = r;
    return r == ACIS_REASON_NONE;
}

ACIS_API int acis_get_switch_stats(uint64_t *values, int max)
{
    if (!values || max < 0 || acis_oc.mode == ACIS_MODE_PASS || !acis_fb.device_ok)
        return -1;
    acis_dev_lock();
    int n = acis_dev_switch_stats(values, max);
    acis_dev_unlock();
    return n;
}

ACIS_API int acis_get_switch_info(struct acis_switch_info *out)
{
    if (!out || acis_oc.mode == ACIS_MODE_PASS || !acis_fb.device_ok)
        return -1;
    const struct acis_dev_info *d = acis_dev_info();
    *out = (struct acis_switch_info){ d->max_payload, d->window, d->tables, d->radix,
                                      acis_dev_credit_cap() };
    return 0;
}
