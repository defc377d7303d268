/* jitter.c -- what a rooted collective costs when ranks do not arrive
 * together.  Each round every rank computes a random time (uniform in 0 to
 * 2 * -c microseconds, its own random sequence), then calls MPI_Bcast,
 * MPI_Scatter or MPI_Gather (-t) of -s bytes per rank, rooted at rank 0.
 * A sender that waits for every member each round makes a round last as
 * long as the slowest rank's compute; senders that return once their data
 * is out (the root of a bcast or scatter, the leaves of a gather) run
 * ahead, and the job lasts about as long as the busiest rank's own
 * compute.  Prints microseconds per round next to that bound (the largest
 * sum of a rank's computes, per round).  Senders write the next round's
 * number into their data right after each call; receivers check it.  A
 * plain MPI program: run it with LD_PRELOAD=libacis.so.
 * Usage: jitter [-t bcast|scatter|gather] [-n rounds] [-c mean_compute_us] [-s bytes] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busy.h"

int main(int argc, char **argv)
{
    int rounds = 2000, opt, rank, size, bytes = 8, kind = 0;   /* bcast, scatter, gather */
    double mean_us = 20;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    while ((opt = getopt(argc, argv, "t:n:c:s:")) != -1) {
        if (opt == 't')
            kind = !strcmp(optarg, "scatter") ? 1 : !strcmp(optarg, "gather") ? 2 : 0;
        else if (opt == 'n')
            rounds = atoi(optarg);
        else if (opt == 'c')
            mean_us = atof(optarg);
        else if (opt == 's')
            bytes = atoi(optarg);
    }
    if (rounds < 1 || bytes < (int)sizeof(int) || mean_us < 0) {
        if (rank == 0)
            fprintf(stderr, "jitter: -n >= 1, -s >= %d, -c >= 0\n", (int)sizeof(int));
        MPI_Finalize();
        return 2;
    }
    char *mine = calloc((size_t)bytes, 1);
    char *all = rank == 0 ? calloc((size_t)bytes, (size_t)size) : NULL;
    if (!mine || (rank == 0 && !all)) {
        fprintf(stderr, "jitter: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    unsigned seed = 12345u + 7919u * (unsigned)rank;
    double busy = 0;
    long wrong = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int r = 0; r < rounds; r++) {
        double us = 2 * mean_us * (double)rand_r(&seed) / RAND_MAX;
        compute(us);
        busy += us;
        if (kind == 1)
            MPI_Scatter(all, bytes, MPI_CHAR, mine, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        else if (kind == 2)
            MPI_Gather(mine, bytes, MPI_CHAR, all, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        else
            MPI_Bcast(mine, bytes, MPI_CHAR, 0, MPI_COMM_WORLD);
        int next = r + 1, got;
        if (kind == 2) {                /* leaves send, the root checks */
            for (int q = 0; rank == 0 && q < size; q++) {
                memcpy(&got, all + (size_t)q * bytes, sizeof got);
                wrong += got != r;
            }
            memcpy(mine, &next, sizeof next);
        } else if (rank == 0) {         /* the next round's data, at once */
            memcpy(mine, &next, sizeof next);
            for (int q = 0; all && q < size; q++)
                memcpy(all + (size_t)q * bytes, &next, sizeof next);
        } else {
            memcpy(&got, mine, sizeof got);
            wrong += got != r;
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    t = MPI_Wtime() - t;
    double most_busy;
    long wrong_all;
    MPI_Reduce(&busy, &most_busy, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    MPI_Reduce(&wrong, &wrong_all, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0)
        printf("jitter: %s, %d ranks, %d rounds, %d bytes, compute 0..%.0f us: %.2f us per "
               "round, busiest rank's compute %.2f us per round, %ld wrong\n",
               kind == 1 ? "scatter" : kind == 2 ? "gather" : "bcast", size, rounds, bytes, 2 * mean_us,
               t * 1e6 / rounds, most_busy / rounds, wrong_all);
    free(mine);
    free(all);
    MPI_Finalize();
    return wrong_all ? 1 : 0;
}
