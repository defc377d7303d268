/* sw.h -- internals of the switch core, shared by its files only: host
 * ports, links to other switches and jobs (forwarding table),
 * communicator table rows with their aggregation slots, and the counters.
 * Other folders use switch.h. */
#ifndef ACIS_SW_H
#define ACIS_SW_H

#include <stdlib.h>
#include <sys/socket.h>

#include "switch.h"

#define SW_NONE 0xffffffffu
#define SW_JOIN 1
#define SW_LEAVE 2

/* Buffers handed to the reduction kernels start at a multiple of this
 * (a cache line; more than any element type needs). */
#define SW_ALIGN 64

static inline size_t sw_round(size_t n)
{
    return (n + SW_ALIGN - 1) / SW_ALIGN * SW_ALIGN;
}

/* Memory for kernel buffers: SW_ALIGN-aligned, n rounded up. */
static inline void *sw_alloc(size_t n)
{
    return aligned_alloc(SW_ALIGN, sw_round(n ? n : 1));
}

/* A port: one process of one job, or (link) a switch below this one in a
 * fabric, behind which any number of processes of any jobs sit. */
struct sw_port {
    uint8_t in_use;
    uint8_t link;            /* a child switch, not a host */
    uint32_t job;            /* hosts: index into jobs */
    uint32_t rank;           /* hosts: global rank in the job */
    uint8_t waiting;         /* hosts below a parent: WELCOME waits until the
                                top of the tree knows the rank */
    uint32_t hello_seq;      /* the HELLO it answers */
};

/* A job: its key and forwarding table (global rank -> the port the rank
 * is on, or the link it is below). */
struct sw_job {
    uint8_t in_use;
    uint64_t key;
    uint32_t size;           /* MPI_COMM_WORLD size */
    uint32_t joined;         /* ranks here or below */
    uint32_t hosts;          /* of them on host ports here */
    uint32_t rows;           /* table rows held */
    uint32_t *rank_port;     /* size entries, SW_NONE until HELLO */
    uint8_t *owed;           /* with a parent: size entries, what the parent
                                has not confirmed of each rank (SW_JOIN,
                                SW_LEAVE or 0); the job stays until none */
    uint32_t *seqs;          /* with a parent: size entries, the seq of
                                what this switch last told of each rank (low
                                16 bits; confirmations must echo it) and of
                                what it last heard from below (high 16) */
    uint32_t nowed;
};

/* One use of an aggregation slot: a segment of one collective. */
struct sw_use {
    uint8_t busy;            /* claimed by a segment */
    uint8_t done;            /* complete: kept to answer repeats */
    uint8_t kind, alg, op, dtype, round;
    uint8_t have_first;      /* buf holds a contribution already */
    uint8_t abstained;       /* a member sent ACIS_F_ABSTAIN: nothing is
                                combined, every member is told so */
    uint8_t up;              /* complete here, sent to the parent switch,
                                waiting for its answer */
    uint32_t dups;           /* repeats from children while up */
    uint32_t placed;         /* VAR gathers: bytes placed so far */
    uint32_t lo, hi;         /* gather-type: the span of bytes placed */
    uint32_t up_off, up_len; /* the part of the segment asked of the parent */
    uint32_t next;           /* ordered reductions: children 0..next-1 are
                                folded into buf, in order */
    uint32_t seq, seg, root;
    uint64_t total;          /* result-space bytes of the collective */
    uint64_t base;           /* first byte of the segment */
    uint32_t len;            /* bytes in the segment */
    uint32_t arrived;        /* children counted in bits */
    uint64_t *bits;          /* child bitmap */
    uint32_t *rx_off, *rx_len;   /* what each child asked back */
    uint8_t *buf;            /* the segment being built, or its result */
    uint8_t **held;          /* ordered reductions: pieces that came before
                                their turn (children entries, allocated at
                                the first such piece; NULL: none yet) */
    uint8_t *contrib;        /* scans: every member's piece */
};

/* An aggregation slot with a shadow copy (as in SwitchML): the current use
 * and the previous, complete one.  A member sends a slot's next segment
 * only after it has the previous answer, so once the current use is
 * complete every member has the previous one and it can be dropped; until
 * then a repeated packet of the previous segment gets its answer again. */
struct sw_slot {
    struct sw_use u[2];
    uint8_t cur;             /* index of the current use */
};

/* A communicator table row.  Its children are the ports it aggregates:
 * member hosts on this switch and links to switches with members below,
 * in the order of the lowest communicator rank each serves (on a single
 * switch: child i is member i).  O(radix) memory, never O(members). */
struct sw_ct {
    uint8_t in_use;
    uint8_t links;           /* some child is a switch */
    uint16_t gen;            /* bumped on reuse, part of the context id */
    uint32_t job;
    uint32_t size;           /* members of the communicator, fabric-wide */
    uint32_t nchild;
    uint32_t levels;         /* switches from here down to the hosts, this
                                one included (the timing model) */
    uint32_t *port_child;    /* ports entries, SW_NONE if not a child */
    uint32_t *child_port;    /* nchild entries */
    uint32_t *child_rank;    /* nchild: a host's communicator rank, SW_NONE
                                for a link */
    uint32_t creator_rank, creator_req;   /* makes CT_CREATE idempotent */
    uint32_t creator_port;   /* where the request came in: the answer's way */
    uint32_t waiting;        /* links that have not confirmed CT_INSTALL; the
                                row answers its creator (or parent) at 0 */
    uint8_t *acked;          /* nchild entries: a link confirmed */
    uint32_t window;         /* slots of this row */
    struct sw_slot *slots;
};

struct acis_sw {
    struct acis_sw_opts o;
    struct acis_sw_io io;
    struct sw_port *ports;   /* o.ports */
    struct sw_job *jobs;     /* njobs */
    struct sw_ct *cts;       /* o.tables */
    uint32_t window;         /* slots per row: o.slots / o.tables */
    uint32_t boot;           /* random, drawn at creation (WELCOME) */
    uint8_t *scratch;        /* o.payload bytes, aligned: a piece whose
                                packet buffer is not aligned goes here */
    uint32_t *group;         /* o.ports entries: the children answered by
                                one multicast (cgr.c, emit_all) */
    uint8_t *grouped;        /* o.ports flags: a child has its answer */
    uint8_t up;              /* a parent switch is on ACIS_PORT_UPLINK: rows
                                are installed by it, segments complete there */
    uint64_t asked_ns;       /* when a segment went up with nothing heard
                                from the parent since (0: heard since) */
    uint32_t njobs;          /* entries of jobs */
    uint32_t nlinks;         /* link ports given out by link HELLO */
    uint64_t last_tick;
    uint64_t c[ACIS_SWC_COUNT];
};

/* What every switch (cgr.c, shmsw.c) asks of a collective kind. */
static inline int sw_is_reduction(unsigned kind)
{
    return kind == ACIS_K_REDUCE || kind == ACIS_K_ALLREDUCE ||
           kind == ACIS_K_REDUCE_SCATTER || kind == ACIS_K_SCAN ||
           kind == ACIS_K_EXSCAN;
}

static inline int sw_is_scan(unsigned kind)
{
    return kind == ACIS_K_SCAN || kind == ACIS_K_EXSCAN;
}

static inline int sw_rooted(unsigned kind)
{
    return kind == ACIS_K_BCAST || kind == ACIS_K_REDUCE ||
           kind == ACIS_K_GATHER || kind == ACIS_K_SCATTER;
}

/* Segment geometry every host computes the same way: whole elements per
 * packet for reductions, bytes otherwise. */
static inline uint32_t sw_seg_bytes(uint32_t payload, unsigned kind, unsigned dt)
{
    uint32_t es = sw_is_reduction(kind) ? (uint32_t)acis_wire_dt_size(dt) : 1;
    return es ? payload / es * es : payload;
}

/* Is this packet a HELLO?  A HELLO is a service packet even from a
 * sender that has a port (a host repeating it, its WELCOME lost). */
static inline int sw_is_hello(const uint8_t *pkt, size_t len)
{
    return len >= ACIS_HDR_LEN && ACIS_OPC_KIND(pkt[5]) == ACIS_K_HELLO;
}

#define SWC(sw, name) ((sw)->c[ACIS_SWC_##name])

/* reduce.c, reduce_avx2.c, reduce_avx512.c: kernels, inout op= in for n
 * elements.  The tables of the vector builds hold the types kern.h
 * covers; the rest are NULL there. */
typedef void (*sw_kernel)(unsigned op, void *inout, const void *in, size_t n);
extern const sw_kernel sw_kernels_base[ACIS_DT_COUNT];
extern const sw_kernel sw_kernels_avx2[ACIS_DT_COUNT];
extern const sw_kernel sw_kernels_avx512[ACIS_DT_COUNT];

/* addrmap.c: source address -> host port, for the UDP switch's one
 * socket.  addr[port] is where port's host is (len 0: no port). */
struct sw_peer {
    struct sockaddr_storage a;
    socklen_t len;
};

struct sw_addrmap {
    uint32_t ports, mask;
    uint32_t *table;         /* mask + 1 entries: port + 1, 0 empty */
    struct sw_peer *addr;    /* ports entries */
};

int sw_addrmap_init(struct sw_addrmap *m, uint32_t ports);
int sw_peer_same(const struct sw_peer *a, const struct sw_peer *b);
void sw_addrmap_free(struct sw_addrmap *m);
uint32_t sw_addrmap_find(const struct sw_addrmap *m, const struct sw_peer *p);
int sw_addrmap_add(struct sw_addrmap *m, uint32_t port, const struct sw_peer *p);
void sw_addrmap_del(struct sw_addrmap *m, uint32_t port);

/* control.c: control plane (HELLO, CT_CREATE/FREE, STATS, BYE); jobs by
 * key, a new job (SW_NONE: no room); a CT_CREATE or CT_FREE of rank
 * h->src of job, that came in on port. */
void sw_control(struct acis_sw *sw, uint32_t port, const void *peer,
                const struct acis_hdr *h, const uint8_t *payload);
uint32_t sw_find_job(const struct acis_sw *sw, uint64_t key);
uint32_t sw_job_new(struct acis_sw *sw, uint64_t key, uint32_t world);
/* Release job j if no rank is here or below and the parent owes nothing. */
void sw_job_done(struct acis_sw *sw, uint32_t j);
/* WELCOME the host on port, whose join the top of the tree confirmed;
 * or refuse it with status (the top cannot take the job) and free its
 * port. */
void sw_welcome_host(struct acis_sw *sw, uint32_t port);
void sw_refuse_host(struct acis_sw *sw, uint32_t port, uint32_t status);
void sw_ct_request(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h,
                   const uint8_t *payload);
/* Answer a CT_CREATE of h on port with a refusal. */
void sw_ct_refuse(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h, uint32_t status);
/* The top of the tree answers the creator of row: status (the row is
 * dropped unless it is OK). */
void sw_ct_created(struct acis_sw *sw, uint32_t row, uint32_t status);

/* A row combines here and answers (top of its tree), or a link is
 * involved (pieces of children are combined spans, scans cannot be
 * served). */
static inline int sw_fabric_row(const struct acis_sw *sw, const struct sw_ct *ct)
{
    return sw->up || ct->links;
}

/* The parent has not answered for a second since it was asked: this
 * switch stops telling its members it is alive (PENDING), so their own
 * silence timers find the failure, as they would the switch's. */
#define SW_PARENT_SILENT_NS 1000000000ull
static inline int sw_parent_silent(const struct acis_sw *sw)
{
    return sw->asked_ns && acis_now_ns() - sw->asked_ns > SW_PARENT_SILENT_NS;
}

/* tables.c: rows and their slot memory.  sw_ct_alloc claims a free row
 * (every member must be here or below); sw_ct_install builds row ctx as
 * a parent said, with the members that are here or below. */
int sw_ct_alloc(struct acis_sw *sw, uint32_t job, const uint32_t *ranks,
                uint32_t n, uint32_t *row);
int sw_ct_install(struct acis_sw *sw, uint32_t job, uint32_t ctx, const uint32_t *ranks,
                  uint32_t n);
void sw_ct_free(struct acis_sw *sw, uint32_t row);
struct sw_ct *sw_ct_lookup(struct acis_sw *sw, uint32_t ctx);
uint32_t sw_ct_ctx(const struct acis_sw *sw, uint32_t row);
void sw_job_release(struct acis_sw *sw, uint32_t job);

/* cgr.c: a data packet from child of row ct; the parent's answer to a
 * segment this switch sent up. */
void sw_cgr_input(struct acis_sw *sw, struct sw_ct *ct, uint32_t child,
                  const struct acis_hdr *h, const uint8_t *payload);
void sw_cgr_down(struct acis_sw *sw, struct sw_ct *ct, const struct acis_hdr *h,
                 const uint8_t *payload);

/* link.c: control messages to and from linked switches: a message up to
 * the parent (h's fields, kind and payload as given); a row's CT_INSTALL
 * to its links that have not confirmed it (counted in waiting), and
 * CT_FREE to all; what came from a child link or from the parent. */
void sw_link_up(struct acis_sw *sw, unsigned kind, const struct acis_hdr *h,
                const uint8_t *payload, size_t len);
/* Rank of job is now here or below (join) or gone: the parent is told
 * until it confirms; the job is released once gone and confirmed. */
void sw_link_rank(struct acis_sw *sw, uint32_t job, uint32_t rank, int join);
void sw_link_tick(struct acis_sw *sw);
void sw_link_install(struct acis_sw *sw, uint32_t row, const uint8_t *members, size_t len);
void sw_link_free(struct acis_sw *sw, uint32_t row);
void sw_link_control(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                     const uint8_t *payload);
void sw_uplink_control(struct acis_sw *sw, const struct acis_hdr *h, const uint8_t *payload);

/* Send a header with payload pieces to ports (builds, seals, sends). */
void sw_emit(struct acis_sw *sw, const uint32_t *ports, uint32_t n,
             struct acis_hdr *h, const void *p1, size_t l1);

#endif
