/* failover_away.c -- after a switch failure, a rank sitting in MPICH must
 * not hold back a collective its peers wait for.
 *
 * Rank 0 kills the switch (SIGKILL to ACIS_TEST_SWITCH_PID); a blocking
 * allgather on MPI_COMM_WORLD then makes every rank see the failure.  On
 * the communicator d every rank starts, back to back, an Iallreduce S and
 * an Iallreduce X, both knowing of the failure.  Even ranks then wait for
 * X and only then send their odd neighbour a token; odd ranks wait in
 * MPI_Recv (inside MPICH, away from acis) for that token before they wait
 * for S and X.  While the odd rank sits in MPICH, nothing of acis runs on
 * it but its threads: X must complete without any MPI call from it.
 * (Were S the point at which the members agree to go to MPICH, X would be
 * redone in MPICH, which every member must start: the odd rank, in
 * MPI_Recv, could not, and the job hung.)
 *
 * Each round starts with a 1 MiB message from an even rank to its odd
 * neighbour, which the odd rank receives before it starts S and X: over
 * TCP the even rank's MPICH must move for it while that rank waits in
 * acis (run with UCX_TLS=self,tcp to see it).
 *
 * Then, after such a message, a blocking Allreduce A on d (the members
 * agree on MPICH there), an Iallreduce Y after it, which must run in MPICH
 * (reason device_failed), a blocking Bcast of 1 MiB and the same round
 * once more, now in MPICH.  Every result is checked; the counters must
 * show S and X finished by the members on every rank, nothing redone, and
 * Y in MPICH.
 *
 * usage: failover_away (under acis-switchd, MPIR_CVAR_OFFLOAD=on) */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include <acis/acis.h>

#include "tdata.h"

#define NS 3000                   /* S: int64 elements (several segments) */
#define NX 200                    /* X */
#define NB (1 << 17)              /* the messages and the bcast: int64 elements */

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok && failures++ < 20)
        fprintf(stderr, "failover_away[%d]: FAIL %s\n", rank, what);
}

/* An even rank sends its odd neighbour NB elements (rendezvous in
 * MPICH: over TCP the transfer needs the even rank's MPICH to move, which
 * it must let happen while it waits in acis for the collective that
 * follows), which the odd rank receives before it starts that collective.
 * Returns the even rank's request. */
static MPI_Request message_before(int salt)
{
    static int64_t big[NB];
    MPI_Request q = MPI_REQUEST_NULL;
    int peer = rank % 2 ? rank - 1 : rank + 1;
    if (rank % 2 == 0 && peer < size) {
        tfill64(big, NB, rank, salt);
        PMPI_Isend(big, NB, MPI_INT64_T, peer, 8, MPI_COMM_WORLD, &q);
    } else if (rank % 2) {
        PMPI_Recv(big, NB, MPI_INT64_T, peer, 8, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < NB; i++)
            if (big[i] != tval64(peer, i, salt)) {
                check(0, "the message before a collective");
                break;
            }
    }
    return q;
}

/* S and X on d, after a message; then an odd rank waits in MPI_Recv for
 * a token its even neighbour sends once its X is complete. */
static void round_away(MPI_Comm d, int salt)
{
    static int64_t s[NS], sr[NS], x[NX], xr[NX];
    MPI_Request rq[3];
    MPI_Status st[3];
    int token = salt, peer = rank % 2 ? rank - 1 : rank + 1;
    tfill64(s, NS, rank, salt);
    tfill64(x, NX, rank, salt + 1);
    rq[2] = message_before(salt + 2);
    check(MPI_Iallreduce(s, sr, NS, MPI_INT64_T, MPI_SUM, d, &rq[0]) == MPI_SUCCESS, "S");
    check(MPI_Iallreduce(x, xr, NX, MPI_INT64_T, MPI_SUM, d, &rq[1]) == MPI_SUCCESS, "X");
    if (rank % 2 == 0) {
        check(MPI_Wait(&rq[1], MPI_STATUS_IGNORE) == MPI_SUCCESS, "waiting for X");
        if (peer < size)
            PMPI_Send(&token, 1, MPI_INT, peer, 9, MPI_COMM_WORLD);
    } else {
        PMPI_Recv(&token, 1, MPI_INT, peer, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(token == salt, "the token");
    }
    check(MPI_Waitall(3, rq, st) == MPI_SUCCESS, "waiting for S and X");
    check(tsum64_ok(sr, NS, size, salt), "S's result");
    check(tsum64_ok(xr, NX, size, salt + 1), "X's result");
}

static uint64_t stat_of(acis_coll_t coll, int reason)
{
    struct acis_coll_stats s;
    acis_get_stats(coll, &s);
    return reason < 0 ? s.offloaded : s.by_reason[reason];
}

int main(int argc, char **argv)
{
    static int64_t b[NB];
    MPI_Comm d;
    int64_t v = 0, vr = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2) {
        fprintf(stderr, "failover_away: needs 2 ranks or more\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    v = rank + 1;
    check(MPI_Allreduce(&v, &vr, 1, MPI_INT64_T, MPI_SUM, d) == MPI_SUCCESS, "first allreduce");
    check(stat_of(ACIS_COLL_ALLREDUCE, -1) == 1, "the first allreduce was not offloaded");

    if (rank == 0) {
        const char *pid = getenv("ACIS_TEST_SWITCH_PID");
        check(pid && kill((pid_t)atol(pid), SIGKILL) == 0, "cannot kill the switch");
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    int64_t *all = malloc((size_t)size * sizeof *all);
    if (!all)
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Allgather(&v, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD);  /* all see it */
    for (int r = 0; r < size; r++)
        check(all[r] == r + 1, "allgather across the failure");
    free(all);

    struct acis_host_stats h0, h;
    acis_get_host_stats(&h0);
    round_away(d, 10);
    acis_get_host_stats(&h);
    check(h.switch_failures == 1, "this rank did not see the switch failure once");
    check(h.recovered >= h0.recovered + 2, "S and X were not finished by the members");
    check(h.redone == h0.redone, "a call was redone in MPICH");

    /* A: the members agree on MPICH; Y after it runs there */
    uint64_t failed0 = stat_of(ACIS_COLL_IALLREDUCE, ACIS_REASON_DEVICE_FAILED);
    v = rank + 1;
    MPI_Request m = message_before(30);
    check(MPI_Allreduce(&v, &vr, 1, MPI_INT64_T, MPI_SUM, d) == MPI_SUCCESS, "A");
    check(MPI_Wait(&m, MPI_STATUS_IGNORE) == MPI_SUCCESS, "the message before A");
    check(vr == (int64_t)size * (size + 1) / 2, "A's result");
    MPI_Request y;
    check(MPI_Iallreduce(&v, &vr, 1, MPI_INT64_T, MPI_SUM, d, &y) == MPI_SUCCESS, "Y");
    check(MPI_Wait(&y, MPI_STATUS_IGNORE) == MPI_SUCCESS, "waiting for Y");
    check(vr == (int64_t)size * (size + 1) / 2, "Y's result");
    check(stat_of(ACIS_COLL_IALLREDUCE, ACIS_REASON_DEVICE_FAILED) == failed0 + 1,
          "Y did not run in MPICH after A");

    for (int i = 0; i < NB; i++)
        b[i] = rank == size - 1 ? tval64(size - 1, i, 7) : -1;
    check(MPI_Bcast(b, NB, MPI_INT64_T, size - 1, d) == MPI_SUCCESS, "bcast");
    for (int i = 0; i < NB; i++)
        if (b[i] != tval64(size - 1, i, 7)) {
            check(0, "the bcast's result");
            break;
        }
    round_away(d, 20);                /* in MPICH now */
    MPI_Comm_free(&d);

    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("failover_away: %d ranks: %s\n", size, bad ? "FAILED" : "ok");
    MPI_Finalize();
    return bad != 0;
}
