/* device.h -- the one header of src/mpid: the device, which owns this
 * process's connection to the switch and moves packets through one
 * channel (udp, shm or verbs).  In MPICH's vocabulary the device owns
 * progress; a channel only moves bytes.  Nothing here uses MPI.
 *
 * State: struct acis_dev_ctx acis_dev (dev.h; device.c, wait.c and
 * control.c share it). */
#ifndef ACIS_DEVICE_H
#define ACIS_DEVICE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "acis/wire.h"
#include "switch/switch.h"

/* What the switch told us when we joined. */
struct acis_dev_info {
    uint32_t port;            /* our host port */
    uint32_t max_payload;     /* data bytes per packet */
    uint32_t window;          /* aggregation slots per communicator row */
    uint32_t tables;          /* rows in the switch */
    uint32_t radix;           /* host ports of the switch */
    uint32_t credits;         /* packets we may have in flight */
    uint32_t boot;            /* names this run of the switch */
};

/* One outgoing packet: an encoded header and its payload.  The device
 * seals it (writes its checksum) when the channel wants that. */
struct acis_dev_pkt {
    uint8_t *hdr;             /* ACIS_HDR_LEN bytes */
    const void *payload;
    uint32_t len;
};

/* Where data answers go (set by src/offload). */
typedef void (*acis_dev_deliver)(void *arg, const struct acis_hdr *h,
                                 const uint8_t *payload);

/* Open channel chan (ACIS_DEV_UDP, ...) to the switch at addr and join
 * job key as rank of world.  Gives up after timeout_ms.  Returns 0, or -1
 * with a one-line reason in why. */
int acis_dev_open(int chan, const char *addr, uint64_t key, uint32_t rank,
                  uint32_t world, int timeout_ms, char *why, size_t whylen);

/* Leave the switch (BYE) and close the channel. */
void acis_dev_close(void);

const struct acis_dev_info *acis_dev_info(void);

/* Inject faults into what this process sends (tests); rates of
 * util.h's struct acis_fault_rates, seed for the random choices. */
struct acis_fault_rates;
void acis_dev_set_faults(const struct acis_fault_rates *r, uint64_t seed);

/* Serialise users of the device and what src/offload keeps with it
 * (no-ops until acis_dev_set_threaded(1)); deliver callbacks run with the
 * lock held. */
void acis_dev_set_threaded(int on);
void acis_dev_lock(void);
void acis_dev_unlock(void);

/* Waiting: spin (poll without sleeping) or block after spin_us. */
void acis_dev_set_wait(int spin, int spin_us, int timeout_ms);
/* 1 if waits never sleep (set up to spin). */
int acis_dev_spins(void);

void acis_dev_set_deliver(acis_dev_deliver fn, void *arg);

/* Control round trips, retried until the timeout.  0, or -1 on timeout.
 * A network switch (acis_dev_joins() 1) sets a row up from every member's
 * CT_JOIN (id and leader the same on every member, member this one's
 * rank in the communicator; answered once all joined); the shared-memory
 * switch from one member list (acis_dev_ct_create, by rank 0). */
int acis_dev_joins(void);
/* A fresh request id for a set-up rank 0 names: never 0, its top bit
 * always set (commtable/ct.c says why).  Under the device lock. */
uint32_t acis_dev_request_id(void);
int acis_dev_ct_join(uint32_t id, uint32_t leader, uint32_t n, uint32_t member,
                     uint32_t *status, uint32_t *ctx, uint32_t *window, uint32_t *payload,
                     uint32_t *flags);
int acis_dev_ct_create(const uint32_t *granks, uint32_t n, uint32_t *status,
                       uint32_t *ctx, uint32_t *window, uint32_t *payload, uint32_t *flags);
int acis_dev_ct_free(uint32_t ctx);
int acis_dev_switch_stats(uint64_t *out, int max);

/* Send n data packets (one batch).  Returns 0 or -1. */
int acis_dev_send(const struct acis_dev_pkt *pkts, int n);

/* Before memory a sent payload came from is reused or freed: wait until
 * the channel no longer reads it (verbs sends without a copy). */
void acis_dev_flush(void);

/* 1 if the channel loses nothing (shared memory): no retransmission, no
 * kept copies for recovery, no silence timeout. */
int acis_dev_reliable(void);

/* Packets this process may have in flight (what its port's and its own
 * socket buffers surely hold); src/offload counts what is out. */
uint32_t acis_dev_credit_cap(void);

/* That cap from what the switch offered (0: no limit of its own) and what
 * our channel holds: rcvbuf bytes of socket buffer, or rx_packets posted
 * buffers (verbs); at least 1. */
uint32_t acis_dev_credits(uint32_t offered, int rcvbuf, int rx_packets, uint32_t payload);

/* The short path (src/offload/short.c): on a channel that takes a packet
 * as a decoded header and publishes its answer in place (shm, the one
 * channel with a post), one data packet is posted and its answer read
 * without the deliver function and without the channel's own list of
 * posts.  acis_dev_can_post() says whether the channel has it;
 * acis_dev_post() posts h (0, or -1 if the switch refused it: members
 * disagree on the collective) and fills t.  acis_dev_answered() says, in
 * a load, whether the answer is there; acis_dev_result() then takes it:
 * ACIS_DEV_WAITING (not there yet), ACIS_DEV_DONE with r the bytes the
 * post asked for (valid until this process posts to the slot again),
 * ACIS_DEV_MISMATCH (the members' packets disagree) or
 * ACIS_DEV_ABSTAINED (a member abstained).  acis_dev_wait_answer() spins
 * or sleeps as acis_dev_wait() does.  The counters count these packets
 * as any others.
 *
 * A ticket is the shared-memory switch's wait, used where it is (no copy
 * in or out): its first two words, which the switch's post writes, are
 * the bell and the ring -- the answer is there once *bell == ring. */
#define ACIS_DEV_TICKET 128
struct acis_dev_ticket {
    union {
        struct {
            const _Atomic uint64_t *bell;
            uint64_t ring;
        };
        struct acis_shm_wait shm;
        _Alignas(8) unsigned char b[ACIS_DEV_TICKET];
    };
};
_Static_assert(offsetof(struct acis_dev_ticket, bell) ==
                   offsetof(struct acis_dev_ticket, shm.done) &&
               offsetof(struct acis_dev_ticket, ring) ==
                   offsetof(struct acis_dev_ticket, shm.ring),
               "a ticket's bell and ring are the shared-memory wait's done and ring");
_Static_assert(sizeof(struct acis_shm_wait) <= ACIS_DEV_TICKET,
               "a shared-memory wait fits the device's ticket");
enum {
    ACIS_DEV_WAITING = ACIS_SHM_WAITING, ACIS_DEV_DONE = ACIS_SHM_DONE,
    ACIS_DEV_MISMATCH = ACIS_SHM_MISMATCH, ACIS_DEV_ABSTAINED = ACIS_SHM_ABSTAINED
};
struct acis_dev_result {
    const uint8_t *data;                /* len bytes of the result space */
    uint64_t off;                       /* from byte off; NULL and 0 on error */
    uint32_t len;
};
int acis_dev_can_post(void);
int acis_dev_post(const struct acis_hdr *h, const uint8_t *payload, struct acis_dev_ticket *t);
/* A post prepared once for the packets that differ from h only in
 * sequence number, slot and round (the short path's calls of one shape):
 * acis_dev_prepare() is 0 with p filled, or -1 (post each with
 * acis_dev_post then); acis_dev_post_like() posts such a packet h as
 * acis_dev_post() would, from p and those three fields of h.  The
 * prepared post is the shared-memory switch's own, made on the switch
 * the channel attached (sw): acis_dev_post_like() posts there itself,
 * inline, and goes to the channel only to report a refusal.  A prepared
 * post is good while the channel that made it is open: the short path's
 * cache names the switch's epoch with each entry (acis_qrow), so an
 * entry made before the device was closed and opened again (a rejoin)
 * is not used after. */
#define ACIS_DEV_PREP 192
struct acis_dev_prep {
    struct acis_shmsw *sw;              /* the switch the post goes to */
    union {
        _Alignas(8) unsigned char b[ACIS_DEV_PREP];
        struct acis_shm_prep shm;
    };
};
_Static_assert(sizeof(struct acis_shm_prep) <= ACIS_DEV_PREP,
               "a shared-memory prepared post fits the device's");
int acis_dev_prepare(const struct acis_hdr *h, struct acis_dev_prep *p);
/* The switch refused h (-1, after the channel reported it); the answer
 * to t said the members' packets disagree (the channel reports it). */
int acis_dev_refused(const struct acis_hdr *h);
void acis_dev_disagreed(const struct acis_dev_ticket *t);
static inline int acis_dev_post_like(const struct acis_dev_prep *p, const struct acis_hdr *h,
                                     const uint8_t *payload, struct acis_dev_ticket *t)
{
    if (acis_shmsw_post_like(p->sw, &p->shm, h, payload, &t->shm) != 0)
        return acis_dev_refused(h);
    ACIS_COUNT(packets_sent, 1);
    ACIS_COUNT(bytes_sent, ACIS_HDR_LEN + h->payload_len);
    return 0;
}
static inline int acis_dev_answered(const struct acis_dev_ticket *t)
{
    return atomic_load_explicit(t->bell, memory_order_acquire) == t->ring;
}
static inline int acis_dev_result(const struct acis_dev_ticket *t, struct acis_dev_result *r)
{
    int got = acis_shmsw_result(&t->shm, &r->data);
    if (got == ACIS_DEV_WAITING)
        return got;
    r->off = t->shm.off;
    r->len = got == ACIS_DEV_DONE ? t->shm.len : 0;
    if (got == ACIS_DEV_MISMATCH)
        acis_dev_disagreed(t);
    ACIS_COUNT(packets_received, 1);
    ACIS_COUNT(bytes_received, ACIS_HDR_LEN + r->len);
    return got;
}
/* Spin a little on t's bell, a load and a pause a round, up to
 * ACIS_DEV_SPINS rounds: 1 as soon as the answer is there, else 0.  For
 * the rounds of a wait that also moves MPICH and may sleep (both by the
 * clock): those come every ACIS_DEV_SPINS loads, not on every one.  Needs
 * no lock: the bell is the channel's shared word. */
#define ACIS_DEV_SPINS 32
static inline int acis_dev_spin_answer(const struct acis_dev_ticket *t)
{
    for (int i = 0; i < ACIS_DEV_SPINS; i++) {
        if (acis_dev_answered(t))
            return 1;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
    return 0;
}
void acis_dev_wait_answer(const struct acis_dev_ticket *t, uint64_t idle_since_ns);

/* Receive what has arrived, validate it, hand data answers to the
 * deliver function.  Returns packets delivered (0: nothing), -1 on a
 * channel error. */
int acis_dev_poll(void);

/* The engine sent a repeat (a segment whose answer is overdue): from the
 * first one not answered by any packet, the switch's silence counts. */
void acis_dev_asked(void);

/* 1 while a repeat has had no packet in answer (acis_dev_asked). */
int acis_dev_asking(void);

/* Wait for the next packet: spin or sleep per acis_dev_set_wait.  The
 * caller holds no lock.  Returns 0 when something may be readable, -1
 * when a repeat has gone unanswered for timeout_ms (see acis_dev_silent). */
int acis_dev_wait(uint64_t idle_since_ns);

/* 1 if a repeat sent after idle_since_ns (or the first one since the last
 * packet any thread received, if later) has had no packet in answer for
 * timeout_ms; never on a reliable channel.  Time this rank spent not
 * asking does not count.  For waits that cannot sleep here (a poll
 * function). */
int acis_dev_silent(uint64_t idle_since_ns);

/* Before a waiter that found the switch silent calls it dead (device lock
 * held): the time is read first, then the channel once more.  1 if nothing
 * came and a repeat had been unanswered for timeout_ms at that time, 0 if
 * not (a packet came, or another thread heard one since), -1 on a channel
 * error.  The waiter may have been descheduled between its last read and
 * its look at the clock, for seconds when ranks outnumber cores: what was
 * sent meanwhile is still unread, or taken by another thread. */
int acis_dev_still_silent(uint64_t idle_since_ns);

/* Names of the RDMA devices present, comma-separated into names; how many
 * (-1 if this build has no verbs channel).  verbs.c. */
int acis_verbs_devices(char *names, size_t len);

/* The device port the verbs channel would use for the VERBS_DEVICE and
 * VERBS_PORT values dev and port: 0 with "name:port" in out, or -1 with
 * the reason it would not open there. */
int acis_verbs_choice(const char *dev, int port, char *out, size_t len);

/* Sleep until something may be readable (our socket, or the embedded
 * switch's) or ms pass; no spinning.  0, or -1 on a channel error. */
int acis_dev_sleep(int ms);

/* Start an emulated switch in a thread of this process, listening on
 * listen ("HOST:PORT", port 0 picks one), with options o (struct
 * acis_sw_opts of switch.h); its address goes to addr.  Stop it with
 * acis_dev_embed_stop().  0, or -1 with why. */
struct acis_sw_opts;
int acis_dev_embed_start(const char *listen, const struct acis_sw_opts *o, int spin,
                         char *addr, size_t addrlen, char *why, size_t whylen);
void acis_dev_embed_stop(void);

/* This process stops driving its embedded switch for now (it returns to
 * the application with collectives in flight): wake the switch's thread. */
void acis_dev_release(void);
/* A blocking call is over: if the embedded switch this process hosts
 * serves communicators it is not a member of, hand the switch back to its
 * thread now (acis_dev_release) -- their members would otherwise wait
 * for the hand-off delay whenever this process leaves acis.  Free when
 * every row has this process (one atomic load). */
void acis_dev_leave(void);

/* ------------------------------------------------------------ peers
 * Recovery after a switch failure (peer.c): every process runs a service
 * thread that answers other ranks' PEER_ASK packets with serve(), which
 * builds the reply into reply (ACIS_HDR_LEN + ACIS_MAX_PAYLOAD bytes) and
 * returns its length (0: none); serve runs on that thread.  The recovering
 * thread asks from a socket of its own. */
typedef size_t (*acis_peer_serve)(void *arg, const struct acis_hdr *ask, uint8_t *reply);

/* Start the service on the local address that reaches the switch at
 * switch_addr (HOST:PORT; for LID/QPN or GID/QPN, an address of this
 * host's name); *mine gets the service address for the other ranks.  0,
 * or -1 with why. */
int acis_peer_start(const char *switch_addr, uint64_t key, uint32_t rank, uint32_t world,
                    acis_peer_serve serve, void *arg, struct sockaddr_storage *mine,
                    char *why, size_t whylen);
/* Every rank's service address, world entries in rank order. */
void acis_peer_set_addrs(const struct sockaddr_storage *all);
/* Send a sealed packet to rank's service.  0 or -1. */
int acis_peer_ask(uint32_t rank, const uint8_t *pkt, size_t len);
/* The next valid reply from the service socket of the rank it names in
 * its src field, decoded into h: its length, 0 if none waits, -1 on error. */
ssize_t acis_peer_recv(uint8_t *buf, size_t cap, struct acis_hdr *h);
/* Sleep until a reply may be readable or ms pass. */
int acis_peer_wait(int ms);
void acis_peer_stop(void);

/* Read the counters of a switch at addr from a fresh socket (acis-info). */
int acis_dev_query_stats(const char *addr, uint64_t *out, int max, int timeout_ms,
                         char *why, size_t whylen);

#endif
