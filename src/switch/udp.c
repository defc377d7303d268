/* udp.c -- the switch core on UDP sockets: a service socket at the
 * advertised address (HELLO, STATS) and one connected socket per host port,
 * all in one epoll set.  Each ready socket is drained with recvmmsg.  The
 * loop spins while traffic flows if asked to, else sleeps in epoll_wait;
 * an eventfd wakes it to stop.  Runs in acis-switchd or in a thread of an
 * MPI job (the embedded switch). */
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

#define BATCH 32
#define FAIR_BATCHES 4           /* batches per ready socket per round */
#define SOCKBUF (4 << 20)
#define SPIN_NS 200000           /* keep spinning this long after traffic */
#define HANDOFF_NS 2000000ull    /* serve again when nobody drove for this long */
#define TAG_SERVICE 0xfffffffeu
#define TAG_STOP 0xfffffffdu

struct peer {
    struct sockaddr_storage a;
    socklen_t len;
};

struct acis_udpsw {
    struct acis_sw *core;
    struct acis_sw_opts o;
    int svc, epfd, stopfd, wakefd;
    struct sockaddr_storage svc_addr;
    socklen_t svc_len;
    char address[80];
    int *port_fd;                 /* o.ports */
    /* receive batch */
    uint8_t *bufs;
    struct mmsghdr msgs[BATCH];
    struct iovec iov[BATCH];
    struct peer peers[BATCH];
    /* embedded mode */
    pthread_t thread;
    int running, spin;
    volatile int stop;
    pthread_mutex_t core_lock;    /* the thread or a driver, not both */
    _Atomic uint64_t last_drive;  /* when a driver last polled us */
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
    const struct peer *p = vpeer;
    struct sockaddr_storage a = u->svc_addr;
    if (a.ss_family == AF_INET)
        ((struct sockaddr_in *)&a)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)&a)->sin6_port = 0;
    int fd = socket(a.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    acis_sock_buffers(fd, SOCKBUF);
    if (bind(fd, (struct sockaddr *)&a, u->svc_len) != 0 ||
        connect(fd, (const struct sockaddr *)&p->a, p->len) != 0 ||
        epoll_add(u->epfd, fd, port) != 0) {
        close(fd);
        return -1;
    }
    u->port_fd[port] = fd;
    return 0;
}

static void port_close(void *ctx, uint32_t port)
{
    struct acis_udpsw *u = ctx;
    if (u->port_fd[port] >= 0) {
        epoll_ctl(u->epfd, EPOLL_CTL_DEL, u->port_fd[port], NULL);
        close(u->port_fd[port]);
        u->port_fd[port] = -1;
    }
}

static void send_one(struct acis_udpsw *u, uint32_t port, const struct iovec *iov, int iovcnt)
{
    struct msghdr m = { .msg_iov = (struct iovec *)iov, .msg_iovlen = (size_t)iovcnt };
    int fd = port < u->o.ports ? u->port_fd[port] : -1;
    while (fd >= 0 && sendmsg(fd, &m, 0) < 0 && errno == EINTR)
        ;
}

/* The fault injector's way out. */
static void fault_sink(void *ctx, uint32_t port, const void *buf, size_t len)
{
    struct iovec iov = { (void *)buf, len };
    send_one(ctx, port, &iov, 1);
}

/* Multicast on UDP: the same datagram once per member port. */
static void send_ports(void *ctx, const uint32_t *ports, uint32_t n,
                       const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = ctx;
    if (!u->fault.active) {
        for (uint32_t i = 0; i < n; i++)
            send_one(u, ports[i], iov, iovcnt);
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
    if (u->fault.nheld)
        acis_fault_flush(&u->fault, fault_sink, u, acis_now_ns());
}

static void reply(void *ctx, const void *vpeer, const struct iovec *iov, int iovcnt)
{
    struct acis_udpsw *u = ctx;
    const struct peer *p = vpeer;
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
    pthread_mutex_init(&u->core_lock, NULL);
    acis_fault_init(&u->fault, &o->faults, o->fault_seed);
    u->port_fd = malloc(sizeof(int) * o->ports);
    u->bufs = sw_alloc(BATCH * rx_stride(u));
    if (!u->port_fd || !u->bufs) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    memset(u->port_fd, 0xff, sizeof(int) * o->ports);
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
    if (co.credits == 0)        /* a port socket gets the buffer the service got */
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
    acis_sw_destroy(u->core);           /* closes no sockets; we do */
    if (u->port_fd)
        for (uint32_t p = 0; p < u->o.ports; p++)
            if (u->port_fd[p] >= 0)
                close(u->port_fd[p]);
    if (u->svc >= 0)
        close(u->svc);
    if (u->epfd >= 0)
        close(u->epfd);
    if (u->stopfd >= 0)
        close(u->stopfd);
    if (u->wakefd >= 0)
        close(u->wakefd);
    free(u->port_fd);
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

/* Read up to FAIR_BATCHES batches from one socket; returns datagrams
 * handled.  Sockets are level-triggered, so what is left is read in the
 * next round, after every other ready port had its turn: one job (or a
 * flood at the service address) cannot starve another. */
static int drain(struct acis_udpsw *u, int fd, uint32_t port)
{
    int total = 0, n, rounds = 0;
    do {
        for (int i = 0; i < BATCH; i++) {
            memset(&u->msgs[i].msg_hdr, 0, sizeof u->msgs[i].msg_hdr);
            u->msgs[i].msg_hdr.msg_iov = &u->iov[i];
            u->msgs[i].msg_hdr.msg_iovlen = 1;
            if (port == ACIS_PORT_SERVICE) {
                u->msgs[i].msg_hdr.msg_name = &u->peers[i].a;
                u->msgs[i].msg_hdr.msg_namelen = sizeof u->peers[i].a;
            }
        }
        n = recvmmsg(fd, u->msgs, BATCH, MSG_DONTWAIT, NULL);
        for (int i = 0; i < n; i++) {
            u->peers[i].len = u->msgs[i].msg_hdr.msg_namelen;
            if (u->msgs[i].msg_hdr.msg_flags & MSG_TRUNC)
                continue;                 /* larger than any valid packet */
            acis_sw_input(u->core, port, &u->peers[i], u->iov[i].iov_base, u->msgs[i].msg_len);
        }
        total += n > 0 ? n : 0;
    } while (n == BATCH && ++rounds < FAIR_BATCHES);
    return total;
}

/* Handle the ready sockets of n epoll events; returns datagrams handled. */
static int serve(struct acis_udpsw *u, const struct epoll_event *ev, int n)
{
    int got = 0;
    for (int i = 0; i < n; i++) {
        uint32_t tag = ev[i].data.u32;
        if (tag == TAG_STOP)
            continue;
        int fd = tag == TAG_SERVICE ? u->svc : (tag < u->o.ports ? u->port_fd[tag] : -1);
        if (fd >= 0)
            got += drain(u, fd, tag == TAG_SERVICE ? ACIS_PORT_SERVICE : tag);
    }
    return got;
}

int acis_udpsw_run(struct acis_udpsw *u, volatile int *stop, int spin)
{
    struct epoll_event ev[64];
    uint64_t last = acis_now_ns();
    while (!*stop) {
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
        int n = epoll_wait(u->epfd, ev, 64, busy ? 0 : u->fault.nheld ? 1 : 1000);
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

int acis_udpsw_drive(struct acis_udpsw *u)
{
    struct epoll_event ev[64];
    int got = 0;
    atomic_store(&u->last_drive, acis_now_ns());
    if (pthread_mutex_trylock(&u->core_lock) != 0)
        return 0;                                /* the thread is at it */
    int n = epoll_wait(u->epfd, ev, 64, 0);
    if (n > 0)
        got = serve(u, ev, n);
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
    u->stop = 0;
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
    u->stop = 1;
    if (write(u->stopfd, &one, sizeof one) < 0)
        perror("acis-switch: eventfd");
    pthread_join(u->thread, NULL);
    u->running = 0;
}
