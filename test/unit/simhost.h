/* simhost.h -- simulated hosts around a switch core or a fabric of them,
 * for unit tests without MPI or sockets: every host has a port, a queue
 * of packets the switch sent it, and the same packetizer
 * (src/offload/stream.c) the real library uses. */
#ifndef ACIS_TEST_SIMHOST_H
#define ACIS_TEST_SIMHOST_H

#include <stddef.h>
#include <stdint.h>

#include "offload/stream.h"
#include "switch/switch.h"

#define SIM_QUEUE 4096              /* packets a host's queue holds at most */

struct sim_pkt {
    uint8_t *data;
    size_t len;
};

struct sim_host {
    int id;                      /* also its "address" on the service port */
    uint32_t port;
    uint32_t rank;               /* global rank in its job */
    uint64_t job_key;
    uint32_t payload, window, credits;
    struct sim_pkt *q;           /* what the switch sent to this host: a ring */
    size_t qcap, qhead, qtail;
};

struct sim {
    struct acis_sw *sw;          /* one switch, or */
    struct acis_fabric *fab;     /* a fabric (ports are its fabric ports) */
    struct sim_host *hosts;      /* nhosts of hcap */
    int nhosts, hcap;
    int *port_host;              /* nports entries: port -> host index, -1 */
    uint32_t nports;
    struct sim_pkt service;      /* last reply on the service port */
    int service_peer;
    uint64_t c[ACIS_SWC_COUNT];
    unsigned loss, dup;          /* percent of packets lost / doubled, both ways */
    unsigned rng;
    int abstainer;               /* 1 + index of a host whose packets carry
                                    ACIS_F_ABSTAIN and no data; 0: none */
    int refused;                 /* members the last sim_run ended refused
                                    (told that a member abstained) */
    int owner;                   /* 1 + index of a host that, as the root of a
                                    gather or scatter, copies the result-space
                                    bytes [own_off, own_off + own_len) itself
                                    (acis_stream own_off); 0: none */
    uint64_t own_off, own_len;
    uint32_t hello_flags;        /* of the hosts' HELLOs (ACIS_HELLO_UNSEALED) */
};

/* A communicator: some hosts (in communicator rank order) and its row. */
struct sim_comm {
    int n;
    int *host;                   /* n entries */
    uint32_t ctx, window, payload;
    uint32_t flags;              /* of the CT_REPLY (ACIS_CT_SPANS, ...) */
    uint32_t seq;
    struct acis_window *win;     /* n entries */
};

/* A communicator of n hosts (host[i] to be filled), and freeing it. */
struct sim_comm *sim_comm_new(int n);
void sim_comm_free(struct sim_comm *c);

/* Simulated time: advances 1 us per packet handed to the switch. */
uint64_t sim_now(void);

/* Create the switch with o; returns 0.  sim_init_fabric: a fabric of
 * topology topo instead (0, or -1 with err). */
int sim_init(struct sim *s, const struct acis_sw_opts *o);
/* The same with a transport that says which hosts (by id, the peer
 * sim_join passes) are on loopback (acis_sw_io.memory). */
int sim_init_memory(struct sim *s, const struct acis_sw_opts *o,
                    int (*memory)(void *ctx, const void *peer));
int sim_init_fabric(struct sim *s, const char *topo, const struct acis_sw_opts *o,
                    char *err, size_t errlen);
void sim_fini(struct sim *s);

/* HELLO from a new host of job key with rank of world; returns the host
 * index, or -1 and *status when the switch refused. */
int sim_join(struct sim *s, uint64_t key, uint32_t rank, uint32_t world, uint32_t *status);
/* The same on switch sw of the fabric. */
int sim_join_at(struct sim *s, uint32_t sw, uint64_t key, uint32_t rank, uint32_t world,
                uint32_t *status);

/* BYE from host h. */
void sim_leave(struct sim *s, int h);

/* CT_JOIN from every host of c (set-up id req, leader its first host);
 * returns the status every member was answered (0xffffffff if some got
 * none or another) and fills c->ctx/window/payload/flags. */
uint32_t sim_ct_create(struct sim *s, struct sim_comm *c, uint32_t req);
uint32_t sim_ct_free(struct sim *s, struct sim_comm *c);

/* A packet into switch sw (its worker 0, as a transport would: between
 * acis_sw_enter and acis_sw_leave). */
static inline void sim_input(struct acis_sw *sw, uint32_t port, const void *peer,
                             const uint8_t *pkt, size_t len)
{
    acis_sw_enter(sw);
    acis_sw_input(sw, port, peer, pkt, len);
    acis_sw_leave(sw);
}

/* Raw datagram from host h (on its port) into the switch. */
void sim_send_raw(struct sim *s, int h, const void *pkt, size_t len);

/* Pop the next packet the switch sent to host h; 0 if the queue is empty.
 * The caller frees p->data. */
int sim_pop(struct sim *s, int h, struct sim_pkt *p);

/* One collective on c.  Member i contributes m[i].src (its piece, in
 * result-space bytes [src_off, src_off + src_len)) and gets
 * [dst_off, dst_off + dst_len) into m[i].dst. */
struct sim_member {
    const void *src;
    uint64_t src_off, src_len;
    void *dst;
    uint64_t dst_off, dst_len;
};

struct sim_coll {
    struct sim_comm *c;
    unsigned kind, op, dtype;
    uint32_t root;
    uint64_t total;
    const struct sim_member *m;
};

/* Run n collectives (on distinct communicators) at once; hosts send in a
 * shuffled order (seed) and bursts, lose and double packets as s->loss and
 * s->dup say, and repeat overdue segments.  Returns 0 when every member
 * finished and every answer was valid or a repeat, -1 otherwise. */
int sim_run(struct sim *s, const struct sim_coll *colls, int n, unsigned seed);

/* One collective. */
int sim_collective(struct sim *s, struct sim_comm *c, unsigned kind, unsigned op,
                   unsigned dtype, uint32_t root, uint64_t total,
                   const struct sim_member *m, unsigned seed);

/* Read the switch counters into s->c (of a fabric: summed over its
 * switches). */
void sim_counters(struct sim *s);

/* Member m's packet of a one-segment collective on c, built as its host
 * would: an allreduce (sum) of the n elements of 4-byte type dt
 * (ACIS_DT_I32 or ACIS_DT_F32) at data, or (n 0) a barrier; the c's i-th
 * since its row was made (sequence i + 1, slot i % window, the round bit
 * of the slot's use).  Sealed into buf (ACIS_HDR_LEN + 4 n bytes); its
 * length.  Tests and bench/swpps feed such packets to a switch straight,
 * without sim_run's hosts. */
size_t sim_piece(uint8_t *buf, const struct sim *s, const struct sim_comm *c, int m, uint32_t i,
                 unsigned dt, const void *data, uint32_t n);

/* A transport whose only work is send (answers taken or counted there):
 * ports open and close without an address, service replies are dropped.
 * For a switch driven straight, without sim's hosts. */
struct acis_sw_io sim_send_only_io(void *ctx,
                                   void (*send)(void *ctx, const uint32_t *ports, uint32_t n,
                                                const struct iovec *iov, int iovcnt));

/* Build a control packet header (sealed) with payload into buf. */
size_t sim_control(uint8_t *buf, unsigned kind, uint64_t key, uint32_t src, uint32_t ctx,
                   uint32_t seq, const void *payload, size_t len);

#endif
