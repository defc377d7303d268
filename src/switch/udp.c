/* udp.c -- the switch core on one UDP socket: the service socket at the
 * advertised address serves HELLO, STATS and every host port.  A port is
 * the address its host said HELLO from (addrmap.c); a datagram from an
 * unknown address goes to the core as a service packet (data from there is
 * foreign).  The socket is drained with recvmmsg, a few batches per round;
 * a multicast is one sendmmsg, a message per member sharing one iovec.
 * The loop spins while traffic flows if asked to, else sleeps in
 * epoll_wait; an eventfd wakes it to stop.  Runs in acis-switchd or in a
 * thread of an MPI job (the embedded switch). */
#include "config.h"

#include <errno.h>
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
#define FAIR_BATCHES 4           /* batches per round */
#define SOCKBUF (4 << 20)
#define SPIN_NS 200000           /* keep spinning this long after traffic */
#define HANDOFF_NS 2000000ull    /* serve again when nobody drove for this long */
#define TAG_SERVICE 0xfffffffeu
#define TAG_STOP 0xfffffffdu

struct acis_udpsw {
    struct acis_sw *core;
    struct acis_sw_opts o;
    int svc, epfd, stopfd, wakefd;
    struct sockaddr_storage svc_addr;
    socklen_t svc_len;
    char address[80];
    struct sw_addrmap map;        /* host ports by address */
    struct sw_peer parent;        /* the parent switch in a fabric (len 0: none) */
    /* receive batch */
    uint8_t *bufs;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct sw_peer peers[BATCH];
    struct mmsghdr out[BATCH];    /* send batch */
    /* embedded mode */
    pthread_t thread;
    int running, spin;
    atomic_int stop;              /* set by the thread that stops it */
    pthread_mutex_t core_lock;    /* the thread or a driver, not both */
    _Atomic uint64_t last_drive;  /* when a driver last polled us */
    uint32_t home;                /* the hosting process's port (SW_NONE) */
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

static uint8_t *rx_buf(const struct acis_udpsw *u, int i)
{
    return u->bufs + (size_t)i * rx_stride(u) + (SW_ALIGN - ACIS_HDR_LEN % SW_ALIGN);
}

static int epoll_add(int epfd, int fd, uint32_t tag)
{
    struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };
    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
}

/* ---- the core's transport callbacks ---- */

static int port_open(void *ctx, uint32_t port, const void *vpeer)
{
    struct acis_udpsw *u = ctx;
    return sw_addrmap_add(&u->map, port, vpeer);
}

static void port_close(void *ctx, uint32_t port)
{
    struct acis_udpsw *u = ctx;
    sw_addrmap_del(&u->map, port);
}

/* One datagram (iov) to each of ports[0..n), in sendmmsg batches.  A
 * message the kernel refuses (buffer full) is dropped, as UDP would. */
static void send_batch(struct acis_udpsw *u, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    uint32_t done = 0;
    while (done < n) {
        unsigned k = 0;
        for (; k < BATCH && done + k < n; k++) {
            uint32_t port = ports[done + k];
            const struct sw_peer *p = port == ACIS_PORT_UPLINK ? &u->parent
                                      : port < u->o.ports ? &u->map.addr[port] : NULL;
            struct msghdr *m = &u->out[k].msg_hdr;
            memset(m, 0, sizeof *m);
            if (!p || !p->len)
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
        int r = sendmmsg(u->svc, u->out, k, 0);
        if (r < 0 && errno == EINTR)
            continue;
        done += r > 0 ? (uint32_t)r : 1;           /* skip the one refused */
    }
}

/* The fault injector's way out. */
static void fault_sink(void *ctx, uint32_t port, const void *buf, size_t len)
{
    struct iovec iov = { (void *)buf, len };
    send_batch(ctx, &port, 1, &iov, 1);
}

/* Multicast on UDP: the same datagram once per member port. */
static void send_ports(void *ctx, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = ctx;
    if (!u->fault.active) {
        send_batch(u, ports, n, iov, iovcnt);
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
        acis_fault_send(&u->fault, fault_sink, u, ports[i], flat, len, now);
}

/* Housekeeping: packets the fault injector holds back. */
static void tick(struct acis_udpsw *u)
{
    uint64_t now = acis_now_ns();
    if (u->fault.nheld)
        acis_fault_flush(&u->fault, fault_sink, u, now);
    acis_sw_tick(u->core, now);
}

static void reply(void *ctx, const void *vpeer, const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = ctx;
    const struct sw_peer *p = vpeer;
    struct msghdr m = { .msg_name = (void *)&p->a, .msg_namelen = p->len,
                        .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    sendmsg(u->svc, &m, 0);
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
    pthread_mutex_init(&u->core_lock, NULL);
    acis_fault_init(&u->fault, &o->faults, o->fault_seed);
    u->bufs = sw_alloc(BATCH * rx_stride(u));
    if (!u->bufs || sw_addrmap_init(&u->map, o->ports) != 0) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    if (acis_addr_parse(listen, &u->svc_addr, &u->svc_len, err, errlen) != 0)
        goto fail;
    u->svc = socket(u->svc_addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (u->svc < 0 || bind(u->svc, (struct sockaddr *)&u->svc_addr, u->svc_len) != 0) {
        snprintf(err, errlen, "cannot bind %s: %s", listen, strerror(errno));
        goto fail;
    }
    int rcv = acis_sock_buffers(u->svc, SOCKBUF);
    getsockname(u->svc, (struct sockaddr *)&u->svc_addr, &u->svc_len);
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
    struct acis_sw_io io = { u, port_open, port_close, send_ports, reply };
    u->core = acis_sw_create(&co, &io, err, errlen);
    if (!u->core)
        goto fail;
    for (int i = 0; i < BATCH; i++) {
        u->iov[i].iov_base = rx_buf(u, i);
        u->iov[i].iov_len = pkt_max(u);
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
    if (u->svc >= 0)
        close(u->svc);
    if (u->epfd >= 0)
        close(u->epfd);
    if (u->stopfd >= 0)
        close(u->stopfd);
    if (u->wakefd >= 0)
        close(u->wakefd);
    sw_addrmap_free(&u->map);
    free(u->bufs);
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
static int drain(struct acis_udpsw *u)
{
    int total = 0, n, rounds = 0;
    do {
        for (int i = 0; i < BATCH; i++) {
            struct msghdr *m = &u->msgs[i].msg_hdr;
            memset(m, 0, sizeof *m);
            m->msg_iov = &u->iov[i];
            m->msg_iovlen = 1;
            m->msg_name = &u->peers[i].a;
            m->msg_namelen = sizeof u->peers[i].a;
        }
        n = recvmmsg(u->svc, u->msgs, BATCH, MSG_DONTWAIT, NULL);
        for (int i = 0; i < n; i++) {
            const uint8_t *pkt = u->iov[i].iov_base;
            size_t len = u->msgs[i].msg_len;
            u->peers[i].len = u->msgs[i].msg_hdr.msg_namelen;
            if (u->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
                continue;                 /* larger than any valid packet */
            uint32_t port = sw_addrmap_find(&u->map, &u->peers[i]);
            if (port == SW_NONE || sw_is_hello(pkt, len))
                port = ACIS_PORT_SERVICE;
            if (sw_peer_same(&u->peers[i], &u->parent))
                port = ACIS_PORT_UPLINK;
            acis_sw_input(u->core, port, &u->peers[i], pkt, len);
            if (len >= ACIS_HDR_LEN && ACIS_OPC_KIND(pkt[5]) >= ACIS_K_HELLO)
                atomic_store(&u->others, u->home != SW_NONE &&
                                         acis_sw_rows_without(u->core, u->home) > 0);
        }
        total += n > 0 ? n : 0;
    } while (n == BATCH && ++rounds < FAIR_BATCHES);
    return total;
}

/* Handle n epoll events; returns datagrams handled. */
static int serve(struct acis_udpsw *u, const struct epoll_event *ev, int n)
{
    int got = 0;
    for (int i = 0; i < n; i++)
        if (ev[i].data.u32 == TAG_SERVICE)
            got += drain(u);
    return got;
}

int acis_udpsw_run(struct acis_udpsw *u, atomic_int *stop, int spin)
{
    struct epoll_event ev[64];
    uint64_t last = acis_now_ns();
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
        if (n < 0 && errno != EINTR)
            return -1;
        if (now - atomic_load(&u->last_drive) < HANDOFF_NS)
            continue;
        pthread_mutex_lock(&u->core_lock);
        if (n > 0 && serve(u, ev, n) > 0)
            last = acis_now_ns();
        tick(u);
        pthread_mutex_unlock(&u->core_lock);
    }
    return 0;
}

/* A driver reads the one socket straight away: asking epoll first would
 * cost a system call more whenever a packet is there. */
int acis_udpsw_drive(struct acis_udpsw *u)
{
    atomic_store(&u->last_drive, acis_now_ns());
    if (pthread_mutex_trylock(&u->core_lock) != 0)
        return 0;                                /* the thread is at it */
    int got = drain(u);
    tick(u);
    pthread_mutex_unlock(&u->core_lock);
    return got;
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
