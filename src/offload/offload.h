/* offload.h -- the one header of src/offload: the MPI entry points acis
 * defines (generated from wrappers.def), MPI_Init/MPI_Finalize, and the
 * collective drivers that run a call in the switch.
 *
 * State: struct acis_offload_ctx acis_oc (below). */
#ifndef ACIS_OFFLOAD_H
#define ACIS_OFFLOAD_H

#include <mpi.h>

#include "fallback/fallback.h"

#define ACIS_API __attribute__((visibility("default")))

/* What the wrappers do, read once per call. */
enum acis_mode {
    ACIS_MODE_PASS = 0,   /* before MPI_Init / after MPI_Finalize: straight to PMPI */
    ACIS_MODE_OFF,        /* MPIR_CVAR_OFFLOAD=off, quiet: count, then PMPI */
    ACIS_MODE_ACTIVE      /* every call goes through acis_select() */
};

struct acis_offload_ctx {
    int mode;                 /* enum acis_mode */
    int world_rank, world_size;
    int thread_level;         /* provided by MPI_Init_thread */
};

extern struct acis_offload_ctx acis_oc;

/* Run a call that acis_select() chose to offload.  Returns an MPI error
 * code. */
int acis_offload_run(struct acis_call *c);

/* Tell src/fallback which entry points have drivers. */
void acis_run_init(void);

/* Rank 0 prints the MPIR_CVAR_OFFLOAD_STATS table; collective over
 * MPI_COMM_WORLD. */
void acis_summary_print(void);

#endif
