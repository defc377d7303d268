/* large.c -- v-variant collectives whose counts sum past INT32_MAX: only
 * the root of a gatherv or scatterv sees that sum, so nothing acis decides
 * may depend on it (a decision only the root saw sent it to MPICH while
 * the others waited in the switch), and every size and offset on the way
 * must be 64-bit.  Each rank's block is N bytes (MPI_CHAR, N just above
 * INT32_MAX / 2 at 2 ranks); the result is checked against a pattern
 * computed here (a PMPI copy would need as much memory again), and the
 * counters must show the call offloaded.
 *
 * usage: large --coll=gatherv|scatterv|allgatherv [--bytes=N]
 * (MPIR_CVAR_OFFLOAD=on; about 2 N * ranks bytes of memory per rank) */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "large[%d]: FAIL %s\n", rank, what);
}

/* Rank r's block, 4 KiB at a time: each chunk starts with its rank and
 * index (so a shifted or misplaced chunk shows) and is filled with a byte
 * of both; memset and memcmp keep a 2 GiB check short. */
#define CHUNK 4096

static void chunk(char *c, int r, size_t k, size_t len)
{
    uint64_t tag = (uint64_t)r << 40 | k;
    memset(c, (int)((k * 31 + (size_t)r * 7) & 0x7f) + 1, len);
    memcpy(c, &tag, len < sizeof tag ? len : sizeof tag);
}

static void fill(char *p, int r, size_t n)
{
    for (size_t k = 0; k * CHUNK < n; k++)
        chunk(p + k * CHUNK, r, k, n - k * CHUNK < CHUNK ? n - k * CHUNK : CHUNK);
}

static int same(const char *p, int r, size_t n)
{
    char want[CHUNK];
    for (size_t k = 0; k * CHUNK < n; k++) {
        size_t len = n - k * CHUNK < CHUNK ? n - k * CHUNK : CHUNK;
        chunk(want, r, k, len);
        if (memcmp(p + k * CHUNK, want, len) != 0)
            return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *coll = targ(argc, argv, "--coll", "gatherv");
    long long want = atoll(targ(argc, argv, "--bytes", "0"));
    if (want <= 0)
        want = (long long)INT_MAX / size + 4096;          /* the sum passes INT32_MAX */
    if (want > INT_MAX || (long long)want * (size - 1) > INT_MAX) {  /* counts, displs */
        fprintf(stderr, "large: --bytes too large for int counts and displacements\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t n = (size_t)want, all = n * (size_t)size;
    int gather = strcmp(coll, "gatherv") == 0, scatter = strcmp(coll, "scatterv") == 0;
    int allg = strcmp(coll, "allgatherv") == 0;
    if (!gather && !scatter && !allg) {
        fprintf(stderr, "large: --coll=gatherv|scatterv|allgatherv\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int *counts = malloc((size_t)size * sizeof *counts);
    int *displs = malloc((size_t)size * sizeof *displs);
    int big = allg || rank == 0;                        /* holds every block */
    char *mine = malloc(n), *every = big ? malloc(all) : NULL;
    if (!counts || !displs || !mine || (big && !every)) {
        fprintf(stderr, "large[%d]: no memory for %zu bytes\n", rank, big ? all + n : n);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int q = 0; q < size; q++) {
        counts[q] = (int)n;
        displs[q] = (int)((size_t)q * n);
    }
    if (scatter) {
        memset(mine, -1, n);
        for (int q = 0; big && q < size; q++)
            fill(every + (size_t)q * n, q, n);
    } else {
        fill(mine, rank, n);
        if (big)
            memset(every, -1, all);
    }
    long long sum = 0;
    for (int q = 0; q < size; q++)
        sum += counts[q];
    check(sum > INT_MAX, "the counts do not sum past INT32_MAX");

    int rc;
    double t = MPI_Wtime();
    if (gather)
        rc = MPI_Gatherv(mine, (int)n, MPI_CHAR, every, counts, displs, MPI_CHAR, 0,
                         MPI_COMM_WORLD);
    else if (scatter)
        rc = MPI_Scatterv(every, counts, displs, MPI_CHAR, mine, (int)n, MPI_CHAR, 0,
                          MPI_COMM_WORLD);
    else
        rc = MPI_Allgatherv(mine, (int)n, MPI_CHAR, every, counts, displs, MPI_CHAR,
                            MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    check(rc == MPI_SUCCESS, "the call failed");
    if (scatter)
        check(same(mine, rank, n), "this rank's block");
    for (int q = 0; big && !scatter && q < size; q++)
        check(same(every + (size_t)q * n, q, n), "a gathered block");

    acis_coll_t id = gather ? ACIS_COLL_GATHERV : scatter ? ACIS_COLL_SCATTERV
                                                          : ACIS_COLL_ALLGATHERV;
    struct acis_coll_stats st;
    acis_get_stats(id, &st);
    check(st.calls == 1 && st.offloaded == 1, "the call was not offloaded");

    int bad = 0;
    PMPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("large: %s, %d ranks, %zu bytes each (%.2f GiB in all), %.1f s: %s\n", coll,
               size, n, (double)all / (1 << 30), t, bad ? "FAILED" : "ok");
    free(counts);
    free(displs);
    free(mine);
    free(every);
    MPI_Finalize();
    return bad != 0;
}
