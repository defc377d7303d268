/* sw.h -- internals of the switch core, shared by its files only: host
 * ports, links to other switches, jobs, set-ups in progress, communicator
 * table rows, the aggregation pool and the counters.  Other folders use
 * switch.h.
 *
 * The switch is a model of one that could be built: every table has a
 * fixed number of fixed-size entries and, with the pool, is allocated once
 * when the switch is created (layout.c says where each lives).  Nothing
 * here grows with the number of ranks, a message's length or what a
 * packet claims: per row, per job and per set-up a switch keeps bits or
 * counts per port, never anything per rank. */
#ifndef ACIS_SW_H
#define ACIS_SW_H

#include <pthread.h>
#include <stdlib.h>
#include <sys/socket.h>

#include "switch.h"

#define SW_NONE 0xffffffffu

/* For the few helpers of the per-packet path that must be in line. */
#if defined(__GNUC__)
#define SW_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define SW_ALWAYS_INLINE inline
#endif

/* Buffers handed to the reduction kernels start at a multiple of this
 * (a cache line; more than any element type needs). */
#define SW_ALIGN 64

static inline size_t sw_round(size_t n)
{
    return (n + SW_ALIGN - 1) / SW_ALIGN * SW_ALIGN;
}

/* Memory for kernel buffers outside the switch's own tables (transports):
 * SW_ALIGN-aligned, n rounded up. */
static inline void *sw_alloc(size_t n)
{
    return aligned_alloc(SW_ALIGN, sw_round(n ? n : 1));
}

/* Port bitmaps: one bit per port, sw->words 64-bit words. */
static inline int sw_bit(const uint64_t *b, uint32_t i)
{
    return (int)(b[i / 64] >> (i % 64) & 1);
}
static inline void sw_bit_set(uint64_t *b, uint32_t i)
{
    b[i / 64] |= 1ull << (i % 64);
}
static inline void sw_bit_clear(uint64_t *b, uint32_t i)
{
    b[i / 64] &= ~(1ull << (i % 64));
}
/* Set bits of b below i: a port's position among a row's ports. */
static inline uint32_t sw_bit_rank(const uint64_t *b, uint32_t i)
{
    uint32_t n = 0;
    for (uint32_t w = 0; w < i / 64; w++)
        n += (uint32_t)__builtin_popcountll(b[w]);
    return n + (uint32_t)__builtin_popcountll(b[i / 64] & ((1ull << (i % 64)) - 1));
}

/* A port: one process of one job, or (link) a switch below this one in a
 * fabric, behind which any number of processes of any jobs sit. */
struct sw_port {
    uint8_t in_use;
    uint8_t link;            /* a child switch, not a host */
    uint8_t waiting;         /* a host below a parent: its WELCOME waits until
                                the top of the tree knows its job */
    uint8_t memory;          /* hosts: on loopback and offered unsealed data
                                packets (ACIS_HELLO_UNSEALED): they may come
                                so, and answers to it alone go so */
    uint8_t held;            /* not in use, but its host's job (job) lives on:
                                the job's rows may still name the port, so
                                only that job may take it (its answers carry
                                the job's key) until the job leaves */
    uint32_t job;            /* hosts: index into jobs */
    uint32_t rank;           /* hosts: global rank in the job; links: the
                                child switch's boot id */
    uint32_t lidx;           /* links: index among links (set-up counts) */
    uint32_t hello_seq;      /* the HELLO it answers */
};

/* A job on this switch: its key and world size, and where it is here:
 * host ports of it, and links with ranks of it below (LINK_JOIN).  With a
 * parent, whether the parent has confirmed the job is (or is no longer)
 * here and below.  O(ports) bits, never a per-rank table. */
struct sw_job {
    uint8_t in_use;
    uint8_t told;            /* the parent's last confirmation: 1 the job is
                                known at the top (always, with no parent) */
    uint8_t asked;           /* with a parent: a LINK_JOIN went up that no
                                confirmed LINK_LEAVE has undone yet */
    uint64_t key;
    uint32_t size;           /* MPI_COMM_WORLD size */
    uint32_t hosts;          /* host ports of it here */
    uint32_t nlinks;         /* links it is below */
    uint32_t rows;           /* table rows held */
    uint32_t setups;         /* set-ups in progress */
    uint64_t *links;         /* words: the link ports it is below */
    uint64_t *unconfirmed;   /* words: links whose LINK_JOIN waits for the
                                top's confirmation */
};

/* A communicator set-up in progress (CT_JOIN): members counted per port
 * until the top of the tree has them all; then the row is installed down
 * the links that have members and, once they confirm, every member is
 * answered.  Named by (job, leader, id). */
struct sw_setup {
    uint8_t in_use;
    uint8_t installed;       /* the row is built here (row, waiting) */
    uint32_t job, leader, id;
    uint32_t size;           /* members of the communicator, fabric-wide */
    uint32_t here;           /* members counted here and below */
    uint32_t row;            /* once installed */
    uint32_t waiting;        /* links that have not confirmed the install */
    uint32_t levels;         /* switches from here down, for the model */
    uint32_t window, payload;    /* what every switch from here down serves */
    uint64_t last_ns;        /* last sign of life: an idle one is reclaimed */
    uint64_t *hosts;         /* words: member hosts here */
    uint64_t *acked;         /* words: links that confirmed the install */
    uint32_t *count;         /* o.links entries: members below each link */
};

/* An out-of-order piece of an ordered (floating-point) reduction, kept in
 * a hold buffer of the pool until its turn; tag names the use. */
struct sw_hold {
    uint32_t use;            /* index of the use + 1 (0: free) */
    uint32_t key;            /* its place in the fold order */
    uint8_t *buf;
};

/* One use of an aggregation slot: a segment of one collective.  Lives in
 * the pool with its buffer and bitmaps (layout.c). */
struct sw_use {
    uint8_t busy;            /* claimed by a segment */
    uint8_t done;            /* complete: kept to answer repeats */
    uint8_t kind, alg, op, dtype, round;
    uint8_t have_first;      /* buf holds a contribution already */
    uint8_t abstained;       /* a member sent ACIS_F_ABSTAIN, or the pieces
                                did not tile: nothing is answered but the
                                refusal, every member redoes the call */
    uint8_t up;              /* complete here, sent to the parent switch,
                                waiting for its answer */
    uint8_t want_any;        /* some child asked for bytes back */
    uint8_t quick;           /* a reduction in any order, or a barrier: the
                                next pieces may take quick.c's path */
    uint32_t dups;           /* repeats from children while up */
    uint32_t placed;         /* gather-type: bytes placed by hosts */
    uint32_t lo, hi;         /* gather-type: the span of bytes placed */
    uint32_t want_lo, want_hi;   /* the hull of what children asked back */
    uint32_t up_off, up_len; /* the part of the segment asked of the parent */
    uint32_t next;           /* ordered reductions: the fold has every piece
                                before this place in the order */
    uint32_t held;           /* pieces in hold buffers */
    uint32_t seq, seg, root;
    uint64_t total;          /* result-space bytes of the collective */
    uint64_t base;           /* first byte of the segment */
    uint32_t len;            /* bytes in the segment */
    uint32_t ne;             /* reductions: elements in the segment */
    uint32_t arrived;        /* children counted in bits */
    uint8_t disagreed;       /* a child's packet of this segment did not
                                match it, or a switch below said its members
                                disagree: every child's repeat is answered
                                ERROR and it never completes; with abstained,
                                the parent said so: ERROR alone goes down.
                                Here, in the padding before bits: a use
                                stays 128 bytes */
    uint64_t *bits;          /* words: children (ports) in */
    uint64_t *want;          /* words: children that asked for bytes back */
    uint64_t *cover;         /* gather-type: one bit per byte placed */
    uint8_t *buf;            /* the segment being built, or its result;
                                scans: every member's piece */
};
_Static_assert(sizeof(struct sw_use) <= 16 * sizeof(void *),
               "a use is two cache lines on LP64: every slot of the pool has two");

/* An aggregation slot with a shadow copy (as in SwitchML): the current use
 * and the previous, complete one.  A member sends a slot's next segment
 * only after it has the previous answer, so once the current use is
 * complete every member has the previous one and it can be dropped; until
 * then a repeated packet of the previous segment gets its answer again. */
struct sw_slot {
    struct sw_use u[2];
    uint64_t tmpl[ACIS_HDR_LEN / 8];  /* a quick use's first header, as sent:
                                         quick.c compares the use's next
                                         pieces to it, and the first of the
                                         slot's next segment */
    uint8_t cur;             /* index of the current use */
};

/* A communicator table row: what one switch needs to aggregate a
 * communicator -- its ports (member hosts here, links with members below),
 * the key of the set-up that made it, the window of slots it owns in the
 * pool.  Children are the row's ports in port order; on a single switch
 * every child is a host and a packet names its member (hdr.member). */
struct sw_ct {
    uint8_t in_use;
    uint8_t links;           /* some child is a switch */
    uint8_t flags;           /* the CT_REPLY flags the top gave the members
                                (ACIS_CT_*): every switch answers a repeated
                                CT_JOIN with the same */
    uint8_t levels;          /* switches from here down to the hosts, this
                                one included (the timing model), < 256 */
    uint16_t gen;            /* bumped on reuse, part of the context id */
    uint8_t worker;          /* the worker that serves its packets (row
                                modulo the workers, < ACIS_SW_MAX_THREADS;
                                0 with one) */
    uint32_t job;
    uint32_t size;           /* members of the communicator, fabric-wide */
    uint32_t nchild;         /* ports set in ports */
    uint32_t leader, id;     /* the set-up that made it */
    uint32_t window;         /* slots the members use (every switch of the
                                row has at least these) */
    uint32_t payload;        /* bytes per packet they send */
    uint32_t free_port;      /* a host here asked to free it (SW_NONE: none);
                                answered once the top freed it */
    uint32_t free_seq, free_src;
    uint64_t *ports;         /* words: the row's children */
    struct sw_slot *slots;   /* window entries, in the pool */
};

/* The pool: every row's slots and the hold buffers. */
struct sw_pool {
    struct sw_slot *slots;   /* tables x window */
    struct sw_hold *hold;    /* nhold: worker w's rows use the w-th of
                                as many equal shares as there are workers */
    uint32_t nhold;
};

/* reduce.c, reduce_avx2.c, reduce_avx512.c: kernels, inout op= in for n
 * elements.  The tables of the vector builds hold the types kern.h
 * covers; the rest are NULL there. */
typedef void (*sw_kernel)(unsigned op, void *inout, const void *in, size_t n);
extern const sw_kernel sw_kernels_base[ACIS_DT_COUNT];
extern const sw_kernel sw_kernels_avx2[ACIS_DT_COUNT];
extern const sw_kernel sw_kernels_avx512[ACIS_DT_COUNT];

/* The set acis_reduce uses, a kernel (or NULL) for every type: what a
 * switch calls directly for a piece whose op and type it checked. */
const sw_kernel *sw_kernels_best(void);

/* quick.c: a packet into the switch (acis_sw_input): the quick path takes
 * it whole or hands it, nothing done, to the full checks (input.c);
 * sw_quick_best picks the build this CPU runs.  A packet is len bytes:
 * its header at pkt, the rest at payload (pkt + ACIS_HDR_LEN but for one
 * taken in place: acis_sw_input_split). */
struct acis_sw;
typedef void sw_quick_fn(struct acis_sw *sw, uint32_t port, const void *peer,
                         const uint8_t *pkt, const uint8_t *payload, size_t len);
sw_quick_fn *sw_quick_best(void);
void sw_full_input(struct acis_sw *sw, uint32_t port, const void *peer, const uint8_t *pkt,
                   const uint8_t *payload, size_t len);

struct acis_sw {
    struct acis_sw_opts o;
    struct acis_sw_io io;
    struct acis_sw_size size; /* what layout.c carved */
    void *mem;               /* the one allocation everything lives in */
    struct sw_port *ports;   /* o.ports */
    struct sw_job *jobs;     /* size.jobs */
    struct sw_ct *cts;       /* o.tables */
    struct sw_setup *setups; /* size.setups */
    struct sw_pool pool;
    uint32_t window;         /* slots per row */
    uint32_t words;          /* 64-bit words of a port bitmap */
    uint32_t boot;           /* random, drawn at creation (WELCOME) */
    const sw_kernel *kern;   /* the best kernel set this CPU runs, by wire
                                type (reduce.c) */
    sw_quick_fn *quick;      /* quick.c's path, built for this CPU */
    uint8_t *scratch;        /* o.payload bytes, aligned: a piece whose
                                packet buffer is not aligned, a scan prefix */
    uint32_t *group;         /* o.ports entries: ports answered alike */
    uint32_t *group2;
    uint32_t *kids;          /* o.ports entries: the children of row
                                kids_row in port order (kids_n of them),
                                kept from one segment to the next: every
                                child is answered alike in most */
    uint32_t kids_row, kids_n;   /* SW_NONE: none kept */
    uint8_t up;              /* a parent switch is on ACIS_PORT_UPLINK: rows
                                are installed by it, segments complete there */
    uint64_t asked_ns;       /* when a segment went up with nothing heard
                                from the parent since (0: heard since) */
    uint32_t nlinks;         /* link ports given out */
    uint64_t last_tick;
    /* Workers (o.threads, acis-switchd --threads): each serves the rows
     * it owns (sw_ct.worker) through its own view of the switch -- a
     * struct acis_sw sharing every table and the pool, with its own
     * counters, scratch, port lists, transport and share of the hold
     * buffers.  A worker holds its lock while it handles packets
     * (acis_sw_enter); the control plane, and a data packet that reached
     * a worker not its row's, run with every lock held (input.c), on
     * view 0 and on the row's worker's view.  One worker: no lock. */
    uint32_t worker;         /* this view's */
    uint32_t nworkers;
    struct acis_sw **views;  /* nworkers; views[0] is the switch itself */
    pthread_mutex_t *locks;  /* nworkers */
    uint64_t c[ACIS_SWC_COUNT];   /* this view's; acis_sw_counters sums them */
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

/* The switch's counters: every worker's summed (gauges are view 0's
 * alone but held, whose share of a worker the control plane may give
 * back on view 0: the sum wraps right). */
static inline void sw_counters(const struct acis_sw *sw, uint64_t *out)
{
    for (int i = 0; i < ACIS_SWC_COUNT; i++)
        out[i] = sw->views[0]->c[i];
    for (uint32_t w = 1; w < sw->nworkers; w++)
        for (int i = 0; i < ACIS_SWC_COUNT; i++)
            out[i] += sw->views[w]->c[i];
}

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

/* layout.c: where every table and the pool live in one allocation; with
 * base NULL only the sizes (acis_sw_size). */
int sw_layout(struct acis_sw *sw, const struct acis_sw_opts *o, void *base,
              struct acis_sw_size *out, char *err, size_t errlen);

/* The files call one another in one direction only (test/layering.sh
 * checks there is no circle): core -> control, link -> jobs -> setup,
 * ports, cgr -> emit -> tables -> pool; layout stands alone.
 *
 * emit.c: send a header with a payload to ports (builds, seals, sends);
 * answer a host's port or the sender on the service address; a reply's
 * header for req; control to the parent, to a link, CT_FREE down a row's
 * links. */
void sw_emit(struct acis_sw *sw, const uint32_t *ports, uint32_t n,
             struct acis_hdr *h, const void *p1, size_t l1);
void sw_answer(struct acis_sw *sw, uint32_t port, const void *peer, struct acis_hdr *r,
               const uint8_t *payload, size_t len);
void sw_reply_header(const struct acis_hdr *req, unsigned kind, struct acis_hdr *r);
void sw_link_up(struct acis_sw *sw, unsigned kind, const struct acis_hdr *h,
                const uint8_t *payload, size_t len);
void sw_link_send(struct acis_sw *sw, uint32_t port, struct acis_hdr *h,
                  const uint8_t *payload, size_t len);
void sw_link_free(struct acis_sw *sw, uint32_t row);

/* ports.c: a WELCOME with status to port (or, ACIS_PORT_SERVICE, to peer);
 * WELCOME the host on port, whose job the top of the tree confirmed, or
 * refuse it with status and free its port; free a host's port. */
void sw_welcome(struct acis_sw *sw, uint32_t port, const void *peer, const struct acis_hdr *h,
                uint32_t status);
void sw_welcome_host(struct acis_sw *sw, uint32_t port);
void sw_refuse_host(struct acis_sw *sw, uint32_t port, uint32_t status);
void sw_port_gone(struct acis_sw *sw, uint32_t port);

/* jobs.c: a job's presence.  Tell the parent whether job j is here or
 * below; the tick tells again what is not confirmed; a child's LINK_JOIN
 * or LINK_LEAVE on port; the parent's confirmation; release a job nothing
 * holds any more (once the parent knows), with its rows and set-ups. */
void sw_link_job(struct acis_sw *sw, uint32_t job);
void sw_link_tick(struct acis_sw *sw);
void sw_job_moved(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                  const uint8_t *payload);
void sw_job_told(struct acis_sw *sw, const struct acis_hdr *h);
void sw_job_done(struct acis_sw *sw, uint32_t j);
void sw_job_release(struct acis_sw *sw, uint32_t job);

/* control.c: the control plane of hosts (HELLO, CT_JOIN, CT_FREE, STATS,
 * BYE) and its dispatch to links (link.c). */
void sw_control(struct acis_sw *sw, uint32_t port, const void *peer,
                const struct acis_hdr *h, const uint8_t *payload);

/* tables.c: jobs and rows.  Jobs by key, a new job (SW_NONE: no room). */
uint32_t sw_find_job(const struct acis_sw *sw, uint64_t key);
uint32_t sw_job_new(struct acis_sw *sw, uint64_t key, uint32_t world);
/* A job is here or below (hosts or links hold it). */
static inline int sw_job_present(const struct sw_job *j)
{
    return j->hosts + j->nlinks > 0;
}
/* Claim a free row for the set-up (ACIS_ST_*; *row on success); build row
 * ctx as a parent said; drop a row. */
int sw_ct_alloc(struct acis_sw *sw, const struct sw_setup *su, uint32_t *row);
int sw_ct_install(struct acis_sw *sw, const struct sw_setup *su, uint32_t ctx);
void sw_ct_free(struct acis_sw *sw, uint32_t row);
/* The row a context id names (its row and generation), or NULL. */
static inline struct sw_ct *sw_ct_lookup(struct acis_sw *sw, uint32_t ctx)
{
    uint32_t row = (ctx & 0xffff) - 1;
    struct sw_ct *ct = row < sw->o.tables ? &sw->cts[row] : NULL;
    return ct && ct->in_use && ct->gen == ctx >> 16 ? ct : NULL;
}

uint32_t sw_ct_ctx(const struct acis_sw *sw, uint32_t row);
/* Row `row` is built or dropped: no worker keeps its children listed. */
static inline void sw_kids_forget(struct acis_sw *sw, uint32_t row)
{
    for (uint32_t w = 0; w < sw->nworkers; w++)   /* every worker paused */
        if (sw->views[w]->kids_row == row)
            sw->views[w]->kids_row = SW_NONE;
}

/* The ready row of a set-up (SW_NONE: none). */
uint32_t sw_ct_of_setup(const struct acis_sw *sw, uint32_t job, uint32_t leader, uint32_t id);
/* The row's children (ports), in port order, into sw->group; how many. */
uint32_t sw_ct_children(const struct acis_sw *sw, const struct sw_ct *ct, uint32_t *out);

/* setup.c: a row's life: set-up (CT_JOIN counted per port, CT_INSTALL
 * down, CT_REPLY to every member); CT_FREE of row ctx of job (from a host
 * or a link on port, or from the parent: ACIS_PORT_UPLINK). */
void sw_ct_free_request(struct acis_sw *sw, uint32_t port, uint32_t job,
                        const struct acis_hdr *h);
void sw_setup_join(struct acis_sw *sw, uint32_t port, uint32_t job, const struct acis_hdr *h,
                   const uint8_t *payload);
void sw_setup_install(struct acis_sw *sw, uint32_t job, const struct acis_hdr *h,
                      const uint8_t *payload);
void sw_setup_confirmed(struct acis_sw *sw, uint32_t port, uint32_t job,
                        const struct acis_hdr *h, const uint8_t *payload);
void sw_setup_reply_down(struct acis_sw *sw, uint32_t job, const struct acis_hdr *h,
                         const uint8_t *payload);
void sw_setup_drop_job(struct acis_sw *sw, uint32_t job);

/* pool.c: a row's slots and the hold buffers. */
void sw_pool_bind(struct acis_sw *sw, struct sw_ct *ct, uint32_t row);
void sw_pool_reset_row(struct acis_sw *sw, struct sw_ct *ct);
void sw_use_reset(struct acis_sw *sw, struct sw_use *u);
/* A hold buffer for key of use u (NULL: none free); the one holding key
 * (NULL: none); give one back; give back all of u's. */
uint8_t *sw_hold_take(struct acis_sw *sw, struct sw_use *u, uint32_t key);
struct sw_hold *sw_hold_find(struct acis_sw *sw, const struct sw_use *u, uint32_t key);
void sw_hold_give(struct acis_sw *sw, struct sw_use *u, struct sw_hold *h);
void sw_hold_drop(struct acis_sw *sw, struct sw_use *u);

/* cgr.c: a data packet from child (port) of row ct; the parent's answer
 * to a segment this switch sent up. */
void sw_cgr_input(struct acis_sw *sw, struct sw_ct *ct, uint32_t port,
                  const struct acis_hdr *h, const uint8_t *payload);
void sw_cgr_down(struct acis_sw *sw, struct sw_ct *ct, const struct acis_hdr *h,
                 const uint8_t *payload);
/* cgr.c: every child of the current use of slot is in (sw_cgr_arrive). */
void sw_cgr_complete(struct acis_sw *sw, struct sw_ct *ct, struct sw_slot *s, uint32_t slot);
/* cgr.c, for quick.c: the idle current use of s starts the segment of the
 * packet whose header hdr equals the previous (quick, done) use's first
 * but in its sequence number, round bit and the sender's own fields, and
 * is newer: as start_use would, its first piece payload taken.  The use. */
struct sw_use *sw_cgr_renew(struct sw_slot *s, const uint8_t *hdr, const uint8_t *payload);

/* The child on port asks rx_len bytes at rx_off back; then it is in,
 * and the last one completes the segment.  For cgr.c and quick.c. */
static SW_ALWAYS_INLINE void sw_cgr_want(struct sw_use *u, uint32_t port, uint32_t rx_off,
                                         uint32_t rx_len)
{
    if (rx_len) {
        sw_bit_set(u->want, port);
        u->want_any = 1;
        u->want_lo = rx_off < u->want_lo ? rx_off : u->want_lo;
        u->want_hi = rx_off + rx_len > u->want_hi ? rx_off + rx_len : u->want_hi;
    }
}
static SW_ALWAYS_INLINE void sw_cgr_arrive(struct acis_sw *sw, struct sw_ct *ct,
                                           struct sw_slot *s, struct sw_use *u, uint32_t slot,
                                           uint32_t port)
{
    sw_bit_set(u->bits, port);
    if (++u->arrived == ct->nchild)
        sw_cgr_complete(sw, ct, s, slot);
}

/* link.c: control from a child link on port, or from the parent. */
void sw_link_control(struct acis_sw *sw, uint32_t port, const struct acis_hdr *h,
                     const uint8_t *payload);
void sw_uplink_control(struct acis_sw *sw, const struct acis_hdr *h, const uint8_t *payload);

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

#endif
