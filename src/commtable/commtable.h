/* commtable.h -- the one header of src/commtable: what acis knows about each
 * communicator, cached on it with an MPI attribute and freed with it.
 *
 * State: struct acis_commtable_ctx acis_ct (the attribute keyval). */
#ifndef ACIS_COMMTABLE_H
#define ACIS_COMMTABLE_H

#include <mpi.h>
#include <stdint.h>

#include "acis/acis.h"

#define ACIS_REPORT_WORDS ((ACIS_COLL_COUNT * ACIS_REASON_COUNT + 63) / 64)

struct acis_comm {
    MPI_Comm comm;
    int size, rank;
    int inter;                            /* intercommunicator */
    uint64_t reported[ACIS_REPORT_WORDS]; /* (entry point, reason) already
                                             reported by VERBOSE */
};

/* The state of comm, created on first use (not collective).  NULL only if
 * memory or MPI failed. */
struct acis_comm *acis_comm_get(MPI_Comm comm);

/* Drop comm's state now (MPI_Finalize does this for MPI_COMM_WORLD and
 * MPI_COMM_SELF while the device is still up). */
void acis_comm_release(MPI_Comm comm);

/* After PMPI_Init / before PMPI_Finalize. */
int acis_commtable_init(void);
void acis_commtable_finalize(void);

struct acis_commtable_ctx {
    int keyval;                           /* MPI_KEYVAL_INVALID when down */
};

extern struct acis_commtable_ctx acis_ct;

#endif
