/* disagree.c -- members whose calls do not match (an erroneous program
 * MPICH often tolerates: a scatter whose leaves give room for more than
 * the root sends, counts that differ, different collectives).  Each case
 * runs on a communicator of its own with MPI_ERRORS_RETURN, set up and
 * checked offloaded first.  The switch finds the members' packets of a
 * segment disagreeing; every member must return an error -- from the call
 * itself, or (a root that returned early from a one-segment call) from
 * the next -- and a barrier on that communicator after it must fail on
 * every member: it is broken.  The last two cases return early from
 * calls that disagree (on shm) and then start a nonblocking call of
 * several segments: its wait must fail, not hang, whether the members'
 * packets of it disagree too or one member never sends them.  Nothing may hang: before, a call of
 * several segments waited forever (shm) or for the silence timeout, or
 * forever, while the switch told its members "pending" (udp).  After all
 * cases MPI_COMM_WORLD must still offload an allreduce and get MPICH's
 * result.
 *
 * usage: disagree (2 or more ranks) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <mpi.h>

enum { WIDE = 20000,          /* ints per block: several segments */
       NARROW = 6000,         /* the root's 48 000 bytes fit one, 96 000 do not */
       CASES = 7 };

static int rank, size, failures;
static const char *names[CASES] = { "scatter, leaves give room for two blocks",
                                    "scatter, one segment at the root, two at the leaves",
                                    "bcast on rank 0, allreduce on the others",
                                    "allreduce, rank 0 reduces half the count",
                                    "iallreduce, rank 0 reduces half the count",
                                    "early bcast beside early gathers, then iallreduces "
                                    "of different counts",
                                    "early bcast beside allreduces, then iallreduces" };

static void check(int ok, const char *what, int c)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "disagree[%d]: FAIL %s (%s)\n", rank, what, names[c]);
    }
}

/* Case c's erroneous call on comm: its return code. */
static int wrong_call(int c, MPI_Comm comm, int *s, int *r)
{
    int root = size - 1, n = c == 0 ? WIDE : NARROW;
    int half = rank == 0 ? WIDE / 2 : WIDE;
    MPI_Request req;
    switch (c) {
    case 0:
    case 1:
        return MPI_Scatter(s, n, MPI_INT, r, rank == root ? n : 2 * n, MPI_INT, root, comm);
    case 2:
        return rank == 0 ? MPI_Bcast(s, WIDE, MPI_INT, 0, comm)
                         : MPI_Allreduce(s, r, WIDE, MPI_INT, MPI_SUM, comm);
    case 3:
        return MPI_Allreduce(s, r, half, MPI_INT, MPI_SUM, comm);
    case 4:
        break;
    default: {                  /* one-int calls that return early on shm, then
                                   an iallreduce of several segments */
        int rc = rank == 0 ? MPI_Bcast(s, 1, MPI_INT, 0, comm)
                 : c == 5  ? MPI_Gather(s, 1, MPI_INT, r, 1, MPI_INT, 0, comm)
                           : MPI_Allreduce(s, r, 1, MPI_INT, MPI_SUM, comm);
        if (rc != MPI_SUCCESS)
            return rc;
        if (c == 6)
            half = WIDE;
    }
    }
    int rc = MPI_Iallreduce(s, r, half, MPI_INT, MPI_SUM, comm, &req);
    return rc != MPI_SUCCESS ? rc : MPI_Wait(&req, MPI_STATUS_IGNORE);
}

static unsigned long long offloaded(acis_coll_t coll)
{
    struct acis_coll_stats st;
    return acis_get_stats(coll, &st) == 0 ? st.offloaded : 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    /* a failed nonblocking call's MPI_Wait raises its error where MPICH's
       generalized requests do (as in nomem.c) */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *s = malloc(sizeof(int) * 2 * WIDE * (size_t)size);
    int *r = malloc(sizeof(int) * 2 * WIDE * (size_t)size);
    if (!s || !r)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (int i = 0; i < 2 * WIDE * size; i++)
        s[i] = i % 1000;
    for (int c = 0; c < CASES; c++) {
        MPI_Comm comm;
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        unsigned long long before = offloaded(ACIS_COLL_BARRIER);
        check(MPI_Barrier(comm) == MPI_SUCCESS, "the first barrier failed", c);
        check(offloaded(ACIS_COLL_BARRIER) == before + 1, "the first barrier not offloaded", c);
        int rc1 = wrong_call(c, comm, s, r);
        int rc2 = MPI_Barrier(comm);
        int err1 = rc1 != MPI_SUCCESS, err2 = rc2 != MPI_SUCCESS, all1, all2;
        /* MPICH's own calls for the bookkeeping: acis's are under test */
        PMPI_Allreduce(&err1, &all1, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        PMPI_Allreduce(&err2, &all2, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        /* in case 1 the root may return early; everywhere else every
           member's call of several segments fails itself (in cases 5 and
           6 one of the calls in the sequence) */
        if (c != 1 || rank != size - 1)
            check(err1, "the erroneous call returned MPI_SUCCESS", c);
        check(all2, "the barrier after it succeeded on some member", c);
        MPI_Comm_free(&comm);
    }
    unsigned long long before = offloaded(ACIS_COLL_ALLREDUCE);
    int want[4] = { 0 }, got[4] = { 0 };
    int mine[4] = { rank, 1, 2 * rank, 7 };
    MPI_Allreduce(mine, got, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(mine, want, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(memcmp(want, got, sizeof want) == 0, "MPI_COMM_WORLD's allreduce after them", 0);
    check(offloaded(ACIS_COLL_ALLREDUCE) == before + 1,
          "MPI_COMM_WORLD's allreduce after them not offloaded", 0);
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("disagree: %d cases at %d ranks, %d failures\n", CASES, size, all);
    free(s);
    free(r);
    MPI_Finalize();
    return all != 0;
}
