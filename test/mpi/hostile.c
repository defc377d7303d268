/* hostile.c -- the hostile mix beside a running job (no MPI): for
 * --seconds it floods an acis-switchd with HELLOs claiming jobs of 2^24
 * ranks under fresh keys from --sockets sockets; joins as a job of two
 * ranks of its own, sets a communicator up and sends gatherv-type (VAR)
 * pieces that leave a segment empty, overlap, or leave holes, checking
 * that no answer ever holds a byte it did not send (its rows reuse slots
 * other jobs used), and frees and sets the row up again now and then; and
 * sprays forged WELCOMEs at every UDP port the processes named --target
 * (the job's ranks) have open.  It prints "name count" lines for the
 * test, "leaked" among them.
 *
 * usage: hostile HOST:PORT [--seconds S] [--stop-file F] [--sockets N]
 *                          [--target NAME] */
#define _DEFAULT_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
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

#define MAX_SOCKETS 128
#define SEG 1024                       /* the VAR segments' length */
#define FILL0 0x3c                     /* what rank 0 and rank 1 send */
#define FILL1 0x3d

static struct sockaddr_storage svc;
static socklen_t svclen;
static uint64_t key;
static int rank_fd[2];
static uint32_t ctx, window = 1, setup_id = 1;
static unsigned long long hellos, rounds, answers, leaked, untiled_seen, sprayed, setups;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int udp_socket(void)
{
    int fd = socket(svc.ss_family, SOCK_DGRAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    if (fd >= 0 && svc.ss_family == AF_INET)
        bind(fd, (struct sockaddr *)&a, sizeof a);
    return fd;
}

static void send_pkt(int fd, struct acis_hdr *h, const void *pl, uint32_t len)
{
    uint8_t b[ACIS_HDR_LEN + SEG];
    h->magic = ACIS_WIRE_MAGIC;
    h->version = ACIS_WIRE_VERSION;
    h->payload_len = len;
    acis_hdr_encode(h, b);
    if (len)
        memcpy(b + ACIS_HDR_LEN, pl, len);
    acis_hdr_seal(b, pl, len);
    sendto(fd, b, ACIS_HDR_LEN + len, 0, (struct sockaddr *)&svc, svclen);
}

/* The next valid packet on fd within ms, decoded; its payload into pl. */
static int recv_pkt(int fd, int ms, struct acis_hdr *h, uint8_t *pl)
{
    uint8_t b[ACIS_HDR_LEN + ACIS_MAX_PAYLOAD];
    double end = now_s() + ms / 1000.0;
    for (;;) {
        int left = (int)((end - now_s()) * 1000);
        struct pollfd pf = { fd, POLLIN, 0 };
        if (left <= 0 || poll(&pf, 1, left) != 1)
            return 0;
        ssize_t n = recv(fd, b, sizeof b, 0);
        if (n > 0 && acis_wire_decode(b, (size_t)n, ACIS_MAX_PAYLOAD, h) == ACIS_WERR_OK) {
            memcpy(pl, b + ACIS_HDR_LEN, h->payload_len);
            return 1;
        }
    }
}

/* A HELLO from fd claiming a job of world ranks under key k. */
static void hello(int fd, uint64_t k, uint32_t rank, uint32_t world)
{
    uint8_t pl[ACIS_HELLO_LEN] = { 0 };
    struct acis_hdr h = { .opcode = ACIS_OPC(ACIS_K_HELLO, 0), .job_key = k, .seq = 1,
                          .src = rank };
    acis_put32(pl, world);
    send_pkt(fd, &h, pl, sizeof pl);
}

/* Both ranks set a row up (CT_JOIN); 0, or -1 if not answered. */
static int set_up(void)
{
    uint8_t pl[ACIS_MAX_PAYLOAD];
    struct acis_hdr a;
    setup_id++;
    for (uint32_t r = 0; r < 2; r++) {
        uint8_t j[ACIS_CT_JOIN_LEN];
        struct acis_hdr h = { .opcode = ACIS_OPC(ACIS_K_CT_JOIN, 0), .job_key = key,
                              .seq = setup_id, .src = r, .root = 0 };
        acis_put32(j, 2);
        acis_put32(j + 4, r);
        send_pkt(rank_fd[r], &h, j, sizeof j);
    }
    int ok = 1;
    for (int r = 0; r < 2; r++) {
        int got = 0;
        while (!got && recv_pkt(rank_fd[r], 500, &a, pl))
            got = ACIS_OPC_KIND(a.opcode) == ACIS_K_CT_REPLY && a.seq == setup_id;
        ok &= got && acis_get32(pl) == ACIS_ST_OK;
        if (got) {
            ctx = acis_get32(pl + 4);
            window = acis_get32(pl + 8) ? acis_get32(pl + 8) : 1;
        }
    }
    setups += ok;
    return ok ? 0 : -1;
}

static void free_row(void)
{
    struct acis_hdr h = { .opcode = ACIS_OPC(ACIS_K_CT_FREE, 0), .job_key = key, .ctx = ctx,
                          .seq = setup_id, .src = 0 };
    send_pkt(rank_fd[0], &h, NULL, 0);
}

/* Rank r's VAR piece of the segment of round k: bytes [off, off + len). */
static void piece(uint32_t r, uint32_t k, uint32_t off, uint32_t len)
{
    uint8_t d[SEG];
    memset(d, r ? FILL1 : FILL0, sizeof d);
    struct acis_hdr h = {
        .opcode = ACIS_OPC(ACIS_K_ALLGATHER, ACIS_ALG_VAR), .dtype = ACIS_DT_BYTE,
        .flags = (uint16_t)((k / window) % 2 ? ACIS_F_ROUND : 0), .slot = (uint16_t)(k % window),
        .job_key = key, .ctx = ctx, .seq = k + 1, .src = r, .member = r,
        .seg_offset = len ? off : 0, .total_len = SEG, .rx_len = SEG,
    };
    send_pkt(rank_fd[r], &h, d, len);
}

/* The answers of round k: any byte that is not ours or zero leaked. */
static void answers_of(uint32_t k)
{
    uint8_t pl[ACIS_MAX_PAYLOAD];
    struct acis_hdr a;
    for (int r = 0; r < 2; r++) {
        while (recv_pkt(rank_fd[r], 50, &a, pl)) {
            if (ACIS_OPC_KIND(a.opcode) != ACIS_K_ALLGATHER || a.seq != k + 1)
                continue;
            answers++;
            untiled_seen += (a.flags & ACIS_F_ERROR) != 0;
            for (uint32_t i = 0; i < a.payload_len; i++)
                leaked += pl[i] != 0 && pl[i] != FILL0 && pl[i] != FILL1;
            break;
        }
    }
}

/* One round of forged pieces, of four kinds in turn. */
static void var_round(uint32_t k)
{
    switch (k % 4) {
    case 0:                              /* no piece at all: zeros come back */
        piece(0, k, 0, 0);
        piece(1, k, 0, 0);
        break;
    case 1:                              /* overlapping, then tiling */
        piece(0, k, 0, 600);
        piece(1, k, 500, SEG - 500);
        piece(1, k, 600, SEG - 600);
        break;
    case 2:                              /* a hole: refused to both */
        piece(0, k, 0, 300);
        piece(1, k, 0, 0);
        break;
    default:                             /* outside the segment, then nothing */
        piece(0, k, SEG - 10, 100);
        piece(0, k, 0, 0);
        piece(1, k, 0, 0);
        break;
    }
    answers_of(k);
    rounds++;
}

/* The socket inodes of the processes named target (/proc/PID/fd). */
static size_t target_inodes(const char *target, unsigned long *ino, size_t max)
{
    size_t n = 0;
    DIR *d = opendir("/proc");
    for (struct dirent *e; d && (e = readdir(d)) && n < max;) {
        int pid = atoi(e->d_name);
        if (pid <= 0)
            continue;
        char path[64], comm[64] = "";
        snprintf(path, sizeof path, "/proc/%d/comm", pid);
        FILE *c = fopen(path, "r");
        if (!c)
            continue;
        int same = fgets(comm, sizeof comm, c) && strncmp(comm, target, strlen(target)) == 0;
        fclose(c);
        for (int fd = 0; same && fd < 256 && n < max; fd++) {
            char link[64], to[64];
            snprintf(link, sizeof link, "/proc/%d/fd/%d", pid, fd);
            ssize_t l = readlink(link, to, sizeof to - 1);
            if (l > 0) {
                to[l] = 0;
                if (sscanf(to, "socket:[%lu]", &ino[n]) == 1)
                    n++;
            }
        }
    }
    if (d)
        closedir(d);
    return n;
}

/* Forged WELCOMEs at every UDP port the target processes (the job's
 * ranks) have open (/proc/net/udp: local address, port and inode). */
static void spray(int fd, const char *target)
{
    static unsigned long ino[4096];
    size_t n = target_inodes(target, ino, sizeof ino / sizeof *ino);
    uint8_t b[ACIS_HDR_LEN + ACIS_WELCOME_LEN] = { 0 };
    struct acis_hdr h = { .magic = ACIS_WIRE_MAGIC, .version = ACIS_WIRE_VERSION,
                          .opcode = ACIS_OPC(ACIS_K_WELCOME, 0), .flags = ACIS_F_RESULT,
                          .job_key = key ^ 0x5555, .src = ACIS_NO_RANK, .seq = 1,
                          .payload_len = ACIS_WELCOME_LEN };
    acis_hdr_encode(&h, b);
    acis_hdr_seal(b, b + ACIS_HDR_LEN, ACIS_WELCOME_LEN);
    FILE *in = fopen("/proc/net/udp", "r");
    char line[512];
    while (in && fgets(line, sizeof line, in)) {
        unsigned port;
        unsigned long inode;
        if (sscanf(line, " %*d: %*8x:%4x %*8x:%*4x %*x %*x:%*x %*x:%*x %*x %*u %*u %lu",
                   &port, &inode) != 2)
            continue;
        for (size_t i = 0; i < n; i++)
            if (ino[i] == inode) {
                struct sockaddr_in to = { .sin_family = AF_INET,
                                          .sin_port = htons((uint16_t)port),
                                          .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
                sendto(fd, b, sizeof b, 0, (struct sockaddr *)&to, sizeof to);
                sprayed++;
            }
    }
    if (in)
        fclose(in);
}

int main(int argc, char **argv)
{
    double seconds = 10;
    int nsock = 32;
    const char *stop_file = NULL, *target = "coll_check";
    char err[256];
    if (argc < 2) {
        fprintf(stderr, "usage: hostile HOST:PORT [--seconds S] [--stop-file F] "
                        "[--sockets N] [--target NAME]\n");
        return 2;
    }
    for (int i = 2; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--seconds") == 0)
            seconds = atof(argv[i + 1]);
        else if (strcmp(argv[i], "--sockets") == 0)
            nsock = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--stop-file") == 0)
            stop_file = argv[i + 1];
        else if (strcmp(argv[i], "--target") == 0)
            target = argv[i + 1];
    }
    if (nsock < 1 || nsock > MAX_SOCKETS)
        nsock = 32;
    if (acis_addr_parse(argv[1], &svc, &svclen, err, sizeof err) != 0) {
        fprintf(stderr, "hostile: %s\n", err);
        return 2;
    }
    key = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
    int flood[MAX_SOCKETS];
    for (int i = 0; i < nsock; i++)
        flood[i] = udp_socket();

    /* the rogue job: two ranks, a row */
    uint8_t pl[ACIS_MAX_PAYLOAD];
    struct acis_hdr a;
    for (uint32_t r = 0; r < 2; r++) {
        rank_fd[r] = udp_socket();
        int ok = 0;
        for (int tries = 0; tries < 20 && !ok; tries++) {
            hello(rank_fd[r], key, r, 2);
            ok = recv_pkt(rank_fd[r], 200, &a, pl) &&
                 ACIS_OPC_KIND(a.opcode) == ACIS_K_WELCOME && acis_get32(pl) == ACIS_ST_OK;
        }
        if (!ok) {
            fprintf(stderr, "hostile: the switch did not let rank %u join\n", r);
            return 1;
        }
    }
    if (set_up() != 0) {
        fprintf(stderr, "hostile: no row for the rogue job\n");
        return 1;
    }

    double end = now_s() + seconds;
    uint32_t k = 0;
    struct stat st;
    while (now_s() < end && !(stop_file && stat(stop_file, &st) == 0)) {
        for (int i = 0; i < nsock; i++, hellos++)
            hello(flood[i], key + 1 + hellos * 0x100000001ull, 0, 1u << 24);
        for (int i = 0; i < nsock; i++)
            while (recv(flood[i], pl, sizeof pl, MSG_DONTWAIT) > 0)
                ;
        for (int j = 0; j < 8; j++)
            var_round(k++);
        if (k % 64 == 0) {                 /* another row, maybe a slot others used */
            free_row();
            if (set_up() != 0)
                break;
            k = 0;
        }
        if (k % 32 == 0)
            spray(flood[0], target);
    }
    for (int i = 0; i < nsock; i++)
        close(flood[i]);
    printf("hellos %llu\nrounds %llu\nanswers %llu\nuntiled %llu\nleaked %llu\n"
           "sprayed %llu\nsetups %llu\n", hellos, rounds, answers, untiled_seen, leaked,
           sprayed, setups);
    return 0;
}
