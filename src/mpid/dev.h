/* dev.h -- inside src/mpid only: the device's one context struct, which
 * device.c (the data path), wait.c (waiting, the silence clock) and
 * control.c (joining, control round trips) share, and what they call of
 * each other.  Everything outside src/mpid goes through device.h. */
#ifndef ACIS_MPID_DEV_H
#define ACIS_MPID_DEV_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "mpid/channel.h"
#include "switch/switch.h"

/* A control answer waited for: its kind and request id (kind
 * ACIS_K_NONE: the entry is free), and once got, the packet and who sent
 * it (the WELCOME's sender: our port).  Control answers are short: a
 * longer one is dropped as no answer. */
#define ACIS_DEV_CTL_SLOTS 8
#define ACIS_DEV_CTL_BYTES (ACIS_HDR_LEN + 1024)
struct acis_dev_ctl {
    unsigned kind;
    uint32_t seq;
    uint32_t root;           /* a join's: the set-up's leader (by_root) */
    uint8_t by_root;
    int got;
    size_t len;
    struct acis_chan_from from;
    uint8_t answer[ACIS_DEV_CTL_BYTES];
};

/* Lock ownership: everything here is under the device lock
 * (acis_dev_lock; a real mutex once threaded is set: by the peer service,
 * MPI_THREAD_MULTIPLE or the progress helper), except: heard_ns and
 * asked_ns, atomic, which waiters read without it; ops, ch, embedded and
 * the wait settings, which waiters read without it too and which change
 * only when the device opens (MPI_Init, or a rejoin under the lock); and
 * threaded, set before a second thread uses the device.  A waiter sleeps
 * without the lock, on what the channel's wait_on gave it under the lock.
 * A control entry (ctl) is claimed, filled and freed under the lock; a
 * thread in a set-up's round trip lets the lock go between looks, and
 * whichever thread polls meanwhile fills its entry. */
struct acis_dev_ctx {
    const struct acis_chan_ops *ops;
    struct acis_chan *ch;
    struct acis_dev_info info;
    uint64_t key;
    uint32_t rank;
    uint32_t req;                  /* control request ids */
    uint32_t credit_cap;
    int spin, spin_us, timeout_ms;
    _Atomic uint64_t heard_ns;     /* last packet from the switch, any thread */
    _Atomic uint64_t asked_ns;     /* first repeat sent since then (0: none) */
    acis_dev_deliver deliver;
    void *deliver_arg;
    /* the control answers being waited for, one per thread in a round
       trip (a set-up waits for every member without the lock) */
    struct acis_dev_ctl ctl[ACIS_DEV_CTL_SLOTS];
    uint32_t opened;               /* bumped when the channel closes */
    /* receive buffers, and who sent what they hold */
    uint8_t *rx[ACIS_RX_BATCH];
    struct acis_chan_from rx_from[ACIS_RX_BATCH];
    size_t rx_cap;
    /* embedded switch; answers it handed us in place (device.c:
       home_answer) during the current poll */
    struct acis_udpsw *embedded;
    int home_got;
    /* MPI_THREAD_MULTIPLE */
    int threaded;
    pthread_mutex_t lock;
    /* fault injection on what we send */
    struct acis_fault fault;
    /* the path to the switch never leaves memory (ops->memory): HELLO
       offers unsealed data packets, and the switch's may come so */
    int memory;
    /* the switch took the offer (it answered unsealed): ours go so too,
       unless we inject corruption */
    atomic_int unseal;
};

extern struct acis_dev_ctx acis_dev;

/* A control packet's header in buf (kind, ctx, seq; sealed with payload). */
size_t acis_dev_control_packet(const struct acis_dev_ctx *d, uint8_t *buf, unsigned kind,
                               uint32_t ctx, uint32_t seq, const void *payload, size_t len);

/* Send n packets through d's channel (and fault injector). */
int acis_dev_chan_send(struct acis_dev_ctx *d, const struct acis_dev_pkt *pkts, int n);

/* The entry waiting for a control answer of kind with request id seq
 * (and, for a join, leader root), not yet got; NULL if none. */
struct acis_dev_ctl *acis_dev_ctl_waiting(struct acis_dev_ctx *d, unsigned kind, uint32_t seq,
                                          uint32_t root);

/* Receive and handle what d's channel holds: packets taken, or -1. */
int acis_dev_poll_ctx(struct acis_dev_ctx *d);

/* Once d joined the switch it hosts: take that switch's answers to d's
 * port in place while polling (acis_udpsw_set_home_answers). */
void acis_dev_home_answers(struct acis_dev_ctx *d);

#endif
