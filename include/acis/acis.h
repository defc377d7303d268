/* acis.h -- public extras of libacis: which collectives it intercepts, why a
 * call went to software, and the counters behind MPIR_CVAR_OFFLOAD_STATS.
 *
 * An application needs none of this: relinking with -lacis or preloading
 * libacis.so is enough.  Programs and tests that want to see what acis did
 * include this header and call the functions below after MPI_Init. */
#ifndef ACIS_ACIS_H
#define ACIS_ACIS_H

#include <stdint.h>
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every intercepted MPI collective entry point, blocking and nonblocking.
 * The list itself lives in acis/colls.h so one table drives the enum, the
 * names and the wrappers. */
typedef enum {
#define ACIS_COLL(id, name, blocking, cvar, form) ACIS_COLL_##id,
#include <acis/colls.h>
#undef ACIS_COLL
    ACIS_COLL_COUNT
} acis_coll_t;

/* The three forms of a collective entry point. */
typedef enum { ACIS_FORM_BLOCKING, ACIS_FORM_NONBLOCKING, ACIS_FORM_PERSISTENT } acis_form_t;

/* Why a call did not go to the switch.  ACIS_REASON_NONE means offloaded. */
typedef enum {
#define ACIS_REASON(id, text) ACIS_REASON_##id,
#include <acis/reasons.h>
#undef ACIS_REASON
    ACIS_REASON_COUNT
} acis_reason_t;

/* Counters of one entry point on the calling process. */
struct acis_coll_stats {
    uint64_t calls;                        /* times the entry point was called */
    uint64_t offloaded;                    /* of those, executed in the switch */
    uint64_t software;                     /* of those, run by MPICH (PMPI) */
    uint64_t bytes;                        /* message bytes over all calls */
    uint64_t offloaded_bytes;              /* message bytes of offloaded calls */
    uint64_t by_reason[ACIS_REASON_COUNT]; /* software calls, by reason */
};

/* Host-side traffic counters of the calling process. */
struct acis_host_stats {
    uint64_t packets_sent, packets_received;
    uint64_t bytes_sent, bytes_received;
    uint64_t packets_dropped;              /* received but invalid, by the host */
    uint64_t comms_offloaded;              /* communicators with a switch table entry */
    uint64_t comms_refused;                /* communicators that fell back at setup */
    uint64_t retransmits;                  /* packets sent again after a timeout */
    uint64_t switch_failures;              /* times this process saw the switch fail */
    uint64_t recovered;                    /* collectives the members finished
                                              themselves after it failed */
    uint64_t peer_segments;                /* segments finished from the other
                                              members' packets */
    uint64_t peer_served;                  /* packets given to members recovering */
    uint64_t redone;                       /* collectives begun in the switch and
                                              redone in MPICH after it failed,
                                              or because a member abstained */
    uint64_t hier_calls;                   /* collectives run through the node
                                              hierarchy (leaders used the switch) */
    uint64_t helper_rounds;                /* engine rounds the progress helper
                                              ran while the application was
                                              away from acis */
    uint64_t recovery_failed;              /* times the members could not finish
                                              a collective after a switch failure:
                                              its calls returned MPI_ERR_INTERN */
    uint64_t abstained;                    /* offloaded calls this process could
                                              not take part in (no memory after
                                              the decision): it sent no data and
                                              every member redid the call in MPICH */
    uint64_t short_path;                   /* offloaded calls run on the short
                                              path (one segment posted straight
                                              to the shared-memory switch;
                                              nonblocking ones too; one redone
                                              in MPICH after an abstention
                                              counts as redone) */
    uint64_t early_return;                 /* of those, calls a broadcast or scatter
                                              root (a gather leaf) returned from
                                              once its packet was posted, before
                                              the other members had theirs */
    uint64_t own_block;                    /* gathers and scatters this process
                                              was the root of that kept its own
                                              block at home: copied locally, its
                                              segments neither sent nor answered */
    uint64_t packets_foreign;              /* datagrams that came to this process's
                                              switch channel from anyone but its
                                              switch (before the join: the service
                                              address; after: its host port),
                                              dropped unread */
    uint64_t persistent_starts;            /* MPI_Start of this process's acis
                                              persistent collectives (their
                                              MPI_*_init count as calls of
                                              the entry point) */
    uint64_t quick_path;                   /* of the short path's calls, those
                                              run from what an earlier call of
                                              the same shape prepared, past
                                              selection (the quick path) */
    uint64_t home_answers;                 /* answers the UDP switch this process
                                              hosts handed it in place, not as
                                              datagrams (counted in
                                              packets_received too) */
    uint64_t home_requests;                /* data packets this process handed
                                              the UDP switch it hosts in place,
                                              not as datagrams (counted in
                                              packets_sent too) */
};

/* Fill *out with the counters of one entry point.  Returns 0, or -1 if coll
 * is out of range or out is NULL. */
int acis_get_stats(acis_coll_t coll, struct acis_coll_stats *out);

/* Fill *out with this process's host traffic counters.  Returns 0 or -1. */
int acis_get_host_stats(struct acis_host_stats *out);

/* Zero every counter of the calling process. */
void acis_reset_stats(void);

/* Counters of the switch this job uses (a round trip to it): up to max
 * values in the order of ACIS_SWITCH_COUNTERS in acis/wire.h (index with
 * ACIS_SWC_*).  Returns how many were filled, or -1 when the job has no
 * switch. */
int acis_get_switch_stats(uint64_t *values, int max);

/* What the switch told this process when it joined. */
struct acis_switch_info {
    uint32_t payload;        /* data bytes per packet */
    uint32_t window;         /* aggregation slots per communicator */
    uint32_t tables;         /* communicator table rows */
    uint32_t ports;          /* host ports (radix) */
    uint32_t credits;        /* packets this process may have in flight */
};

/* Fill *out; 0, or -1 when the job has no switch. */
int acis_get_switch_info(struct acis_switch_info *out);

/* "MPI_Allreduce" for ACIS_COLL_ALLREDUCE; NULL when out of range. */
const char *acis_coll_name(acis_coll_t coll);

/* The blocking form of an entry point (ACIS_COLL_ALLREDUCE for
 * ACIS_COLL_IALLREDUCE and ACIS_COLL_ALLREDUCE_INIT), and its form; the
 * entry point itself and -1 when out of range. */
acis_coll_t acis_coll_blocking(acis_coll_t coll);
int acis_coll_form(acis_coll_t coll);

/* Short, stable identifier of a reason ("op_user"); NULL when out of range. */
const char *acis_reason_name(acis_reason_t reason);

/* One-line explanation of a reason for people; NULL when out of range. */
const char *acis_reason_text(acis_reason_t reason);

/* Whether collectives on comm can be offloaded.  Returns 1 if comm has a
 * switch table entry (built now if it has none yet: collective over comm,
 * every member must call it), 0 if not, and then *why (if not NULL) says
 * why. */
int acis_comm_offloaded(MPI_Comm comm, acis_reason_t *why);

#ifdef __cplusplus
}
#endif
#endif
