/* verbs.h -- the one header of src/verbs: RDMA unreliable-datagram (UD)
 * endpoints over libibverbs, shared by the host's verbs channel
 * (src/mpid/verbs) and the switch's verbs transport (src/switch/verbsw.c).
 *
 *   select.c    which device and port a process uses (hwloc PCI locality)
 *   ud.c        one UD queue pair with registered receive and send rings
 *   wr.c        building work requests (no device needed: unit-tested)
 *   regcache.c  memory registrations kept across calls
 *   sender.c    which datagrams came from the endpoint a host listens to
 *   ahcache.c   address handles kept for answers to senders without a port
 *
 * A packet of the wire protocol travels as one UD datagram, so it must fit
 * the port's active MTU.  Every endpoint uses the queue key ACIS_UD_QKEY.
 * Built only with libibverbs (ACIS_HAVE_VERBS). */
#ifndef ACIS_VERBS_H
#define ACIS_VERBS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include <infiniband/verbs.h>

#include "util/util.h"

#define ACIS_UD_QKEY 0x41434953u     /* "ACIS" */
#define ACIS_UD_GRH 40               /* what UD puts before every datagram */

/* ------------------------------------------------ device choice (select.c) */

/* One port of one device, as acis_ud_choose weighs it. */
struct acis_ud_cand {
    char name[64];
    uint8_t port;            /* 1-based */
    uint8_t active;          /* IBV_PORT_ACTIVE */
    int8_t near;             /* the device's PCI locality meets this process's
                                CPUs: 1, does not: 0, unknown: -1 */
};

/* Pick among n candidates (device order, ports ascending) the one to use:
 * dev is "auto" or a device name, port 0 (any) or a port number.  An
 * active port is needed; a near device beats one of unknown locality,
 * which beats a far one; the first wins among equals.  Its index, or -1
 * with a one-line reason in why. */
int acis_ud_choose(const struct acis_ud_cand *c, int n, const char *dev, int port,
                   char *why, size_t whylen);

/* Which of a RoCE port's n GIDs to use: a RoCE v2 one with an IPv4-mapped
 * address (routable, what RoCE v2 fabrics use), else any RoCE v2 one, else
 * the first that is not zero.  Its index in e, or -1. */
int acis_ud_pick_gid(const struct ibv_gid_entry *e, int n);
/* 1 if g is an IPv4-mapped address (::ffff:a.b.c.d). */
int acis_ud_gid_ipv4(const union ibv_gid *g);

/* The ports of the devices present, up to max: count, or -1 with why. */
int acis_ud_candidates(struct acis_ud_cand *c, int max, char *why, size_t whylen);

/* ------------------------------------------------- work requests (wr.c) */

/* Where a datagram goes. */
struct acis_ud_dest {
    struct ibv_ah *ah;
    uint32_t qpn;
};

/* A send of hlen bytes at hdr (key hkey) followed by plen bytes at p (key
 * pkey; plen 0: none) to d, as one datagram, in wr with sge[0..1].  The
 * send is inline (its bytes copied at post time, no key needed) when the
 * whole fits max_inline; signaled asks for a completion. */
void acis_ud_build_send(struct ibv_send_wr *wr, struct ibv_sge sge[2],
                        const struct acis_ud_dest *d, uint64_t wr_id,
                        const void *hdr, uint32_t hlen, uint32_t hkey,
                        const void *p, uint32_t plen, uint32_t pkey,
                        uint32_t max_inline, int signaled);

/* A receive into len bytes at buf (key lkey). */
void acis_ud_build_recv(struct ibv_recv_wr *wr, struct ibv_sge *sge, uint64_t wr_id,
                        void *buf, uint32_t len, uint32_t lkey);

/* The largest wire payload a datagram of mtu bytes carries after a
 * header of hdr bytes, in whole 8-byte words (every element type fits). */
uint32_t acis_ud_payload(uint32_t mtu, uint32_t hdr);

/* --------------------------------------- registration cache (regcache.c) */

/* Register len bytes at addr: a handle (NULL on failure) and its key. */
typedef void *(*acis_reg_fn)(void *arg, void *addr, size_t len, uint32_t *lkey);
typedef void (*acis_dereg_fn)(void *arg, void *handle);

struct acis_regcache_stats {
    uint64_t hits, misses, evictions, failures;
    uint64_t bytes;          /* registered now */
    uint32_t entries;
};

struct acis_regcache;

/* A cache of at most max_entries registrations and max_bytes registered
 * bytes (0: no limit); the least recently used go first.  Registrations cover whole
 * pages.  NULL when out of memory. */
struct acis_regcache *acis_regcache_new(uint32_t max_entries, uint64_t max_bytes,
                                        acis_reg_fn reg, acis_dereg_fn dereg, void *arg);
void acis_regcache_free(struct acis_regcache *rc);

/* The key of a registration covering [addr, addr + len): 0, or -1 if it
 * could not be registered (the caller copies instead). */
int acis_regcache_get(struct acis_regcache *rc, const void *addr, size_t len, uint32_t *lkey);

/* Forget registrations overlapping [addr, addr + len). */
void acis_regcache_invalidate(struct acis_regcache *rc, const void *addr, size_t len);

void acis_regcache_stats(const struct acis_regcache *rc, struct acis_regcache_stats *s);

/* ------------------------------ address handle cache (ahcache.c) */

/* Make an address handle to the sender of src (an acis_ud_msg not yet
 * handed back), or drop one. */
typedef struct ibv_ah *(*acis_ah_make_fn)(void *arg, const void *src);
typedef void (*acis_ah_drop_fn)(void *arg, struct ibv_ah *ah);

struct acis_ahcache_stats {
    uint64_t hits, made, evicted;
    uint64_t full;           /* asked for while every entry was in use */
    uint64_t failed;         /* make failed */
};

struct acis_ahcache;

/* At most entries handles (at least 1).  NULL when out of memory. */
struct acis_ahcache *acis_ahcache_new(uint32_t entries, acis_ah_make_fn make,
                                      acis_ah_drop_fn drop, void *arg);
/* Drop every handle: no send may use one any more (quiesce first). */
void acis_ahcache_free(struct acis_ahcache *c);

/* The handle to the port at (its qpn aside), made from src if none is
 * kept, in a free entry or in place of the least recently asked for one
 * that no send in flight uses: done is how many sends completed.  NULL,
 * without waiting, if every entry is in use by a send in flight (or make
 * failed). */
struct ibv_ah *acis_ahcache_get(struct acis_ahcache *c, const struct acis_ib_addr *at,
                                const void *src, uint64_t done);
/* The handle acis_ahcache_get returned last went into send number seq
 * (acis_ud_posted after it): it is kept until done reaches seq. */
void acis_ahcache_used(struct acis_ahcache *c, uint64_t seq);
void acis_ahcache_stats(const struct acis_ahcache *c, struct acis_ahcache_stats *s);

/* ---------------------------------------------------- endpoints (ud.c) */

struct acis_ud_opts {
    const char *dev;         /* "auto" or a device name */
    int port;                /* 0: first active */
    uint32_t rx_depth;       /* receive buffers posted */
    uint32_t tx_depth;       /* sends in flight */
    int zcopy;               /* register payloads through a cache (only
                                where the device pages on demand) */
};

/* A datagram received: bytes, length, and who sent it. */
struct acis_ud_msg {
    const uint8_t *data;
    uint32_t len;
    struct acis_ib_addr from;
    struct ibv_wc wc;        /* its completion (acis_ud_ah_from) */
};

/* ------------------------------------------------- senders (sender.c) */

/* 1 if a and b are at the same port: GID, or LID without one. */
int acis_ud_same_port(const struct acis_ib_addr *a, const struct acis_ib_addr *b);
/* 1 if a and b are the same queue pair: qpn, at the same port. */
int acis_ud_same_sender(const struct acis_ib_addr *a, const struct acis_ib_addr *b);

/* Of n datagrams, the indices of those a host takes, in order, into keep
 * (room for n), and in exact whether peer itself sent each (1) or, while
 * not joined, another queue pair at peer's port (0); their count. */
int acis_ud_keep(const struct acis_ud_msg *m, int n, const struct acis_ib_addr *peer,
                 int joined, int *keep, int *exact);

struct acis_ud;

/* Open a UD queue pair on the chosen device port.  NULL with why. */
struct acis_ud *acis_ud_open(const struct acis_ud_opts *o, char *why, size_t whylen);
void acis_ud_close(struct acis_ud *u);

uint32_t acis_ud_mtu(const struct acis_ud *u);        /* datagram bytes */
uint32_t acis_ud_rx_depth(const struct acis_ud *u);
const char *acis_ud_name(const struct acis_ud *u);    /* "mlx5_0:1" */
void acis_ud_local(const struct acis_ud *u, struct acis_ib_addr *a);

/* An address handle to an endpoint, or to the sender of a datagram not
 * yet handed back.  NULL on failure; free with ibv_destroy_ah once no
 * send to it is in flight. */
struct ibv_ah *acis_ud_ah(struct acis_ud *u, const struct acis_ib_addr *a);
struct ibv_ah *acis_ud_ah_from(struct acis_ud *u, const struct acis_ud_msg *m);

/* Send the bytes of iov (one datagram, at most the MTU) to each of n
 * destinations: copied once into the send ring.  0, or -1. */
int acis_ud_send(struct acis_ud *u, const struct acis_ud_dest *d, uint32_t n,
                 const struct iovec *iov, int iovcnt);

/* Send hdr (copied) and payload (registered through the cache, not
 * copied, when zcopy is on and it is large enough) to d.  0, or -1. */
int acis_ud_send_pkt(struct acis_ud *u, const struct acis_ud_dest *d, const void *hdr,
                     uint32_t hlen, const void *payload, uint32_t plen);

/* Wait until every send posted so far has completed (0), or -1 if one
 * failed; either way none is in flight any more. */
int acis_ud_quiesce(struct acis_ud *u);

/* The same, only if a payload went without a copy since the last flush:
 * before its memory is reused or freed. */
int acis_ud_flush(struct acis_ud *u);

/* Sends posted so far, and (after taking what completed, without
 * waiting) sends completed so far.  Sends complete in the order they were
 * posted: send number k (from 1) is done once acis_ud_completed >= k. */
uint64_t acis_ud_posted(const struct acis_ud *u);
uint64_t acis_ud_completed(struct acis_ud *u);

/* Up to max datagrams received, without waiting: count, or -1.  Their
 * buffers stay ours until handed back with acis_ud_repost. */
int acis_ud_recv(struct acis_ud *u, struct acis_ud_msg *m, int max);
int acis_ud_repost(struct acis_ud *u, const struct acis_ud_msg *m, int n);

/* Sleep until a datagram may have arrived or ms pass: 1, 0 on timeout,
 * -1 on error.  Safe beside acis_ud_recv on another thread. */
int acis_ud_wait(struct acis_ud *u, int ms);
/* The completion channel: readable only after acis_ud_wait armed it. */
int acis_ud_fd(const struct acis_ud *u);

#endif
