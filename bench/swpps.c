/* swpps.c -- packets per second of a switch core's workers (acis-switchd
 * --threads N), without sockets or MPI: an in-process load generator.
 * Each worker gets a communicator of its own whose row it serves, and a
 * generator thread that feeds it pre-built packets of a small allreduce
 * (int32 sum) or a barrier, every member's piece of one collective, then
 * the next's; the answers go to a sink that only counts them.  A ring of
 * two windows of collectives is built before the clock starts; after each
 * pass the generator stamps the next sequence numbers on it and seals it
 * again off the clock.  Each thread times only its feeding; the rate is
 * the sum of the threads' packets in over their time.
 *
 * usage: swpps [-T THREADS] [-p MEMBERS] [-t allreduce|barrier] [-s BYTES]
 *              [-d SECONDS]
 * Prints the packets in per second of each worker and of all, and fails
 * (exit 1) unless every packet was taken and every collective answered. */
#include "config.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simhost.h"

struct gen {
    struct sim *s;
    struct sim_comm *c;
    struct acis_sw *worker;
    uint32_t n, ring;            /* elements per piece; collectives in the ring */
    double seconds;
    uint8_t *pkts;               /* ring x members packets, stride apart */
    size_t stride, len;
    uint64_t fed, fed_ns, sent;
};

/* The sink: answers counted, not delivered. */
static void sink_send(void *ctx, const uint32_t *ports, uint32_t n, const struct iovec *iov,
                      int iovcnt)
{
    (void)ports, (void)iov, (void)iovcnt;
    ((struct gen *)ctx)->sent += n;
}

/* Build the ring's packets for collectives from..from + ring. */
static void stamp(struct gen *g, uint32_t from)
{
    int32_t data[ACIS_MAX_PAYLOAD / 4];
    for (uint32_t k = 0; k < g->ring; k++)
        for (int m = 0; m < g->c->n; m++) {
            for (uint32_t e = 0; e < g->n; e++)
                data[e] = (int32_t)(m + from + k + e);
            sim_piece(g->pkts + ((size_t)k * (size_t)g->c->n + (size_t)m) * g->stride, g->s,
                      g->c, m, from + k, ACIS_DT_I32, data, g->n);
        }
}

static void *run(void *arg)
{
    struct gen *g = arg;
    const struct sim_host *h = g->s->hosts;
    uint64_t start = acis_now_ns();
    for (uint32_t from = 0; acis_now_ns() - start < (uint64_t)(g->seconds * 1e9);
         from += g->ring) {
        if (from)
            stamp(g, from);
        uint64_t t0 = acis_now_ns();
        acis_sw_enter(g->worker);
        for (uint32_t k = 0; k < g->ring; k++) {
            for (int m = 0; m < g->c->n; m++) {
                const uint8_t *p = g->pkts + ((size_t)k * (size_t)g->c->n + (size_t)m) * g->stride;
                acis_sw_input(g->worker, h[g->c->host[m]].port, NULL, p, g->len);
            }
            if (k % 8 == 7) {             /* a batch as a UDP worker's: let the others in */
                acis_sw_leave(g->worker);
                acis_sw_enter(g->worker);
            }
        }
        acis_sw_leave(g->worker);
        g->fed_ns += acis_now_ns() - t0;
        g->fed += (uint64_t)g->ring * (uint64_t)g->c->n;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int T = 1, P = 16, opt;
    size_t bytes = 8;
    double seconds = 1;
    const char *what = "allreduce";
    while ((opt = getopt(argc, argv, "T:p:t:s:d:")) != -1) {
        switch (opt) {
        case 'T': T = atoi(optarg); break;
        case 'p': P = atoi(optarg); break;
        case 't': what = optarg; break;
        case 's': bytes = (size_t)atol(optarg); break;
        case 'd': seconds = atof(optarg); break;
        default: goto usage;
        }
    }
    int barrier = strcmp(what, "barrier") == 0;
    if ((!barrier && strcmp(what, "allreduce") != 0) || T < 1 || T > ACIS_SW_MAX_THREADS ||
        P < 1 || (uint64_t)T * (uint64_t)P > 65535 || bytes % 4 || bytes == 0 ||
        bytes > 4096 || seconds <= 0)
        goto usage;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    o.threads = (uint32_t)T;
    o.tables = (uint32_t)(T * 2 > 32 ? T * 2 : 32);
    o.slots = 32 * o.tables;
    o.pool = 0;                                  /* 32 slots a row, whatever T */
    o.ports = (uint32_t)(T * P > 256 ? T * P : 256);
    static struct sim s;
    struct gen *g = calloc((size_t)T, sizeof *g);
    pthread_t *th = calloc((size_t)T, sizeof *th);
    if (!g || !th || sim_init(&s, &o) != 0) {
        fprintf(stderr, "swpps: cannot build the switch\n");
        return 1;
    }
    for (int r = 0; r < T * P; r++) {
        uint32_t st;
        if (sim_join(&s, 0x5ca1ab1eULL, (uint32_t)r, (uint32_t)(T * P), &st) != r) {
            fprintf(stderr, "swpps: the switch refused host %d (status %u)\n", r, st);
            return 1;
        }
    }
    for (int t = 0; t < T; t++) {
        struct gen *x = &g[t];
        x->s = &s;
        x->c = sim_comm_new(P);
        for (int m = 0; m < P; m++)
            x->c->host[m] = t * P + m;
        uint32_t st = x->c ? sim_ct_create(&s, x->c, (uint32_t)t + 1) : 0;
        if (st != ACIS_ST_OK) {
            fprintf(stderr, "swpps: the switch refused communicator %d (status %u)\n", t, st);
            return 1;
        }
        uint32_t w = acis_sw_row_worker(s.sw, x->c->ctx);
        if (w != (uint32_t)t) {          /* rows are given out in order */
            fprintf(stderr, "swpps: communicator %d is on worker %u\n", t, w);
            return 1;
        }
        x->worker = acis_sw_worker(s.sw, w);
        x->n = barrier ? 0 : (uint32_t)(bytes / 4);
        x->ring = 2 * x->c->window;              /* slots and rounds repeat */
        x->seconds = seconds;
        x->len = ACIS_HDR_LEN + 4 * x->n;
        x->stride = (x->len + 63) / 64 * 64;
        x->pkts = aligned_alloc(64, (size_t)x->ring * (size_t)P * x->stride);
        if (!x->pkts)
            return 1;
        stamp(x, 0);
    }
    for (int t = 0; t < T; t++) {     /* every set-up answered: the sinks now */
        struct acis_sw_io io = sim_send_only_io(&g[t], sink_send);
        acis_sw_worker_io(g[t].worker, &io);
    }
    sim_counters(&s);
    uint64_t c0[ACIS_SWC_COUNT];
    memcpy(c0, s.c, sizeof c0);
    for (int t = 0; t < T; t++)
        if (pthread_create(&th[t], NULL, run, &g[t]) != 0)
            return 1;
    double total = 0;
    uint64_t fed = 0, sent = 0;
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        double pps = g[t].fed_ns ? (double)g[t].fed * 1e9 / (double)g[t].fed_ns : 0;
        printf("worker %d: %.2f Mpps in (%llu packets in %.3f s of feeding)\n", t, pps / 1e6,
               (unsigned long long)g[t].fed, (double)g[t].fed_ns / 1e9);
        total += pps;
        fed += g[t].fed;
        sent += g[t].sent;
    }
    sim_counters(&s);
    uint64_t in = s.c[ACIS_SWC_packets_in] - c0[ACIS_SWC_packets_in];
    uint64_t segs = s.c[ACIS_SWC_segments] - c0[ACIS_SWC_segments];
    printf("%s, %d members, %zu bytes, %d worker%s: %.2f Mpps in, %.2f Mpps out; "
           "%llu collectives, %llu packets crossed to another worker\n", what, P,
           barrier ? (size_t)0 : bytes, T, T > 1 ? "s" : "", total / 1e6,
           fed ? total * (double)sent / (double)fed / 1e6 : 0, (unsigned long long)segs,
           (unsigned long long)s.c[ACIS_SWC_crossed]);
    if (in != fed || segs * (uint64_t)P != fed) {
        fprintf(stderr, "swpps: the switch took %llu of %llu packets and completed %llu "
                "collectives\n", (unsigned long long)in, (unsigned long long)fed,
                (unsigned long long)segs);
        return 1;
    }
    return 0;
usage:
    fprintf(stderr, "usage: swpps [-T THREADS] [-p MEMBERS] [-t allreduce|barrier] "
                    "[-s BYTES (4..4096, a multiple of 4)] [-d SECONDS]\n");
    return 2;
}
