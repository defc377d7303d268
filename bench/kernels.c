/* kernels.c -- how fast the switch's reduction kernels fold: bytes of
 * input reduced per second on one thread, SUM on f32/f64/i32/i64 at
 * 4 KiB, 64 KiB and 1 MiB, with the buffers in cache (the same pair over
 * and over) and not (walking a 64 MiB pool), for each kernel set this CPU
 * runs, against memcpy of the same bytes.  No MPI.
 *
 *   bench/kernels [-t SECONDS_PER_POINT]     (default 0.05) */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "switch/switch.h"

#define POOL (32u << 20)            /* per side: out of any cache */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Bytes per second of one operation on size bytes; isa < 0: memcpy. */
static double rate(int isa, unsigned dt, uint8_t *io, uint8_t *in, size_t size, int cold,
                   double secs)
{
    size_t n = size / acis_wire_dt_size(dt), blocks = cold ? POOL / size : 1, b = 0;
    uint64_t reps = 0;
    double t0 = now(), t;
    do {
        for (int k = 0; k < 16; k++, reps++, b = (b + 1) % blocks) {
            if (isa < 0)
                memcpy(io + b * size, in + b * size, size);
            else
                acis_reduce_on(isa, ACIS_OP_SUM, dt, io + b * size, in + b * size, n);
        }
        t = now() - t0;
    } while (t < secs);
    return (double)reps * (double)size / t;
}

int main(int argc, char **argv)
{
    double secs = 0.05;
    int c;
    while ((c = getopt(argc, argv, "t:")) != -1) {
        if (c != 't') {
            fprintf(stderr, "usage: %s [-t seconds per point]\n", argv[0]);
            return 2;
        }
        secs = atof(optarg);
    }
    uint8_t *io = aligned_alloc(64, POOL), *in = aligned_alloc(64, POOL);
    if (!io || !in) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    /* Small values: sums stay normal numbers whatever the repetitions. */
    for (size_t i = 0; i < POOL / 4; i++) {
        float f = 1e-3f * (float)(i % 7);
        memcpy(io + 4 * i, &f, 4);
        memcpy(in + 4 * i, &f, 4);
    }
    static const unsigned dts[] = { ACIS_DT_F32, ACIS_DT_F64, ACIS_DT_I32, ACIS_DT_I64 };
    static const size_t sizes[] = { 4096, 65536, 1 << 20 };
    printf("# SUM, GB/s of input reduced on one thread; memcpy of the same bytes;\n"
           "# ratio = the set acis_reduce uses / memcpy.  acis_reduce uses: %s\n",
           acis_reduce_isa_name(acis_reduce_isa()));
    printf("%-5s %8s %-5s %8s %8s %8s %8s %6s\n", "type", "bytes", "cache", "base", "avx2",
           "avx512", "memcpy", "ratio");
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++)
        for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
            for (int cold = 0; cold < 2; cold++) {
                double r[ACIS_ISA_COUNT];
                for (int isa = 0; isa < ACIS_ISA_COUNT; isa++)
                    r[isa] = acis_reduce_on(isa, ACIS_OP_SUM, dts[d], io, in, 0) == 0
                                 ? rate(isa, dts[d], io, in, sizes[s], cold, secs) : 0;
                double m = rate(-1, dts[d], io, in, sizes[s], cold, secs);
                printf("%-5s %8zu %-5s", acis_wire_dt_name(dts[d]), sizes[s], cold ? "no" : "yes");
                for (int isa = 0; isa < ACIS_ISA_COUNT; isa++) {
                    if (r[isa] > 0)
                        printf(" %8.2f", r[isa] / 1e9);
                    else
                        printf(" %8s", "-");
                }
                printf(" %8.2f %6.2f\n", m / 1e9, r[acis_reduce_isa()] / m);
            }
    free(io);
    free(in);
    return 0;
}
