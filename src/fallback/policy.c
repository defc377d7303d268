/* policy.c -- the pure decision: from facts every rank shares (CVARs, the
 * collective, type signature, op, size), offload or software and why.  No
 * MPI calls, so unit tests can cover every branch. */
#include "config.h"

#include "fallback.h"
#include "util/util.h"

acis_reason_t acis_policy(const struct acis_policy_in *in)
{
    if (in->master == ACIS_OFF)
        return ACIS_REASON_DISABLED;
    if (in->coll_mode == ACIS_OFF)
        return ACIS_REASON_COLL_DISABLED;
    if (!in->device_ok)
        return ACIS_REASON_NO_DEVICE;
    if (in->intercomm)
        return ACIS_REASON_INTERCOMM;
    if (in->comm_size < 2)
        return ACIS_REASON_SINGLE_RANK;
    if (!in->implemented)
        return in->form == ACIS_FORM_PERSISTENT ? ACIS_REASON_PERSISTENT
               : in->base_implemented && in->form == ACIS_FORM_NONBLOCKING
                   ? ACIS_REASON_NONBLOCKING
                   : ACIS_REASON_NOT_OFFLOADABLE;
    if (in->reduction) {
        if (in->wop == ACIS_OP_NONE)
            return ACIS_REASON_OP_USER;
        if (in->prim == ACIS_DT_NONE)
            return ACIS_REASON_DATATYPE;
        if (!acis_wire_op_valid((unsigned)in->wop, (unsigned)in->prim))
            return ACIS_REASON_OP_DATATYPE;
    }
    if (in->coll_mode != ACIS_ON && in->bytes > in->max_bytes)
        return ACIS_REASON_MSG_SIZE;
    return ACIS_REASON_NONE;
}
