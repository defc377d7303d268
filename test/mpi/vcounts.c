/* vcounts.c -- a gatherv or scatterv whose members' counts differ from
 * the root's (an erroneous program: MPI asks for equal type signatures,
 * but MPICH answers it: a truncation error where a block is too long for
 * its room, the shorter block where one is shorter).  Only the root sees
 * the difference, after the size exchange; acis must answer as MPICH
 * does, on every member: each case's return code's error class must
 * equal that of MPICH's own call (PMPI) with the same arguments, and
 * where MPICH's succeeds every byte of the result too (after an error
 * MPICH's result depends on timing: a root whose own block is too long
 * for its room may or may not have taken the others'); the call must
 * have been redone in MPICH (the
 * host's redone counter), not answered by the switch.  A matching call
 * beside them must stay offloaded, and the communicator must offload
 * right after.  Each case runs on two new communicators, MPICH's call on
 * one and acis's on the other: after an error MPICH may leave messages of
 * its call unreceived, which a later call on the same communicator would
 * take.  The member whose count differs is rank 1 and the last
 * rank; blocks one byte longer and one byte shorter; the root is rank 0
 * and the last rank.
 *
 * usage: vcounts (2 or more ranks) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>
#include <mpi.h>

enum { N = 40, ROOM = 64 };   /* bytes per block; room per block */

static int rank, size, failures;

static void check(int ok, const char *what, const char *how)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "vcounts[%d]: FAIL %s (%s)\n", rank, what, how);
    }
}

/* The call: a gatherv (scatter 0) or scatterv (1) rooted at root, where
 * rank odd's own count is N + delta; through acis (pmpi 0) or MPICH. */
static int call(MPI_Comm comm, int scatter, int pmpi, int root, int odd, int delta, char *s,
                char *r)
{
    int counts[64], displs[64];
    for (int q = 0; q < size; q++) {
        counts[q] = N;
        displs[q] = q * ROOM;
    }
    int mine = rank == odd ? N + delta : N;
    typedef int gv_fn(const void *, int, MPI_Datatype, void *, const int *, const int *,
                      MPI_Datatype, int, MPI_Comm);
    typedef int sv_fn(const void *, const int *, const int *, MPI_Datatype, void *, int,
                      MPI_Datatype, int, MPI_Comm);
    gv_fn *gv = pmpi ? PMPI_Gatherv : MPI_Gatherv;
    sv_fn *sv = pmpi ? PMPI_Scatterv : MPI_Scatterv;
    return scatter ? sv(s, counts, displs, MPI_CHAR, r, mine, MPI_CHAR, root, comm)
                   : gv(s, mine, MPI_CHAR, r, counts, displs, MPI_CHAR, root, comm);
}

static unsigned long long redone(void)
{
    struct acis_host_stats hs;
    return acis_get_host_stats(&hs) == 0 ? hs.redone : 0;
}

static unsigned long long offloaded(acis_coll_t coll)
{
    struct acis_coll_stats st;
    return acis_get_stats(coll, &st) == 0 ? st.offloaded : 0;
}

static int error_class(int rc)
{
    int c = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (size < 2 || size > 64)
        MPI_Abort(MPI_COMM_WORLD, 2);
    size_t bytes = (size_t)ROOM * (size_t)size;
    char *s = malloc(bytes), *got = malloc(bytes), *want = malloc(bytes);
    if (!s || !got || !want)
        MPI_Abort(MPI_COMM_WORLD, 2);
    for (size_t i = 0; i < bytes; i++)
        s[i] = (char)('a' + (i + (size_t)rank * 7) % 26);
    int cases = 0;
    for (int scatter = 0; scatter < 2; scatter++)
        for (int root = 0; root < size; root += size - 1)
            for (int odd = 1; odd < size; odd += size > 2 ? size - 2 : 1)
                for (int delta = -1; delta <= 1; delta++) {
                    char how[96];
                    snprintf(how, sizeof how, "%s, root %d, rank %d's block %+d byte",
                             scatter ? "scatterv" : "gatherv", root, odd, delta);
                    MPI_Comm mpich, comm;
                    PMPI_Comm_dup(MPI_COMM_WORLD, &mpich);
                    PMPI_Comm_set_errhandler(mpich, MPI_ERRORS_RETURN);
                    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
                    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
                    unsigned long long b0 = offloaded(ACIS_COLL_BARRIER);
                    check(MPI_Barrier(comm) == MPI_SUCCESS &&
                              offloaded(ACIS_COLL_BARRIER) == b0 + 1,
                          "the first barrier not offloaded", how);
                    memset(want, '.', bytes);
                    memset(got, '.', bytes);
                    int want_rc =
                        error_class(call(mpich, scatter, 1, root, odd, delta, s, want));
                    unsigned long long r0 = redone();
                    acis_coll_t coll = scatter ? ACIS_COLL_SCATTERV : ACIS_COLL_GATHERV;
                    unsigned long long o0 = offloaded(coll);
                    int got_rc = error_class(call(comm, scatter, 0, root, odd, delta, s, got));
                    check(got_rc == want_rc, "the error class is not MPICH's", how);
                    check(want_rc != MPI_SUCCESS || memcmp(got, want, bytes) == 0,
                          "the result is not MPICH's", how);
                    check(redone() == r0 + (delta != 0), delta ? "not redone in MPICH"
                                                               : "matching call redone", how);
                    check(offloaded(coll) == o0 + 1, "not selected for offload", how);
                    unsigned long long a0 = offloaded(ACIS_COLL_ALLREDUCE);
                    int one = 1, sum = 0;
                    check(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm) ==
                                  MPI_SUCCESS && sum == size,
                          "the allreduce after it", how);
                    check(offloaded(ACIS_COLL_ALLREDUCE) == a0 + 1,
                          "the allreduce after it not offloaded", how);
                    MPI_Comm_free(&comm);
                    PMPI_Comm_free(&mpich);
                    cases++;
                }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("vcounts: %d cases at %d ranks, %d failures\n", cases, size, all);
    free(s);
    free(got);
    free(want);
    MPI_Finalize();
    return all != 0;
}
