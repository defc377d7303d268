/* fault.c -- fault injection for tests: the MPIR_CVAR_OFFLOAD_FAULT_NOMEM*
 * variables make a call, a communicator's set-up or a request act as if
 * its memory could not be had, at the rate the variable gives.  Draws are
 * numbered (acis_oc.fault_draws), so threads need no lock and a seed
 * replays a run. */
#include "config.h"

#include "offload.h"
#include "util/util.h"

static int draw(uint64_t rate)
{
    return rate && acis_fault_pick(rate, acis_oc.fault_seed,
                                   atomic_fetch_add(&acis_oc.fault_draws, 1));
}

int acis_fault_nomem(acis_coll_t coll)
{
    return draw(acis_coll_form(coll) == ACIS_FORM_BLOCKING
                    ? (uint64_t)ACIS_CV(OFFLOAD_FAULT_NOMEM)
                    : (uint64_t)ACIS_CV(OFFLOAD_FAULT_NOMEM_NB));
}

int acis_fault_nomem_setup(void)
{
    return draw((uint64_t)ACIS_CV(OFFLOAD_FAULT_NOMEM_SETUP));
}

int acis_fault_nomem_request(void)
{
    return draw((uint64_t)ACIS_CV(OFFLOAD_FAULT_NOMEM_REQUEST));
}
