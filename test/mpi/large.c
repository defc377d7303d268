/* large.c -- every collective family past INT32_MAX bytes.  Each family's
 * call moves a result space just past INT32_MAX bytes while every count
 * the caller passes is an int, so nothing acis computes on the way --
 * count * size, a run of every rank's block, a displacement sum, a pack
 * -- may be int arithmetic.  And the v-variants' counts sum past
 * INT32_MAX, which only the root of a gatherv or scatterv sees: nothing
 * acis decides may depend on that sum (a decision only the root saw sent
 * it to MPICH while the others waited in the switch).
 *
 * The byte families move MPI_CHAR blocks of N bytes per rank (N just past
 * INT32_MAX / ranks): gather, scatter, allgather, their v-variants, the
 * nonblocking iallgather and igatherv.  The byte reductions sum MPI_UINT8_T
 * (mod 256) over vectors of ranks * N elements: reduce_scatter_block,
 * reduce_scatter, ireduce_scatter_block.  The others move n MPI_INT64_T,
 * n * 8 just past INT32_MAX: bcast, reduce, allreduce, scan, exscan
 * (MPI_SUM, tdata's pattern).  And bcast_packed: a bcast of a type with
 * holes, whose images (packed at the root, unpacked at the others) pass
 * INT32_MAX bytes.  Every byte and every sum is checked against
 * patterns computed here (a PMPI copy would need as much memory again),
 * each 4 KiB chunk tagged with its rank, index and family so a shifted,
 * misplaced or stale chunk shows.
 *
 * Each family then must show in the counters as offloaded -- or, when
 * given as FAMILY/REASON, as run by MPICH for that reason (acis's
 * reason names) with MPICH's result.
 *
 * usage: large --coll=FAMILY[/REASON][,...] [--bytes=N]
 * Families run one at a time, in the order given, in one process: the
 * buffers (W bytes each, W the largest result space, 2 GiB + 4 MiB at 2
 * ranks) are mapped once and reused, so their pages are made once; a
 * rank's peak must stay within 2 W + 256 MiB (checked at the end).
 * --bytes sets N (default INT_MAX / ranks + 4096), n * 8 (default
 * INT_MAX / 8 + 2048) and bcast_packed's bytes. */
#define _DEFAULT_SOURCE                 /* madvise, MAP_ANONYMOUS, strdup */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include <acis/acis.h>

#include "tdata.h"

static int rank, size, failures, salt;
static double tcall;         /* the call itself (and its wait), seconds */
static size_t nb;            /* N: bytes of one rank's block */
static long long n64;        /* MPI_INT64_T elements of the int64 families */
static uint8_t *sa, *ra;     /* the two buffers, W bytes each */
static size_t wsz;           /* W */

static void check(int ok, const char *what)
{
    if (!ok && failures++ < 10)
        fprintf(stderr, "large[%d]: FAIL %s\n", rank, what);
}

/* Rank r's byte stream, 4 KiB at a time: each chunk starts with its rank,
 * the family's salt and its index, and is filled with a byte of all
 * three; memset and memcmp keep a 2 GiB check short. */
#define CHUNK 4096

static void chunk(uint8_t *c, int r, size_t k)
{
    uint64_t tag = (uint64_t)r << 56 | (uint64_t)salt << 48 | k;
    memset(c, (int)((k * 31 + (size_t)r * 7 + (size_t)salt * 13) & 0x7f) + 1, CHUNK);
    memcpy(c, &tag, sizeof tag);
}

/* Chunk k of the byte-wise sum (mod 256) of ranks lo..hi-1's streams
 * (hi = lo + 1: rank lo's own). */
static void chunk_sum(uint8_t *w, int lo, int hi, size_t k)
{
    uint8_t c[CHUNK];
    chunk(w, lo, k);
    for (int r = lo + 1; r < hi; r++) {
        chunk(c, r, k);
        for (int i = 0; i < CHUNK; i++)
            w[i] = (uint8_t)(w[i] + c[i]);
    }
}

/* p[0..len) = bytes [off, off + len) of rank r's stream. */
static void put(uint8_t *p, int r, size_t off, size_t len)
{
    uint8_t w[CHUNK];
    for (size_t at = off; at < off + len;) {
        size_t in = at % CHUNK, n = CHUNK - in < off + len - at ? CHUNK - in : off + len - at;
        chunk(w, r, at / CHUNK);
        memcpy(p + (at - off), w + in, n);
        at += n;
    }
}

/* 1 if p[0..len) holds bytes [off, off + len) of the sum of ranks
 * lo..hi-1's streams. */
static int same(const uint8_t *p, int lo, int hi, size_t off, size_t len)
{
    uint8_t w[CHUNK];
    for (size_t at = off; at < off + len;) {
        size_t in = at % CHUNK, n = CHUNK - in < off + len - at ? CHUNK - in : off + len - at;
        chunk_sum(w, lo, hi, at / CHUNK);
        if (memcmp(p + (at - off), w + in, n) != 0)
            return 0;
        at += n;
    }
    return 1;
}

/* A result buffer no family wrote: 0xff, a pattern no chunk has. */
static void poison(uint8_t *p, size_t len)
{
    memset(p, -1, len);
}

/* The byte families: gather, scatter, allgather (blocking or not), with
 * equal counts or as v-variants. */
static int bytes_family(const char *f, size_t *result)
{
    int v = strchr(f, 'v') != NULL, nonblocking = f[0] == 'i';
    const char *b = f + nonblocking;
    int gather = strncmp(b, "gather", 6) == 0, scatter = strncmp(b, "scatter", 7) == 0;
    int big = !gather && !scatter ? 1 : rank == 0;     /* holds every block */
    int counts[size], displs[size], rc;
    MPI_Request req = MPI_REQUEST_NULL;
    for (int q = 0; q < size; q++) {
        counts[q] = (int)nb;
        displs[q] = (int)((size_t)q * nb);
    }
    *result = nb * (size_t)size;
    if (scatter) {
        for (int q = 0; big && q < size; q++)
            put(sa + (size_t)q * nb, q, 0, nb);
        poison(ra, nb);
    } else {
        put(sa, rank, 0, nb);
        if (big)
            poison(ra, *result);
    }
    long long sum = 0;
    for (int q = 0; q < size; q++)
        sum += counts[q];
    check(sum > INT_MAX, "the counts do not sum past INT32_MAX");
    int n = (int)nb;
    tcall = MPI_Wtime();
    if (gather && v)
        rc = nonblocking ? MPI_Igatherv(sa, n, MPI_CHAR, ra, counts, displs, MPI_CHAR, 0,
                                        MPI_COMM_WORLD, &req)
                         : MPI_Gatherv(sa, n, MPI_CHAR, ra, counts, displs, MPI_CHAR, 0,
                                       MPI_COMM_WORLD);
    else if (gather)
        rc = MPI_Gather(sa, n, MPI_CHAR, ra, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    else if (scatter && v)
        rc = MPI_Scatterv(sa, counts, displs, MPI_CHAR, ra, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    else if (scatter)
        rc = MPI_Scatter(sa, n, MPI_CHAR, ra, n, MPI_CHAR, 0, MPI_COMM_WORLD);
    else if (v)
        rc = MPI_Allgatherv(sa, n, MPI_CHAR, ra, counts, displs, MPI_CHAR, MPI_COMM_WORLD);
    else
        rc = nonblocking ? MPI_Iallgather(sa, n, MPI_CHAR, ra, n, MPI_CHAR, MPI_COMM_WORLD, &req)
                         : MPI_Allgather(sa, n, MPI_CHAR, ra, n, MPI_CHAR, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && nonblocking)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    tcall = MPI_Wtime() - tcall;
    check(rc == MPI_SUCCESS, "the call failed");
    if (scatter)
        check(same(ra, rank, rank + 1, 0, nb), "this rank's block");
    for (int q = 0; big && !scatter && q < size; q++)
        check(same(ra + (size_t)q * nb, q, q + 1, 0, nb), "a gathered block");
    return rc;
}

/* Reduce-scatter (blocking or not, with counts or by block) of
 * MPI_UINT8_T vectors of size * N elements: rank r gets block r of the
 * sum. */
static int rs_family(const char *f, size_t *result)
{
    int nonblocking = f[0] == 'i', block = strstr(f, "block") != NULL, rc;
    int counts[size];
    MPI_Request req = MPI_REQUEST_NULL;
    for (int q = 0; q < size; q++)
        counts[q] = (int)nb;
    *result = nb * (size_t)size;
    put(sa, rank, 0, *result);
    poison(ra, nb);
    check(*result > INT_MAX, "the vector is not past INT32_MAX elements");
    tcall = MPI_Wtime();
    if (block && nonblocking)
        rc = MPI_Ireduce_scatter_block(sa, ra, (int)nb, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD,
                                       &req);
    else if (block)
        rc = MPI_Reduce_scatter_block(sa, ra, (int)nb, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD);
    else
        rc = MPI_Reduce_scatter(sa, ra, counts, MPI_UINT8_T, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && nonblocking)
        rc = MPI_Wait(&req, MPI_STATUS_IGNORE);
    tcall = MPI_Wtime() - tcall;
    check(rc == MPI_SUCCESS, "the call failed");
    check(same(ra, 0, size, (size_t)rank * nb, nb), "this rank's block of the sums");
    return rc;
}

/* Bcast (rank 0 to all), reduce (to rank 0), allreduce, scan and exscan
 * of n MPI_INT64_T, MPI_SUM. */
static int int64_family(const char *f, size_t *result)
{
    int bcast = strcmp(f, "bcast") == 0, rc;
    int64_t *s = (int64_t *)(void *)sa, *r = (int64_t *)(void *)ra;
    int n = (int)n64;
    *result = (size_t)n64 * sizeof(int64_t);
    check(*result > INT_MAX, "the message is not past INT32_MAX bytes");
    if (bcast) {
        if (rank == 0)
            put(sa, 0, 0, *result);
        else
            poison(sa, *result);
        tcall = MPI_Wtime();
        rc = MPI_Bcast(s, n, MPI_INT64_T, 0, MPI_COMM_WORLD);
        tcall = MPI_Wtime() - tcall;
        check(rc == MPI_SUCCESS, "the call failed");
        check(same(sa, 0, 1, 0, *result), "the broadcast bytes");
        return rc;
    }
    tfill64(s, n, rank, salt);
    poison(ra, *result);
    int upto = size;                                /* ranks whose sum is the result */
    tcall = MPI_Wtime();
    if (strcmp(f, "reduce") == 0) {
        rc = MPI_Reduce(s, r, n, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
        upto = rank == 0 ? size : 0;
    } else if (strcmp(f, "allreduce") == 0) {
        rc = MPI_Allreduce(s, r, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    } else if (strcmp(f, "scan") == 0) {
        rc = MPI_Scan(s, r, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        upto = rank + 1;
    } else {
        rc = MPI_Exscan(s, r, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        upto = rank;                                /* rank 0's is undefined */
    }
    tcall = MPI_Wtime() - tcall;
    check(rc == MPI_SUCCESS, "the call failed");
    if (upto > 0)
        check(tsum64_ok(r, n, upto, salt), "the sums");
    return rc;
}

/* A broadcast of a type with holes: 511 MPI_INT64_T in every 4 KiB
 * (extent 4096, 4088 bytes of data), so both ranks' data must be packed
 * (rank 0) and unpacked (the others) through images past INT32_MAX
 * bytes.  The image is a temporary of as much again: the first buffer's
 * pages are given back first, to keep the peak at two buffers. */
#define HOLEY 511
static long long nholey;     /* elements of that type */

static int packed_family(const char *f, size_t *result)
{
    (void)f;
    MPI_Datatype run, t;
    const size_t data = HOLEY * 8, ext = data + 8;
    int rc = MPI_Type_contiguous(HOLEY, MPI_INT64_T, &run);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_resized(run, 0, (MPI_Aint)ext, &t);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(&t);
    check(rc == MPI_SUCCESS, "the type could not be made");
    if (rc != MPI_SUCCESS)
        return rc;
    madvise(sa, wsz, MADV_DONTNEED);
    *result = (size_t)nholey * data;
    check(*result > INT_MAX, "the packed bytes are not past INT32_MAX");
    poison(ra, (size_t)nholey * ext);
    for (size_t j = 0; rank == 0 && j < (size_t)nholey; j++)
        put(ra + j * ext, 0, j * data, data);
    tcall = MPI_Wtime();
    rc = MPI_Bcast(ra, (int)nholey, t, 0, MPI_COMM_WORLD);
    tcall = MPI_Wtime() - tcall;
    check(rc == MPI_SUCCESS, "the call failed");
    int ok = 1;
    for (size_t j = 0; ok && j < (size_t)nholey; j++) {
        static const uint8_t hole[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
        ok = same(ra + j * ext, 0, 1, j * data, data) && memcmp(ra + j * ext + data, hole, 8) == 0;
    }
    check(ok, "the broadcast elements, or a hole was written");
    MPI_Type_free(&t);
    MPI_Type_free(&run);
    return rc;
}

static const struct family {
    const char *name;
    acis_coll_t id;
    int (*run)(const char *name, size_t *result);
} families[] = {
    { "gather", ACIS_COLL_GATHER, bytes_family },
    { "gatherv", ACIS_COLL_GATHERV, bytes_family },
    { "igatherv", ACIS_COLL_IGATHERV, bytes_family },
    { "scatter", ACIS_COLL_SCATTER, bytes_family },
    { "scatterv", ACIS_COLL_SCATTERV, bytes_family },
    { "allgather", ACIS_COLL_ALLGATHER, bytes_family },
    { "allgatherv", ACIS_COLL_ALLGATHERV, bytes_family },
    { "iallgather", ACIS_COLL_IALLGATHER, bytes_family },
    { "reduce_scatter", ACIS_COLL_REDUCE_SCATTER, rs_family },
    { "reduce_scatter_block", ACIS_COLL_REDUCE_SCATTER_BLOCK, rs_family },
    { "ireduce_scatter_block", ACIS_COLL_IREDUCE_SCATTER_BLOCK, rs_family },
    { "bcast", ACIS_COLL_BCAST, int64_family },
    { "reduce", ACIS_COLL_REDUCE, int64_family },
    { "allreduce", ACIS_COLL_ALLREDUCE, int64_family },
    { "scan", ACIS_COLL_SCAN, int64_family },
    { "exscan", ACIS_COLL_EXSCAN, int64_family },
    { "bcast_packed", ACIS_COLL_BCAST, packed_family },
};
#define NFAMILIES ((int)(sizeof families / sizeof families[0]))

/* The reason named name; -1 if none. */
static int reason_of(const char *name)
{
    for (int r = 0; r < ACIS_REASON_COUNT; r++)
        if (strcmp(acis_reason_name((acis_reason_t)r), name) == 0)
            return r;
    return -1;
}

/* Run family f (want: the reason expected, ACIS_REASON_NONE for offload);
 * print its line on rank 0; 1 if it failed on some rank. */
static int run_family(const struct family *f, int want)
{
    struct acis_coll_stats a, b;
    struct acis_host_stats ha, hb;
    size_t result = 0;
    int before = failures, bad = 0;
    salt = (int)(f - families) + 1;
    acis_get_stats(f->id, &a);
    acis_get_host_stats(&ha);
    double t = MPI_Wtime();
    f->run(f->name, &result);
    t = MPI_Wtime() - t;
    acis_get_stats(f->id, &b);
    acis_get_host_stats(&hb);
    check(b.calls - a.calls == 1, "the entry point was not counted once");
    if (want == ACIS_REASON_NONE)
        check(b.offloaded - a.offloaded == 1 && hb.redone == ha.redone &&
                  hb.abstained == ha.abstained,
              "the call was not offloaded (or was redone in MPICH)");
    else
        check(b.software - a.software == 1 && b.by_reason[want] - a.by_reason[want] == 1,
              "the call did not run in MPICH for the reason given");
    int mine = failures > before;
    PMPI_Allreduce(&mine, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("large: %s, %d ranks, a result of %zu bytes (%.2f GiB), %.1f s (call %.1f s), "
               "%s: %s\n", f->name, size, result, (double)result / (1 << 30), t, tcall,
               want == ACIS_REASON_NONE ? "offloaded" : acis_reason_name((acis_reason_t)want),
               bad ? "FAILED" : "ok");
    fflush(stdout);
    return bad;
}

/* W bytes, their pages made now (faulting them in one by one took three
 * times as long here; huge pages took longer still); aborts without. */
static uint8_t *map(size_t w)
{
    void *p = mmap(NULL, w, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
                   -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "large[%d]: no memory for %zu bytes\n", rank, w);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    return p;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *list = strdup(targ(argc, argv, "--coll", "allgather"));
    long long want = atoll(targ(argc, argv, "--bytes", "0"));
    nb = want > 0 ? (size_t)want : (size_t)INT_MAX / (size_t)size + 4096;
    n64 = want > 0 ? want / 8 : (long long)INT_MAX / 8 + 2048;
    nholey = want > 0 ? want / (HOLEY * 8) + 1 : (long long)INT_MAX / (HOLEY * 8) + 8;
    if (nb > INT_MAX || (long long)nb * (size - 1) > INT_MAX || n64 > INT_MAX) {
        fprintf(stderr, "large: --bytes too large for int counts and displacements\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    size_t w = nb * (size_t)size > (size_t)n64 * 8 ? nb * (size_t)size : (size_t)n64 * 8;
    if (w < (size_t)nholey * (HOLEY + 1) * 8)
        w = (size_t)nholey * (HOLEY + 1) * 8;
    sa = map(w);
    ra = map(w);
    wsz = w;
    MPI_Barrier(MPI_COMM_WORLD);          /* sets the communicator up for the I-forms */
    int bad = 0;
    for (char *save = NULL, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char *slash = strchr(item, '/');
        int reason = ACIS_REASON_NONE, i = 0;
        if (slash) {
            *slash = '\0';
            reason = reason_of(slash + 1);
        }
        while (i < NFAMILIES && strcmp(families[i].name, item) != 0)
            i++;
        if (i == NFAMILIES || reason < 0) {
            fprintf(stderr, "large: unknown family or reason: %s%s%s\n", item,
                    slash ? "/" : "", slash ? slash + 1 : "");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        bad |= run_family(&families[i], reason);
    }
    munmap(sa, w);
    munmap(ra, w);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    size_t peak = (size_t)ru.ru_maxrss * 1024;
    int over = peak > 2 * w + ((size_t)256 << 20);
    check(!over, "the peak passed 2 W + 256 MiB");
    bad |= over;
    if (rank == 0)
        printf("large: buffers of %zu bytes; rank 0's peak %.2f GiB\n", w,
               (double)peak / (1 << 30));
    PMPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    free(list);
    MPI_Finalize();
    return bad;
}
