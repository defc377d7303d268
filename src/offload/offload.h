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
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "commtable/commtable.h"
#include "fallback/fallback.h"
#include "mpid/device.h"
#include "offload/stream.h"
#include "util/util.h"

#define ACIS_API __attribute__((visibility("default")))

/* What the wrappers do, read once per call. */
enum acis_mode {
    ACIS_MODE_PASS = 0,   /* before MPI_Init / after MPI_Finalize: straight to PMPI */
    ACIS_MODE_OFF,        /* MPIR_CVAR_OFFLOAD=off, quiet: count, then PMPI */
    ACIS_MODE_ACTIVE      /* every call goes through acis_select() */
};

/* The progress helper thread (progress.c).  Lock ownership: look_us is
 * set at MPI_Init; thread, failed and stop are under lock; started, live
 * and parked are atomic (read without the lock on every call). */
struct acis_helper {
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int look_us;              /* MPIR_CVAR_OFFLOAD_PROGRESS_US; 0: none */
    atomic_int started;       /* the thread runs */
    int failed, stop;
    atomic_int live;          /* nonblocking collectives in flight */
    atomic_int parked;        /* asleep until one starts */
};

/* Open nonblocking calls by their requests' handles (nbreg.c): an entry
 * is part of its call's state (struct acis_exec or acis_early_req), in
 * the table from the request's allocation to its free; count is read
 * without the lock (0: MPI_Request_get_status goes straight to MPICH). */
#define ACIS_NBREG_BUCKETS 256
struct acis_nbent {
    MPI_Request handle;
    int kind;                 /* ACIS_NB_ENGINE or ACIS_NB_SHORT */
    atomic_uint bits;         /* a look under way; freed during it */
    struct acis_nbent *next;
};
enum { ACIS_NB_ENGINE = 1, ACIS_NB_SHORT };
struct acis_nbreg {
    pthread_mutex_t lock;
    struct acis_nbent *by_handle[ACIS_NBREG_BUCKETS];
    atomic_int count;
    struct acis_nbent *orphans;   /* engine calls whose request was freed
                                     running (nbc.c), linked by next */
    atomic_int norphans;          /* on orphans or being moved */
    atomic_flag sweeping;         /* a thread moves them */
    atomic_int refused;           /* a free or cancel of one was refused
                                     and said so (requests.c) */
};

/* Persistent collectives (pers.c): every acis persistent request, by its
 * handle, and those freed while running (orphans), under lock; count,
 * active and failed are atomic, read without it: with no request at all
 * MPI_Start and MPI_Request_free go straight to MPICH, and so do the wait
 * and test calls while none runs or failed (requests.c).  comm is a
 * private dup of MPI_COMM_SELF (made at MPI_Init). */
struct acis_pers;
struct acis_pers_table {
    pthread_mutex_t lock;
    struct acis_pers *by_handle[256];
    struct acis_pers *orphans;
    atomic_int count;         /* requests, orphans too */
    atomic_int active;        /* started, their collective not finished */
    atomic_int failed;        /* finished with an error not yet reported */
    atomic_int norphans;      /* on orphans */
    MPI_Comm comm;
    int next_tag, wrapped;    /* tags: one per request */
    uint64_t marks;           /* MPI_Startall's calls, to find a request twice */
};

/* Lock ownership: mode down to quick, nb_class, poke_comm and
 * fault_seed are set in MPI_Init (before any other acis thread runs) and
 * read-only until MPI_Finalize (after the helper stopped); active, coffs,
 * inflight, fixing, rejoin_after_ns and fix_nomem_warned are under the
 * device lock, whichever thread (application, progress helper, peer
 * service) touches them; redo_pending, waiters, rounds and fault_draws are
 * atomic; helper, pers and nbreg have their own locks. */
struct acis_offload_ctx {
    int mode;                 /* enum acis_mode */
    int world_rank, world_size;
    int thread_level;         /* provided by MPI_Init_thread */
    uint64_t job_key;         /* random, chosen by rank 0 at MPI_Init */
    int embedded;             /* this process runs the job's switch */
    int eager;                /* set up table rows when communicators are made */
    char switch_addr[ACIS_CVAR_STRLEN]; /* where the job's switch listens */
    int chan;                 /* its channel (enum of MPIR_CVAR_OFFLOAD_DEVICE) */
    int hier;                 /* node hierarchy: leaders use the switch */
    int hier_keyval;          /* its per-communicator state (hier.c) */
    int quick;                /* the quick path may run (short.c): a device
                                 that posts, the short path on, no node
                                 hierarchy, no VERBOSE reports to make */
    uint64_t rejoin_after_ns; /* no new try to rejoin a failed switch before */
    struct acis_coff *active; /* communicators with collectives in flight
                                 (engine.c, under the device lock) */
    struct acis_coff *coffs;  /* every communicator with offload state */
    uint32_t inflight;        /* segments out, all communicators (ditto) */
    int fixing;               /* communicators in recovery (fix.c;
                                 under the device lock, as its readers) */
    atomic_int redo_pending;  /* nonblocking calls waiting to be redone in
                                 MPICH after a switch failure (redo.c) */
    MPIX_Grequest_class nb_class; /* generalized requests of nonblocking calls */
    MPIX_Grequest_class nbs_class; /* ... of those on the short path (nbc.c) */
    atomic_int waiters;       /* threads waiting in acis_op_wait */
    MPI_Comm poke_comm;       /* a private dup of MPI_COMM_WORLD: probing it
                                 moves MPICH (a probe of MPI_COMM_SELF does not) */
    atomic_uint_fast64_t rounds; /* engine rounds so far (under the device lock) */
    uint64_t fault_seed;      /* MPIR_CVAR_OFFLOAD_FAULT_SEED mixed with the rank */
    atomic_uint_fast64_t fault_draws; /* FAULT_NOMEM's and FAULT_FORGET's draws */
    unsigned fix_nomem_warned; /* recovery ran out of memory (said once) */
    struct acis_helper helper;
    struct acis_pers_table pers;
    struct acis_nbreg nbreg;
};

extern struct acis_offload_ctx acis_oc;

/* One collective in the switch.  Lock ownership: its calling thread fills
 * it; once acis_op_start has linked it to its communicator, st and next
 * are under the device lock (any thread's progress moves it); done,
 * abandoned and failed are atomic, read by the waiter without the lock;
 * cs and blocking are read-only; stalled is the waiter's. */
struct acis_op {
    struct acis_stream st;
    struct acis_comm *cs;
    struct acis_op *next;     /* in its communicator's list */
    atomic_int done;          /* every answer in, off the lists */
    atomic_int abandoned;     /* its communicator went to MPICH first: the
                                 call is redone there (fix.c) */
    atomic_int failed;        /* the members could not finish it after a
                                 switch failure, or the switch found their
                                 packets disagreeing: the call returns an
                                 error */
    uint8_t stalled;          /* MPIR_CVAR_OFFLOAD_FAULT_STALL_MS was applied */
    uint8_t blocking;         /* its call returns only once it is finished
                                 (blocking, not an early kind), on every
                                 member: after a switch failure the members
                                 may agree on MPICH here (fix.c) */
};

/* A copy of a packet this rank sent, kept while another member may still
 * need it to finish the segment after a switch failure: the last window's
 * segments of finished collectives, and segments whose source the answer
 * overwrote (in-place reductions). */
struct acis_kept {
    uint64_t pos;
    uint32_t seq, seg, len, cap;
    uint8_t *pkt;             /* header and payload, len bytes */
};

struct acis_fix;              /* recovery state of a communicator (fix.c) */
struct acis_exec;

/* Offload state of one communicator (acis_comm.off), under the device
 * lock: its slot window, sequence numbers, collectives in flight, kept
 * packets, and after a switch failure its recovery.  Any thread reaches it
 * under that lock through acis_oc.active and acis_oc.coffs (the engine,
 * the peer service) or through its communicator's row (deliver); a call on
 * its communicator also through acis_comm.off, and only such a call reads
 * early_from and nearly without the lock (only its calls change them).
 * It is taken off those lists, and acis_comm.off and the row cleared,
 * under the lock before it is freed (acis_ct_drop_off). */
/* A blocking call on the short path, prepared (short.c): what does not
 * change between calls of the same shape on the same communicator.  Its
 * stream but for positions and buffers, its one packet but for sequence
 * number, slot and round, and where its images start: image =
 * (from_rbuf ? rbuf : sbuf) + at. */
struct acis_short {
    struct acis_stream st;        /* src_buf, dst_buf unset */
    struct acis_hdr h;            /* seq, slot, flags set per call */
    struct acis_dev_prep prep;    /* h's post, prepared (if prepped) */
    uint64_t src_at, dst_at;      /* images, from the caller's buffer */
    uint64_t pl_at;               /* the payload, from the source image */
    uint64_t own_from, own_len;   /* a scatter or gather root's block: from
                                     the caller's source buffer ... */
    uint64_t own_to;              /* ... to its result buffer */
    uint8_t src_rbuf, dst_rbuf;   /* which caller buffer each image is in */
    uint8_t has_src, has_dst;
    uint8_t early, own_block;
    uint8_t keeps;                /* the root's block is left out of its
                                     piece and its answer (own_block count) */
    uint8_t prepped;
};

/* The quick path's cache (qcache.c): calls prepared on the short path,
 * by their arguments but buffers and communicator (struct acis_qkey).
 * Only shapes whose datatypes are predefined (handles MPI never frees or
 * reuses) are kept; an entry is good while its communicator's row is
 * (ctx). */
struct acis_qkey {
    acis_coll_t coll;
    int root;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;                    /* reductions' (others: 0) */
    uint16_t sinplace, rinplace;  /* sbuf, rbuf are MPI_IN_PLACE */
};
/* No padding: two keys are equal when their bytes are (qcache.c compares
 * them whole). */
_Static_assert(sizeof(struct acis_qkey) == 7 * sizeof(int) + 2 * sizeof(uint16_t),
               "a quick-path key has no padding");
/* MPI_Reduce_scatter's counts are an array, kept beside the key for
 * communicators of up to ACIS_QCOUNTS members (a larger one's calls take
 * the ordinary way). */
#define ACIS_QCOUNTS 8
struct acis_qentry {
    struct acis_qkey key;
    int rcounts[ACIS_QCOUNTS];    /* MPI_Reduce_scatter's, nrcounts of them */
    uint32_t nrcounts;            /* 0 for every other call */
    uint64_t row;                 /* acis_qrow() it was made on; 0: empty */
    uint64_t bytes;               /* acis_select()'s message bytes (counters) */
    struct acis_short s;
};
#define ACIS_QCACHE 4
struct acis_qcache {
    struct acis_qentry e[ACIS_QCACHE];
    uint32_t next;                /* the entry replaced next */
    uint32_t last;                /* the entry found last */
};

struct acis_coff {
    struct acis_window win;
    uint32_t seq;
    struct acis_op *ops;          /* started and unfinished, oldest first */
    struct acis_coff *next_active;
    int active;                   /* on acis_oc.active */
    struct acis_comm *cs;
    struct acis_coff *next_all;   /* acis_oc.coffs */
    struct acis_kept *kept;       /* win.size entries, by position mod size */
    struct acis_fix *fix;
    struct acis_exec *execs;      /* nonblocking calls in flight, in call order */
    struct acis_early *early;     /* win.size entries, by slot, made at the first
                                     (early.c): calls a root returned from
                                     before their answers came */
    uint32_t nearly;              /* of those, answers still to take */
    uint64_t early_from;          /* no early call is out before this
                                     position (early.c) */
    struct acis_qcache quick;     /* a call on cs only (short.c, qcache.c) */
};

/* Engine: hook into the device and communicator table (a communicator's
 * acis_coff is made with its row); start a collective (st's
 * kind/op/dtype/root/total and ranges set; 0, or ACIS_OP_SOFTWARE when the
 * communicator now runs in MPICH);
 * move every collective in flight once (returns packets received, -1 on
 * channel failure); wait until a collective is done or abandoned. */
#define ACIS_OP_SOFTWARE (-2)
void acis_engine_init(void);
int acis_op_start(struct acis_op *op, struct acis_comm *cs);
int acis_engine_progress(void);
void acis_op_wait(struct acis_op *op);

/* Let MPICH move once if ACIS_POKE_NS passed since *last_ns (then reset
 * it): a peer may need this rank's point-to-point progress (a
 * rendezvous send, a collective MPICH runs) before it can send its own
 * part of the collective this rank waits for.  acis_op_wait pokes while it
 * waits; so does the poll function of a nonblocking call, as MPI_Wait on
 * a generalized request runs nothing but that function.  Collectives that
 * finish sooner never pay for a probe. */
#define ACIS_POKE_NS 50000
void acis_mpich_poke(uint64_t *last_ns);

/* The switch failed (no answer for MPIR_CVAR_OFFLOAD_TIMEOUT_MS, or a peer
 * says so): collectives of its communicators are finished by the members
 * from now on (fix.c; device lock held). */
void acis_switch_lost(const char *why);
/* The same, for a waiter (quiet since idle_since_ns) that heard nothing
 * for MPIR_CVAR_OFFLOAD_TIMEOUT_MS, once a last look confirms it
 * (acis_dev_still_silent), or whose channel failed; takes the device
 * lock. */
void acis_engine_silent(int channel_failed, uint64_t idle_since_ns);

/* Fault injection (MPIR_CVAR_OFFLOAD_FAULT_STALL_MS): op's waiter, whose
 * read found nothing while a repeat is unanswered, pauses as if
 * descheduled, once per collective, before it judges the silence. */
void acis_fault_stall(struct acis_op *op);

/* Keep a copy of segment k of st (keep.c; device lock held). */
void acis_keep(struct acis_coff *co, const struct acis_stream *st, uint32_t k);

/* Take an answer for op's segment: keep the source first if the answer
 * overwrites it (keep.c).  Returns acis_stream_answer's result. */
int acis_take_answer(struct acis_coff *co, struct acis_op *op, const struct acis_hdr *h,
                     const uint8_t *payload);

/* Recovery (fix.c).  The peer service's answer to another rank's ask
 * (runs on the service thread); finishing the oldest collective of a
 * communicator whose switch failed from the members' own packets, and
 * deciding when every member goes to MPICH (device lock held); reading
 * replies (device lock held); waiting for them; issuing the MPICH calls
 * of abandoned collectives in order, on the communicator's dup (no lock
 * held; before any later call on the dup, and whenever a rank next enters
 * acis for that communicator, so that they start soon). */
size_t acis_fix_serve(void *arg, const struct acis_hdr *ask, uint8_t *reply);
int acis_fix_progress(struct acis_coff *co);
int acis_fix_input(void);
void acis_fix_wait(void);
/* Break co's communicator, saying what (unless NULL: said already) if it
 * was ready: every collective open on it, and every later one acis would
 * offload, fails with MPI_ERR_INTERN.  On a communicator broken already
 * it fails what is open still (device lock held). */
void acis_fix_break(struct acis_coff *co, const char *what);
/* Free co's recovery state, if any (device lock held: acis_oc.fixing). */
void acis_fix_free(struct acis_coff *co);
/* Redoing nonblocking calls in MPICH after a switch failure (redo.c):
 * mark x to be redone (acis_redo_mark, below the struct); start cs's
 * marked calls, in call order; the same for comm's before a call of the
 * user's goes to MPICH.  A call acis would offload on c->cs but the
 * switch cannot serve (taken back, or c->failed_over) runs in MPICH after
 * those, on the communicator's private dup, as on every member:
 * acis_call_redo. */
void acis_redo_drain(struct acis_comm *cs);
void acis_redo_before(MPI_Comm comm);
int acis_call_redo(const struct acis_call *c);
/* Nonblocking calls are listed on their communicator while in flight, so
 * a move to MPICH redoes them in call order: 0, or ACIS_OP_SOFTWARE when
 * the communicator already runs in MPICH. */
int acis_exec_link(struct acis_exec *x);
void acis_exec_unlink(struct acis_exec *x);

/* Every rank that needs it joins the switch again after a failure
 * (connect.c), collective over comm: 0 if every member has a device. */
int acis_rejoin(MPI_Comm comm);

/* A rank's data in wire form: in place, or packed into tmp (or into a
 * buffer the caller lent). */
struct acis_image {
    uint8_t *p;
    uint64_t len;
    void *tmp;
    int lent;                 /* p is the caller's: unpack from it, never free it */
};

/* Where a rank's data lives: count elements of type at buf, or with
 * counts/displs (v-variants) one block per rank, in rank order.  count
 * is an MPI_Count: a run of every rank's block (gather, scatter,
 * reduce-scatter) passes INT_MAX while each count the caller gave fits
 * an int. */
struct acis_buf {
    void *buf;
    MPI_Count count;
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
/* The image of b if it can be used where it is (nothing to pack or
 * allocate): 0 with im filled, else -1. */
int acis_image_view(struct acis_image *im, const struct acis_buf *b, int wire);
/* acis_image_in and acis_image_out without memory of their own: in place,
 * or in buf (cap bytes; packed bytes only, no copy of a dense source).
 * 0, or -1 if it does not fit or MPICH would not pack it. */
int acis_image_lend_in(struct acis_image *im, const struct acis_buf *b, uint8_t *buf,
                       uint64_t cap, MPI_Comm comm);
int acis_image_lend(struct acis_image *im, const struct acis_buf *b, uint8_t *buf,
                    uint64_t cap);

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
/* After it, at a gatherv or scatterv root: the first rank whose block, as
 * it told it, is not the bytes the root's counts give it (an erroneous
 * program: MPI asks for equal type signatures), or -1; -1 elsewhere. */
int acis_plan_sizes_differ(const struct acis_call *c, const uint64_t *blocks);

/* One offloaded call from start to finish: the size exchange (v-variants),
 * then the collective itself; redone in MPICH if its communicator went to
 * MPICH before it finished (nonblocking calls through an inner request).
 * Lock ownership: the thread in the call, or the one completing its
 * request (MPI allows one at a time); next_exec is under the device lock
 * (acis_coff.execs), redo atomic, op as struct acis_op says. */
struct acis_exec {
    struct acis_call c;
    struct acis_plan p;
    struct acis_image src, dst;
    struct acis_op op;
    uint64_t mine, *blocks;   /* v-variants */
    const uint64_t *sizes;    /* v-variants: every rank's block, known to
                                 the starter (pers.c): no exchange */
    int phase;                /* enum acis_phase */
    int err;                  /* what the call returns (MPI_SUCCESS, or
                                 MPI_ERR_NO_MEM when this rank failed) */
    atomic_int redo;          /* nonblocking, after a switch failure: 1 to be
                                 redone in MPICH, 2 redone (inner is
                                 MPICH's request) */
    MPI_Datatype held[2];     /* nonblocking: dups of the caller's derived
                                 stype, rtype (MPI_DATATYPE_NULL if none) */
    struct acis_nbent ent;    /* nonblocking: its generalized request's
                                 handle, its entry in acis_oc.nbreg */
    MPI_Request inner;
    uint64_t poked;           /* nonblocking: when it last let MPICH move */
    uint64_t quiet_since;     /* nonblocking: since when its polls heard
                                 nothing while it waited (0: not polled) */
    uint64_t polled;          /* nonblocking: when its last poll returned */
    struct acis_exec *next_exec; /* acis_coff.execs */
    int finished;             /* nonblocking: complete, and complete() ran */
    void (*complete)(struct acis_exec *x); /* nonblocking: what its starter
                                 does when x is complete (nbc.c: complete
                                 the generalized request; pers.c: the
                                 persistent request's receive) */
    uint8_t *spare;           /* blocking: 2 * ACIS_EARLY_MAX bytes of the
                                 caller's frame, for data of a member that
                                 must not abstain (source, then result) */
};

enum acis_phase { ACIS_PHASE_SIZES = 1, ACIS_PHASE_MAIN, ACIS_PHASE_DONE };

/* Mark x to be redone in MPICH (the members agreed on MPICH: fix.c, or
 * nbc.c when a phase says so); whoever completes x then starts it there
 * (acis_redo_drain).  A record, not a call up: any stage may set it. */
static inline void acis_redo_mark(struct acis_exec *x)
{
    int none = 0;
    if (atomic_compare_exchange_strong(&x->redo, &none, 1))
        atomic_fetch_add(&acis_oc.redo_pending, 1);
}

/* An error acis itself gives a call on comm goes through comm's error
 * handler first, as MPICH's own errors do (MPI_ERRORS_ARE_FATAL, the
 * default, ends the job; MPI_ERRORS_RETURN hands the code back): a code
 * alone would let an application that never checks go on with a wrong
 * result.  Returns code.  Errors of nonblocking calls surface in the
 * completion call, through MPICH. */
int acis_raise(MPI_Comm comm, int code);
/* A call acis would offload on a broken communicator (fix.c): its
 * request (nonblocking) is MPI_REQUEST_NULL, and it fails with
 * MPI_ERR_INTERN as on every member. */
int acis_call_broken(const struct acis_call *c);

/* The same call made to MPICH, with the caller's arguments (pmpi.c). */
int acis_call_pmpi(const struct acis_call *c);

/* Start x (x->c filled): 0, or ACIS_OP_SOFTWARE if x must run in MPICH
 * instead, or -1 when this rank failed (x->err says how; x is done).
 * After x->op is done: go on to the next phase, 1 when x is complete
 * (x->err set if this rank could not unpack), ACIS_OP_SOFTWARE or -1 as
 * before (-1 with MPI_ERR_NO_MEM on every member when a member abstained
 * from a nonblocking call).  Nothing here aborts. */
int acis_exec_start(struct acis_exec *x);
int acis_exec_step(struct acis_exec *x);
int acis_exec_complete(const struct acis_exec *x);
/* Free what x holds for the switch (it runs in MPICH instead). */
void acis_exec_drop(struct acis_exec *x);
/* Blocking: start, wait for every phase, finish: an MPI error code, or
 * ACIS_OP_SOFTWARE when the call must be redone in MPICH (the caller does
 * it: acis_call_redo). */
int acis_exec_run(struct acis_exec *x);

/* Nonblocking calls: a generalized request whose poll function moves the
 * engine.  acis_nb_init at MPI_Init. */
int acis_nb_init(void);

/* MPI_Request_get_status on r: 0 if r is not an open nonblocking call of
 * acis's.  Else 1: the call is moved once, as MPI_Test does (MPICH alone
 * would not), and *flag, *status and *rc are what MPICH's answer would
 * be (from the call's own state: MPICH is not asked, so it runs no query
 * function and no error handler under any acis lock); *flag is 0 while
 * another thread looks at the call. */
int acis_nb_get_status(MPI_Request r, int *flag, MPI_Status *status, int *rc);

/* The table of open nonblocking calls (nbreg.c).  Setup at MPI_Init.
 * add: e (part of a call's state) for request r of kind.  drop: at the
 * request's free, out of the table; 1 if the state may be freed now, 0 if
 * a look at it is under way (its leave says to free it).  has: 1 if r is
 * one of them (MPI_Request_free and MPI_Cancel refuse it).  take: 1 if r
 * is acis's, with *e its entry taken for one look, or NULL if another
 * thread looks; else 0.  enter: take e for one look (0: another thread has it); leave:
 * give it back, 1 if the request was freed meanwhile (the caller frees
 * the state). */
void acis_nbreg_setup(void);
void acis_nbreg_add(struct acis_nbent *e, MPI_Request r, int kind);
int acis_nbreg_drop(struct acis_nbent *e);
int acis_nbreg_has(MPI_Request r);
int acis_nbreg_take(MPI_Request r, struct acis_nbent **e);
int acis_nbent_enter(struct acis_nbent *e);
int acis_nbent_leave(struct acis_nbent *e);
int acis_nb_start(const struct acis_call *c);
/* Engine calls whose request was freed while they ran (past acis:
 * PMPI_Request_free) are moved by later nonblocking calls (starts, polls) and finished at
 * MPI_Finalize (wait), so they let their communicator go. */
void acis_nb_orphans(int wait);
/* A nonblocking barrier, broadcast, scatter, gather or allgather (coll) with arguments a on
 * the quick path (short.c), its request in *req: 1 with the start's
 * result, 0 if it takes the ordinary way (nothing was changed). */
struct acis_qargs;
int acis_nb_quick(acis_coll_t coll, const struct acis_qargs *a, MPI_Request *req, int *rc);
/* The same machinery for a call started by another stage (pers.c): hold
 * x->c's communicator and derived datatypes (dups, used from then on) and
 * release them; start x (x->c, x->complete set) in the switch, or in
 * MPICH on the communicator's dup when it went there first (redone); move
 * it once (1 once complete: x->complete has run) or until complete. */
void acis_nb_hold(struct acis_exec *x);
void acis_nb_release(struct acis_exec *x);
void acis_nb_launch(struct acis_exec *x);
void acis_nb_launch_redone(struct acis_exec *x);
int acis_nb_poll(struct acis_exec *x);
void acis_nb_wait(struct acis_exec *x);

/* Persistent collectives (pers.c): the private communicator (MPI_Init,
 * 0 or -1); make the request of a call selected for offload; start it
 * if r is acis's (1, *rc set) or say it is not (0); whether one of
 * acis's requests is twice in r[0..n-1] (1, *rc MPI_ERR_REQUEST raised;
 * MPICH would post its receive twice and lose one); start the collective
 * of r if acis's, once MPI_Startall had MPICH start its receive; move it
 * once or until its collective finished (1 finished, 0 running, -1 not acis's); the
 * error its last start finished with, once (and its communicator, for
 * the handler); free it if acis's (1, *rc set); finish and free every one
 * at MPI_Finalize. */
int acis_pers_setup(void);
int acis_pers_init(const struct acis_call *c);
int acis_pers_start(MPI_Request *r, int *rc);
int acis_pers_twice(int n, const MPI_Request r[], int *rc);
void acis_pers_started(MPI_Request r);
int acis_pers_poll(MPI_Request r, int wait);
int acis_pers_err(MPI_Request r, MPI_Comm *comm);
int acis_pers_free(MPI_Request *r, int *rc);
/* Move the requests freed while running, if any: every collective call
 * and MPI_Comm_free does, so they finish (and give their communicator's
 * row back) in a program that never waits or tests again. */
void acis_pers_tidy(void);
void acis_pers_finalize(void);

/* The progress helper: set up at MPI_Init; a nonblocking collective
 * enters when it is offloaded (the first starts the thread) and leaves
 * when its request completes; stopped at MPI_Finalize. */
void acis_helper_init(void);
void acis_helper_enter(void);
void acis_helper_leave(void);
void acis_helper_stop(void);

/* Run a call that acis_select() chose to offload, or failed over:
 * through the node hierarchy where it applies, else flat (failed over: in
 * MPICH on the communicator's dup, acis_call_redo).  Returns an MPI error
 * code.  run.c and flat.c; run.c gives the order of the stages. */
int acis_offload_run(struct acis_call *c);
int acis_offload_flat(struct acis_call *c);

/* The short path (short.c): a blocking call of one segment whose buffers
 * are used in place, on a channel that posts in place (acis_dev_post),
 * while nothing else is in flight -- the same packet the engine would
 * send, without the engine.  1 with *rc the call's result if it ran the
 * call, 0 if the call takes the engine (nothing was touched).  Off with
 * MPIR_CVAR_OFFLOAD_SHORT_PATH=0. */
int acis_short_run(struct acis_call *c, int *rc);
/* The same for a nonblocking call (nbc.c): prepare c in s (1, or 0 if it
 * does not qualify); then run it as s says, for q, the request that
 * completes when its answer is taken: 1 with *rc the start's result and
 * q->done set if it finished at once (else its answer comes for q:
 * early.c, late.c), or 0 if it takes the engine (nothing was touched). */
struct acis_early_req;
int acis_short_nb_prepare(const struct acis_call *c, struct acis_short *s);
int acis_short_nb_go(const struct acis_call *c, const struct acis_short *s,
                     struct acis_early_req *q, int *rc);

/* If the answer to the post t is there, take it into st, whose one
 * packet it was (device lock held): 1 with *rc 0, or -1 if the switch
 * could not serve it (acis_stream_take); else 0.  The short path's and
 * early.c's (inline: early.c may not call short.c, which calls it). */
static inline int acis_short_answer(struct acis_stream *st, struct acis_window *w,
                                    const struct acis_dev_ticket *t, int *rc)
{
    struct acis_dev_result r;
    int got;
    if (!acis_dev_answered(t) || (got = acis_dev_result(t, &r)) == ACIS_DEV_WAITING)
        return 0;
    *rc = acis_stream_take(st, w,
                           got == ACIS_DEV_DONE        ? ACIS_TAKE_DATA
                           : got == ACIS_DEV_ABSTAINED ? ACIS_TAKE_ABSTAINED
                                                       : ACIS_TAKE_FAILED,
                           r.data, r.off, r.len);
    return 1;
}

/* The arguments of a call the quick path serves, named as in
 * struct acis_call (the entry points fill both with the same
 * initializers, intercept.c): all the quick path reads of a call, so the
 * entry point fills these few words and not a whole struct acis_call
 * before it. */
struct acis_qargs {
    const void *sbuf;
    void *rbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Op op;
    int root;
    MPI_Comm comm;
    const int *rcounts;           /* MPI_Reduce_scatter's (others: NULL) */
};
static inline struct acis_qargs acis_qargs_of(const struct acis_call *c)
{
    return (struct acis_qargs){ .sbuf = c->sbuf, .rbuf = c->rbuf, .scount = c->scount,
                                .rcount = c->rcount, .stype = c->stype, .rtype = c->rtype,
                                .op = c->op, .root = c->root, .comm = c->comm,
                                .rcounts = c->rcounts };
}

/* The quick path (short.c), before acis_select(): a blocking barrier,
 * broadcast, scatter, gather, allgather, reduce, allreduce,
 * reduce_scatter_block, scan or exscan with arguments a, whose
 * shape the short path prepared before on this communicator, runs from
 * the cached preparation, counted and decided as acis_select() would.  1
 * with *rc the call's result, 0 if the call takes the ordinary way
 * (nothing was counted or changed). */
int acis_short_quick(acis_coll_t coll, const struct acis_qargs *a, int *rc);
/* The same in two steps, for the nonblocking forms (nbc.c, which makes
 * the request between them): the entry of the call and its communicator
 * (*csp), or NULL; run it for q (NULL: blocking), as acis_short_quick
 * does. */
struct acis_qentry *acis_short_quick_find(acis_coll_t coll, const struct acis_qargs *a,
                                          struct acis_comm **csp);
int acis_short_quick_go(acis_coll_t coll, const struct acis_qargs *a, struct acis_comm *cs,
                        const struct acis_qentry *e, struct acis_early_req *q, int *rc);

/* The quick path's cache (qcache.c): the key of a call coll with
 * arguments a; the entry on co of a call of key k (and counts rcounts,
 * for MPI_Reduce_scatter) on the row ctx, or NULL (the one found last is
 * looked at first, inline: it is on every quick call); keep c (selected:
 * acis_select() filled it), prepared as s, on co if its shape can be (its
 * datatypes that count on rank, and its op, are predefined). */
static inline struct acis_qkey acis_qkey_of(acis_coll_t coll, const struct acis_qargs *a)
{
    struct acis_qkey k = { .coll = coll, .root = a->root, .scount = a->scount,
                           .rcount = a->rcount, .stype = a->stype, .rtype = a->rtype,
                           .op = a->op, .sinplace = a->sbuf == MPI_IN_PLACE,
                           .rinplace = a->rbuf == MPI_IN_PLACE };
    return k;
}
/* The row an entry is made on: the communicator's context id in the epoch
 * of the switch it was set up on (after a rejoin a row of the same id is
 * another row, on another switch, and the entry's prepared post is not
 * for it); 0 for none. */
static inline uint64_t acis_qrow(const struct acis_comm *cs)
{
    return cs->ctx ? (uint64_t)cs->epoch << 32 | cs->ctx : 0;
}
static inline int acis_qentry_is(const struct acis_qentry *e, const struct acis_qkey *k,
                                 uint64_t row, const int *rcounts)
{
    return row && e->row == row && memcmp(&e->key, k, sizeof *k) == 0 &&
           (!e->nrcounts ||
            (rcounts && memcmp(e->rcounts, rcounts, e->nrcounts * sizeof(int)) == 0));
}
struct acis_qentry *acis_qcache_search(struct acis_coff *co, const struct acis_qkey *k,
                                       uint64_t row, const int *rcounts);
static inline struct acis_qentry *acis_qcache_find(struct acis_coff *co,
                                                   const struct acis_qkey *k, uint64_t row,
                                                   const int *rcounts)
{
    struct acis_qentry *e = &co->quick.e[co->quick.last];
    if (acis_qentry_is(e, k, row, rcounts))
        return e;                       /* the shape of the call before */
    return acis_qcache_search(co, k, row, rcounts);
}
void acis_qcache_keep(struct acis_coff *co, const struct acis_call *c, int rank, uint64_t row,
                      const struct acis_short *s);

/* Early returns (early.c).  A member of a blocking broadcast, scatter or
 * gather of at most ACIS_EARLY_MAX bytes that has nothing to receive (the
 * root of a broadcast or scatter, a leaf of a gather) returns, on the
 * short path, once its packet is posted, as MPICH's senders return once
 * their data is out; its answer is taken later.  So no member of such a
 * call abstains (exec.c): a member that has returned would not be there
 * to redo the call in MPICH.  Every member tells such a call from its
 * kind and size alone, whatever path the others took.  16 KiB (4 KiB
 * until 2026-11-29): a 2-rank gather or scatter of 4 KiB blocks returns
 * early too (bench/ab.sh: -23 to -28 %); a blocking call's frame holds
 * twice this to borrow from (exec.c). */
#define ACIS_EARLY_MAX 16384
static inline int acis_early_kind(unsigned kind, uint64_t total)
{
    return (kind == ACIS_K_BCAST || kind == ACIS_K_SCATTER || kind == ACIS_K_GATHER) &&
           total <= ACIS_EARLY_MAX;
}
/* A nonblocking call on the short path whose answer is to come
 * (nbc.c's request, early.c, late.c): done once its answer is taken
 * (with err the call's error, or 0), under the device lock. */
struct acis_early_req {
    _Atomic int done;
    int err;
    int completed;                /* its request was completed (nbc.c) */
    int orphan;                   /* ... freed before that: late.c frees q */
    struct acis_comm *cs;         /* held while the request is open */
    struct acis_nbent ent;        /* its request's handle, its entry in
                                     acis_oc.nbreg */
    uint64_t poked;               /* when its poll last let MPICH move */
    uint64_t polled;              /* when its last poll returned */
    uint64_t quiet_since;         /* when it was first polled (0: never) */
    const uint8_t *own_from;      /* a gather root's block, copied to own_to */
    uint8_t *own_to;              /*   when the call succeeded (short.c) and */
    uint64_t own_len;             /*   counted in own_block then */
};
/* An early call: part of its communicator's acis_coff (co->early, by
 * slot), under the device lock as it; req: a nonblocking call's whose
 * request waits for the answer, else NULL. */
struct acis_early {
    struct acis_stream st;
    struct acis_dev_ticket t;
    struct acis_early_req *req;
};
/* co's early calls, made at the first: NULL without memory. */
struct acis_early *acis_early_make(struct acis_coff *co);
/* Where the short path builds an early call on slot (free, device lock
 * held): its stream and ticket in co's early calls (0, or -1 without
 * memory for them: the caller waits for the answer instead); once
 * posted, that it is out, its answer to be taken later (for q's request,
 * or NULL).  Inline: on every such call. */
static inline int acis_early_room(struct acis_coff *co, uint32_t slot, struct acis_stream **st,
                                  struct acis_dev_ticket **t)
{
    if (!co->early && !acis_early_make(co))
        return -1;
    *st = &co->early[slot].st;
    *t = &co->early[slot].t;
    return 0;
}
static inline void acis_early_kept(struct acis_coff *co, uint32_t slot,
                                   struct acis_early_req *q)
{
    co->win.owner[slot] = &co->early[slot].st;     /* the answer finds it there */
    co->early[slot].req = q;
    co->nearly++;
}
/* Take co's early answers that came, oldest first, up to the first
 * still out (device lock held, late.c): that one, or NULL. */
struct acis_early *acis_early_sweep(struct acis_coff *co);
/* The answer to st, q's call, was taken (late.c): q is done, with
 * MPI_ERR_INTERN if it failed (the members' packets disagreed),
 * MPI_ERR_NO_MEM (said) if a member abstained, else no error. */
void acis_early_req_answered(struct acis_early_req *q, const struct acis_stream *st,
                             int failed);
/* Break co's communicator (acis_fix_break, what as there), and fail every
 * nonblocking call whose early answer is still out: it may never come, a
 * member that broke first never posts its packet (device lock held). */
void acis_early_break(struct acis_coff *co, const char *what);
/* The same, and whether the first still out holds the slot of co's next
 * segment (acis_early_settle waits for it then). */
int acis_early_holds_next(struct acis_coff *co);
/* Wait for co's early answer on the slot of its next segment (all: for
 * every one); until q's answer is taken; take what came and say whether
 * q's is (never waits).  Each takes the device lock itself.  co->early is
 * freed with co (engine.c). */
void acis_early_settle(struct acis_coff *co, int all);
void acis_early_wait(struct acis_coff *co, const struct acis_early_req *q);
int acis_early_test(struct acis_coff *co, const struct acis_early_req *q);
/* While q's answer is out, sleep on the oldest early call still out, as
 * a waiter quiet since idle_since_ns does (not before
 * MPIR_CVAR_OFFLOAD_SPIN_US of quiet, 1 ms at most): a short-path post
 * is on no list of the channel's that acis_dev_wait could sleep on. */
void acis_early_nap(struct acis_coff *co, const struct acis_early_req *q, uint64_t idle_since_ns);

/* The node hierarchy (hier.c): its keyval (when acis_oc.hier), run c
 * hierarchically if it has a plan there (1, *rc set) or say it has not
 * (0); drop a communicator's state; free the keyval. */
int acis_hier_init(void);
int acis_hier_run(struct acis_call *c, int *rc);
void acis_hier_release(MPI_Comm comm);
void acis_hier_finalize(void);

/* Join the switch on every rank or on none (collective over
 * MPI_COMM_WORLD); 0 when every rank has a device.  Leave it again. */
int acis_connect(void);
void acis_disconnect(void);

/* Fault injection (fault.c).  MPIR_CVAR_OFFLOAD_FAULT_NOMEM (blocking
 * calls) and _NOMEM_NB (the others): 1 if this call acts as if its
 * buffers could not be had. */
int acis_fault_nomem(acis_coll_t coll);
/* MPIR_CVAR_OFFLOAD_FAULT_NOMEM_SETUP: 1 if this communicator set-up
 * acts as if acis's state for it could not be allocated (tests). */
int acis_fault_nomem_setup(void);
/* MPIR_CVAR_OFFLOAD_FAULT_NOMEM_REQUEST: 1 if this nonblocking call acts
 * as if MPICH could not allocate its request (tests). */
int acis_fault_nomem_request(void);

/* Tell src/fallback which entry points have drivers. */
void acis_run_init(void);

/* Rank 0 prints the MPIR_CVAR_OFFLOAD_STATS table; collective over
 * MPI_COMM_WORLD. */
void acis_summary_print(void);

#endif
