/* subcomm.c -- latency of a communicator without rank 0 while rank 0
 * computes.  With acis's embedded UDP switch, rank 0's process hosts the
 * switch and serves it itself while it waits in acis; when it returns to
 * the application, the switch's thread takes over.  Each round: a
 * barrier on MPI_COMM_WORLD, then rank 0 computes for -c microseconds
 * while the other ranks time one MPI_Allreduce (8 bytes) on their own
 * communicator.  With -s rank 0 first reads the switch's counters
 * (acis_get_switch_stats: a control round trip, as a table set-up or
 * free is) each round.  Prints the mean and the largest time over the
 * rounds (slowest rank).  A plain MPI program: run it with
 * LD_PRELOAD=libacis.so.  Usage: subcomm [-n rounds] [-c compute_us] [-s] */
#include <dlfcn.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "busy.h"

int main(int argc, char **argv)
{
    int rounds = 200, opt, rank, size, stats = 0;
    double compute_us = 5000;
    MPI_Init(&argc, &argv);
    while ((opt = getopt(argc, argv, "n:c:s")) != -1) {
        if (opt == 'n')
            rounds = atoi(optarg);
        else if (opt == 'c')
            compute_us = atof(optarg);
        else if (opt == 's')
            stats = 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 3 || rounds < 1) {
        if (rank == 0)
            fprintf(stderr, "subcomm: needs 3 or more ranks and -n >= 1\n");
        MPI_Finalize();
        return 2;
    }
    /* Looked up, so that the program runs without acis too. */
    int (*switch_stats)(uint64_t *, int) = NULL;
    if (stats)
        *(void **)&switch_stats = dlsym(RTLD_DEFAULT, "acis_get_switch_stats");
    MPI_Comm sub;
    MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, rank, &sub);
    double sum = 0, worst = 0;
    long in = rank, out;
    for (int r = 0; r < rounds + 10; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            uint64_t counters[64];
            if (switch_stats)
                switch_stats(counters, 64);
            compute(compute_us);
            continue;
        }
        double t = MPI_Wtime();
        MPI_Allreduce(&in, &out, 1, MPI_LONG, MPI_SUM, sub);
        t = MPI_Wtime() - t;
        if (r >= 10) {                   /* after warm-up */
            sum += t;
            worst = t > worst ? t : worst;
        }
    }
    double mine[2] = { sum / rounds, worst }, all[2];
    MPI_Reduce(mine, all, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("subcomm: %d ranks, %d rounds, rank 0 computes %.0f us%s: allreduce without "
               "rank 0 mean %.1f us, max %.1f us\n", size, rounds, compute_us,
               switch_stats ? " after a round trip to the switch" : "", all[0] * 1e6,
               all[1] * 1e6);
    if (sub != MPI_COMM_NULL)
        MPI_Comm_free(&sub);
    MPI_Finalize();
    return 0;
}
