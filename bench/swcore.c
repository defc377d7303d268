/* swcore.c -- the switch core's work per packet, without sockets or MPI:
 * simulated hosts (test/unit/simhost.c, the library's own packetizer) run
 * one collective many times on one communicator of a switch core, for a
 * profiler (valgrind --tool=callgrind: acis_sw_input is the switch's
 * share).  The time it prints includes the simulated hosts' own work and
 * is not the switch's latency.
 *
 * usage: swcore [-p MEMBERS] [-t COLL] [-s BYTES] [-i ITERS] [-P PAYLOAD]
 *   COLL   allreduce, scan (int32 sum) bcast gather allgather barrier
 *   BYTES  message bytes (each member's block for the gathers), default 8
 * It also prints the heap (mallinfo2) before the first collective and
 * after the last: the switch allocates nothing after it starts. */
#include "config.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simhost.h"

static const char *colls[] = { "allreduce", "bcast", "gather", "allgather", "barrier",
                               "scan" };
static const unsigned kinds[] = { ACIS_K_ALLREDUCE, ACIS_K_BCAST, ACIS_K_GATHER,
                                  ACIS_K_ALLGATHER, ACIS_K_BARRIER, ACIS_K_SCAN };

int main(int argc, char **argv)
{
    int P = 16, iters = 10000, c = -1, opt;
    size_t bytes = 8;
    struct acis_sw_opts o = ACIS_SW_DEFAULT_OPTS;
    const char *what = "allreduce";
    while ((opt = getopt(argc, argv, "p:t:s:i:P:")) != -1) {
        switch (opt) {
        case 'p': P = atoi(optarg); break;
        case 't': what = optarg; break;
        case 's': bytes = (size_t)atol(optarg); break;
        case 'i': iters = atoi(optarg); break;
        case 'P': o.payload = (uint32_t)atoi(optarg); break;
        default: goto usage;
        }
    }
    for (int k = 0; k < (int)(sizeof colls / sizeof *colls); k++)
        if (strcmp(what, colls[k]) == 0)
            c = k;
    if (c < 0 || P < 1 || P > 65535 || iters < 1 || ((c == 0 || c == 5) && bytes % 4))
        goto usage;
    unsigned kind = kinds[c];
    int gathers = kind == ACIS_K_GATHER || kind == ACIS_K_ALLGATHER;
    uint64_t total = kind == ACIS_K_BARRIER ? 0 : gathers ? bytes * (uint64_t)P : bytes;

    /* the simulated hosts copy every packet into a fresh buffer: keep the
     * freed memory, or each copy faults its pages in again */
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    static struct sim s;
    struct sim_comm *comm = sim_comm_new(P);
    o.ports = P > 256 ? (uint32_t)P : o.ports;
    uint8_t *in = calloc((size_t)P, bytes + 1), *out = calloc((size_t)P, total + 1);
    struct sim_member *m = calloc((size_t)P, sizeof *m);
    if (!comm || !in || !out || !m || sim_init(&s, &o) != 0) {
        fprintf(stderr, "swcore: out of memory\n");
        return 1;
    }
    for (int r = 0; r < P; r++) {
        uint32_t st;
        if (sim_join(&s, 0x5ca1ab1eULL, (uint32_t)r, (uint32_t)P, &st) != r) {
            fprintf(stderr, "swcore: the switch refused host %d (status %u)\n", r, st);
            return 1;
        }
        comm->host[r] = r;
    }
    if (sim_ct_create(&s, comm, 1) != ACIS_ST_OK) {
        fprintf(stderr, "swcore: the switch refused the communicator\n");
        return 1;
    }
    for (int r = 0; r < P; r++) {
        int sends = kind == ACIS_K_ALLREDUCE || kind == ACIS_K_SCAN || gathers ||
                    (kind == ACIS_K_BCAST && r == 0);
        int wants = kind != ACIS_K_BARRIER && !(kind == ACIS_K_BCAST && r == 0) &&
                    !(kind == ACIS_K_GATHER && r != 0);
        m[r] = (struct sim_member){ in + (size_t)r * bytes, gathers ? (uint64_t)r * bytes : 0,
                                    sends ? bytes : 0, out + (size_t)r * total, 0,
                                    wants ? total : 0 };
    }
    int reduces = kind == ACIS_K_ALLREDUCE || kind == ACIS_K_SCAN;
    unsigned dt = reduces ? ACIS_DT_I32 : kind == ACIS_K_BARRIER ? ACIS_DT_NONE : ACIS_DT_BYTE;
    unsigned op = reduces ? ACIS_OP_SUM : ACIS_OP_NONE;
    struct mallinfo2 h0 = mallinfo2();
    uint64_t t0 = acis_now_ns();
    for (int i = 0; i < iters; i++)
        if (sim_collective(&s, comm, kind, op, dt, 0, total, m, (unsigned)i) != 0) {
            fprintf(stderr, "swcore: collective %d failed\n", i);
            return 1;
        }
    uint64_t t1 = acis_now_ns();
    struct mallinfo2 h1 = mallinfo2();
    sim_counters(&s);
    printf("heap %zu bytes before, %zu after; the switch's pool %llu bytes\n",
           h0.uordblks + h0.hblkhd, h1.uordblks + h1.hblkhd,
           (unsigned long long)s.c[ACIS_SWC_buffer_bytes]);
    printf("%s, %d members, %zu bytes, %u-byte packets: %.2f us per collective "
           "(simulated hosts included), %.1f segments each\n", what, P, bytes, o.payload,
           (double)(t1 - t0) / 1e3 / iters, (double)s.c[ACIS_SWC_segments] / iters);
    sim_fini(&s);
    sim_comm_free(comm);
    free(in);
    free(out);
    free(m);
    return 0;
usage:
    fprintf(stderr, "usage: swcore [-p MEMBERS] [-t allreduce|scan|bcast|gather|allgather|barrier] "
                    "[-s BYTES] [-i ITERS] [-P PAYLOAD]\n");
    return 2;
}
