/* init_agree.c -- MPI_Init ends in the same mode on every rank when a
 * step of acis's initialisation fails on one rank only
 * (MPIR_CVAR_OFFLOAD_FAULT_INIT, given to that rank alone by
 * init_agree.sh).  Every rank runs blocking allreduces and bcasts and
 * nonblocking allreduces on MPI_COMM_WORLD, checks each against MPICH
 * (PMPI), and compares its counters with every other rank's: they must be
 * equal, and say what --expect names:
 *   all       every call offloaded (with --hier, the blocking ones through
 *             the node hierarchy)
 *   none      no call offloaded (the communicator table failed somewhere)
 *   flat      every call offloaded, none through the node hierarchy
 *   blocking  blocking calls offloaded, nonblocking ones in MPICH
 * A rank that ends in another mode than the rest would wait for them in a
 * collective they never join: the script's time limit ends such a run.
 * Usage: init_agree --expect=all|none|flat|blocking [--hier] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <acis/acis.h>

#include "tdata.h"

enum { N = 100, ROUNDS = 5 };
enum { C_ALLREDUCE, C_BCAST, C_IALLREDUCE, C_HIER, C_COUNT };

static int rank, size, failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "init_agree[%d]: FAIL %s\n", rank, what);
    }
}

static uint64_t offloaded(acis_coll_t c)
{
    struct acis_coll_stats s;
    acis_get_stats(c, &s);
    return s.offloaded;
}

static void calls(void)
{
    for (int r = 0; r < ROUNDS; r++) {
        int in[N], out[N], ref[N];
        for (int i = 0; i < N; i++)
            in[i] = (rank + 1) * (i + r);
        MPI_Allreduce(in, out, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(in, ref, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        check(memcmp(out, ref, sizeof out) == 0, "allreduce");
        memcpy(out, in, sizeof in);
        memcpy(ref, in, sizeof in);
        MPI_Bcast(out, N, MPI_INT, r % size, MPI_COMM_WORLD);
        PMPI_Bcast(ref, N, MPI_INT, r % size, MPI_COMM_WORLD);
        check(memcmp(out, ref, sizeof out) == 0, "bcast");
        MPI_Request q;
        MPI_Iallreduce(in, out, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &q);
        MPI_Wait(&q, MPI_STATUS_IGNORE);
        PMPI_Allreduce(in, ref, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        check(memcmp(out, ref, sizeof out) == 0, "iallreduce");
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *expect = targ(argc, argv, "--expect", "all");
    int hier = strcmp(targ(argc, argv, "--hier", "0"), "0") != 0;

    calls();
    struct acis_host_stats h;
    acis_get_host_stats(&h);
    uint64_t mine[C_COUNT] = { offloaded(ACIS_COLL_ALLREDUCE), offloaded(ACIS_COLL_BCAST),
                               offloaded(ACIS_COLL_IALLREDUCE), h.hier_calls };
    uint64_t *all = malloc(sizeof mine * (size_t)size);
    PMPI_Allgather(mine, C_COUNT, MPI_UINT64_T, all, C_COUNT, MPI_UINT64_T, MPI_COMM_WORLD);
    for (int q = 0; q < size; q++)
        if (memcmp(all + q * C_COUNT, mine, sizeof mine) != 0) {
            check(0, "counters differ between ranks: they ended in different modes");
            break;
        }
    free(all);

    uint64_t want_b = strcmp(expect, "none") == 0 ? 0 : ROUNDS;
    uint64_t want_nb = strcmp(expect, "all") == 0 || strcmp(expect, "flat") == 0 ? ROUNDS : 0;
    uint64_t want_h = strcmp(expect, "all") == 0 && hier ? 2 * ROUNDS : 0;
    check(mine[C_ALLREDUCE] == want_b && mine[C_BCAST] == want_b, "blocking calls offloaded");
    check(mine[C_IALLREDUCE] == want_nb, "nonblocking calls offloaded");
    check(mine[C_HIER] == want_h, "calls through the node hierarchy");
    if (failures)
        fprintf(stderr, "init_agree[%d]: allreduce %llu, bcast %llu, iallreduce %llu "
                        "offloaded, %llu hierarchical\n", rank,
                (unsigned long long)mine[0], (unsigned long long)mine[1],
                (unsigned long long)mine[2], (unsigned long long)mine[3]);
    int total;
    PMPI_Reduce(&failures, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("init_agree --expect=%s: %d ranks, %d failures\n", expect, size, total);
    MPI_Finalize();
    return rank == 0 && total ? 1 : 0;
}
