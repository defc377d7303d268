/* peer.c -- the peer service: how ranks help each other finish the
 * collectives a failed switch left open.  Every process has two UDP
 * sockets on the address it reaches the switch from (for a verbs switch,
 * which has no IP address, the address its host name resolves to): a
 * service socket,
 * read by a thread of its own that answers other ranks' PEER_ASK packets
 * through the serve function src/offload registers (so a rank blocked in
 * MPI_Recv or in computation still answers), and an ask socket, used only
 * by the thread that recovers.  A reply is accepted only from the service
 * socket of the rank it claims to come from.  Idle until a switch fails:
 * the thread sleeps in poll().  Nothing here uses MPI. */
#include "config.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpid/device.h"
#include "util/util.h"

#define PKT_MAX (ACIS_HDR_LEN + ACIS_MAX_PAYLOAD)

struct acis_peer_ctx {
    int svc, ask, wake;           /* sockets; eventfd stops the thread */
    int running;
    pthread_t thread;
    uint64_t key;
    uint32_t rank, world;
    acis_peer_serve serve;
    void *arg;
    struct sockaddr_storage *addrs; /* every rank's service address */
};

static struct acis_peer_ctx acis_peer = { .svc = -1, .ask = -1, .wake = -1 };

static void *service(void *unused)
{
    (void)unused;
    struct acis_peer_ctx *p = &acis_peer;
    uint8_t *in = malloc(PKT_MAX), *out = malloc(PKT_MAX);
    while (in && out) {
        struct pollfd pf[2] = { { p->svc, POLLIN, 0 }, { p->wake, POLLIN, 0 } };
        if (poll(pf, 2, -1) < 0 && errno != EINTR)
            break;
        if (pf[1].revents)
            break;
        for (;;) {
            struct sockaddr_storage from;
            socklen_t fl = sizeof from;
            ssize_t n = recvfrom(p->svc, in, PKT_MAX, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
            if (n < 0)
                break;
            struct acis_hdr h;
            if (acis_wire_decode(in, (size_t)n, ACIS_MAX_PAYLOAD, &h) != ACIS_WERR_OK ||
                ACIS_OPC_KIND(h.opcode) != ACIS_K_PEER_ASK || h.job_key != p->key ||
                h.src >= p->world || h.flags) {
                ACIS_COUNT(packets_dropped, 1);     /* malformed, or not ours */
                continue;
            }
            size_t len = p->serve(p->arg, &h, out);
            if (len)
                sendto(p->svc, out, len, 0, (struct sockaddr *)&from, fl);
        }
    }
    free(in);
    free(out);
    return NULL;
}

/* A UDP socket bound to the local address that routes to the switch. */
static int bind_near(const struct sockaddr_storage *sw, socklen_t swlen,
                     struct sockaddr_storage *local, socklen_t *llen, char *why, size_t whylen)
{
    int probe = socket(sw->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0), fd = -1;
    *llen = sizeof *local;
    if (probe < 0 || connect(probe, (const struct sockaddr *)sw, swlen) != 0 ||
        getsockname(probe, (struct sockaddr *)local, llen) != 0) {
        snprintf(why, whylen, "no local address toward the switch: %s", strerror(errno));
        goto out;
    }
    if (local->ss_family == AF_INET)
        ((struct sockaddr_in *)local)->sin_port = 0;
    else
        ((struct sockaddr_in6 *)local)->sin6_port = 0;
    fd = socket(sw->ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)local, *llen) != 0 ||
        getsockname(fd, (struct sockaddr *)local, llen) != 0) {
        snprintf(why, whylen, "cannot bind a recovery socket: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
out:
    if (probe >= 0)
        close(probe);
    return fd;
}

/* An address to bind near: the switch's, or for an RDMA endpoint (no IP
 * address) one of this host's that other hosts can reach -- its name's,
 * else an interface's; loopback only if it has nothing else (one node). */
static int toward(const char *switch_addr, struct sockaddr_storage *sw, socklen_t *len,
                  char *why, size_t whylen)
{
    struct acis_ib_addr ib;
    if (acis_ib_addr_parse(switch_addr, &ib) != 0)
        return acis_addr_parse(switch_addr, sw, len, why, whylen);
    if (acis_host_address(sw, len) == 0)
        return 0;
    struct sockaddr_in *lo = (struct sockaddr_in *)sw;
    memset(sw, 0, sizeof *sw);
    lo->sin_family = AF_INET;
    lo->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    lo->sin_port = htons(9);
    *len = sizeof *lo;
    return 0;
}

int acis_peer_start(const char *switch_addr, uint64_t key, uint32_t rank, uint32_t world,
                    acis_peer_serve serve, void *arg, struct sockaddr_storage *mine,
                    char *why, size_t whylen)
{
    struct acis_peer_ctx *p = &acis_peer;
    struct sockaddr_storage sw, ask;
    socklen_t swlen, len, asklen;
    if (p->running) {
        snprintf(why, whylen, "peer service already running");
        return -1;
    }
    if (toward(switch_addr, &sw, &swlen, why, whylen) != 0)
        return -1;
    p->key = key;
    p->rank = rank;
    p->world = world;
    p->serve = serve;
    p->arg = arg;
    memset(mine, 0, sizeof *mine);
    if ((p->svc = bind_near(&sw, swlen, mine, &len, why, whylen)) < 0 ||
        (p->ask = bind_near(&sw, swlen, &ask, &asklen, why, whylen)) < 0)
        goto fail;
    acis_sock_buffers(p->svc, 1 << 20);
    acis_sock_buffers(p->ask, 4 << 20);
    if ((p->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0 ||
        !(p->addrs = calloc(world, sizeof *p->addrs))) {
        snprintf(why, whylen, "out of memory");
        goto fail;
    }
    /* The thread takes no signals: they belong to the application. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&p->thread, NULL, service, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        snprintf(why, whylen, "cannot start the peer service thread: %s", strerror(rc));
        goto fail;
    }
    p->running = 1;
    return 0;
fail:
    acis_peer_stop();
    return -1;
}

void acis_peer_set_addrs(const struct sockaddr_storage *all)
{
    memcpy(acis_peer.addrs, all, acis_peer.world * sizeof *all);
}

int acis_peer_ask(uint32_t rank, const uint8_t *pkt, size_t len)
{
    struct acis_peer_ctx *p = &acis_peer;
    if (rank >= p->world || p->ask < 0)
        return -1;
    const struct sockaddr_storage *to = &p->addrs[rank];
    socklen_t tl = to->ss_family == AF_INET ? sizeof(struct sockaddr_in)
                                            : sizeof(struct sockaddr_in6);
    if (sendto(p->ask, pkt, len, 0, (const struct sockaddr *)to, tl) < 0 &&
        errno != EAGAIN && errno != ENOBUFS)
        return -1;
    return 0;
}

ssize_t acis_peer_recv(uint8_t *buf, size_t cap, struct acis_hdr *h)
{
    struct acis_peer_ctx *p = &acis_peer;
    for (;;) {
        struct sockaddr_storage from;
        socklen_t fl = sizeof from;
        ssize_t n = recvfrom(p->ask, buf, cap, MSG_DONTWAIT, (struct sockaddr *)&from, &fl);
        if (n < 0)
            return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? 0 : -1;
        if (acis_wire_decode(buf, (size_t)n, ACIS_MAX_PAYLOAD, h) == ACIS_WERR_OK &&
            h->job_key == p->key && h->src < p->world && acis_addr_same(&from, &p->addrs[h->src]))
            return n;
        ACIS_COUNT(packets_dropped, 1);
    }
}

int acis_peer_wait(int ms)
{
    struct pollfd pf = { acis_peer.ask, POLLIN, 0 };
    return poll(&pf, 1, ms) < 0 && errno != EINTR ? -1 : 0;
}

void acis_peer_stop(void)
{
    struct acis_peer_ctx *p = &acis_peer;
    if (p->running) {
        uint64_t one = 1;
        if (write(p->wake, &one, sizeof one) != sizeof one)
            acis_log(0, "cannot stop the peer service thread");
        else
            pthread_join(p->thread, NULL);
        p->running = 0;
    }
    if (p->svc >= 0)
        close(p->svc);
    if (p->ask >= 0)
        close(p->ask);
    if (p->wake >= 0)
        close(p->wake);
    p->svc = p->ask = p->wake = -1;
    free(p->addrs);
    p->addrs = NULL;
}
