/* switch_kill.c -- the switch dies in the middle of a run of collectives.
 * Rank 0 kills it (SIGKILL to ACIS_TEST_SWITCH_PID; SIGSTOP with
 * ACIS_TEST_SIGNAL=STOP, a switch that just goes silent) at iteration --kill-at,
 * right after starting a multi-segment nonblocking allreduce, so segments
 * are in flight; a second communicator and blocking, nonblocking, in-place
 * and size-exchanging (gatherv) collectives keep going.  Every result,
 * before and after, must equal MPICH's own (PMPI on the same data), and
 * the job must end.  Counters must show one failure seen by every rank,
 * collectives the members finished themselves, and later calls in MPICH
 * for reason device_failed.  With --rejoin-file F, rank 0 then waits for F
 * (the test script restarts the switch on the same address and creates
 * F): a new communicator must offload again (--rejoin=yes) or stay in MPICH
 * (--rejoin=no, MPIR_CVAR_OFFLOAD_REJOIN=never), and MPI_COMM_WORLD must
 * stay in MPICH either way.
 *
 * With --broken (and MPIR_CVAR_OFFLOAD_FAULT_FORGET=1, so every rank says
 * it lost every packet another asks for) the members cannot finish the
 * collectives in flight: the communicators break.  Then no call may abort
 * or hang; the calls acis would offload return an error (MPI_ERRORS_RETURN
 * is set), on every rank alike after the iteration of the kill; calls that
 * succeed are still right; every rank counts recovery_failed.
 *
 * usage: switch_kill --kill-at=N --iters=N [--rejoin-file=F --rejoin=yes|no]
 *                    [--broken=1] */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <acis/acis.h>

#include "tdata.h"

#define BIG (96 * 1024)           /* int64 elements: 768 KiB, 48 segments of 16 KiB */

static int rank, size, failures;
static int broken;                /* --broken */
static unsigned char okv[16];     /* this iteration: which offloadable calls succeeded */
static int nok;
static int broken_mismatch;       /* --broken: a call failed on some ranks only */

/* Record whether a call through acis succeeded; 1 if it did.  Without
 * --broken every call must (the default error handler would abort). */
static int ok(int rc)
{
    if (nok < (int)sizeof okv)
        okv[nok++] = rc == MPI_SUCCESS;
    return rc == MPI_SUCCESS;
}

static void check(int ok, const char *what, int iter)
{
    if (!ok && failures++ < 20)
        fprintf(stderr, "switch_kill[%d]: FAIL %s (iteration %d)\n", rank, what, iter);
}

static void fill(int64_t *v, int n, int iter, int salt)
{
    for (int i = 0; i < n; i++)
        v[i] = (int64_t)(rank + 1) * (i % 97 + 1) + iter * 31 + salt;
}

static int same(const void *a, const void *b, size_t n)
{
    return memcmp(a, b, n) == 0;
}

/* One iteration: every shape of call, each checked against PMPI. */
static void iteration(int it, MPI_Comm w, MPI_Comm d, int kill_now, int settled)
{
    static int64_t a[BIG], b[BIG], ref[BIG], c[BIG];
    int64_t x[8], y[8], yr[8], g[64], gr[64];
    MPI_Request rq[2];
    MPI_Status sts[2];

    /* a nonblocking multi-segment allreduce, and a bcast behind it */
    fill(a, BIG, it, 1);
    fill(x, 8, it, 2);
    nok = 0;
    int r0 = ok(MPI_Iallreduce(a, b, BIG, MPI_INT64_T, MPI_SUM, d, &rq[0]));
    if (kill_now) {
        const char *pid = getenv("ACIS_TEST_SWITCH_PID"), *how = getenv("ACIS_TEST_SIGNAL");
        int sig = how && strcmp(how, "STOP") == 0 ? SIGSTOP : SIGKILL;
        check(pid && kill((pid_t)atol(pid), sig) == 0, "cannot stop the switch", it);
        fprintf(stderr, "switch_kill: %s the switch at iteration %d\n",
                sig == SIGSTOP ? "froze" : "killed", it);
    }
    if (rank == 1)
        memcpy(y, x, sizeof x);
    int r1 = ok(MPI_Ibcast(y, 8, MPI_INT64_T, 1 % size, w, &rq[1]));
    if (!r0)
        rq[0] = MPI_REQUEST_NULL;
    if (!r1)
        rq[1] = MPI_REQUEST_NULL;
    r0 = ok(MPI_Wait(&rq[0], &sts[0])) && r0;
    r1 = ok(MPI_Wait(&rq[1], &sts[1])) && r1;
    PMPI_Allreduce(a, ref, BIG, MPI_INT64_T, MPI_SUM, d);
    check(!r0 || same(b, ref, sizeof ref), "iallreduce", it);
    if (rank == 1)
        memcpy(yr, x, sizeof x);
    PMPI_Bcast(yr, 8, MPI_INT64_T, 1 % size, w);
    check(!r1 || same(y, yr, sizeof y), "ibcast", it);

    /* blocking, small and in place */
    fill(x, 8, it, 3);
    memcpy(y, x, sizeof x);
    int r = ok(MPI_Allreduce(MPI_IN_PLACE, y, 8, MPI_INT64_T, MPI_MAX, w));
    PMPI_Allreduce(x, yr, 8, MPI_INT64_T, MPI_MAX, w);
    check(!r || same(y, yr, sizeof y), "allreduce in place", it);

    /* in place and big, on the other communicator */
    fill(c, BIG / 4, it, 4);
    PMPI_Allreduce(c, ref, BIG / 4, MPI_INT64_T, MPI_SUM, d);
    r = ok(MPI_Allreduce(MPI_IN_PLACE, c, BIG / 4, MPI_INT64_T, MPI_SUM, d));
    check(!r || same(c, ref, BIG / 4 * sizeof *c), "big allreduce in place", it);

    /* rooted, scanning, gathering */
    int root = it % size;
    fill(x, 8, it, 5);
    r = ok(MPI_Reduce(x, y, 8, MPI_INT64_T, MPI_SUM, root, w));
    PMPI_Reduce(x, yr, 8, MPI_INT64_T, MPI_SUM, root, w);
    check(!r || rank != root || same(y, yr, sizeof y), "reduce", it);
    r = ok(MPI_Scan(x, y, 8, MPI_INT64_T, MPI_SUM, d));
    PMPI_Scan(x, yr, 8, MPI_INT64_T, MPI_SUM, d);
    check(!r || same(y, yr, sizeof y), "scan", it);
    int counts[16], displs[16], n = 0;
    for (int q = 0; q < size; q++) {
        counts[q] = 1 + (q + it) % 3;
        displs[q] = n;
        n += counts[q];
    }
    fill(x, counts[rank], it, 6);
    r = ok(MPI_Gatherv(x, counts[rank], MPI_INT64_T, g, counts, displs, MPI_INT64_T, root, w));
    PMPI_Gatherv(x, counts[rank], MPI_INT64_T, gr, counts, displs, MPI_INT64_T, root, w);
    check(!r || rank != root || same(g, gr, (size_t)n * sizeof *g), "gatherv", it);
    r = ok(MPI_Allgather(x, 1, MPI_INT64_T, g, 1, MPI_INT64_T, d));
    PMPI_Allgather(x, 1, MPI_INT64_T, gr, 1, MPI_INT64_T, d);
    check(!r || same(g, gr, (size_t)size * sizeof *g), "allgather", it);
    ok(MPI_Barrier(w));
    if (!broken) {
        for (int i = 0; i < nok; i++)
            check(okv[i], "a call returned an error", it);
        return;
    }
    /* After the kill's iteration the same calls fail on every rank. */
    unsigned char lo[16], hi[16];
    PMPI_Allreduce(okv, lo, nok, MPI_UNSIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD);
    PMPI_Allreduce(okv, hi, nok, MPI_UNSIGNED_CHAR, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 0; i < nok && settled; i++)
        if (lo[i] != hi[i])
            broken_mismatch |= 1;
}

static uint64_t reason_count(acis_coll_t coll, acis_reason_t r)
{
    struct acis_coll_stats s;
    acis_get_stats(coll, &s);
    return s.by_reason[r];
}

static uint64_t offloaded(acis_coll_t coll)
{
    struct acis_coll_stats s;
    acis_get_stats(coll, &s);
    return s.offloaded;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int kill_at = atoi(targ(argc, argv, "--kill-at", "10"));
    int iters = atoi(targ(argc, argv, "--iters", "30"));
    const char *rejoin_file = targ(argc, argv, "--rejoin-file", NULL);
    int rejoin = strcmp(targ(argc, argv, "--rejoin", "yes"), "yes") == 0;
    broken = atoi(targ(argc, argv, "--broken", "0"));
    MPI_Comm d;
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    if (broken) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
    }

    uint64_t before = 0;
    for (int it = 0; it < iters; it++) {
        if (it == kill_at)
            before = offloaded(ACIS_COLL_ALLREDUCE);
        iteration(it, MPI_COMM_WORLD, d, rank == 0 && it == kill_at, it > kill_at);
    }

    struct acis_host_stats h;
    acis_get_host_stats(&h);
    check(before > 0, "nothing was offloaded before the switch died", kill_at);
    if (broken) {
        int fails = 0;
        for (int i = 0; i < nok; i++)
            fails += !okv[i];
        check(h.recovery_failed > 0, "the members finished what they could not", iters);
        check(!broken_mismatch, "a call failed on some ranks and not on others", iters);
        check(fails > 0, "no call failed on the broken communicators", iters);
        if (rank == 0)
            printf("switch_kill: %d ranks, switch killed at %d, recovery impossible: the "
                   "communicators broke, %d of %d calls of the last iteration failed alike "
                   "on every rank\n", size, kill_at, fails, nok);
    } else {
        check(h.switch_failures == 1, "this rank did not see the failure exactly once", iters);
        check(reason_count(ACIS_COLL_ALLREDUCE, ACIS_REASON_DEVICE_FAILED) > 0,
              "no allreduce ran in MPICH for reason device_failed", iters);
        uint64_t mine[3] = { h.recovered, h.peer_segments, h.peer_served }, sum[3];
        PMPI_Allreduce(mine, sum, 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("switch_kill: %d ranks, %d iterations, switch killed at %d: %llu "
                   "collectives finished by the members (%llu segments, %llu packets "
                   "served), then MPICH\n", size, iters, kill_at, (unsigned long long)sum[0],
                   (unsigned long long)sum[1], (unsigned long long)sum[2]);
            check(sum[0] >= (uint64_t)size, "the members finished no collective themselves",
                  iters);
            check(sum[1] > 0 && sum[2] > 0,
                  "no segment was finished from the members' packets", iters);
        }
    }

    if (rejoin_file) {
        struct stat st;
        int waited = 0;
        if (rank == 0)
            while (stat(rejoin_file, &st) != 0 && waited++ < 600)
                nanosleep(&(struct timespec){ 0, 100000000 }, NULL);
        PMPI_Barrier(MPI_COMM_WORLD);
        MPI_Comm n;
        MPI_Comm_dup(MPI_COMM_WORLD, &n);
        uint64_t off0 = offloaded(ACIS_COLL_ALLREDUCE);
        int64_t v = rank + 1, r = 0, rw = 0;
        MPI_Allreduce(&v, &r, 1, MPI_INT64_T, MPI_SUM, n);
        check(r == (int64_t)size * (size + 1) / 2, "allreduce on the new communicator", -1);
        check((offloaded(ACIS_COLL_ALLREDUCE) > off0) == rejoin,
              rejoin ? "a new communicator did not use the switch that came back"
                     : "a new communicator used the switch with REJOIN=never", -1);
        uint64_t f0 = reason_count(ACIS_COLL_ALLREDUCE, ACIS_REASON_DEVICE_FAILED);
        MPI_Allreduce(&v, &rw, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        check(rw == r, "allreduce on MPI_COMM_WORLD after the rejoin", -1);
        check(reason_count(ACIS_COLL_ALLREDUCE, ACIS_REASON_DEVICE_FAILED) == f0 + 1,
              "MPI_COMM_WORLD went back to a switch that failed it", -1);
        MPI_Comm_free(&n);
    }
    MPI_Comm_free(&d);

    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("switch_kill: %s\n", all ? "FAILED" : "ok");
    MPI_Finalize();
    return all ? 1 : 0;
}
