/* fallback.h -- the one header of src/fallback: deciding, for each
 * collective call, whether it runs in the switch or in MPICH, and why.
 *
 * Every intercepted call goes through acis_select().  The decision depends
 * only on what every member of the communicator sees identically (the
 * collective, type signature, op, message size, CVARs, and the
 * communicator's table entry, which members agree on when it is created),
 * so all ranks decide alike and none waits for a switch the others skip.
 *
 * State: struct acis_fallback_ctx acis_fb (see below). */
#ifndef ACIS_FALLBACK_H
#define ACIS_FALLBACK_H

#include <mpi.h>
#include <stdint.h>

#include "acis/acis.h"
#include "acis/wire.h"

struct acis_comm;

/* What one datatype is, as far as moving it through a switch goes. */
struct acis_dtinfo {
    uint8_t prim;        /* wire type of every element; ACIS_DT_NONE if the
                            signature mixes types or has one acis lacks */
    uint8_t dense;       /* count instances at buf + true_lb are exactly
                            count * nprim wire elements back to back */
    uint8_t predefined;  /* a predefined type: its handle is constant, never
                            freed, never another type's */
    uint64_t nprim;      /* wire elements per instance (prim != NONE) */
    MPI_Count size;      /* MPI_Type_size */
    MPI_Count extent;
    MPI_Count true_lb;
};

/* Analyse a datatype (cached per derived type).  Returns 0, or -1 if MPI
 * could not describe it (then prim is NONE and dense 0). */
int acis_dtype_info(MPI_Datatype type, struct acis_dtinfo *out);

/* 1 if count instances at buf + true_lb, taken as bytes, are exactly what
 * MPI_Pack would produce (dense, and no holes in the element type), so a
 * byte-moving collective can send them without packing. */
int acis_dtype_raw_bytes(const struct acis_dtinfo *dt);

/* The wire operation of an MPI op; ACIS_OP_NONE for user-defined ops. */
int acis_op_wire(MPI_Op op);

/* One intercepted call, filled in by the wrapper; selection adds the rest. */
struct acis_call {
    acis_coll_t coll;
    const void *sbuf;
    void *rbuf;
    int scount;                  /* count of the collective / send count */
    MPI_Datatype stype;
    int rcount;                  /* receive count (gather, scatter, ...) */
    MPI_Datatype rtype;
    const int *rcounts;          /* MPI_Reduce_scatter, gatherv, allgatherv */
    const int *rdispls;          /* gatherv, allgatherv */
    const int *scounts;          /* scatterv */
    const int *sdispls;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    MPI_Request *req;            /* nonblocking and persistent forms */
    MPI_Info info;               /* persistent forms */
    int inner;                   /* a step acis takes inside another call
                                    (node hierarchy): not counted again */

    /* filled by acis_select() */
    int kind;                    /* enum acis_kind */
    int wop;                     /* enum acis_wop */
    struct acis_dtinfo dt;       /* the type that describes this rank's data */
    MPI_Datatype dtype;          /* that type */
    uint64_t elems;              /* wire elements per rank's block / vector */
    uint64_t bytes;              /* message bytes, for the counters */
    struct acis_comm *cs;        /* communicator state if offloaded, or
                                    failed over */
    int failed_over;             /* reason device_failed, but the call would
                                    have been offloaded: its communicator's
                                    switch failed after it was set up, so it
                                    runs on the communicator's private dup
                                    (src/offload/fix.c) */
};

/* Inputs of the pure policy function (unit-tested without MPI). */
struct acis_policy_in {
    int master;            /* MPIR_CVAR_OFFLOAD: ACIS_AUTO, ACIS_ON, ACIS_OFF */
    int coll_mode;         /* MPIR_CVAR_OFFLOAD_<COLL> */
    int device_ok;         /* a switch answered at MPI_Init on every rank */
    int implemented;       /* acis has a switch driver for this entry point */
    int base_implemented;  /* ... for its blocking form */
    int form;              /* ACIS_FORM_BLOCKING, _NONBLOCKING, _PERSISTENT */
    int intercomm;
    int comm_size;
    int reduction;         /* the collective combines data with an op */
    int wop;               /* ACIS_OP_NONE: user-defined op */
    int prim;              /* wire type, ACIS_DT_NONE if not one type */
    uint64_t bytes;        /* message bytes */
    uint64_t max_bytes;    /* MPIR_CVAR_OFFLOAD_MAX_MSG_SIZE */
};

/* Decide from static facts; ACIS_REASON_NONE means "offload if the
 * communicator has a table entry". */
acis_reason_t acis_policy(const struct acis_policy_in *in);

/* Full selection for one call: fills c, asks the communicator table
 * (creating the entry when built lazily), counts the call, reports the
 * decision when verbose, and returns the reason (NONE: offload). */
acis_reason_t acis_select(struct acis_call *c);

/* The communicator's row, made ready (collective the first time). */
acis_reason_t acis_comm_ready(struct acis_comm *cs);

/* The communicator-level part of the decision for comm (master switch,
 * device, intercommunicator, size, table entry): ACIS_REASON_NONE if
 * collectives on comm can be offloaded. */
acis_reason_t acis_comm_reason(MPI_Comm comm);

/* Report a decision once per (communicator, entry point, reason): on the
 * communicator's rank 0 at VERBOSE 1, on every rank at 2, every call at 3. */
void acis_report(const struct acis_call *c, struct acis_comm *cs,
                 acis_reason_t reason);

/* Set-up and tear-down of this layer, after PMPI_Init and before
 * PMPI_Finalize; acis_dtype_init/finalize are its datatype part. */
int acis_fallback_init(void);
void acis_fallback_finalize(void);
int acis_dtype_init(void);
void acis_dtype_finalize(void);

#define ACIS_DT_HASH 128

struct acis_fallback_ctx {
    int ready;                          /* acis_fallback_init done */
    int type_keyval;                    /* cache of derived type analyses */
    uint8_t implemented[ACIS_COLL_COUNT]; /* entry points with switch drivers,
                                           set by src/offload at init */
    int device_ok;                      /* every rank reached the switch */
    struct { MPI_Datatype type; uint8_t prim; } dt_hash[ACIS_DT_HASH];
    /* after a switch failure, how new communicators join a switch that
     * is back (set by src/offload; NULL: never) */
    int (*rejoin)(MPI_Comm comm);
    MPI_Count sig_size[ACIS_DT_COUNT];  /* MPI_Type_size of each wire type */
};

extern struct acis_fallback_ctx acis_fb;

#endif
