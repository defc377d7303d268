/* udpfloor.c -- the kernel's floor under an acis collective over UDP on
 * loopback at 2 ranks: the datagrams acis's protocol sends for a call
 * (docs/protocol.md) and nothing else, so acis-udp's time over this one is
 * what acis itself costs, and this one over MPICH's is what the design
 * costs on this kernel.  No MPI, no acis code.
 *
 * Two processes, as a 2-rank job with the embedded switch: the parent is
 * member 0 and the relay (rank 0 drives the embedded switch while it
 * waits), the child member 1; both poll without sleeping, as ranks do
 * while they have a core.  Each call is cut into segments of PAYLOAD
 * bytes of the result space (one empty segment for a barrier).  For every
 * segment each member sends one datagram, an 80-byte header and its piece
 * (empty if it has none), in sendmmsg batches, and keeps at most WINDOW
 * segments unanswered; once both are in, the relay answers each member
 * one datagram, both in one sendmmsg: a header and, to a member that wants
 * part of the segment, the hull of what the members want, as acis's
 * switch answers.
 * The pieces and wants are acis's (the root is rank 0; a gather or
 * scatter root leaves out segments inside its own block).  What the floor
 * leaves out: arithmetic (an answer is sent straight from the received
 * datagrams), copies between a member's receive buffers and its result
 * (answers land in place), loss, repeats and credits.
 *
 * usage: udpfloor [-t COLL] [-s SIZES] [-i ITERS] [-r REPS] [-p PAYLOAD]
 *                 [-w WINDOW] [-c]
 *   COLL   allreduce reduce bcast barrier gather scatter allgather
 *          reduce_scatter scan exscan (sizes as bench/lat reads them:
 *          the block per rank for gather, scatter, allgather and
 *          reduce_scatter)
 *   -c     print the datagrams and bytes of one call instead of timing
 * Prints one line per size: "size median_us min_us" over REPS repetitions
 * of ITERS calls (after one more to warm up), the slower member's time
 * per call.  Segments are PAYLOAD bytes, a scan's what a slot holds of
 * each member's piece (acis_scan_seg_bytes).  Defaults: PAYLOAD 65000 and WINDOW 6, what the embedded
 * switch gives a 2-rank communicator on loopback (acis-info's table). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "acis/wire.h"

#define HDR ACIS_HDR_LEN
#define BATCH 32

/* One member's part of a call: the byte ranges of the result space it
 * sends (src) and wants back (dst), and its own block (a gather or
 * scatter root's, whose segments carry nothing; an allgather member's,
 * whose segments carry the piece but ask for nothing: the call's keeps). */
struct part {
    uint64_t so, sl, d_o, dl, oo, ol;
};

struct call {
    uint64_t total, seg;
    uint32_t nseg;
    int keeps;
    struct part m[2];
};

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* The parts of coll at n bytes (bench/lat's size), root 0; -1 if unknown. */
static int plan(const char *coll, uint64_t n, uint64_t payload, struct call *c)
{
    memset(c, 0, sizeof *c);
    uint64_t t = n;
    if (!strcmp(coll, "allreduce") || !strcmp(coll, "scan") || !strcmp(coll, "exscan")) {
        for (int m = 0; m < 2; m++)
            c->m[m] = (struct part){ 0, n, 0, n, 0, 0 };
        if (!strcmp(coll, "exscan"))
            c->m[0].dl = 0;                     /* member 0 is only acknowledged */
    } else if (!strcmp(coll, "reduce")) {
        c->m[0] = (struct part){ 0, n, 0, n, 0, 0 };
        c->m[1] = (struct part){ 0, n, 0, 0, 0, 0 };
    } else if (!strcmp(coll, "bcast")) {
        c->m[0] = (struct part){ 0, n, 0, 0, 0, 0 };
        c->m[1] = (struct part){ 0, 0, 0, n, 0, 0 };
    } else if (!strcmp(coll, "barrier")) {
        t = 0;
    } else if (!strcmp(coll, "allgather")) {
        t = 2 * n;
        c->m[0] = (struct part){ 0, n, 0, t, 0, n };
        c->m[1] = (struct part){ n, n, 0, t, n, n };
        c->keeps = 1;
    } else if (!strcmp(coll, "gather")) {
        t = 2 * n;
        c->m[0] = (struct part){ 0, n, 0, t, 0, n };
        c->m[1] = (struct part){ n, n, 0, 0, 0, 0 };
    } else if (!strcmp(coll, "scatter")) {
        t = 2 * n;
        c->m[0] = (struct part){ 0, t, 0, n, 0, n };
        c->m[1] = (struct part){ 0, 0, n, n, 0, 0 };
    } else if (!strcmp(coll, "reduce_scatter")) {
        t = 2 * n;
        c->m[0] = (struct part){ 0, t, 0, n, 0, 0 };
        c->m[1] = (struct part){ 0, t, n, n, 0, 0 };
    } else {
        return -1;
    }
    c->total = t;
    c->seg = payload;
    if (strstr(coll, "scan"))           /* a slot holds each member's piece */
        c->seg = acis_scan_seg_bytes((uint32_t)payload, 2, 1);
    c->nseg = t ? (uint32_t)((t + c->seg - 1) / c->seg) : 1;
    /* an own block counts only where a segment lies inside it (exec.c) */
    for (int m = 0; m < 2; m++) {
        uint64_t first = (c->m[m].oo + payload - 1) / payload * payload;
        uint64_t end = first + payload < t ? first + payload : t;
        if (c->m[m].ol && (first >= t || end > c->m[m].oo + c->m[m].ol))
            c->m[m].ol = 0;
    }
    return 0;
}

static void overlap(uint64_t a, uint64_t al, uint64_t b, uint64_t bl, uint64_t *lo,
                    uint64_t *len)
{
    uint64_t l = a > b ? a : b, h = a + al < b + bl ? a + al : b + bl;
    *lo = l;
    *len = h > l ? h - l : 0;
}

/* Member m's piece of segment k (*plo, *plen) and the part it wants
 * (*rlo, *rlen), result-space bytes. */
static void ranges(const struct call *c, int m, uint32_t k, uint64_t *plo, uint64_t *plen,
                   uint64_t *rlo, uint64_t *rlen)
{
    const struct part *p = &c->m[m];
    uint64_t base = (uint64_t)k * c->seg;
    uint64_t len = c->total - base < c->seg ? c->total - base : c->seg;
    if (!c->total)
        len = 0;
    overlap(p->so, p->sl, base, len, plo, plen);
    overlap(p->d_o, p->dl, base, len, rlo, rlen);
    if (len && p->ol && base >= p->oo && base + len <= p->oo + p->ol) {
        *rlen = 0;
        if (!c->keeps)
            *plen = 0;
    }
}

/* What the relay answers member m for segment k, as acis's switch does
 * (cgr.c, emit_all): to every member that wants part of the segment the
 * hull of all the parts wanted, one payload for all; to the others a bare
 * header (*len 0).  At 2 ranks a scan's answers come out the same. */
static void answer(const struct call *c, int m, uint32_t k, uint64_t *lo, uint64_t *len)
{
    uint64_t plo, plen, rlo[2], rlen[2], l = UINT64_MAX, h = 0;
    for (int i = 0; i < 2; i++) {
        ranges(c, i, k, &plo, &plen, &rlo[i], &rlen[i]);
        if (rlen[i]) {
            l = rlo[i] < l ? rlo[i] : l;
            h = rlo[i] + rlen[i] > h ? rlo[i] + rlen[i] : h;
        }
    }
    *lo = rlen[m] ? l : 0;
    *len = rlen[m] ? h - l : 0;
}

/* A member: its socket (connected to the relay), its buffers, and where
 * it is in the stream of segments (global numbers over all calls). */
struct member {
    int fd, m;
    uint8_t *src, *dst, hdr[BATCH][HDR];
    uint64_t sent, got;
};

static int member_send(struct member *me, const struct call *c, uint64_t end, uint32_t window)
{
    struct mmsghdr mm[BATCH];
    struct iovec iov[BATCH][2];
    unsigned b = 0;
    while (me->sent < end && me->sent - me->got < window && b < BATCH) {
        uint32_t k = (uint32_t)(me->sent % c->nseg);
        uint64_t plo, plen, rlo, rlen;
        ranges(c, me->m, k, &plo, &plen, &rlo, &rlen);
        memcpy(me->hdr[b], &me->sent, 8);
        memcpy(me->hdr[b] + 8, &me->m, 4);
        iov[b][0] = (struct iovec){ me->hdr[b], HDR };
        iov[b][1] = (struct iovec){ me->src + plo, plen };
        mm[b] = (struct mmsghdr){ .msg_hdr = { .msg_iov = iov[b], .msg_iovlen = 2 } };
        me->sent++;
        b++;
    }
    if (b && sendmmsg(me->fd, mm, b, 0) != (int)b) {
        perror("udpfloor: member sendmmsg");
        return -1;
    }
    return 0;
}

/* Take the answers that are there; each lands in place. */
static int member_recv(struct member *me, const struct call *c)
{
    struct mmsghdr mm[BATCH];
    struct iovec iov[BATCH][2];
    unsigned b = 0;
    for (uint64_t g = me->got; g < me->sent && b < BATCH; g++, b++) {
        uint64_t lo, len;
        answer(c, me->m, (uint32_t)(g % c->nseg), &lo, &len);
        iov[b][0] = (struct iovec){ me->hdr[b], HDR };
        iov[b][1] = (struct iovec){ me->dst + lo, len };
        mm[b] = (struct mmsghdr){ .msg_hdr = { .msg_iov = iov[b], .msg_iovlen = 2 } };
    }
    if (!b)
        return 0;
    int n = recvmmsg(me->fd, mm, b, MSG_DONTWAIT, NULL);
    if (n < 0 && errno != EAGAIN) {
        perror("udpfloor: member recvmmsg");
        return -1;
    }
    me->got += n > 0 ? (uint64_t)n : 0;
    return 0;
}

/* The relay: its socket, the members' addresses, a pool of datagram
 * buffers, and for each segment in flight the two datagrams in. */
#define RING 64
struct pending {
    uint8_t *d[2];
    uint32_t len[2];
};

struct relay {
    int fd;
    struct sockaddr_in to[2];
    const struct call *c;
    uint8_t *pool, *free_[2 * RING + BATCH];
    int nfree;
    struct pending ring[RING];
    uint64_t done;
    uint8_t hdr[2 * BATCH][HDR];
};

static int relay_poll(struct relay *r)
{
    struct mmsghdr in[BATCH], out[2 * BATCH];
    struct iovec iin[BATCH], iout[2 * BATCH][3];
    uint8_t *got[BATCH];
    int want = r->nfree < BATCH ? r->nfree : BATCH;
    for (int i = 0; i < want; i++) {
        got[i] = r->free_[r->nfree - 1 - i];
        iin[i] = (struct iovec){ got[i], HDR + r->c->seg };
        in[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iin[i], .msg_iovlen = 1 } };
    }
    int n = recvmmsg(r->fd, in, (unsigned)want, MSG_DONTWAIT, NULL);
    if (n <= 0)
        return n < 0 && errno != EAGAIN ? -1 : 0;
    r->nfree -= n;
    unsigned o = 0;
    uint8_t *freed[2 * BATCH];
    int nf = 0;
    for (int i = 0; i < n; i++) {
        uint64_t g;
        uint32_t m;
        memcpy(&g, got[i], 8);
        memcpy(&m, got[i] + 8, 4);
        struct pending *e = &r->ring[g % RING];
        e->d[m & 1] = got[i];
        e->len[m & 1] = in[i].msg_len - HDR;
        if (!e->d[0] || !e->d[1])
            continue;
        uint32_t k = (uint32_t)(g % r->c->nseg);
        for (int to = 0; to < 2; to++) {
            uint64_t lo, len;
            answer(r->c, to, k, &lo, &len);
            uint64_t a = len < e->len[0] ? len : e->len[0];
            uint64_t b = len - a < e->len[1] ? len - a : e->len[1];
            if (a + b != len) {
                fprintf(stderr, "udpfloor: an answer of %llu bytes from pieces of %u and %u\n",
                        (unsigned long long)len, e->len[0], e->len[1]);
                return -1;
            }
            memcpy(r->hdr[o], e->d[0], HDR);
            iout[o][0] = (struct iovec){ r->hdr[o], HDR };
            iout[o][1] = (struct iovec){ e->d[0] + HDR, a };
            iout[o][2] = (struct iovec){ e->d[1] + HDR, b };
            out[o] = (struct mmsghdr){ .msg_hdr = { .msg_name = &r->to[to],
                                                    .msg_namelen = sizeof r->to[to],
                                                    .msg_iov = iout[o], .msg_iovlen = 3 } };
            o++;
        }
        freed[nf++] = e->d[0];
        freed[nf++] = e->d[1];
        e->d[0] = e->d[1] = NULL;
        r->done++;
    }
    if (o && sendmmsg(r->fd, out, o, 0) != (int)o) {
        perror("udpfloor: relay sendmmsg");
        return -1;
    }
    for (int i = 0; i < nf; i++)
        r->free_[r->nfree++] = freed[i];
    return 0;
}

static int udp_socket(struct sockaddr_in *a)
{
    socklen_t l = sizeof *a;
    int fd = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
    *a = (struct sockaddr_in){ .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd < 0 || bind(fd, (struct sockaddr *)a, sizeof *a) != 0 ||
        getsockname(fd, (struct sockaddr *)a, &l) != 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    return fd;
}

/* iters calls from member me (and the relay r, in the parent); returns
 * microseconds per call or a negative number on failure. */
static double run(struct member *me, struct relay *r, const struct call *c, int iters,
                  uint32_t window)
{
    double t0 = now_us(), heard = t0;
    uint64_t end = me->got;
    for (int i = 0; i < iters; i++) {
        end += c->nseg;
        while (me->got < end) {
            uint64_t had = me->got;
            if (member_send(me, c, end, window) || (r && relay_poll(r)) || member_recv(me, c))
                return -1;
            double t = now_us();
            if (me->got != had) {
                heard = t;
            } else if (t - heard > 2e6) {       /* the floor has no repeats */
                fprintf(stderr, "udpfloor: member %d heard nothing for 2 s: a datagram was "
                                "lost (a receive buffer too small? net.core.rmem_max)\n", me->m);
                return -1;
            }
        }
    }
    return (now_us() - t0) / iters;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The datagrams and bytes (headers included) of one call, per member:
 * what the -c line prints and test/tools/udpfloor.sh checks. */
static void count(const struct call *c)
{
    uint64_t up = 0, down = 0, dg = 0;
    for (int m = 0; m < 2; m++)
        for (uint32_t k = 0; k < c->nseg; k++) {
            uint64_t plo, plen, rlo, rlen, lo, len;
            ranges(c, m, k, &plo, &plen, &rlo, &rlen);
            answer(c, m, k, &lo, &len);
            up += HDR + plen;
            down += HDR + len;
            dg += 2;
        }
    printf("%llu datagrams %llu bytes up %llu bytes down\n", (unsigned long long)dg,
           (unsigned long long)up, (unsigned long long)down);
}

int main(int argc, char **argv)
{
    const char *coll = "allreduce", *sizes = "8";
    int iters = 10000, reps = 5, opt, counting = 0;
    long payload = 65000, window = 6;
    while ((opt = getopt(argc, argv, "t:s:i:r:p:w:c")) != -1) {
        switch (opt) {
        case 't': coll = optarg; break;
        case 's': sizes = optarg; break;
        case 'i': iters = atoi(optarg); break;
        case 'r': reps = atoi(optarg); break;
        case 'p': payload = atol(optarg); break;
        case 'w': window = atol(optarg); break;
        case 'c': counting = 1; break;
        default:
            fprintf(stderr, "usage: udpfloor [-t coll] [-s sizes] [-i iters] [-r reps] "
                            "[-p payload] [-w window] [-c]\n");
            return 2;
        }
    }
    if (iters < 1 || reps < 1 || reps > 1000 || payload < 64 || payload > 65000 ||
        window < 1 || window > RING / 4) {
        fprintf(stderr, "udpfloor: -i and -r at least 1 (-r at most 1000), -p 64..65000, "
                        "-w 1..%d\n", RING / 4);
        return 2;
    }
    struct call c;
    char *list = strdup(sizes), *save = NULL;
    uint64_t most = 0;
    int bad = !list;
    for (char *s = list ? strtok_r(list, ",", &save) : NULL; s; s = strtok_r(NULL, ",", &save)) {
        if (plan(coll, strtoull(s, NULL, 10), (uint64_t)payload, &c) != 0) {
            fprintf(stderr, "udpfloor: unknown collective %s\n", coll);
            bad = 1;
            break;
        }
        if (counting) {
            printf("%s ", s);
            count(&c);
        }
        most = c.total > most ? c.total : most;
    }
    free(list);
    if (bad || counting)
        return bad ? 2 : 0;
    struct sockaddr_in ra, a0, a1;
    int rfd = udp_socket(&ra), f0 = udp_socket(&a0), f1 = udp_socket(&a1);
    if (rfd < 0 || f0 < 0 || f1 < 0 || connect(f0, (struct sockaddr *)&ra, sizeof ra) ||
        connect(f1, (struct sockaddr *)&ra, sizeof ra)) {
        perror("udpfloor: sockets");
        return 1;
    }
    int go[2], back[2];
    if (pipe(go) || pipe(back)) {
        perror("udpfloor: pipe");
        return 1;
    }
    uint8_t *src = calloc(1, most + 1), *dst = calloc(1, most + 1);
    if (!src || !dst)
        return 1;
    pid_t kid = fork();
    if (kid < 0) {
        perror("udpfloor: fork");
        return 1;
    }
    int parent = kid > 0;
    struct member me = { .fd = parent ? f0 : f1, .m = parent ? 0 : 1, .src = src, .dst = dst };
    struct relay rl = { .fd = rfd, .to = { a0, a1 }, .c = &c };
    if (parent) {
        rl.pool = malloc((2 * RING + BATCH) * (size_t)(HDR + payload));
        if (!rl.pool)
            return 1;
        for (int i = 0; i < 2 * RING + BATCH; i++)
            rl.free_[rl.nfree++] = rl.pool + (size_t)i * (size_t)(HDR + payload);
    }
    double *t = malloc((size_t)reps * sizeof *t);
    list = strdup(sizes);
    if (!t || !list)
        return 1;
    int rc = 0;
    for (char *s = strtok_r(list, ",", &save); s && !rc; s = strtok_r(NULL, ",", &save)) {
        plan(coll, strtoull(s, NULL, 10), (uint64_t)payload, &c);
        me.sent = me.got = rl.done = 0;
        for (int i = 0; i < RING; i++)
            rl.ring[i].d[0] = rl.ring[i].d[1] = NULL;
        for (int rep = -1; rep < reps; rep++) {
            char x = 0;
            double mine, theirs = 0;
            if (parent) {
                if (write(go[1], &x, 1) != 1)
                    return 1;
                mine = run(&me, &rl, &c, iters, (uint32_t)window);
                if (read(back[0], &theirs, sizeof theirs) != sizeof theirs)
                    return 1;
            } else {
                if (read(go[0], &x, 1) != 1)
                    return 1;
                mine = run(&me, NULL, &c, iters, (uint32_t)window);
                if (write(back[1], &mine, sizeof mine) != sizeof mine)
                    return 1;
                continue;
            }
            if (mine < 0 || theirs < 0) {
                rc = 1;
                break;
            }
            if (rep >= 0)
                t[rep] = mine > theirs ? mine : theirs;
        }
        if (parent && !rc) {
            qsort(t, (size_t)reps, sizeof *t, cmp);
            printf("%s %.4f %.4f\n", s, t[reps / 2], t[0]);
            fflush(stdout);
        }
    }
    if (parent) {
        close(go[1]);
        waitpid(kid, NULL, 0);
    }
    free(t);
    free(list);
    free(src);
    free(dst);
    free(rl.pool);
    return rc;
}
