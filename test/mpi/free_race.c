/* free_race.c -- communicators freed while another thread delivers
 * answers.  Each round makes a dup X of MPI_COMM_WORLD, runs an offloaded
 * allreduce on it and frees it; acis frees X's offload state in a later
 * call (the next round's), while answers for X that come late (repeats
 * the switch answered again; free_race.sh delays every packet) are still
 * arriving.  Meanwhile the engine keeps moving on another communicator W:
 *   --mode=threads  MPI_THREAD_MULTIPLE, a second thread runs blocking
 *                   allreduces on W until every rank's rounds are done;
 *   --mode=helper   one thread; nonblocking allreduces on W stay in
 *                   flight throughout, so the progress helper moves the
 *                   engine while the thread frees X's state.
 * A late answer delivered into X's freed state is a use after free (the
 * sanitized builds report it); results are compared with MPICH's and
 * every allreduce must have been offloaded.
 *   --mode=recovery the switch (acis-switchd, ACIS_TEST_SWITCH_PID) dies
 *                   after N communicators X got their rows; then the
 *                   members finish one allreduce on each X themselves
 *                   (recovery state made) and free it, while a second
 *                   thread's nonblocking allreduces on W are finished by
 *                   the members too (so its engine reads how many
 *                   communicators are in recovery).  ThreadSanitizer
 *                   reported the count's unlocked update before the fix.
 * Usage: free_race --mode=threads|helper|recovery [--rounds=N] */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

enum { N = 64 };

static int rank, size;
static atomic_int failures;
static atomic_int rounds_done;          /* this rank's rounds on X are over */
static int mover_calls;                 /* allreduces the other thread made */

static void check(int ok, const char *what, int round)
{
    if (!ok) {
        atomic_fetch_add(&failures, 1);
        fprintf(stderr, "free_race[%d]: FAIL %s (round %d)\n", rank, what, round);
    }
}

static uint64_t offloaded(acis_coll_t c)
{
    struct acis_coll_stats s;
    acis_get_stats(c, &s);
    return s.offloaded;
}

/* One allreduce on comm, checked against MPICH's. */
static void allreduce(MPI_Comm comm, int seed, const char *what, int round)
{
    int in[N], out[N], ref[N];
    for (int i = 0; i < N; i++)
        in[i] = (rank + 1) * (i + seed);
    MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, comm);
    PMPI_Allreduce(in, ref, N, MPI_INT, MPI_SUM, comm);
    check(memcmp(out, ref, sizeof out) == 0, what, round);
}

/* The rounds: X made, used, freed; its state goes in MPI_Comm_free or at
 * the next acis call (the members' closing barrier decides which).  With
 * the helper, a nonblocking allreduce on W is in flight at every point:
 * round r's is waited for only after round r + 1's has started. */
static void rounds(int n, MPI_Comm w, int helper)
{
    MPI_Request req[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
    int in[2], out[2];
    for (int r = 0; r <= n; r++) {
        if (helper) {
            in[r % 2] = rank + r;
            out[r % 2] = -1;
            MPI_Iallreduce(&in[r % 2], &out[r % 2], 1, MPI_INT, MPI_SUM, w, &req[r % 2]);
        }
        if (helper && r > 0) {
            int p = (r - 1) % 2;
            MPI_Wait(&req[p], MPI_STATUS_IGNORE);
            check(out[p] == size * (size - 1) / 2 + size * (r - 1), "iallreduce on W", r - 1);
        }
        if (r == n)
            break;
        MPI_Comm x;
        MPI_Comm_dup(MPI_COMM_WORLD, &x);
        allreduce(x, r, "allreduce on X", r);
        MPI_Comm_free(&x);
    }
    if (helper) {
        MPI_Wait(&req[n % 2], MPI_STATUS_IGNORE);
        check(out[n % 2] == size * (size - 1) / 2 + size * n, "iallreduce on W", n);
    }
    atomic_store(&rounds_done, 1);
}

/* The other thread: allreduces on W until every rank's rounds are done
 * (the last value of each allreduce says so, alike on every rank). */
static void *mover(void *arg)
{
    MPI_Comm w = *(MPI_Comm *)arg;
    for (int k = 0;; k++) {
        int in[N + 1], out[N + 1], ref[N + 1];
        for (int i = 0; i < N; i++)
            in[i] = rank * 7 + i + k;
        in[N] = !atomic_load(&rounds_done);
        MPI_Allreduce(in, out, N + 1, MPI_INT, MPI_SUM, w);
        PMPI_Allreduce(in, ref, N, MPI_INT, MPI_SUM, w);
        check(memcmp(out, ref, sizeof(int) * N) == 0, "allreduce on W", k);
        if (out[N] == 0) {
            mover_calls = k + 1;
            return NULL;
        }
    }
}

/* The other thread after the switch died: nonblocking allreduces on W
 * (never the point where the members move to MPICH, so every one is
 * finished by the members) until every rank's rounds are done. */
static void *recovering_mover(void *arg)
{
    MPI_Comm w = *(MPI_Comm *)arg;
    for (int k = 0;; k++) {
        int in[N + 1], out[N + 1], ref[N + 1];
        for (int i = 0; i < N; i++)
            in[i] = rank * 5 + i + k;
        in[N] = !atomic_load(&rounds_done);
        MPI_Request q;
        MPI_Iallreduce(in, out, N + 1, MPI_INT, MPI_SUM, w, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        PMPI_Allreduce(in, ref, N, MPI_INT, MPI_SUM, w);
        check(memcmp(out, ref, sizeof(int) * N) == 0, "iallreduce on W after the kill", k);
        if (out[N] == 0)
            return NULL;
    }
}

/* n communicators with rows, the switch killed, then each finished by the
 * members once and freed while the other thread recovers on W. */
static void recovery(int n, MPI_Comm w)
{
    MPI_Comm *x = malloc(sizeof *x * (size_t)n);
    for (int r = 0; r < n; r++) {
        MPI_Comm_dup(MPI_COMM_WORLD, &x[r]);
        allreduce(x[r], r, "allreduce on X before the kill", r);
    }
    if (rank == 0) {
        const char *pid = getenv("ACIS_TEST_SWITCH_PID");
        check(pid && kill((pid_t)atol(pid), SIGKILL) == 0, "cannot kill the switch", -1);
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    pthread_t t;
    pthread_create(&t, NULL, recovering_mover, &w);
    for (int r = 0; r < n; r++) {
        allreduce(x[r], n + r, "allreduce on X after the kill", r);
        MPI_Comm_free(&x[r]);
    }
    atomic_store(&rounds_done, 1);
    pthread_join(t, NULL);
    free(x);
    struct acis_host_stats h;
    acis_get_host_stats(&h);
    check(h.switch_failures == 1, "one switch failure seen", n);
    check(h.recovered >= (uint64_t)n, "collectives finished by the members", n);
    check(h.recovery_failed == 0, "no recovery failed", n);
}

int main(int argc, char **argv)
{
    const char *mode = targ(argc, argv, "--mode", "threads");
    int n = atoi(targ(argc, argv, "--rounds", "8"));
    int recov = strcmp(mode, "recovery") == 0;
    int threads = recov || strcmp(mode, "threads") == 0, provided;
    MPI_Init_thread(&argc, &argv, threads ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (threads && provided != MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            fprintf(stderr, "free_race: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 1;
    }
    MPI_Comm w;
    MPI_Comm_dup(MPI_COMM_WORLD, &w);
    allreduce(w, 0, "allreduce on W", -1);  /* W gets its row */
    uint64_t a0 = offloaded(ACIS_COLL_ALLREDUCE), i0 = offloaded(ACIS_COLL_IALLREDUCE);
    if (recov) {
        recovery(n, w);
    } else if (threads) {
        pthread_t t;
        pthread_create(&t, NULL, mover, &w);
        rounds(n, w, 0);
        pthread_join(t, NULL);
    } else {
        rounds(n, w, 1);
    }
    MPI_Comm_free(&w);
    /* Every allreduce and iallreduce offloaded, on X and on W. */
    uint64_t a = offloaded(ACIS_COLL_ALLREDUCE) - a0, i = offloaded(ACIS_COLL_IALLREDUCE) - i0;
    check(recov || a == (uint64_t)(n + mover_calls), "allreduces offloaded", n);
    check(recov || i == (uint64_t)(threads ? 0 : n + 1), "iallreduces offloaded", n);
    int mine = atomic_load(&failures), total;
    PMPI_Reduce(&mine, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("free_race --mode=%s: %d ranks, %d rounds, %d failures\n", mode, size, n,
               total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
