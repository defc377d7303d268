/* api.c -- the counter functions of include/acis/acis.h. */
#include "config.h"

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
