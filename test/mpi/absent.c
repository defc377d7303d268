/* absent.c -- a rank away from acis for longer than the switch timeout
 * must not take a live switch for dead.  Each round one rank (the
 * absentee, a different one each round) starts an offloaded
 * MPI_Iallreduce, tests it once, then computes for --away-ms without any
 * MPI call while the others join only later (2 x --away-ms).  Nothing
 * moves its engine meanwhile when the progress helper is off: it sends no
 * repeat, so the switch owes it nothing.  Back in MPI_Wait its first
 * look finds no answer yet; that is not silence.  Run with
 * MPIR_CVAR_OFFLOAD_TIMEOUT_MS below --away-ms.  With --mode=blocking the
 * early rank calls MPI_Allreduce at once and waits in it (for the
 * descheduled-waiter case, MPIR_CVAR_OFFLOAD_FAULT_STALL_MS).  Results are
 * compared with PMPI, every call must be offloaded, and no rank may have
 * seen a switch failure.
 * Usage: absent [--rounds=N] [--away-ms=N] [--mode=nonblocking|blocking] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <acis/acis.h>

#include "tdata.h"

#define N 1000

static void away(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(int argc, char **argv)
{
    int rank, size, failures = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = atoi(targ(argc, argv, "--rounds", "2"));
    long away_ms = atol(targ(argc, argv, "--away-ms", "500"));
    int blocking = strcmp(targ(argc, argv, "--mode", "nonblocking"), "blocking") == 0;
    static int s[N], r[N], ref[N];

    int one = 1, sum;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);   /* the row is set up */
    acis_reset_stats();
    for (int it = 0; it < rounds; it++) {
        int absentee = it % size, flag;
        for (int i = 0; i < N; i++)
            s[i] = (rank + 1) * (i % 97) + it;
        MPI_Request req = MPI_REQUEST_NULL;
        if (blocking) {
            if (rank != absentee)
                away(2 * away_ms);
            MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        } else if (rank == absentee) {
            MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);   /* its wait starts */
            away(away_ms);
        } else {
            away(2 * away_ms);
            MPI_Iallreduce(s, r, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        }
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        PMPI_Allreduce(s, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < N; i++)
            if (r[i] != ref[i]) {
                failures++;
                fprintf(stderr, "absent[%d]: FAIL round %d: element %d is %d, MPICH %d\n",
                        rank, it, i, r[i], ref[i]);
                break;
            }
    }

    struct acis_coll_stats st;
    struct acis_host_stats h;
    acis_get_stats(blocking ? ACIS_COLL_ALLREDUCE : ACIS_COLL_IALLREDUCE, &st);
    acis_get_host_stats(&h);
    if (st.offloaded != (uint64_t)rounds) {
        failures++;
        fprintf(stderr, "absent[%d]: FAIL %llu of %d calls offloaded\n", rank,
                (unsigned long long)st.offloaded, rounds);
    }
    if (h.switch_failures) {
        failures++;
        fprintf(stderr, "absent[%d]: FAIL a live switch was declared dead\n", rank);
    }
    int all;
    PMPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("absent: %d ranks, %d rounds away %ld ms, %llu retransmissions on rank 0, "
               "%d failures\n",
               size, rounds, away_ms, (unsigned long long)h.retransmits, all);
    MPI_Finalize();
    return all != 0;
}
