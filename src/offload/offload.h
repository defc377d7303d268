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
#include <stdatomic.h>

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
    int eager;                /* set up table rows when communicators are made */
    struct acis_coff *active; /* communicators with collectives in flight
                                 (engine.c, under the device lock) */
    uint32_t inflight;        /* segments out, all communicators (ditto) */
    MPIX_Grequest_class nb_class; /* generalized requests of nonblocking calls */
};

extern struct acis_offload_ctx acis_oc;

/* One collective in the switch. */
struct acis_op {
    struct acis_stream st;
    struct acis_comm *cs;
    struct acis_op *next;     /* in its communicator's list */
    atomic_int done;          /* every answer in, off the lists */
};

/* Engine: hook into the device and communicator table; start a
 * collective (st's kind/op/dtype/root/total and ranges set); move every
 * collective in flight once (returns packets received, -1 on channel
 * failure); wait for one. */
void acis_engine_init(void);
int acis_op_start(struct acis_op *op, struct acis_comm *cs);
int acis_engine_progress(void);
int acis_op_wait(struct acis_op *op);

/* A rank's data in wire form: in place, or packed into tmp. */
struct acis_image {
    uint8_t *p;
    uint64_t len;
    void *tmp;
};

/* Where a rank's data lives: count elements of type at buf, or with
 * counts/displs (v-variants) one block per rank, in rank order. */
struct acis_buf {
    void *buf;
    int count;
    MPI_Datatype type;
    const int *counts, *displs;   /* NULL: one run of count elements */
    int nblocks;
};

/* wire: wire elements (reductions) instead of MPI_Pack bytes; copy: never
 * use the buffer in place. */
int acis_image_in(struct acis_image *im, const struct acis_buf *b, int wire, int copy,
                  MPI_Comm comm);
int acis_image_out(struct acis_image *im, const struct acis_buf *b, int wire);
int acis_image_finish(struct acis_image *im, const struct acis_buf *b, int wire,
                      MPI_Comm comm);
void acis_image_free(struct acis_image *im);

/* How one call maps onto a stream: filled by a collective's plan. */
struct acis_plan {
    unsigned kind, alg, op, dtype;
    uint32_t root;
    uint64_t total;           /* result-space bytes */
    int wire;                 /* data in wire elements (else packed bytes) */
    int has_src, has_dst;
    int copy_src;             /* answers overwrite the source (in-place
                                 reduce-scatter): send from a copy, so a
                                 repeated segment carries the original */
    struct acis_buf src, dst; /* my piece, and where my answer goes */
    uint64_t src_off, dst_off;/* their places in the result space */
};

/* Plan a call; blocks (v-variants) are every rank's block bytes.  0, or -1
 * if acis has no plan for the entry point. */
int acis_plan(const struct acis_call *c, const uint64_t *blocks, struct acis_plan *p);
int acis_has_plan(acis_coll_t coll);

/* Gatherv and scatterv first tell every rank every block's size (an
 * allgather of 8-byte sizes through the switch): this rank's entry. */
int acis_plan_needs_sizes(const struct acis_call *c, uint64_t *mine);

/* One offloaded call from start to finish: the size exchange (v-variants),
 * then the collective itself. */
struct acis_exec {
    struct acis_call c;
    struct acis_plan p;
    struct acis_image src, dst;
    struct acis_op op;
    uint64_t mine, *blocks;   /* v-variants */
    int phase;                /* enum in exec.c */
    MPI_Request req;          /* nonblocking: its generalized request */
};

/* Start x (x->c filled); returns 0 or -1 (out of memory). */
int acis_exec_start(struct acis_exec *x);
/* After x->op is done: go on to the next phase.  1 when x is complete. */
int acis_exec_step(struct acis_exec *x);
int acis_exec_complete(const struct acis_exec *x);
/* Blocking: start, wait for every phase, finish. */
int acis_exec_run(struct acis_exec *x);

/* Nonblocking calls: a generalized request whose poll function moves the
 * engine.  acis_nb_init at MPI_Init. */
int acis_nb_init(void);
int acis_nb_start(const struct acis_call *c);

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
