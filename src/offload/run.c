/* run.c -- one offloaded call, top of its pipeline.  A call acis_select()
 * chose to offload (src/fallback) runs through the node hierarchy where it
 * applies (hier.c), else flat (flat.c); one whose communicator failed over
 * runs in MPICH on the communicator's private dup (redo.c).
 *
 * The stages below run one way: each file of src/offload calls only files
 * after it in this order, and hears back through what the call returns or
 * through the records it was handed (an acis_exec's redo flag, an
 * acis_op's done), never by calling up (test/layering.sh checks it):
 *   run -> hier -> flat -> pers -> nbc -> short -> qcache -> redo -> exec ->
 *   early -> progress -> engine -> late -> fix -> keep -> colls, image, stream -> fault,
 *   pmpi
 * The MPI entry points (intercept, requests, comm_life, api) and set-up
 * and teardown (init, connect, summary) sit above. */
#include "config.h"

#include "offload.h"

int acis_offload_run(struct acis_call *c)
{
    int rc;
    acis_pers_tidy();                       /* persistent requests freed running */
    acis_comm_reap(0);                      /* rows of communicators freed since */
    if (acis_hier_run(c, &rc))
        return rc;
    return c->failed_over ? acis_call_redo(c) : acis_offload_flat(c);
}
