/* udp.c -- the UDP channel: one datagram socket per process, talking to the
 * switch's service address until HELLO is answered, then connected to the
 * host port whose WELCOME answered it (on UDP a switch answers HELLO from
 * its service address: protocol.md).  Every datagram's source is read and
 * compared with the one address the channel listens to (the service
 * address until then, the port after): one from anyone else is counted
 * (packets_foreign) and dropped, so a process that floods the socket
 * cannot take the port over or be answered.  After the connect the
 * kernel drops them before they are queued (not counted here).  Batches
 * with sendmmsg/recvmmsg. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mpid/channel.h"
#include "util/util.h"

#define SOCKBUF (4 << 20)

struct acis_chan {
    int fd;
    struct sockaddr_storage svc;      /* where requests go before attach */
    struct sockaddr_storage peer;     /* the one sender we take datagrams from */
    socklen_t svc_len;
    int attached, rcvbuf;
};

/* The address the switch's answers come from when we send to svc: svc as
 * the kernel routes it (a wildcard 0.0.0.0 or :: reaches the loopback
 * address), what a connected socket would see.  svc itself if the kernel
 * has no route (then nothing answers anyway). */
static void reached(const struct sockaddr_storage *svc, socklen_t len,
                    struct sockaddr_storage *out)
{
    int probe = socket(svc->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    socklen_t l = sizeof *out;
    *out = *svc;
    if (probe < 0)
        return;
    if (connect(probe, (const struct sockaddr *)svc, len) != 0 ||
        getpeername(probe, (struct sockaddr *)out, &l) != 0)
        *out = *svc;
    close(probe);
}

static int udp_open(struct acis_chan **out, const char *addr, char *why, size_t whylen)
{
    struct acis_chan *ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (acis_addr_parse(addr, &ch->svc, &ch->svc_len, why, whylen) != 0)
        goto fail;
    reached(&ch->svc, ch->svc_len, &ch->peer);
    ch->fd = socket(ch->svc.ss_family, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (ch->fd < 0) {
        snprintf(why, whylen, "socket: %s", strerror(errno));
        goto fail;
    }
    ch->rcvbuf = acis_sock_buffers(ch->fd, SOCKBUF);
    *out = ch;
    return 0;
fail:
    free(ch);
    return -1;
}

static int udp_attach(struct acis_chan *ch, const struct acis_chan_from *from)
{
    if (!from->len || connect(ch->fd, (const struct sockaddr *)&from->a.ip, from->len) != 0)
        return -1;
    ch->peer = from->a.ip;
    ch->attached = 1;
    return 0;
}

static int udp_send(struct acis_chan *ch, const struct acis_dev_pkt *pkts, int n)
{
    struct mmsghdr m[64];
    struct iovec iov[64][2];
    for (int done = 0; done < n;) {
        int b = n - done < 64 ? n - done : 64;
        for (int i = 0; i < b; i++) {
            const struct acis_dev_pkt *p = &pkts[done + i];
            iov[i][0] = (struct iovec){ (void *)p->hdr, ACIS_HDR_LEN };
            iov[i][1] = (struct iovec){ (void *)p->payload, p->len };
            m[i].msg_hdr = (struct msghdr){
                .msg_name = ch->attached ? NULL : &ch->svc,
                .msg_namelen = ch->attached ? 0 : ch->svc_len,
                .msg_iov = iov[i], .msg_iovlen = p->len ? 2 : 1,
            };
        }
        int s = sendmmsg(ch->fd, m, (unsigned)b, 0);
        if (s < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == ENOBUFS) {   /* send buffer full: wait */
                struct pollfd pf = { ch->fd, POLLOUT, 0 };
                poll(&pf, 1, 10);
                continue;
            }
            return -1;
        }
        done += s;
    }
    return 0;
}

static int udp_recv(struct acis_chan *ch, uint8_t **bufs, size_t cap, size_t *lens,
                    struct acis_chan_from *from, int max)
{
    struct mmsghdr m[ACIS_RX_BATCH];
    struct iovec iov[ACIS_RX_BATCH];
    struct sockaddr_storage src[ACIS_RX_BATCH];
    if (max > ACIS_RX_BATCH)
        max = ACIS_RX_BATCH;
    for (int i = 0; i < max; i++) {
        iov[i] = (struct iovec){ bufs[i], cap };
        m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
                                        .msg_name = &src[i], .msg_namelen = sizeof src[i] };
    }
    int n = recvmmsg(ch->fd, m, (unsigned)max, MSG_DONTWAIT, NULL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED ? 0 : -1;
    int got = 0;
    for (int i = 0; i < n; i++) {
        if (!acis_addr_same(&src[i], &ch->peer)) {
            ACIS_COUNT(packets_foreign, 1);         /* not our switch: dropped */
            continue;
        }
        lens[got] = m[i].msg_hdr.msg_flags & MSG_TRUNC ? 0 : m[i].msg_len;
        if (got != i)
            memcpy(bufs[got], bufs[i], lens[got]);
        from[got].len = m[i].msg_hdr.msg_namelen;
        memcpy(&from[got].a.ip, &src[i], from[got].len);
        from[got].peer = 1;
        got++;
    }
    return got;
}

static int udp_wait(struct acis_chan *ch, int timeout_ms)
{
    struct pollfd pf = { ch->fd, POLLIN, 0 };
    int n = poll(&pf, 1, timeout_ms);
    return n < 0 ? (errno == EINTR ? 0 : -1) : n > 0;
}

static int udp_fd(struct acis_chan *ch)
{
    return ch->fd;
}

static int udp_memory(struct acis_chan *ch)
{
    return acis_addr_loopback((const struct sockaddr *)&ch->peer);
}

static int udp_rcvbuf(struct acis_chan *ch)
{
    return ch->rcvbuf;
}

static void udp_close(struct acis_chan *ch)
{
    if (ch->fd >= 0)
        close(ch->fd);
    free(ch);
}

const struct acis_chan_ops acis_chan_udp = {
    .name = "udp", .sealed = 1, .reliable = 0, .open = udp_open, .attach = udp_attach,
    .send = udp_send, .recv = udp_recv, .wait = udp_wait, .fd = udp_fd, .rcvbuf = udp_rcvbuf,
    .close = udp_close, .memory = udp_memory,
};
