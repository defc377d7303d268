/* report.c -- say what was decided and why (MPIR_CVAR_OFFLOAD_VERBOSE), once
 * per communicator, entry point and reason, so a run of a million calls
 * prints a handful of lines. */
#include "config.h"

#include <stdio.h>

#include "commtable/commtable.h"
#include "fallback.h"
#include "util/util.h"

void acis_report(const struct acis_call *c, struct acis_comm *cs,
                 acis_reason_t reason)
{
    int verbose = acis_util.verbose;
    if (verbose < 2 && cs->rank != 0)
        return;
    if (verbose < 3) {
        unsigned bit = (unsigned)c->coll * ACIS_REASON_COUNT + (unsigned)reason;
        uint64_t mask = 1ull << (bit % 64);
        if (cs->reported[bit / 64] & mask)
            return;
        cs->reported[bit / 64] |= mask;
    }
    char name[MPI_MAX_OBJECT_NAME] = "";
    int len = 0;
    PMPI_Comm_get_name(c->comm, name, &len);
    if (len == 0)
        snprintf(name, sizeof name, "communicator %#lx", (unsigned long)c->comm);
    char type[MPI_MAX_OBJECT_NAME + 4] = "";
    if (reason == ACIS_REASON_DATATYPE || reason == ACIS_REASON_OP_DATATYPE) {
        char tn[MPI_MAX_OBJECT_NAME] = "";
        int tl = 0;                     /* which type: the user can act on it */
        if (c->stype != MPI_DATATYPE_NULL)
            PMPI_Type_get_name(c->stype, tn, &tl);
        snprintf(type, sizeof type, " (%s)", tl ? tn : "a derived datatype");
    }
    acis_log(0, "%s on %s (%d ranks, %llu bytes): %s%s%s",
             acis_coll_name(c->coll), name, cs->size, (unsigned long long)c->bytes,
             reason == ACIS_REASON_NONE ? "" : "software: ", acis_reason_text(reason), type);
}
