/* udp.c -- the UDP channel: one datagram socket per process, talking to the
 * switch's service address until HELLO is answered, then connected to the
 * host port that answered (the kernel then drops datagrams from anyone
 * else).  Batches with sendmmsg/recvmmsg. */
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
    struct sockaddr_storage svc, last;
    socklen_t svc_len, last_len;
    int attached, rcvbuf;
};

static int udp_open(struct acis_chan **out, const char *addr, char *why, size_t whylen)
{
    struct acis_chan *ch = calloc(1, sizeof *ch);
    if (!ch) {
        snprintf(why, whylen, "out of memory");
        return -1;
    }
    if (acis_addr_parse(addr, &ch->svc, &ch->svc_len, why, whylen) != 0)
        goto fail;
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

static int udp_attach(struct acis_chan *ch)
{
    if (connect(ch->fd, (struct sockaddr *)&ch->last, ch->last_len) != 0)
        return -1;
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

static int udp_recv(struct acis_chan *ch, uint8_t **bufs, size_t cap, size_t *lens, int max)
{
    struct mmsghdr m[ACIS_RX_BATCH];
    struct iovec iov[ACIS_RX_BATCH];
    if (max > ACIS_RX_BATCH)
        max = ACIS_RX_BATCH;
    for (int i = 0; i < max; i++) {
        iov[i] = (struct iovec){ bufs[i], cap };
        m[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
                                        .msg_name = ch->attached ? NULL : &ch->last,
                                        .msg_namelen = ch->attached ? 0 : sizeof ch->last };
    }
    int n = recvmmsg(ch->fd, m, (unsigned)max, MSG_DONTWAIT, NULL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR || errno == ECONNREFUSED ? 0 : -1;
    for (int i = 0; i < n; i++) {
        lens[i] = m[i].msg_hdr.msg_flags & MSG_TRUNC ? 0 : m[i].msg_len;
        if (!ch->attached)
            ch->last_len = m[i].msg_hdr.msg_namelen;
    }
    return n;
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
    .close = udp_close,
};
