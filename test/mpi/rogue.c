/* rogue.c -- a hostile process next to a running job (no MPI).  By
 * default it joins the switch as a job of its own and, for --seconds,
 * forges packets at other jobs' contexts -- every context id a small
 * switch can hand out -- with its own key, with guessed keys, with a
 * spoofed source rank, with a bad checksum, at the service address, and
 * control requests that would free or reuse other jobs' rows.  With
 * --flood-ranks PID it never talks to the switch: it floods the UDP
 * sockets of PID's process tree (the job) with forged answers, from
 * MPI_Init on.  It prints how many of each it sent, as "name count"
 * lines, for the test to compare with the switch's or the ranks' drop
 * counters.  The job it runs beside must not notice.
 *
 * usage: rogue HOST:PORT [--seconds S] [--stop-file F] [--tables N]
 *              [--flood-ranks PID --ranks N --ready-file R]
 * (it stops after S seconds, or once F exists) */
#define _POSIX_C_SOURCE 200809L
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "acis/wire.h"
#include "util/util.h"
#include "jobsock.h"

#define FLOOD_TARGETS 64
#define FLOOD_READY 100              /* forged answers to each rank before "ready" */

enum { F_OWN_KEY, F_WRONG_KEY, F_SPOOFED, F_BAD_CRC, F_AT_SERVICE, F_CT_FREE, F_COUNT };
static const char *const names[F_COUNT] = { "own_key", "wrong_key", "spoofed", "bad_crc",
                                            "at_service", "ct_free" };

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static size_t packet(uint8_t *buf, unsigned kind, uint64_t key, uint32_t ctx, uint32_t src,
                     uint32_t seq, uint16_t slot, int payload)
{
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, 0), .job_key = key, .ctx = ctx, .seq = seq, .src = src,
        .slot = slot,
    };
    if (payload) {
        h.op = ACIS_OP_SUM;
        h.dtype = ACIS_DT_I64;
        h.payload_len = 8;
        h.total_len = 8;
        h.rx_len = 8;
    }
    acis_hdr_encode(&h, buf);
    memset(buf + ACIS_HDR_LEN, 0x7f, h.payload_len);   /* would poison a sum */
    acis_hdr_seal(buf, buf + ACIS_HDR_LEN, h.payload_len);
    return ACIS_HDR_LEN + h.payload_len;
}

static int stopped(double end, const char *stop_file)
{
    struct stat st;
    return now_s() >= end || (stop_file && stat(stop_file, &st) == 0);
}

/* ------------------------------------------------------ --flood-ranks */

struct flood {
    int fd;
    int job, ranks;                  /* the job's top process; ranks to reach */
    uint16_t switch_port;            /* not flooded */
    const char *ready_file;
    uint64_t rnd;
    uint16_t seen[FLOOD_TARGETS];    /* sockets found not connected ... */
    unsigned long long sent_to[FLOOD_TARGETS];   /* ... and what each got */
    int nseen, ready;
    unsigned long long open, connected, captured;
};

static uint64_t next_rnd(struct flood *f)
{
    f->rnd ^= f->rnd << 13;
    f->rnd ^= f->rnd >> 7;
    f->rnd ^= f->rnd << 17;
    return f->rnd;
}

/* An answer of kind, as a switch sends it (RESULT, src NO_RANK, status
 * OK), with a guessed key and request id: it fails only the checks that
 * need the job's key, and its sender. */
static size_t forged_answer(struct flood *f, uint8_t *buf, unsigned kind)
{
    uint32_t plen = kind == ACIS_K_WELCOME ? ACIS_WELCOME_LEN
                    : kind == ACIS_K_CT_REPLY ? ACIS_CT_REPLY_LEN : 8;
    struct acis_hdr h = {
        .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
        .opcode = ACIS_OPC(kind, 0), .flags = ACIS_F_RESULT, .job_key = next_rnd(f),
        .ctx = (uint32_t)next_rnd(f), .seq = (uint32_t)next_rnd(f), .src = ACIS_NO_RANK,
        .payload_len = plen,
    };
    if (kind == ACIS_K_ALLREDUCE) {
        h.op = ACIS_OP_SUM;
        h.dtype = ACIS_DT_I64;
        h.total_len = 8;
        h.rx_len = 8;
    }
    acis_hdr_encode(&h, buf);
    memset(buf + ACIS_HDR_LEN, 0, plen);                 /* status OK, port 0, ... */
    if (kind != ACIS_K_ALLREDUCE)
        acis_put32(buf + ACIS_HDR_LEN + 8, 1024);        /* a payload size */
    acis_hdr_seal(buf, buf + ACIS_HDR_LEN, plen);
    return ACIS_HDR_LEN + plen;
}

/* Forged answers to one socket of the job; counted by whether it was
 * connected (to its switch) yet. */
static void flood_one(struct flood *f, const struct jobsock *j)
{
    static const unsigned kinds[] = { ACIS_K_WELCOME, ACIS_K_CT_REPLY, ACIS_K_ALLREDUCE,
                                      ACIS_K_WELCOME };
    struct sockaddr_in to = { .sin_family = AF_INET, .sin_port = htons(j->local_port),
                              .sin_addr.s_addr = j->local_ip ? j->local_ip
                                                             : htonl(INADDR_LOOPBACK) };
    uint8_t buf[ACIS_HDR_LEN + 64];
    int k = 0;
    if (!j->remote_ip) {
        while (k < f->nseen && f->seen[k] != j->local_port)
            k++;
        if (k == f->nseen && f->nseen < FLOOD_TARGETS)
            f->seen[f->nseen++] = j->local_port;
    }
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t n = forged_answer(f, buf, kinds[i]);
        if (sendto(f->fd, buf, n, 0, (struct sockaddr *)&to, sizeof to) != (ssize_t)n)
            continue;
        if (j->remote_ip) {
            f->connected++;
        } else {
            f->open++;
            if (k < FLOOD_TARGETS)
                f->sent_to[k]++;
        }
    }
}

/* Ready once ranks sockets not yet connected each got FLOOD_READY. */
static void flood_ready(struct flood *f)
{
    int full = 0;
    for (int k = 0; k < f->nseen; k++)
        full += f->sent_to[k] >= FLOOD_READY;
    if (f->ready || full < f->ranks || !f->ready_file)
        return;
    FILE *r = fopen(f->ready_file, "w");
    if (r)
        fclose(r);
    f->ready = 1;
}

static int flood_ranks(struct flood *f, double seconds, const char *stop_file)
{
    struct jobsock js[FLOOD_TARGETS];
    int n = 0;
    double end = now_s() + seconds, scan = 0;
    uint8_t in[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    while (!stopped(end, stop_file)) {
        if (now_s() >= scan) {                   /* the job's sockets, every 20 ms */
            n = jobsock_list(f->job, js, FLOOD_TARGETS);
            if (n < 0)
                return 1;
            scan = now_s() + 0.02;
        }
        for (int i = 0; i < n; i++)
            if (js[i].local_port != f->switch_port)
                flood_one(f, &js[i]);
        flood_ready(f);
        while (recv(f->fd, in, sizeof in, MSG_DONTWAIT) > 0)
            f->captured++;                       /* a rank took us for its switch */
        struct timespec pause = { 0, 250000 };
        nanosleep(&pause, NULL);
    }
    printf("open_sockets %d\nflood_open %llu\nflood_connected %llu\ncaptured %llu\n",
           f->nseen, f->open, f->connected, f->captured);
    return 0;
}

/* ------------------------------------------------- the default: a job */

int main(int argc, char **argv)
{
    double seconds = 5;
    uint32_t tables = 32;
    const char *stop_file = NULL;
    struct flood fl = { .job = 0, .ranks = 1, .rnd = 0x9e3779b97f4a7c15ull ^ (uint64_t)time(NULL) };
    if (argc < 2) {
        fprintf(stderr, "usage: rogue HOST:PORT [--seconds S] [--stop-file F] [--tables N] "
                        "[--flood-ranks PID --ranks N --ready-file R]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--tables") == 0)
            tables = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--stop-file") == 0)
            stop_file = argv[i + 1];
        else if (strcmp(argv[i], "--flood-ranks") == 0)
            fl.job = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ranks") == 0)
            fl.ranks = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--ready-file") == 0)
            fl.ready_file = argv[i + 1];
    }
    struct sockaddr_storage svc, port;
    socklen_t svclen, portlen = sizeof port;
    char err[256];
    if (acis_addr_parse(argv[1], &svc, &svclen, err, sizeof err) != 0) {
        fprintf(stderr, "rogue: %s\n", err);
        return 2;
    }
    int fd = socket(svc.ss_family, SOCK_DGRAM, 0);
    if (fl.job > 0) {
        fl.fd = fd;
        fl.switch_port = ntohs(((struct sockaddr_in *)&svc)->sin_port);
        int rc = flood_ranks(&fl, seconds, stop_file);
        close(fd);
        return rc;
    }
    uint64_t key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
    uint8_t buf[ACIS_HDR_LEN + 64], in[ACIS_HDR_LEN + 64];

    /* join as a job of one rank */
    size_t n = packet(buf, ACIS_K_HELLO, key, 0, 0, 1, 0, 0);
    buf[12] = ACIS_HELLO_LEN;
    memset(buf + ACIS_HDR_LEN, 0, ACIS_HELLO_LEN);
    acis_put32(buf + ACIS_HDR_LEN, 1);
    acis_hdr_seal(buf, buf + ACIS_HDR_LEN, ACIS_HELLO_LEN);
    n = ACIS_HDR_LEN + ACIS_HELLO_LEN;
    ssize_t got = -1;
    for (int tries = 0; tries < 20 && got < 0; tries++) {
        sendto(fd, buf, n, 0, (struct sockaddr *)&svc, svclen);
        struct pollfd pf = { fd, POLLIN, 0 };
        if (poll(&pf, 1, 200) == 1)
            got = recvfrom(fd, in, sizeof in, 0, (struct sockaddr *)&port, &portlen);
    }
    if (got < ACIS_HDR_LEN + 8 || acis_get32(in + ACIS_HDR_LEN) != ACIS_ST_OK) {
        fprintf(stderr, "rogue: the switch did not let me join\n");
        return 1;
    }

    unsigned long long sent[F_COUNT] = { 0 };
    double end = now_s() + seconds;
    uint32_t seq = 1;
    while (!stopped(end, stop_file)) {
        for (uint32_t gen = 1; gen <= 4; gen++)
            for (uint32_t row = 0; row < tables; row++, seq++) {
                uint32_t ctx = gen << 16 | (row + 1);
                uint16_t slot = (uint16_t)(seq % 32);
                n = packet(buf, ACIS_K_ALLREDUCE, key, ctx, 0, seq, slot, 1);
                sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
                sent[F_OWN_KEY]++;
                n = packet(buf, ACIS_K_ALLREDUCE, key ^ (seq * 0x100000001ull), ctx, 0, seq,
                           slot, 1);
                sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
                sent[F_WRONG_KEY]++;
                n = packet(buf, ACIS_K_ALLREDUCE, key, ctx, 1 + seq % 7, seq, slot, 1);
                sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
                sent[F_SPOOFED]++;
                n = packet(buf, ACIS_K_ALLREDUCE, key, ctx, 0, seq, slot, 1);
                buf[44] ^= 1;
                sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
                sent[F_BAD_CRC]++;
                n = packet(buf, ACIS_K_ALLREDUCE, key, ctx, 0, seq, slot, 1);
                sendto(fd, buf, n, 0, (struct sockaddr *)&svc, svclen);
                sent[F_AT_SERVICE]++;
                n = packet(buf, ACIS_K_CT_FREE, key, ctx, 0, seq, 0, 0);
                sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
                sent[F_CT_FREE]++;
                while (recv(fd, in, sizeof in, MSG_DONTWAIT) > 0)
                    ;                            /* CT_FREED: NO_CTX */
            }
        struct timespec pause = { 0, 200000 };   /* about 20 000 packets a second */
        nanosleep(&pause, NULL);
    }
    /* leave */
    n = packet(buf, ACIS_K_BYE, key, 0, 0, seq, 0, 0);
    sendto(fd, buf, n, 0, (struct sockaddr *)&port, portlen);
    for (int f = 0; f < F_COUNT; f++)
        printf("%s %llu\n", names[f], sent[f]);
    close(fd);
    return 0;
}
