/* udprtt.c -- the network's share of a call: a UDP echo between two
 * hosts, the floor under any offloaded collective that goes to a switch
 * and back.  The server sleeps in recvfrom, as acis-switchd does by
 * default; the client polls without sleeping, as a rank does while it
 * has a core (bench/cluster.sh --rtt runs it across the test cluster).
 *
 * usage: udprtt server ADDR PORT
 *        udprtt client ADDR PORT [BYTES] [ROUNDS]
 * The client prints "median_us p10_us" of ROUNDS round trips (default
 * 5000) of BYTES-byte datagrams (default 96: an 8-byte allreduce packet). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "server") != 0 && strcmp(argv[1], "client") != 0)) {
        fprintf(stderr, "usage: udprtt server|client ADDR PORT [BYTES] [ROUNDS]\n");
        return 2;
    }
    struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[3])) };
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    if (fd < 0 || inet_pton(AF_INET, argv[2], &a.sin_addr) != 1) {
        fprintf(stderr, "udprtt: bad address %s\n", argv[2]);
        return 1;
    }
    static char buf[65536];
    if (argv[1][0] == 's') {
        if (bind(fd, (struct sockaddr *)&a, sizeof a) != 0) {
            perror("udprtt: bind");
            return 1;
        }
        for (;;) {
            struct sockaddr_in from;
            socklen_t fl = sizeof from;
            ssize_t n = recvfrom(fd, buf, sizeof buf, 0, (struct sockaddr *)&from, &fl);
            if (n > 0)
                sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
        }
    }
    size_t len = argc > 4 ? (size_t)atol(argv[4]) : 96;
    int rounds = argc > 5 ? atoi(argv[5]) : 5000;
    double *d = malloc((size_t)rounds * sizeof *d);
    if (!d || len > sizeof buf || rounds < 1)
        return 1;
    for (int i = 0; i < rounds; i++) {
        double t = now_us();
        if (sendto(fd, buf, len, 0, (struct sockaddr *)&a, sizeof a) < 0) {
            perror("udprtt: sendto");
            return 1;
        }
        while (recv(fd, buf, sizeof buf, MSG_DONTWAIT) < 0)
            ;                                   /* a lost echo hangs: run it on a lab net */
        d[i] = now_us() - t;
    }
    qsort(d, (size_t)rounds, sizeof *d, cmp);
    printf("%.1f %.1f\n", d[rounds / 2], d[rounds / 10]);
    free(d);
    return 0;
}
