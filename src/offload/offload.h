/* offload.h -- the one header of src/offload: the MPI entry points acis
 * defines (generated from wrappers.def), MPI_Init/MPI_Finalize, and the
 * collective drivers that run a call in the switch: plans (colls.c) turn a
 * call into a stream of segments (stream.c), images (image.c) hold the
 * data in wire form, the engine (engine.c) moves it.
 *
 * State: struct acis_offload_ctx acis_oc (below). */
#ifndef ACIS_OFFLOAD_H
#define ACIS_OFFLOAD_H

#include <mpi.h>

#include "commtable/commtable.h"
#include "fallback/fallback.h"
#include "offload/stream.h"

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
    uint64_t job_key;         /* random, chosen by rank 0 at MPI_Init */
    int embedded;             /* this process runs the job's switch */
};

extern struct acis_offload_ctx acis_oc;

/* One collective in the switch. */
struct acis_op {
    struct acis_stream st;
    struct acis_comm *cs;
    struct acis_op *next;     /* in its communicator's list */
};

/* Engine: hook into the device and communicator table; start a
 * collective (st's kind/op/dtype/root/total and ranges set); wait for it. */
void acis_engine_init(void);
int acis_op_start(struct acis_op *op, struct acis_comm *cs);
int acis_op_wait(struct acis_op *op);

/* A rank's data in wire form: in place, or packed into tmp. */
struct acis_image {
    uint8_t *p;
    uint64_t len;
    void *tmp;
};

/* wire: wire elements (reductions) instead of MPI_Pack bytes. */
int acis_image_in(struct acis_image *im, const void *buf, int count, MPI_Datatype t,
                  const struct acis_dtinfo *dt, int wire, MPI_Comm comm);
int acis_image_out(struct acis_image *im, void *buf, int count,
                   const struct acis_dtinfo *dt, int wire);
int acis_image_finish(struct acis_image *im, void *buf, int count, MPI_Datatype t,
                      const struct acis_dtinfo *dt, int wire, MPI_Comm comm);
void acis_image_free(struct acis_image *im);

/* How one call maps onto a stream: filled by a collective's plan. */
struct acis_plan {
    unsigned kind, op, dtype;
    uint32_t root;
    uint64_t total;           /* result-space bytes */
    int wire;                 /* data in wire elements (else packed bytes) */
    /* my piece: count elements of type at buf, placed at src_off */
    int has_src;
    const void *sbuf;
    int scount;
    MPI_Datatype stype;
    uint64_t src_off;
    /* what I get: count elements of type into buf, from dst_off */
    int has_dst;
    void *rbuf;
    int rcount;
    MPI_Datatype rtype;
    uint64_t dst_off;
};

/* Plan a call of entry point c->coll; 0, or -1 if acis has no plan. */
int acis_plan(const struct acis_call *c, struct acis_plan *p);
int acis_has_plan(acis_coll_t coll);

/* Run a call that acis_select() chose to offload.  Returns an MPI error
 * code. */
int acis_offload_run(struct acis_call *c);

/* Join the switch on every rank or on none (collective over
 * MPI_COMM_WORLD); 0 when every rank has a device.  Leave it again. */
int acis_connect(void);
void acis_disconnect(void);

/* Tell src/fallback which entry points have drivers. */
void acis_run_init(void);

/* Rank 0 prints the MPIR_CVAR_OFFLOAD_STATS table; collective over
 * MPI_COMM_WORLD. */
void acis_summary_print(void);

#endif
