/* flat.c -- a call run flat on its communicator, every member a port of
 * the switch: a nonblocking call through its request (nbc.c), a
 * persistent one's request made (pers.c), a blocking one on the short
 * path (short.c) or through the engine (exec.c).  When
 * the switch cannot finish a blocking call -- its communicator went to
 * MPICH, or a member abstained -- exec.c says so and the call is redone
 * in MPICH here, after any earlier nonblocking ones (redo.c). */
#include "config.h"

#include "mpid/device.h"
#include "offload.h"

int acis_offload_flat(struct acis_call *c)
{
    int form = acis_coll_form(c->coll);
    if (form == ACIS_FORM_NONBLOCKING)
        return acis_nb_start(c);
    if (form == ACIS_FORM_PERSISTENT)
        return acis_pers_init(c);
    int rc;
    if (acis_short_run(c, &rc))
        return rc;
    struct acis_exec x = { .c = *c };
    rc = acis_exec_run(&x);
    if (rc == ACIS_OP_SOFTWARE)
        rc = acis_call_redo(&x.c);
    /* Not acis_dev_release() on every call: measured, it doubled the
     * 2-rank 8-byte allreduce latency (14-18 us to 28-34 us, bench/lat),
     * since it wakes the switch thread each time.  Only when a row lacks
     * this rank: its members need the switch while we are away. */
    acis_dev_leave();
    return rc;
}
