/* redo_order.c -- after a switch failure, the calls acis finishes with
 * the members or runs in MPICH, and the collectives MPICH runs anyway,
 * must pair alike on every rank.
 *
 * Rank 0 kills the switch (SIGKILL to ACIS_TEST_SWITCH_PID); a blocking
 * allgather on MPI_COMM_WORLD then makes every rank see the failure.  On
 * the communicator d, even ranks start, back to back, an Iallreduce S, an
 * Iallreduce R and an MPI_Ialltoall T (not intercepted: MPICH runs it on
 * d at once); then they let their odd neighbour go on.  An odd rank starts
 * S only then and waits for it, then calls R and T in that order.  S and R
 * are nonblocking, so neither is where the members agree on MPICH (only a
 * blocking call is, fix.c): both are finished by the members on every
 * rank, whatever each knew when.  Were R redone in MPICH on some ranks and
 * run by acis on others, MPICH would pair one rank's R with another's T
 * (wrong data, a truncation error, or a hang).  Every result must equal
 * its expected value, every call must succeed, and the counters must show
 * S and R finished by the members and nothing redone or moved to MPICH.
 * Then the same mix again, with a blocking allreduce A2 after which the
 * members agree on MPICH; a truncated bcast, which must return an error
 * through d's handler (MPI_ERRORS_RETURN, set after d was set up with the
 * switch) somewhere and end nobody; an Iallreduce completed after d is
 * freed.
 *
 * With --hier=1 (MPIR_CVAR_OFFLOAD_HIERARCHY=node and two fake nodes) every
 * rank then calls a blocking MPI_Allreduce H on d before it waits: it runs
 * through the node hierarchy on every rank.
 *
 * usage: redo_order [--hier=1] (under acis-switchd, MPIR_CVAR_OFFLOAD=on) */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <acis/acis.h>

#include "tdata.h"

#define NS 2048                   /* S: int64 elements */
#define NR 300                    /* R: int64 elements */
#define NT 5                      /* T: int64 elements to each rank */

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok && failures++ < 20)
        fprintf(stderr, "redo_order[%d]: FAIL %s\n", rank, what);
}

static uint64_t stat_of(acis_coll_t coll, int reason)
{
    struct acis_coll_stats s;
    acis_get_stats(coll, &s);
    return reason < 0 ? s.offloaded : s.by_reason[reason];
}

int main(int argc, char **argv)
{
    static int64_t s[NS], sr[NS], rv[NR], rr[NR];
    int64_t *t = NULL, *tr = NULL, x = 0, xr = 0;
    MPI_Comm d;
    MPI_Request rq[3];
    MPI_Status st[3];
    int token = 0;

    MPI_Init(&argc, &argv);
    int hier = atoi(targ(argc, argv, "--hier", "0"));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &d);
    t = malloc((size_t)size * NT * sizeof *t);
    tr = malloc((size_t)size * NT * sizeof *tr);
    if (!t || !tr || size < 2) {
        fprintf(stderr, "redo_order: needs 2 ranks or more, and memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int i = 0; i < size * NT; i++)
        t[i] = (int64_t)rank * 100000 + i;

    /* both communicators on the switch */
    tfill64(s, NS, rank, 1);
    check(MPI_Allreduce(s, sr, NS, MPI_INT64_T, MPI_SUM, d) == MPI_SUCCESS, "first allreduce");
    check(tsum64_ok(sr, NS, size, 1), "first allreduce's result");
    x = rank + 1;
    MPI_Allreduce(&x, &xr, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    check(stat_of(ACIS_COLL_ALLREDUCE, -1) == 2, "the first allreduces were not offloaded");
    MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);     /* after d's dup was made */

    if (rank == 0) {
        const char *pid = getenv("ACIS_TEST_SWITCH_PID");
        check(pid && kill((pid_t)atol(pid), SIGKILL) == 0, "cannot kill the switch");
    }
    PMPI_Barrier(MPI_COMM_WORLD);
    MPI_Allgather(&x, 1, MPI_INT64_T, t, 1, MPI_INT64_T, MPI_COMM_WORLD);  /* all see it */
    for (int r = 0; r < size; r++)
        check(t[r] == r + 1, "allgather across the failure");
    for (int i = 0; i < size * NT; i++)
        t[i] = (int64_t)rank * 100000 + i;

    tfill64(s, NS, rank, 2);
    tfill64(rv, NR, rank, 3);
    uint64_t failed0 = stat_of(ACIS_COLL_IALLREDUCE, ACIS_REASON_DEVICE_FAILED);
    struct acis_host_stats h0;
    acis_get_host_stats(&h0);
    if (rank % 2 == 0) {
        check(MPI_Iallreduce(s, sr, NS, MPI_INT64_T, MPI_SUM, d, &rq[0]) == MPI_SUCCESS, "S");
        check(MPI_Iallreduce(rv, rr, NR, MPI_INT64_T, MPI_SUM, d, &rq[1]) == MPI_SUCCESS, "R");
        check(MPI_Ialltoall(t, NT, MPI_INT64_T, tr, NT, MPI_INT64_T, d, &rq[2]) == MPI_SUCCESS,
              "T");
        if (rank + 1 < size)
            PMPI_Send(&token, 1, MPI_INT, rank + 1, 7, MPI_COMM_WORLD);
    } else {
        PMPI_Recv(&token, 1, MPI_INT, rank - 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check(MPI_Iallreduce(s, sr, NS, MPI_INT64_T, MPI_SUM, d, &rq[0]) == MPI_SUCCESS, "S");
        check(MPI_Wait(&rq[0], MPI_STATUS_IGNORE) == MPI_SUCCESS, "waiting for S");
        check(MPI_Iallreduce(rv, rr, NR, MPI_INT64_T, MPI_SUM, d, &rq[1]) == MPI_SUCCESS, "R");
        check(MPI_Ialltoall(t, NT, MPI_INT64_T, tr, NT, MPI_INT64_T, d, &rq[2]) == MPI_SUCCESS,
              "T");
    }
    struct acis_host_stats h = h0;
    if (hier) {
        xr = rank + 1;
        check(MPI_Allreduce(MPI_IN_PLACE, &xr, 1, MPI_INT64_T, MPI_SUM, d) == MPI_SUCCESS, "H");
        check(xr == (int64_t)size * (size + 1) / 2, "H's result");
        acis_get_host_stats(&h);
        check(h.hier_calls > h0.hier_calls, "H did not run through the node hierarchy");
    }
    check(MPI_Waitall(3, rq, st) == MPI_SUCCESS, "waiting for S, R and T");
    check(tsum64_ok(sr, NS, size, 2), "S's result");
    check(tsum64_ok(rr, NR, size, 3), "R's result");
    for (int r = 0; r < size; r++)
        for (int i = 0; i < NT; i++)
            check(tr[r * NT + i] == (int64_t)r * 100000 + rank * NT + i, "T's result");

    acis_get_host_stats(&h);
    check(h.recovered >= h0.recovered + 2, "S and R were not finished by the members");
    check(h.redone == h0.redone, "a call was redone in MPICH");
    check(stat_of(ACIS_COLL_IALLREDUCE, ACIS_REASON_DEVICE_FAILED) == failed0,
          "R went to MPICH");
    check(h.switch_failures == 1, "this rank did not see the switch failure once");

    /* the same mix once more; after A2 the members agree on MPICH */
    tfill64(rv, NR, rank, 4);
    check(MPI_Iallreduce(rv, rr, NR, MPI_INT64_T, MPI_SUM, d, &rq[0]) == MPI_SUCCESS, "R2");
    check(MPI_Ialltoall(t, NT, MPI_INT64_T, tr, NT, MPI_INT64_T, d, &rq[1]) == MPI_SUCCESS,
          "T2");
    check(MPI_Allreduce(MPI_IN_PLACE, &x, 1, MPI_INT64_T, MPI_SUM, d) == MPI_SUCCESS, "A2");
    check(MPI_Waitall(2, rq, st) == MPI_SUCCESS, "waiting for R2 and T2");
    check(tsum64_ok(rr, NR, size, 4), "R2's result");
    check(x == (int64_t)size * (size + 1) / 2, "A2's result");

    /* an erroneous bcast (the root sends more than the others take) fails
     * in MPICH through d's handler, MPI_ERRORS_RETURN, on some rank (through
     * the hierarchy, a rank fed by a truncated leader gets no error): not
     * the dup's or a node communicator's default, which ends the job */
    int64_t bb[2 * NT] = { 0 };
    int bad = MPI_Bcast(bb, rank == 0 ? 2 * NT : NT, MPI_INT64_T, 0, d) != MPI_SUCCESS, nbad;
    PMPI_Allreduce(&bad, &nbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(rank != 0 || (!bad && nbad > 0), "the truncated bcast failed nowhere, or at its root");

    /* d freed while a failed-over call is pending */
    tfill64(rv, NR, rank, 5);
    check(MPI_Iallreduce(rv, rr, NR, MPI_INT64_T, MPI_SUM, d, &rq[0]) == MPI_SUCCESS, "R3");
    MPI_Comm_free(&d);
    check(MPI_Wait(&rq[0], &st[0]) == MPI_SUCCESS, "waiting for R3 after freeing d");
    check(tsum64_ok(rr, NR, size, 5), "R3's result");

    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("redo_order: %d ranks: %s\n", size, all ? "FAILED" : "ok");
    free(t);
    free(tr);
    MPI_Finalize();
    return all != 0;
}
