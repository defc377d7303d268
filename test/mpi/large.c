/* large.c -- collectives past INT32_MAX bytes.  The v-variants: counts
 * summing past INT32_MAX, which only the root of a gatherv or scatterv
 * sees, so nothing acis decides may depend on that sum (a decision only
 * the root saw sent it to MPICH while the others waited in the switch),
 * and every size and offset on the way must be 64-bit.  Each rank's block
 * is N bytes (MPI_CHAR, N just above INT32_MAX / 2 at 2 ranks).  And a
 * bcast and an allreduce of MPI_INT64_T whose count times 8 passes INT32_MAX
 * (the collective's CVAR on, so no size limit applies): count * size must
 * not be int arithmetic anywhere.  Results are checked against patterns
 * computed here (a PMPI copy would need as much memory again), and the
 * counters must show the call offloaded.
 *
 * usage: large --coll=gatherv|scatterv|allgatherv|bcast|allreduce [--bytes=N]
 * (MPIR_CVAR_OFFLOAD=on; about 2 N * ranks bytes of memory per rank for
 * the v-variants, N for bcast, 2 N for allreduce; N defaults to just past
 * INT32_MAX in all) */
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

/* What the counters say of the one call of id: 1 if offloaded. */
static int offloaded(acis_coll_t id)
{
    struct acis_coll_stats st;
    acis_get_stats(id, &st);
    return st.calls == 1 && st.offloaded == 1;
}

/* Every rank's failures counted, the line printed (bytes: the result
 * space); the exit status. */
static int finish(const char *coll, size_t bytes, double t)
{
    int bad = 0;
    PMPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("large: %s, %d ranks, a result of %zu bytes (%.2f GiB), %.1f s: %s\n", coll,
               size, bytes, (double)bytes / (1 << 30), t, bad ? "FAILED" : "ok");
    return bad != 0;
}

/* A bcast (rank 0 to all) or an allreduce (MPI_SUM) of n MPI_INT64_T,
 * n * 8 past INT32_MAX unless --bytes says otherwise. */
static int whole(const char *coll, long long want)
{
    int bcast = strcmp(coll, "bcast") == 0;
    long long n = want > 0 ? want / 8 : (long long)INT_MAX / 8 + 2048;
    if (n > INT_MAX) {
        fprintf(stderr, "large: --bytes too large for an int count of MPI_INT64_T\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t bytes = (size_t)n * sizeof(int64_t);
    int64_t *v = malloc(bytes), *sum = bcast ? NULL : malloc(bytes);
    if (!v || (!bcast && !sum)) {
        fprintf(stderr, "large[%d]: no memory for %zu bytes\n", rank, bcast ? bytes : 2 * bytes);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (bcast && rank == 0)
        fill((char *)v, 0, bytes);
    else if (bcast)
        memset(v, -1, bytes);
    else {
        tfill64(v, (int)n, rank, 0);
        memset(sum, -1, bytes);
    }
    check(bytes > INT_MAX, "the message is not past INT32_MAX bytes");

    double t = MPI_Wtime();
    int rc = bcast ? MPI_Bcast(v, (int)n, MPI_INT64_T, 0, MPI_COMM_WORLD)
                   : MPI_Allreduce(v, sum, (int)n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    check(rc == MPI_SUCCESS, "the call failed");
    if (bcast)
        check(same((char *)v, 0, bytes), "the broadcast bytes");
    else
        check(tsum64_ok(sum, (int)n, size, 0), "the sums");
    check(offloaded(bcast ? ACIS_COLL_BCAST : ACIS_COLL_ALLREDUCE), "the call was not offloaded");
    free(v);
    free(sum);
    int r = finish(coll, bytes, t);
    MPI_Finalize();
    return r;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *coll = targ(argc, argv, "--coll", "gatherv");
    long long want = atoll(targ(argc, argv, "--bytes", "0"));
    if (strcmp(coll, "bcast") == 0 || strcmp(coll, "allreduce") == 0)
        return whole(coll, want);
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
        fprintf(stderr, "large: --coll=gatherv|scatterv|allgatherv|bcast|allreduce\n");
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
    check(offloaded(id), "the call was not offloaded");
    free(counts);
    free(displs);
    free(mine);
    free(every);
    int r = finish(coll, all, t);
    MPI_Finalize();
    return r;
}
