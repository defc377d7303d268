/* udp.c -- the switch core on one UDP socket: the service socket at the
 * advertised address serves HELLO, STATS and every host port.  A port is
 * the address its host said HELLO from (addrmap.c); a datagram from an
 * unknown address goes to the core as a service packet (data from there is
 * foreign).  The socket is drained with recvmmsg, a few batches per round;
 * a multicast is one sendmmsg, a message per member sharing one iovec, and
 * the short answers a batch makes (a broadcast's acknowledgement and its
 * data, a small reduction's) go out together in one at the batch's end.
 * The loop spins while traffic flows if asked to, else sleeps in
 * epoll_wait; an eventfd wakes it to stop.  Runs in acis-switchd or in a
 * thread of an MPI job (the embedded switch).
 *
 * With workers (acis-switchd --threads N) each worker has a lane: its own
 * socket of an SO_REUSEPORT group on the service address, its batches and
 * a thread (lane 0 is the caller of acis_udpsw_run).  A classic BPF
 * program steers each datagram to the lane of its row's worker by the
 * context id in its header, so a row's packets meet on one worker; any
 * other (control, or a forged context) is still served right, by the core
 * pausing every worker (acis_sw_input). */
#include "config.h"

#include <errno.h>
#include <linux/filter.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "sw.h"
#include "util/util.h"

#define BATCH 32                 /* datagrams per recvmmsg, messages per sendmmsg */
#define SHORT 256                /* answers of at most this much payload, made
                                    while a batch is handled, are copied and
                                    sent together at its end */
#define FAIR_BATCHES 4           /* batches per round */
#define SOCKBUF (4 << 20)
#define SPIN_NS 200000           /* keep spinning this long after traffic */
#define HANDOFF_NS 2000000ull    /* serve again when nobody drove for this long */
#define TAG_SERVICE 0xfffffffeu
#define TAG_STOP 0xfffffffdu

/* A worker's way in and out: its socket, batches and thread. */
struct udp_lane {
    struct acis_udpsw *u;
    struct acis_sw *core;         /* its worker */
    int fd;                       /* lane 0: the service socket */
    uint8_t *bufs;                /* receive batch */
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sw_peer peers[BATCH];
    struct mmsghdr out[BATCH];    /* send batch */
    pthread_t thread;             /* lanes 1..: theirs */
    /* short answers made while a received batch is handled (drain): sent
       in one sendmmsg at its end, or before a long one, in order */
    int deferring;
    unsigned nshort;
    struct mmsghdr shorts[BATCH];
    struct iovec short_iov[BATCH];
    struct sw_peer short_to[BATCH];  /* copied: a port may close before the flush */
    uint8_t short_buf[BATCH][ACIS_HDR_LEN + SHORT];
};

struct acis_udpsw {
    struct acis_sw *core;
    struct acis_sw_opts o;
    struct udp_lane *lanes;       /* nlanes: one per worker */
    uint32_t nlanes;
    atomic_int lanes_stop;        /* lanes 1.. stop */
    int svc, epfd, stopfd, wakefd;
    struct sockaddr_storage svc_addr;
    socklen_t svc_len;
    char address[80];
    struct sw_addrmap map;        /* host ports by address */
    struct sw_peer parent;        /* the parent switch in a fabric (len 0: none) */
    /* embedded mode */
    pthread_t thread;
    int running, spin;
    atomic_int stop;              /* set by the thread that stops it */
    pthread_mutex_t core_lock;    /* the thread or a driver, not both */
    _Atomic uint64_t last_drive;  /* when a driver last polled us */
    uint32_t home;                /* the hosting process's port (SW_NONE) */
    acis_udpsw_home_fn home_fn;   /* its answers in place (acis_udpsw_drive) */
    void *home_arg;
    int home_now;                 /* a driver's drain runs (core_lock held) */
    atomic_int others;            /* rows without it (after each control packet) */
    struct acis_fault fault;      /* injected on port sends (tests) */
};

static size_t pkt_max(const struct acis_udpsw *u)
{
    return ACIS_HDR_LEN + (u->o.payload > ACIS_MAX_PAYLOAD ? u->o.payload : ACIS_MAX_PAYLOAD);
}

/* Receive buffers: one per batch entry, each placed so the packet's
 * payload (after the header) starts on an SW_ALIGN boundary. */
static size_t rx_stride(const struct acis_udpsw *u)
{
    return sw_round(SW_ALIGN + pkt_max(u));
}

static uint8_t *rx_buf(const struct udp_lane *l, int i)
{
    return l->bufs + (size_t)i * rx_stride(l->u) + (SW_ALIGN - ACIS_HDR_LEN % SW_ALIGN);
}

static int epoll_add(int epfd, int fd, uint32_t tag)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* ---- the core's transport callbacks ---- */

static int port_open(void *ctx, uint32_t port, const void *vpeer)
{
    struct udp_lane *l = ctx;
    return sw_addrmap_add(&l->u->map, port, vpeer);
}

static int peer_memory(void *ctx, const void *vpeer)
{
    (void)ctx;
    return acis_addr_loopback((const struct sockaddr *)&((const struct sw_peer *)vpeer)->a);
}

static void port_close(void *ctx, uint32_t port)
{
    struct udp_lane *l = ctx;
    sw_addrmap_del(&l->u->map, port);
    if (port == l->u->home)
        l->u->home = SW_NONE;           /* a rejoin sets it again: nothing for
                                           a port reused meanwhile is ours */
}

/* Where port's datagrams go (the parent for the uplink); NULL if it has
 * no address (no such port, or closed). */
static const struct sw_peer *port_peer(const struct acis_udpsw *u, uint32_t port)
{
    const struct sw_peer *p = port == ACIS_PORT_UPLINK ? &u->parent
                              : port < u->o.ports ? &u->map.addr[port] : NULL;
    return p && p->len ? p : NULL;
}

/* One datagram (iov) to each of ports[0..n), in sendmmsg batches.  A
 * message the kernel refuses (buffer full) is dropped, as UDP would. */
static void send_batch(struct udp_lane *l, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = l->u;
    uint32_t done = 0;
    while (done < n) {
        unsigned k = 0;
        for (; k < BATCH && done + k < n; k++) {
            const struct sw_peer *p = port_peer(u, ports[done + k]);
            struct msghdr *m = &l->out[k].msg_hdr;
            memset(m, 0, sizeof *m);
            if (!p)
                break;
            m->msg_name = (void *)&p->a;
            m->msg_namelen = p->len;
            m->msg_iov = (struct iovec *)iov;
            m->msg_iovlen = (size_t)iovcnt;
        }
        if (k == 0) {
            done++;                                /* no such port */
            continue;
        }
        int r = sendmmsg(l->fd, l->out, k, 0);
        if (r < 0 && errno == EINTR)
            continue;
        done += r > 0 ? (uint32_t)r : 1;           /* skip the one refused */
    }
}

/* Send the short answers kept so far. */
static void shorts_flush(struct udp_lane *l)
{
    unsigned done = 0;
    while (done < l->nshort) {
        int r = sendmmsg(l->fd, l->shorts + done, l->nshort - done, 0);
        if (r < 0 && errno == EINTR)
            continue;
        done += r > 0 ? (unsigned)r : 1;           /* skip the one refused */
    }
    l->nshort = 0;
}

/* Keep a short datagram (iov) for each of ports[0..n), copied with its
 * address: the switch reuses what it points at (a scan's running fold, a
 * set-up's answer on the stack) before the batch ends, and a port may
 * close meanwhile (a refused host is sent its WELCOME, then let go). */
static void shorts_add(struct udp_lane *l, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = l->u;
    for (uint32_t i = 0; i < n; i++) {
        const struct sw_peer *p = port_peer(u, ports[i]);
        if (!p)
            continue;                              /* no such port */
        if (l->nshort == BATCH)
            shorts_flush(l);
        unsigned k = l->nshort++;
        size_t len = 0;
        for (int j = 0; j < iovcnt; j++) {
            memcpy(l->short_buf[k] + len, iov[j].iov_base, iov[j].iov_len);
            len += iov[j].iov_len;
        }
        l->short_iov[k] = (struct iovec){ l->short_buf[k], len };
        l->short_to[k] = *p;
        l->shorts[k].msg_hdr = (struct msghdr){ .msg_name = &l->short_to[k].a,
                                                .msg_namelen = l->short_to[k].len,
                                                .msg_iov = &l->short_iov[k], .msg_iovlen = 1 };
    }
}

/* The fault injector's way out. */
static void fault_sink(void *ctx, uint32_t port, const void *buf, size_t len)
{
    struct iovec iov = { (void *)buf, len };
    send_batch(ctx, &port, 1, &iov, 1);
}

/* Datagrams to ports[0..n): short ones kept for the batch's end. */
static void send_out(struct udp_lane *l, const uint32_t *ports, uint32_t n,
                     const struct iovec *iov, int iovcnt)
{
    size_t len = 0;
    if (!n)
        return;
    for (int j = 0; j < iovcnt; j++)
        len += iov[j].iov_len;
    if (l->deferring && len <= ACIS_HDR_LEN + SHORT) {
        shorts_add(l, ports, n, iov, iovcnt);
        return;
    }
    if (l->nshort)
        shorts_flush(l);                       /* in order */
    send_batch(l, ports, n, iov, iovcnt);
}

/* Where the home port is in ports[0..n), if a driver's drain runs and the
 * hosting process takes this answer in place (it then has it): else n. */
static uint32_t home_took(const struct acis_udpsw *u, const uint32_t *ports, uint32_t n,
                          const struct iovec *iov, int iovcnt)
{
    if (!u->home_now || iovcnt > 2 || iov[0].iov_len != ACIS_HDR_LEN)
        return n;
    uint32_t i = 0;
    while (i < n && ports[i] != u->home)
        i++;
    if (i == n || !u->home_fn(u->home_arg, iov[0].iov_base,
                              iovcnt > 1 ? iov[1].iov_base : NULL,
                              iovcnt > 1 ? iov[1].iov_len : 0))
        return n;
    return i;
}

/* Multicast on UDP: the same datagram once per member port (the hosting
 * process's in place, when it can take it). */
static void send_ports(void *ctx, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct udp_lane *l = ctx;
    struct acis_udpsw *u = l->u;
    if (!u->fault.active) {                    /* with workers, never active */
        uint32_t h = home_took(u, ports, n, iov, iovcnt);
        send_out(l, ports, h, iov, iovcnt);
        if (h < n)
            send_out(l, ports + h + 1, n - h - 1, iov, iovcnt);
        return;
    }
    uint8_t flat[ACIS_FAULT_MAX_PACKET];
    size_t len = 0;
    for (int k = 0; k < iovcnt && len + iov[k].iov_len <= sizeof flat; k++) {
        memcpy(flat + len, iov[k].iov_base, iov[k].iov_len);
        len += iov[k].iov_len;
    }
    uint64_t now = acis_now_ns();
    for (uint32_t i = 0; i < n; i++)
        acis_fault_send(&u->fault, fault_sink, l, ports[i], flat, len, now);
}

/* Housekeeping: packets the fault injector holds back. */
static void tick(struct acis_udpsw *u)
{
    uint64_t now = acis_now_ns();
    if (u->fault.nheld)
        acis_fault_flush(&u->fault, fault_sink, &u->lanes[0], now);
    acis_sw_tick(u->core, now);
}

static void reply(void *ctx, const void *vpeer, const struct iovec *iov, int iovcnt)
{
    struct udp_lane *l = ctx;
    const struct sw_peer *p = vpeer;
    struct msghdr m = { .msg_name = (void *)&p->a, .msg_namelen = p->len,
                        .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    sendmsg(l->fd, &m, 0);
}

/* Steer each datagram to lane (row - 1) % n of the context id in its
 * header (bytes 24-25, little-endian), as acis_sw_row_worker says; the
 * program sees the UDP payload from byte 0.  A datagram too short to
 * read goes to lane 0. */
static int steer(int fd, uint32_t n)
{
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 24),
        BPF_STMT(BPF_MISC | BPF_TAX, 0),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 25),
        BPF_STMT(BPF_ALU | BPF_LSH | BPF_K, 8),
        BPF_STMT(BPF_ALU | BPF_OR | BPF_X, 0),
        BPF_STMT(BPF_ALU | BPF_SUB | BPF_K, 1),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xffff),
        BPF_STMT(BPF_ALU | BPF_MOD | BPF_K, n),
        BPF_STMT(BPF_RET | BPF_A, 0),
    };
    struct sock_fprog prog = { sizeof code / sizeof code[0], code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_REUSEPORT_CBPF, &prog, sizeof prog);
}

/* Lane i's socket, bound to the service address (i 0: port 0 picks
 * one) in the SO_REUSEPORT group when there are lanes; its buffers. */
static int lane_open(struct acis_udpsw *u, uint32_t i, const char *listen, int *rcv, char *err,
                     size_t errlen)
{
    struct udp_lane *l = &u->lanes[i];
    int one = 1;
    l->u = u;
    l->fd = socket(u->svc_addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    l->bufs = sw_alloc(BATCH * rx_stride(u));
    if (!l->bufs) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < BATCH; k++) {
        l->iov[k].iov_base = rx_buf(l, k);
        l->iov[k].iov_len = pkt_max(u);
    }
    if (l->fd < 0 ||
        (u->nlanes > 1 && setsockopt(l->fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one) != 0) ||
        bind(l->fd, (struct sockaddr *)&u->svc_addr, u->svc_len) != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", listen, strerror(errno));
        return -1;
    }
    *rcv = acis_sock_buffers(l->fd, SOCKBUF);
    return 0;
}

/* Lanes: the service address's port, taken first by a socket without
 * SO_REUSEPORT -- the kernel lets an SO_REUSEPORT socket bind where
 * another of the same user's is bound (port 0 too may pick such a
 * port), and the lanes would join that group: a second switch on one
 * address, started as if alone, its datagrams steered to the first's
 * sockets.  This fails like a switch of one worker (address in use) and
 * names a port nobody has; the lanes bind it right after (a window
 * between the two remains). */
static int claim_port(struct acis_udpsw *u, const char *listen, char *err, size_t errlen)
{
    int fd = socket(u->svc_addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&u->svc_addr, u->svc_len) != 0 ||
        getsockname(fd, (struct sockaddr *)&u->svc_addr, &u->svc_len) != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", listen, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    close(fd);
    return 0;
}

struct acis_udpsw *acis_udpsw_create(const char *listen, const struct acis_sw_opts *o,
                                     char *err, size_t errlen)
{
    struct acis_udpsw *u = calloc(1, sizeof *u);
    if (!u) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    u->o = *o;
    u->svc = u->epfd = u->stopfd = u->wakefd = -1;
    u->home = SW_NONE;
    u->nlanes = o->threads > 1 && o->threads <= ACIS_SW_MAX_THREADS ? o->threads : 1;
    pthread_mutex_init(&u->core_lock, NULL);
    acis_fault_init(&u->fault, &o->faults, o->fault_seed);
    u->lanes = calloc(u->nlanes, sizeof *u->lanes);
    if (!u->lanes || sw_addrmap_init(&u->map, o->ports) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    for (uint32_t i = 0; i < u->nlanes; i++)
        u->lanes[i].fd = -1;
    if (u->nlanes > 1 && u->fault.active) {    /* (too many: acis_sw_create says) */
        snprintf(err, errlen, "--threads takes no --fault-* options");
        goto fail;
    }
    if (acis_addr_parse(listen, &u->svc_addr, &u->svc_len, err, errlen) != 0)
        goto fail;
    int rcv;
    if (u->nlanes > 1 && claim_port(u, listen, err, errlen) != 0)
        goto fail;
    if (lane_open(u, 0, listen, &rcv, err, errlen) != 0)
        goto fail;
    u->svc = u->lanes[0].fd;
    getsockname(u->svc, (struct sockaddr *)&u->svc_addr, &u->svc_len);
    for (uint32_t i = 1; i < u->nlanes; i++)      /* on the port the first got */
        if (lane_open(u, i, listen, &rcv, err, errlen) != 0)
            goto fail;
    if (u->nlanes > 1 && steer(u->svc, u->nlanes) != 0) {
        snprintf(err, errlen, "cannot steer datagrams to %u workers (SO_ATTACH_REUSEPORT_CBPF): "
                 "%s", u->nlanes, strerror(errno));
        goto fail;
    }
    acis_addr_format((struct sockaddr *)&u->svc_addr, u->svc_len, u->address,
                     sizeof u->address);
    u->epfd = epoll_create1(EPOLL_CLOEXEC);
    u->stopfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    u->wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (u->epfd < 0 || u->stopfd < 0 || u->wakefd < 0 || epoll_add(u->epfd, u->svc, TAG_SERVICE) ||
        epoll_add(u->epfd, u->stopfd, TAG_STOP)) {
        snprintf(err, errlen, "epoll: %s", strerror(errno));
        goto fail;
    }
    struct acis_sw_opts co = *o;
    if (co.credits == 0)        /* what the shared socket's buffer holds */
        co.credits = ACIS_BUF_PACKETS(rcv, o->payload);
    struct acis_sw_io io = { &u->lanes[0], port_open, port_close, send_ports, reply,
                             peer_memory };
    u->core = acis_sw_create(&co, &io, err, errlen);
    if (!u->core)
        goto fail;
    for (uint32_t i = 0; i < u->nlanes; i++) {
        io.ctx = &u->lanes[i];
        u->lanes[i].core = acis_sw_worker(u->core, i);
        acis_sw_worker_io(u->lanes[i].core, &io);
    }
    return u;
fail:
    acis_udpsw_destroy(u);
    return NULL;
}

void acis_udpsw_destroy(struct acis_udpsw *u)
{
    if (!u)
        return;
    acis_udpsw_stop(u);
    acis_sw_destroy(u->core);
    for (uint32_t i = 0; u->lanes && i < u->nlanes; i++) {
        if (u->lanes[i].fd >= 0)
            close(u->lanes[i].fd);
        free(u->lanes[i].bufs);
    }
    free(u->lanes);
    if (u->epfd >= 0)
        close(u->epfd);
    if (u->stopfd >= 0)
        close(u->stopfd);
    if (u->wakefd >= 0)
        close(u->wakefd);
    sw_addrmap_free(&u->map);
    acis_fault_free(&u->fault);
    pthread_mutex_destroy(&u->core_lock);
    free(u);
}

void acis_udpsw_counters(const struct acis_udpsw *u, uint64_t *out)
{
    acis_sw_counters(u->core, out);
}

const char *acis_udpsw_address(const struct acis_udpsw *u)
{
    return u->address;
}

int acis_udpsw_uplink(struct acis_udpsw *u, const char *parent, int timeout_ms,
                      uint32_t *port, char *err, size_t errlen)
{
    struct sw_peer to = { .len = sizeof to.a };
    if (u->nlanes > 1) {
        snprintf(err, errlen, "a switch with --threads serves alone, not in a fabric");
        return -1;
    }
    if (acis_addr_parse(parent, &to.a, &to.len, err, errlen) != 0)
        return -1;
    uint8_t q[ACIS_HDR_LEN + ACIS_HELLO_LEN] = { 0 }, a[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    uint32_t me = acis_sw_boot(u->core);
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(ACIS_K_HELLO, ACIS_ALG_FLAT), .payload_len = ACIS_HELLO_LEN,
        .seq = 1, .src = me,
    };
    acis_hdr_encode(&h, q);
    acis_put32(q + ACIS_HDR_LEN, u->o.payload);            /* what the parent checks */
    acis_put32(q + ACIS_HDR_LEN + 4, ACIS_HELLO_SWITCH | (u->o.tables & 0xffffu) << 16);
    acis_hdr_seal(q, q + ACIS_HDR_LEN, ACIS_HELLO_LEN);
    uint64_t end = acis_now_ns() + (uint64_t)timeout_ms * 1000000;
    while (acis_now_ns() < end) {
        if (sendto(u->svc, q, sizeof q, 0, (struct sockaddr *)&to.a, to.len) < 0) {
            snprintf(err, errlen, "cannot send to %s: %s", parent, strerror(errno));
            return -1;
        }
        struct pollfd pf = { u->svc, POLLIN, 0 };
        uint64_t retry = acis_now_ns() + 100000000;
        while (acis_now_ns() < retry && poll(&pf, 1, 10) >= 0) {
            struct sw_peer from = { .len = sizeof from.a };
            ssize_t n = recvfrom(u->svc, a, sizeof a, 0, (struct sockaddr *)&from.a, &from.len);
            struct acis_hdr w;
            if (n < 0 || !sw_peer_same(&from, &to) ||
                acis_wire_decode(a, (size_t)n, ACIS_MAX_PAYLOAD, &w) != ACIS_WERR_OK ||
                ACIS_OPC_KIND(w.opcode) != ACIS_K_WELCOME || w.seq != 1)
                continue;                      /* hosts try again once we serve */
            const uint8_t *p = a + ACIS_HDR_LEN;
            uint32_t st = acis_get32(p);
            if (st == ACIS_ST_JOB_MISMATCH) {  /* it checked our HELLO: no port taken */
                snprintf(err, errlen, "switch %s has %u-byte packets and %u table rows, this "
                         "one %u and %u: give both the same --payload and --tables", parent,
                         acis_get32(p + 8), acis_get32(p + 16), u->o.payload, u->o.tables);
                return -1;
            }
            if (st != ACIS_ST_OK) {
                snprintf(err, errlen, "switch %s has no free port for a link", parent);
                return -1;
            }
            u->parent = to;
            acis_sw_set_parent(u->core, acis_get32(p + 28));
            *port = acis_get32(p + 4);
            return 0;
        }
    }
    snprintf(err, errlen, "switch %s did not answer within %d ms", parent, timeout_ms);
    return -1;
}

/* Read up to FAIR_BATCHES batches; returns datagrams handled.  The socket
 * is level-triggered, so what is left is read in the next round, after
 * the loop's housekeeping: the kernel queues datagrams in arrival order,
 * so no host's packets wait behind more than a few batches of another's. */
static int drain(struct udp_lane *l)
{
    struct acis_udpsw *u = l->u;
    int total = 0, n, rounds = 0;
    acis_sw_enter(l->core);                   /* the address map is the core's too */
    l->deferring = 1;
    do {
        for (int i = 0; i < BATCH; i++) {
            struct msghdr *m = &l->msgs[i].msg_hdr;
            memset(m, 0, sizeof *m);
            m->msg_iov = &l->iov[i];
            m->msg_iovlen = 1;
            m->msg_name = &l->peers[i].a;
            m->msg_namelen = sizeof l->peers[i].a;
        }
        n = recvmmsg(l->fd, l->msgs, BATCH, MSG_DONTWAIT, NULL);
        for (int i = 0; i < n; i++) {
            const uint8_t *pkt = l->iov[i].iov_base;
            size_t len = l->msgs[i].msg_len;
            l->peers[i].len = l->msgs[i].msg_hdr.msg_namelen;
            if (l->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
                continue;                 /* larger than any valid packet */
            uint32_t port = sw_addrmap_find(&u->map, &l->peers[i]);
            if (port == SW_NONE || sw_is_hello(pkt, len))
                port = ACIS_PORT_SERVICE;
            if (sw_peer_same(&l->peers[i], &u->parent))
                port = ACIS_PORT_UPLINK;
            acis_sw_input(l->core, port, &l->peers[i], pkt, len);
            if (len >= ACIS_HDR_LEN && ACIS_OPC_KIND(pkt[5]) >= ACIS_K_HELLO)
                atomic_store(&u->others, u->home != SW_NONE &&
                                         acis_sw_rows_without(u->core, u->home) > 0);
        }
        total += n > 0 ? n : 0;
        if (l->nshort)
            shorts_flush(l);                  /* the batch's answers, one call */
    } while (n == BATCH && ++rounds < FAIR_BATCHES);
    l->deferring = 0;
    acis_sw_leave(l->core);
    return total;
}

/* Handle n epoll events; returns datagrams handled. */
static int serve(struct acis_udpsw *u, const struct epoll_event *ev, int n)
{
    int got = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].data.u32 == TAG_SERVICE)
            got += drain(&u->lanes[0]);
    return got;
}

/* Lanes 1..: a worker's loop in its own thread, as acis_udpsw_run's
 * (no driver, no housekeeping: a switch with workers has neither a parent
 * nor faults to release). */
static void *lane_main(void *arg)
{
    struct udp_lane *l = arg;
    uint64_t last = 0;
    acis_thread_short_slice(100);
    while (!atomic_load(&l->u->lanes_stop)) {
        struct pollfd pf = { l->fd, POLLIN, 0 };
        if (!(l->u->spin && acis_now_ns() - last < SPIN_NS) && poll(&pf, 1, 100) <= 0)
            continue;
        if (drain(l) > 0)
            last = acis_now_ns();
    }
    return NULL;
}

/* Stop and join lanes 1..n-1. */
static void lanes_join(struct acis_udpsw *u, uint32_t n)
{
    atomic_store(&u->lanes_stop, 1);
    for (uint32_t i = 1; i < n; i++)
        pthread_join(u->lanes[i].thread, NULL);
}

int acis_udpsw_run(struct acis_udpsw *u, atomic_int *stop, int spin)
{
    struct epoll_event ev[64];
    uint64_t last = acis_now_ns();
    uint32_t lanes = 1;
    int rc = 0;
    u->spin = spin;
    atomic_store(&u->lanes_stop, 0);
    for (; lanes < u->nlanes; lanes++)
        if (pthread_create(&u->lanes[lanes].thread, NULL, lane_main, &u->lanes[lanes]) != 0) {
            lanes_join(u, lanes);
            return -1;
        }
    while (!atomic_load(stop)) {
        uint64_t now = acis_now_ns(), drove = atomic_load(&u->last_drive);
        if (now - drove < HANDOFF_NS) {           /* a driver serves: stay parked */
            struct pollfd pf[2] = { { u->stopfd, POLLIN, 0 }, { u->wakefd, POLLIN, 0 } };
            poll(pf, 2, (int)((HANDOFF_NS - (now - drove)) / 1000000) + 1);
            uint64_t v;
            if (pf[1].revents && read(u->wakefd, &v, sizeof v) < 0)
                continue;
            continue;
        }
        int busy = spin && now - last < SPIN_NS;
        /* Held packets are released by tick(): look every ms while the
         * fault injector may hold some (how many it holds is the core's,
         * under core_lock; whether it may is set at start). */
        int holds = u->fault.r.reorder || u->fault.r.delay;
        int n = epoll_wait(u->epfd, ev, 64, busy ? 0 : holds ? 1 : 1000);
        if (n < 0 && errno != EINTR) {
            rc = -1;
            break;
        }
        if (now - atomic_load(&u->last_drive) < HANDOFF_NS)
            continue;
        pthread_mutex_lock(&u->core_lock);
        if (n > 0 && serve(u, ev, n) > 0)
            last = acis_now_ns();
        tick(u);
        pthread_mutex_unlock(&u->core_lock);
    }
    lanes_join(u, lanes);
    return rc;
}

void acis_udpsw_set_home_answers(struct acis_udpsw *u, acis_udpsw_home_fn fn, void *arg)
{
    pthread_mutex_lock(&u->core_lock);
    u->home_fn = fn;
    u->home_arg = arg;
    pthread_mutex_unlock(&u->core_lock);
}

/* A driver reads the one socket straight away: asking epoll first would
 * cost a system call more whenever a packet is there. */
int acis_udpsw_drive(struct acis_udpsw *u)
{
    atomic_store(&u->last_drive, acis_now_ns());
    if (pthread_mutex_trylock(&u->core_lock) != 0)
        return 0;                                /* the thread is at it */
    u->home_now = u->home_fn && u->home != SW_NONE;
    int got = drain(&u->lanes[0]);
    tick(u);
    u->home_now = 0;
    pthread_mutex_unlock(&u->core_lock);
    return got;
}

/* A driver's drain that sends from its home function (an answer that
 * lets the engine send more) finds core_lock held, its own: not a default
 * mutex's to take twice, so those packets go as datagrams and the
 * receive buffer being drained is never written under it. */
int acis_udpsw_take_begin(struct acis_udpsw *u)
{
    if (u->fault.active || u->nlanes != 1)       /* both set before it serves */
        return 0;
    if (pthread_mutex_trylock(&u->core_lock) != 0)
        return 0;                                /* the thread or a driver is at it */
    if (u->home == SW_NONE) {
        pthread_mutex_unlock(&u->core_lock);
        return 0;
    }
    acis_sw_enter(u->lanes[0].core);
    u->lanes[0].deferring = 1;
    return 1;
}

/* The packet is read where it is, header and payload apart
 * (acis_sw_input_split): the core copies what it keeps, as from a
 * receive buffer, and reads the payload only during the call. */
int acis_udpsw_take(struct acis_udpsw *u, const uint8_t *hdr, const uint8_t *payload,
                    size_t len)
{
    if (ACIS_OPC_KIND(hdr[5]) >= ACIS_K_HELLO || ACIS_HDR_LEN + len > pkt_max(u) ||
        u->home == SW_NONE)
        return 0;
    acis_sw_input_split(u->lanes[0].core, u->home, &u->map.addr[u->home], hdr, payload,
                        ACIS_HDR_LEN + len);
    return 1;
}

void acis_udpsw_take_end(struct acis_udpsw *u)
{
    struct udp_lane *l = &u->lanes[0];
    if (l->nshort)
        shorts_flush(l);                          /* the answers it made, one call */
    l->deferring = 0;
    acis_sw_leave(l->core);
    pthread_mutex_unlock(&u->core_lock);
}

void acis_udpsw_release(struct acis_udpsw *u)
{
    uint64_t one = 1;
    atomic_store(&u->last_drive, 0);
    if (u->running && write(u->wakefd, &one, sizeof one) < 0)
        return;                                 /* the thread will see it within 2 ms */
}

void acis_udpsw_set_home(struct acis_udpsw *u, uint32_t port)
{
    pthread_mutex_lock(&u->core_lock);
    u->home = port;
    atomic_store(&u->others, acis_sw_rows_without(u->core, port) > 0);
    pthread_mutex_unlock(&u->core_lock);
}

int acis_udpsw_serves_others(const struct acis_udpsw *u)
{
    return atomic_load_explicit(&u->others, memory_order_relaxed);
}

int acis_udpsw_fd(const struct acis_udpsw *u)
{
    return u->epfd;
}

static void *thread_main(void *arg)
{
    struct acis_udpsw *u = arg;
    acis_thread_short_slice(100);
    acis_udpsw_run(u, &u->stop, u->spin);
    return NULL;
}

int acis_udpsw_start(struct acis_udpsw *u, int spin)
{
    atomic_store(&u->stop, 0);
    u->spin = spin;
    if (pthread_create(&u->thread, NULL, thread_main, u) != 0)
        return -1;
    u->running = 1;
    return 0;
}

void acis_udpsw_stop(struct acis_udpsw *u)
{
    if (!u->running)
        return;
    uint64_t one = 1;
    atomic_store(&u->stop, 1);
    if (write(u->stopfd, &one, sizeof one) < 0)
        perror("acis-switch: eventfd");
    pthread_join(u->thread, NULL);
    u->running = 0;
}
