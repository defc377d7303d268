/* nbc_check.c -- nonblocking offloaded collectives in flight together, on
 * one communicator and on several, mixed with MPICH's own requests
 * (point-to-point, a collective acis does not intercept, one it hands to
 * MPICH), completed with MPI_Waitall, MPI_Testall, MPI_Waitany and
 * MPI_Wait in reverse order.  Every result is compared with MPICH's, and
 * the counters must show the acis collectives offloaded. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "nbc_check[%d]: FAIL %s\n", rank, what);
    }
}

static uint64_t offloaded(acis_coll_t c)
{
    struct acis_coll_stats s;
    acis_get_stats(c, &s);
    return s.offloaded;
}

static void fill(int *v, int n, int seed)
{
    for (int i = 0; i < n; i++)
        v[i] = (rank + 1) * (i % 97) + seed;
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    for (int i = 0; i < *len; i++)
        ((int *)inout)[i] += ((int *)in)[i];
}

/* Offloaded collectives, MPICH point-to-point, an MPICH-only collective
 * and a software-fallback collective, all outstanding, one Waitall. */
static void mixed_waitall(void)
{
    enum { N = 5000 };
    static int a[N], ra[N], b[N], s2[N], r2[N], ta[4096], tra[4096], u[16], ru[16];
    MPI_Status st[6];
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Request req[6];
    MPI_Op uop;
    MPI_Op_create(user_sum, 1, &uop);
    uint64_t ar0 = offloaded(ACIS_COLL_IALLREDUCE), bc0 = offloaded(ACIS_COLL_IBCAST);

    fill(a, N, 1);
    fill(b, N, 2);
    fill(s2, N, 3);
    fill(ta, 4096, 4);
    fill(u, 16, 5);
    MPI_Iallreduce(a, ra, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[0]);
    MPI_Ibcast(b, N, MPI_INT, size - 1, MPI_COMM_WORLD, &req[1]);
    MPI_Irecv(r2, N, MPI_INT, left, 7, MPI_COMM_WORLD, &req[2]);
    MPI_Isend(s2, N, MPI_INT, right, 7, MPI_COMM_WORLD, &req[3]);
    MPI_Ialltoall(ta, 4096 / size, MPI_INT, tra, 4096 / size, MPI_INT, MPI_COMM_WORLD, &req[4]);
    MPI_Iallreduce(u, ru, 16, MPI_INT, uop, MPI_COMM_WORLD, &req[5]);  /* software */
    MPI_Waitall(6, req, st);

    int ref[N];
    PMPI_Allreduce(a, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(ra, ref, sizeof ref) == 0, "Iallreduce in a mixed Waitall");
    fill(ref, N, 2);
    if (rank != size - 1)                   /* b holds the root's data now */
        for (int i = 0; i < N; i++)
            ref[i] = size * (i % 97) + 2;
    check(memcmp(b, ref, sizeof ref) == 0, "Ibcast in a mixed Waitall");
    for (int i = 0; i < N; i++)
        ref[i] = (left + 1) * (i % 97) + 3;
    check(memcmp(r2, ref, sizeof ref) == 0, "point-to-point in a mixed Waitall");
    int sum[16];
    PMPI_Allreduce(u, sum, 16, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(ru, sum, sizeof sum) == 0, "user-op Iallreduce (software)");
    check(offloaded(ACIS_COLL_IALLREDUCE) == ar0 + 1, "Iallreduce not offloaded");
    check(offloaded(ACIS_COLL_IBCAST) == bc0 + 1, "Ibcast not offloaded");
    MPI_Op_free(&uop);
}

/* Several communicators with collectives in flight at once, completed by
 * polling MPI_Testall. */
static void many_comms_testall(void)
{
    MPI_Comm dup, half;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    MPI_Barrier(dup);           /* sets the rows up: nonblocking calls before */
    MPI_Barrier(half);          /* the first blocking one run in MPICH */
    int hs, hr;
    MPI_Comm_size(half, &hs);
    MPI_Comm_rank(half, &hr);
    enum { N = 20000 };
    static double x[N], rx[N], refx[N];
    static int g[N], rg[N * 4], refg[N * 4], sc[N], rsc[N], refsc[N];
    for (int i = 0; i < N; i++)
        x[i] = rank + i * 0.5;
    fill(g, N, 9);
    fill(sc, N, 11);
    MPI_Request req[3];
    MPI_Status st[3];
    uint64_t before = offloaded(ACIS_COLL_IALLREDUCE) + offloaded(ACIS_COLL_IALLGATHER) +
                      offloaded(ACIS_COLL_ISCAN);
    MPI_Iallreduce(x, rx, N, MPI_DOUBLE, MPI_MAX, dup, &req[0]);
    MPI_Iallgather(g, N / 4, MPI_INT, rg, N / 4, MPI_INT, half, &req[1]);
    MPI_Iscan(sc, rsc, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[2]);
    int done = 0;
    while (!done)
        MPI_Testall(3, req, &done, st);
    PMPI_Allreduce(x, refx, N, MPI_DOUBLE, MPI_MAX, dup);
    PMPI_Allgather(g, N / 4, MPI_INT, refg, N / 4, MPI_INT, half);
    PMPI_Scan(sc, refsc, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(rx, refx, sizeof refx) == 0, "Iallreduce on a dup");
    check(memcmp(rg, refg, sizeof(int) * (size_t)(N / 4 * hs)) == 0, "Iallgather on a split");
    check(memcmp(rsc, refsc, sizeof refsc) == 0, "Iscan on world");
    uint64_t after = offloaded(ACIS_COLL_IALLREDUCE) + offloaded(ACIS_COLL_IALLGATHER) +
                     offloaded(ACIS_COLL_ISCAN);
    check(after == before + 2 + (hs > 1),      /* a one-rank half runs in MPICH */
          "collectives on several communicators not all offloaded");
    MPI_Comm_free(&dup);
    MPI_Comm_free(&half);
    (void)hr;
}

/* Many collectives on one communicator, longer than the slot window
 * together, waited for in reverse order and with Waitany. */
static void many_one_comm(void)
{
    enum { K = 8, N = 40000 };
    static int in[K][N], out[K][N], ref[N];
    MPI_Request req[K];
    for (int k = 0; k < K; k++) {
        fill(in[k], N, 20 + k);
        if (k % 2)
            MPI_Iallreduce(in[k], out[k], N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req[k]);
        else
            MPI_Ireduce(in[k], out[k], N, MPI_INT, MPI_MAX, k % size, MPI_COMM_WORLD, &req[k]);
    }
    for (int k = K - 1; k >= K / 2; k--)
        MPI_Wait(&req[k], MPI_STATUS_IGNORE);
    for (int left = K / 2; left > 0; left--) {
        int idx;
        MPI_Waitany(K / 2, req, &idx, MPI_STATUS_IGNORE);
        check(idx >= 0 && idx < K / 2, "Waitany index");
    }
    for (int k = 0; k < K; k++) {
        if (k % 2) {
            PMPI_Allreduce(in[k], ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            check(memcmp(out[k], ref, sizeof ref) == 0, "Iallreduce among many");
        } else {
            PMPI_Reduce(in[k], ref, N, MPI_INT, MPI_MAX, k % size, MPI_COMM_WORLD);
            if (rank == k % size)
                check(memcmp(out[k], ref, sizeof ref) == 0, "Ireduce among many");
        }
    }
}

/* A lone request completed by MPI_Test polling, then by MPI_Wait. */
static void test_and_wait(void)
{
    int v = rank + 1, r = 0, flag = 0;
    MPI_Request req;
    MPI_Iexscan(&v, &r, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    while (!flag)
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
    if (rank > 0)
        check(r == rank * (rank + 1) / 2, "Iexscan by MPI_Test");
    MPI_Ibarrier(MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    check(req == MPI_REQUEST_NULL, "request not freed after MPI_Wait");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int round = 0; round < 3; round++) {
        mixed_waitall();
        many_comms_testall();
        many_one_comm();
        test_and_wait();
    }
    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("nbc_check: %d ranks, %d failures\n", size, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
