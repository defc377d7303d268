/* commtable.h -- the one header of src/commtable: what acis knows about each
 * communicator (cached on it with an MPI attribute, freed with it) and its
 * row in the switch's communicator table, created collectively so that
 * every member agrees whether the communicator is offloaded.
 *
 * State: struct acis_commtable_ctx acis_ct (below). */
#ifndef ACIS_COMMTABLE_H
#define ACIS_COMMTABLE_H

#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "acis/acis.h"

#define ACIS_REPORT_WORDS ((ACIS_COLL_COUNT * ACIS_REASON_COUNT + 63) / 64)

enum acis_ct_state {
    ACIS_CT_UNKNOWN = 0,      /* not set up yet */
    ACIS_CT_READY,            /* has a switch row */
    ACIS_CT_REFUSED,          /* no row: MPICH, for reason refused */
    ACIS_CT_FAILED,           /* its switch failed; every member agreed to
                                 use MPICH from a given collective on */
    ACIS_CT_BROKEN            /* its switch failed and the members could
                                 not finish a collective: offloadable calls
                                 return MPI_ERR_INTERN on every member */
};

/* Who may touch a struct acis_comm (lock ownership).  MPI has one thread
 * at a time in a collective call on a given communicator; that thread (or
 * one completing a nonblocking call that holds a reference) is "a call on
 * cs" below.  The device lock (acis_dev_lock) guards what threads that
 * find cs by its context id read -- the engine's deliver(), the peer
 * service, acis_comm_by_ctx -- and cs is freed only when no call is on it
 * (the user freed it, no reference is left, the members' closing barrier
 * is done), after acis_ct_drop_off took its state out of their sight
 * under that lock.  So:
 *   comm, size, rank, inter, granks: set before the row is published,
 *       read-only after (comm is cleared by the delete callback, in
 *       MPI_Comm_free's thread);
 *   reported: a call on cs;
 *   state, refused, ctx, window, payload, no_scan, own_block, epoch,
 *       boot: written under the device lock (set-up, a switch failure, a
 *       broken collective); a call on cs reads them without it;
 *   off: set and cleared under the device lock; a call on cs may read it
 *       without the lock and keep it across an unlock (nothing frees it
 *       while a call is on cs); a thread that found cs by context id only
 *       under the lock, and must not keep it past the unlock;
 *   refs: atomic;  shadow, fin, closing, next_closing: acis_ct.closing_lock
 *       once cs is on the closing list, a call on cs before. */
struct acis_comm {
    MPI_Comm comm;
    int size, rank;
    int inter;                            /* intercommunicator */
    uint64_t reported[ACIS_REPORT_WORDS]; /* (entry point, reason) already
                                             reported by VERBOSE */
    /* the switch table row */
    int state;                            /* enum acis_ct_state */
    acis_reason_t refused;                /* why, when REFUSED */
    uint32_t ctx;                         /* context id from the switch */
    uint32_t window;                      /* aggregation slots of the row */
    uint32_t payload;                     /* data bytes per packet */
    int no_scan;                          /* the row spans linked switches:
                                             scans stay in software */
    int scan_split;                       /* scan segments are split among the
                                             members (ACIS_CT_SCAN_SPLIT) */
    int own_block;                        /* the switch lets a gather or scatter
                                             root keep its own block at home
                                             (ACIS_CT_OWN_BLOCK) */
    uint32_t epoch;                       /* acis_ct.epoch when set up */
    uint32_t boot;                        /* the switch's boot id (names it
                                             to the other members) */
    uint32_t *granks;                     /* members' global ranks */
    int strict_order;                     /* its info asserts
                                             mpi_assert_strict_persistent_
                                             collective_ordering (a call on
                                             cs, or its constructor) */
    void *off;                            /* src/offload's state, freed by
                                             acis_ct.off_free */
    /* lifetime: the communicator's attribute holds one reference, each
       nonblocking call in flight one more (acis_comm_hold).  An offloaded
       communicator keeps a private dup (shadow), made with the row on
       every member or on none, so that, after the user frees it, the
       members can agree that all of them are done with the row (an MPICH
       Ibarrier on the shadow) before rank 0 gives it back; calls acis
       would offload but the switch cannot serve run there too
       (src/offload/fix.c), under the user's error handler. */
    atomic_int refs;
    MPI_Comm shadow;                      /* MPI_COMM_NULL if none */
    MPI_Request fin;                      /* that Ibarrier, once started */
    int closing;                          /* on acis_ct.closing */
    struct acis_comm *next_closing;
};

/* The state of comm, created on first use (not collective).  NULL only if
 * memory or MPI failed. */
struct acis_comm *acis_comm_get(MPI_Comm comm);

/* Make sure cs has a switch table row: collective over cs->comm the first
 * time (every member must call it at the same point), then free.  Returns
 * ACIS_REASON_NONE if the row is ready, else why not.  rejoin: when some
 * member's switch failed, called by all (collective) to join it again if
 * it is back (0: every member has a device); NULL: never use it again. */
acis_reason_t acis_comm_setup(struct acis_comm *cs, int (*rejoin)(MPI_Comm comm));


/* The switch this process joins again has rows rows (more than before?). */
int acis_commtable_resize(uint32_t rows);

/* The offloaded communicator with context id ctx, or NULL. */
struct acis_comm *acis_comm_by_ctx(uint32_t ctx);

/* Drop comm's state now (MPI_Finalize does this for MPI_COMM_WORLD and
 * MPI_COMM_SELF while the device is still up). */
void acis_comm_release(MPI_Comm comm);

/* A pending operation keeps cs alive past MPI_Comm_free / lets it go (no
 * MPI call: safe anywhere).  The communicator a call made after the user
 * freed it can use (the shadow; cs->comm until then). */
void acis_comm_hold(struct acis_comm *cs);
void acis_comm_drop(struct acis_comm *cs);
MPI_Comm acis_comm_handle(const struct acis_comm *cs);

/* The user set comm's error handler (MPI_Comm_set_errhandler): the same
 * on its shadow, if it has one. */
void acis_comm_errhandler(MPI_Comm comm, MPI_Errhandler eh);

/* Finish freeing communicators whose user handle is gone and that no
 * operation uses any more: start the members' Ibarrier on the shadow,
 * and when it completes give the row back and free the state.  wait: until
 * every such communicator is gone (MPI_Finalize).  Not collective. */
void acis_comm_reap(int wait);

/* Inside this folder: give cs's row back (comm.c's delete callback);
 * free src/offload's state of cs, if any (a refused set-up, or the end). */
void acis_ct_release_row(struct acis_comm *cs);
void acis_ct_drop_off(struct acis_comm *cs);

/* After PMPI_Init, with the number of switch table rows (0: no device) /
 * before PMPI_Finalize. */
int acis_commtable_init(uint32_t rows);
void acis_commtable_finalize(void);

/* Lock ownership: keyval, off_new, off_unhook, off_free, threaded are set
 * at MPI_Init and read-only until MPI_Finalize; rows, by_row and epoch
 * change under the device lock (set-up, drop, rejoin) and are read under
 * it by any thread that looks up a context id; device_lost is atomic;
 * closing under closing_lock (nclosing, atomic, lets a reader skip the
 * lock when the list is empty); last only without MPI_THREAD_MULTIPLE. */
struct acis_commtable_ctx {
    int keyval;                           /* MPI_KEYVAL_INVALID when down */
    uint32_t rows;                        /* switch table rows */
    struct acis_comm **by_row;            /* offloaded communicators by row */
    int (*off_new)(struct acis_comm *cs, uint32_t window);
                                          /* makes acis_comm.off for a row
                                             of window slots: 0, or -1 (no
                                             memory: every member refuses) */
    void (*off_unhook)(void *off);        /* takes acis_comm.off off every
                                             list another thread walks
                                             (device lock held) */
    void (*off_free)(void *off);          /* then frees it (no lock) */
    void (*off_window)(void *off, uint32_t window);   /* the row's window, at
                                             most the one off_new was given */
    atomic_int device_lost;               /* the switch of this epoch failed */
    uint32_t epoch;                       /* switches joined so far, minus
                                             one: rows of an older epoch are
                                             on a switch that failed */
    struct acis_comm *last;               /* the last one looked up (a cache;
                                             its delete callback clears it) */
    int threaded;                         /* MPI_THREAD_MULTIPLE: no cache */
    struct acis_comm *closing;            /* freed by the user, not yet by
                                             acis (under closing_lock) */
    atomic_int nclosing;                  /* how many are on it */
    pthread_mutex_t closing_lock;
};

extern struct acis_commtable_ctx acis_ct;

/* 1 if cs's row was on a switch that has since failed (its collectives
 * are finished by the members themselves, see src/offload/fix.c).
 * Inline: the short path asks on every call. */
static inline int acis_comm_lost(const struct acis_comm *cs)
{
    return cs->epoch != acis_ct.epoch || atomic_load(&acis_ct.device_lost);
}

#endif
