/* summary.c -- the MPIR_CVAR_OFFLOAD_STATS table: counters of every rank are
 * summed onto rank 0, which prints one row per entry point that was
 * called: calls, offloaded, software, bytes, and software calls by
 * reason. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "offload.h"
#include "util/util.h"

/* Per entry point: offloaded, bytes, offloaded bytes, then reasons. */
#define PER_COLL (3 + ACIS_REASON_COUNT)

static void human_bytes(uint64_t b, char *out, size_t len)
{
    static const char *const unit[] = { "B", "KiB", "MiB", "GiB", "TiB" };
    double v = (double)b;
    int u = 0;
    while (v >= 1024 && u < 4) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(out, len, "%llu B", (unsigned long long)b);
    else
        snprintf(out, len, "%.1f %s", v, unit[u]);
}

static void print_table(const uint64_t *sum, int nranks)
{
    fprintf(stderr, "acis: offload statistics, summed over %d rank%s\n", nranks,
            nranks == 1 ? "" : "s");
    fprintf(stderr, "acis: %-26s %10s %10s %10s %12s  %s\n", "collective", "calls",
            "offloaded", "software", "bytes", "software by reason");
    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        const uint64_t *v = sum + (size_t)c * PER_COLL;
        uint64_t sw = 0;
        for (int r = 1; r < ACIS_REASON_COUNT; r++)
            sw += v[3 + r];
        if (v[0] + sw == 0)
            continue;
        char bytes[32], why[512] = "";
        size_t n = 0;
        human_bytes(v[1], bytes, sizeof bytes);
        for (int r = 1; r < ACIS_REASON_COUNT && n < sizeof why; r++)
            if (v[3 + r])
                n += (size_t)snprintf(why + n, sizeof why - n, "%s%s %llu", n ? ", " : "",
                                      acis_reason_name(r), (unsigned long long)v[3 + r]);
        fprintf(stderr, "acis: %-26s %10llu %10llu %10llu %12s  %s\n", acis_coll_name(c),
                (unsigned long long)(v[0] + sw), (unsigned long long)v[0],
                (unsigned long long)sw, bytes, why);
    }
    uint64_t starts = sum[(size_t)ACIS_COLL_COUNT * PER_COLL];
    if (starts)
        fprintf(stderr, "acis: %-26s %10llu  (starts of the persistent requests above that "
                        "acis runs; each MPI_*_init counts as one call)\n", "MPI_Start",
                (unsigned long long)starts);
    if (ACIS_CV(OFFLOAD) == ACIS_OFF && acis_util.verbose == 0)
        fprintf(stderr, "acis: (bytes are not counted with MPIR_CVAR_OFFLOAD=off)\n");
}

void acis_summary_print(void)
{
    size_t n = (size_t)ACIS_COLL_COUNT * PER_COLL + 1;   /* and the persistent starts */
    uint64_t *mine = calloc(n, sizeof *mine), *sum = calloc(n, sizeof *sum);
    if (!mine || !sum)
        goto done;
    for (int c = 0; c < ACIS_COLL_COUNT; c++) {
        struct acis_coll_stats s;
        uint64_t *v = mine + (size_t)c * PER_COLL;
        acis_stats_snapshot(c, &s);
        v[0] = s.offloaded;
        v[1] = s.bytes;
        v[2] = s.offloaded_bytes;
        for (int r = 0; r < ACIS_REASON_COUNT; r++)
            v[3 + r] = s.by_reason[r];
    }
    mine[n - 1] = atomic_load(&acis_util.host.persistent_starts);
    PMPI_Reduce(mine, sum, (int)n, MPI_UINT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
    if (acis_oc.world_rank == 0)
        print_table(sum, acis_oc.world_size);
done:
    free(mine);
    free(sum);
}
