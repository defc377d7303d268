/* rogue.c -- a hostile process next to a running job (no MPI): it joins
 * the switch as a job of its own and, for --seconds, forges packets at
 * other jobs' contexts -- every context id a small switch can hand out --
 * with its own key, with guessed keys, with a spoofed source rank, with a
 * bad checksum, at the service address, and control requests that would
 * free or reuse other jobs' rows.  It prints how many of each it sent, as
 * "name count" lines, for the test to compare with the switch's drop
 * counters.  The job it runs beside must not notice.
 *
 * usage: rogue HOST:PORT [--seconds S] [--stop-file F] [--tables N]
 * (it stops after S seconds, or once F exists) */
#define _POSIX_C_SOURCE 200809L
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

int main(int argc, char **argv)
{
    double seconds = 5;
    uint32_t tables = 32;
    const char *stop_file = NULL;
    if (argc < 2) {
        fprintf(stderr, "usage: rogue HOST:PORT [--seconds S] [--stop-file F] [--tables N]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--tables") == 0)
            tables = (uint32_t)atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--stop-file") == 0)
            stop_file = argv[i + 1];
    }
    struct sockaddr_storage svc, port;
    socklen_t svclen, portlen = sizeof port;
    char err[256];
    if (acis_addr_parse(argv[1], &svc, &svclen, err, sizeof err) != 0) {
        fprintf(stderr, "rogue: %s\n", err);
        return 2;
    }
    int fd = socket(svc.ss_family, SOCK_DGRAM, 0);
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
    struct stat st;
    while (now_s() < end && !(stop_file && stat(stop_file, &st) == 0)) {
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
