/* channel.h -- the channel interface inside src/mpid: what the device asks
 * of a transport.  Multicast is the switch's business, so a host channel
 * only sends to and receives from its switch.  A channel over a network
 * wants packets sealed (checksummed) and may lose them; a channel in
 * shared memory takes them as they are, loses nothing, and hands answers
 * over in place (poll) instead of copying them into receive buffers.
 * Internal to src/mpid. */
#ifndef ACIS_CHANNEL_H
#define ACIS_CHANNEL_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "util/util.h"

#define ACIS_RX_BATCH 32

struct acis_chan;

/* Who sent a received packet, as the channel names its peers: a socket
 * address (udp) or an RDMA endpoint (verbs); len 0 where the channel has
 * no senders (shm).  peer 1: the one address the channel listens to (the
 * service address, after attach our port).  peer 0, only before attach
 * and only on a channel whose switch may answer HELLO from an endpoint of
 * its own per port (verbs: another queue pair at the service endpoint's
 * LID or GID): the device takes nothing from there but the WELCOME it
 * waits for, and counts the rest as foreign. */
struct acis_chan_from {
    union {
        struct sockaddr_storage ip;
        struct acis_ib_addr ib;
    } a;
    unsigned int len;
    int peer;
};

/* Where a channel hands data answers it does not copy (poll). */
typedef void (*acis_chan_deliver)(void *arg, const struct acis_hdr *h,
                                  const uint8_t *payload);

struct acis_chan_ops {
    const char *name;
    int sealed;               /* packets must carry their checksum */
    int reliable;             /* nothing is lost: no retransmission, and
                                 waiting long is no sign of failure */
    /* Reach the switch's service address; why gets a one-line reason.
     * Until attach, the channel takes packets only from that address
     * (as the kernel reaches it: 0.0.0.0 is the loopback address). */
    int (*open)(struct acis_chan **ch, const char *addr, char *why, size_t whylen);
    /* From now on talk only to from, the sender of the WELCOME that
     * answered our HELLO (our host port), and take packets only from it. */
    int (*attach)(struct acis_chan *ch, const struct acis_chan_from *from);
    /* Send n packets in one batch if the channel can. */
    int (*send)(struct acis_chan *ch, const struct acis_dev_pkt *pkts, int n);
    /* Nonblocking: up to max packets into bufs[i] (cap bytes each);
     * lens[i] and from[i] set.  Returns the count, 0 if none, -1 on
     * error.  A packet from anyone but the switch (its service address
     * before attach, our port after; see struct acis_chan_from) is not
     * returned: the channel counts it (packets_foreign) and drops it. */
    int (*recv)(struct acis_chan *ch, uint8_t **bufs, size_t cap, size_t *lens,
                struct acis_chan_from *from, int max);
    /* Block until readable or timeout_ms; 1 readable, 0 timeout, -1 error. */
    int (*wait)(struct acis_chan *ch, int timeout_ms);
    /* A descriptor poll() can wait on, or -1. */
    int (*fd)(struct acis_chan *ch);
    /* Receive buffer bytes the kernel granted (for credits), 0 unknown. */
    int (*rcvbuf)(struct acis_chan *ch);
    /* Or: packets it can hold unreceived (a channel that counts buffers,
     * not bytes, sets this instead of rcvbuf). */
    int (*rx_packets)(struct acis_chan *ch);
    void (*close)(struct acis_chan *ch);
    /* Optional: hand every data answer that is ready to fn, in place.
     * Returns how many, -1 on error. */
    int (*poll)(struct acis_chan *ch, acis_chan_deliver fn, void *arg);
    /* Optional, for a channel that may still read a payload after send
     * returned (zero copy): wait until it no longer does.  0, or -1. */
    int (*flush)(struct acis_chan *ch);
    /* Optional, for a sealed channel: 1 if its path to the switch never
     * leaves this machine's memory (a loopback address), so data packets
     * may travel unsealed (ACIS_F_UNSEALED) if the switch agrees. */
    int (*memory)(struct acis_chan *ch);
    /* Optional: the largest packet (header and payload) it carries. */
    uint32_t (*max_packet)(struct acis_chan *ch);
    /* Optional, for the reliable channel whose switch publishes answers
     * in place, the shared-memory one (the short path, acis_dev_post):
     * post one data packet given as a decoded header and fill the ticket
     * (a struct acis_dev_ticket, device.h: the switch's wait) to wait on,
     * 0, or -1 if the switch refused it; prepare a post (a struct
     * acis_dev_prep, device.h: the switch's own, which the device makes
     * itself) once for packets that differ from h only in sequence
     * number, slot and round, 0 or -1; report the switch's refusal of h
     * (ticket NULL) or the answer to the post ticket that said the
     * members' packets disagree (h NULL); sleep until the answer may be
     * there, or ms pass.  The device reads the answer from the ticket
     * itself (acis_dev_result). */
    int (*post)(struct acis_chan *ch, const struct acis_hdr *h, const uint8_t *payload,
                void *ticket);
    int (*prepare)(struct acis_chan *ch, const struct acis_hdr *h, void *prep);
    void (*refused)(struct acis_chan *ch, const struct acis_hdr *h, const void *ticket);
    void (*sleep)(struct acis_chan *ch, const void *ticket, int ms);
    /* Optional, for a channel whose wait() reads what other threads
     * change (the posts the shared-memory channel waits on): wait() is
     * then called only with the device lock held, and a wait without it
     * takes what to sleep on under the lock -- 1 with the ticket filled,
     * 0 when something is readable now or nothing is out -- and sleeps on
     * it with sleep(), after the unlock. */
    int (*wait_on)(struct acis_chan *ch, void *ticket);
};

extern const struct acis_chan_ops acis_chan_udp;
extern const struct acis_chan_ops acis_chan_shm;
extern const struct acis_chan_ops acis_chan_verbs;

#endif
